import type { DocumentRecord } from "../../domain/document.ts";
import { publicPath } from "./v2-views.ts";

/** The fullscreen display settings (research §2.2): only the start page is honoured by Quire's reader. */
export const fullscreenSettings = {
  type: "object",
  properties: {
    startPage: { type: "integer", minimum: 1, default: 1 },
    pageLayout: { type: "string", enum: ["double", "single"] },
    autoflip: { type: "boolean" },
    backgroundColor: { type: "string", maxLength: 40 },
    logoUrl: { type: "string", maxLength: 2048 },
    backgroundImageUrl: { type: "string", maxLength: 2048 },
    backgroundImagePosition: { type: "string", enum: ["topLeft", "stretch"] },
    showOtherPublications: { type: "boolean" },
    hideShare: { type: "boolean" },
  },
} as const;

/** The reader at a start page, clamped to the document's pages. */
export function fullscreenUrl(origin: string, doc: DocumentRecord, settings: Record<string, unknown> | undefined): string {
  const start = Math.min(Math.max(1, Number(settings?.startPage ?? 1)), Math.max(1, doc.pageCount));
  return `${origin}${publicPath(doc)}${start > 1 ? `?page=${start}` : ""}`;
}
