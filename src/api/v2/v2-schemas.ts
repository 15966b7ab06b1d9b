import { V2_DOCUMENT_TYPES } from "../../domain/v2-documents.ts";

/**
 * The request schemas shared by several operations (Fastify validates with Ajv, coercing strings
 * to booleans and numbers: the WordPress client's `"true"`; unknown fields are dropped).
 */

export const MAX_V2_PAGE_SIZE = 100;

/** `page` from 1 and `size`; the WordPress plugin's `page=0` (an offset: research §2.7) is read as 1. */
export const pageQuery = {
  page: { type: "integer", minimum: 0, default: 1 },
  size: { type: "integer", minimum: 1, maximum: MAX_V2_PAGE_SIZE, default: 10 },
} as const;

/** The document lists' paging and `q`. */
export const pagingQuery = { ...pageQuery, q: { type: "string", maxLength: 200 } } as const;

const dateOrNull = { anyOf: [{ type: "string", maxLength: 40 }, { type: "null" }] } as const;

/** `DocumentInformation` (research §2.5.2). */
export const infoSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    title: { type: "string", maxLength: 500 },
    description: { type: "string", maxLength: 5000 },
    access: { type: "string", enum: ["PUBLIC", "PRIVATE"] },
    downloadable: { type: "boolean" },
    preview: { type: "boolean" },
    showDetectedLinks: { type: "boolean" },
    // The C# client sends `promotion` for `promotional` (research §2.7 item 4).
    type: { type: "string", enum: [...V2_DOCUMENT_TYPES, "promotion"] },
    originalPublishDate: dateOrNull,
    scheduledTime: dateOrNull,
    file: { type: "integer" },
    fileId: { type: "integer" },
  },
} as const;

export const slugParams = {
  type: "object",
  properties: { slug: { type: "string", minLength: 1, maxLength: 100 } },
  required: ["slug"],
} as const;

export const stackParams = {
  type: "object",
  properties: { stackId: { type: "string", minLength: 1, maxLength: 100 } },
  required: ["stackId"],
} as const;

/** Draft create and update bodies: `confirmCopyright`, `fileUrl`, `info`. */
export const draftBody = {
  type: "object",
  additionalProperties: false,
  properties: {
    confirmCopyright: { type: "boolean" },
    fileUrl: { type: "string", minLength: 1, maxLength: 2048 },
    info: infoSchema,
  },
} as const;
