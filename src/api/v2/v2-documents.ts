import type { DocumentRecord } from "../../domain/document.ts";
import { MAX_DESCRIPTION_LENGTH, MAX_TITLE_LENGTH, text } from "../../domain/document-options.ts";
import { QuireError } from "../../domain/errors.ts";
import { parseDate } from "../../domain/values.ts";
import type { V2Info, V2Row } from "../../domain/v2-documents.ts";
import type { SpooledFile } from "../../uploads/upload-reader.ts";
import { replaceDocumentFile } from "../../uploads/replace-file.ts";
import { fileSource, urlSource, type UploadSource } from "../../uploads/upload-sources.ts";
import { notFound, V2Error, type V2Context } from "./v2-operation.ts";
import { documentV2View, publicationView } from "./v2-views.ts";

/** What the operations on documents share: finding the caller's own, reading `info`, attaching a file. */

/** The caller's document by slug (its documentId); another account's, or none: 404 alike. */
export async function ownDocument(ctx: V2Context, slug: string): Promise<DocumentRecord> {
  const doc = await ctx.deps.store.documents.getById(ctx.caller.accountId, slug);
  if (!doc) throw notFound();
  return doc;
}

/** The caller's published document by slug; drafts are not publications (404). */
export async function ownPublication(ctx: V2Context, slug: string): Promise<DocumentRecord> {
  const doc = await ownDocument(ctx, slug);
  if (doc.draft === true || doc.state !== "A") throw notFound();
  return doc;
}

export async function v2RowOf(ctx: V2Context, documentId: string): Promise<V2Row | undefined> {
  return (await ctx.deps.store.documentV2.get([documentId])).get(documentId);
}

export async function draftAnswer(ctx: V2Context, documentId: string): Promise<Record<string, unknown>> {
  const doc = await ownDocument(ctx, documentId);
  return documentV2View(ctx.origin, doc, await v2RowOf(ctx, documentId), await ctx.deps.store.replacements.get(documentId));
}

export async function publicationAnswer(ctx: V2Context, doc: DocumentRecord): Promise<Record<string, unknown>> {
  return publicationView(ctx.origin, doc, await v2RowOf(ctx, doc.documentId), await ctx.deps.store.replacements.get(doc.documentId));
}

const date = (field: string, v: unknown): number | null | undefined => {
  if (v === undefined || v === null) return v;
  const s = String(v);
  // A bare date (`2021-10-01`) is that day at midnight UTC.
  return parseDate(field, /^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s);
};

/** `info` after its schema: the text rules of v1 (length, XML-safe) and dates, each refusal naming its field. */
export function readInfo(raw: unknown): V2Info {
  if (raw === undefined) return {};
  const info = raw as Record<string, unknown>;
  const get = (name: string) => (typeof info[name] === "string" ? (info[name] as string) : undefined);
  try {
    return {
      title: text(get, "title", MAX_TITLE_LENGTH),
      description: text(get, "description", MAX_DESCRIPTION_LENGTH),
      access: info.access as V2Info["access"],
      downloadable: info.downloadable as boolean | undefined,
      preview: info.preview as boolean | undefined,
      showDetectedLinks: info.showDetectedLinks as boolean | undefined,
      type: info.type === "promotion" ? "promotional" : (info.type as V2Info["type"]),
      originalPublishDate: date("originalPublishDate", info.originalPublishDate),
      scheduledTime: date("scheduledTime", info.scheduledTime),
    };
  } catch (err) {
    if (err instanceof QuireError && err.field) throw new V2Error(400, `info.${err.field} is invalid`, { fields: { [`info.${err.field}`]: { message: "is invalid" } } });
    throw err;
  }
}

/** A `fileUrl`, checked as v1's `slurpUrl` is (fetched by the worker, through the same SSRF-proof fetcher). */
export function fileUrlSource(fileUrl: string): UploadSource {
  try {
    return urlSource(fileUrl);
  } catch (err) {
    if (err instanceof QuireError) throw new V2Error(400, "fileUrl is invalid", { fields: { fileUrl: { message: "must be an http(s) address" } } });
    throw err;
  }
}

export async function spooledSource(file: SpooledFile): Promise<UploadSource> {
  try {
    return await fileSource(file);
  } catch (err) {
    if (err instanceof QuireError) throw new V2Error(400, "file is not in a format Quire can publish", { fields: { file: { message: "unsupported format" } } });
    throw err;
  }
}

/**
 * A new file (upload or `fileUrl`), by the one rule of v1 and the app (src/uploads/replace-file.ts):
 * a draft's converts again at once; a published document's converts beside its pages, which it
 * replaces only once converted, at the same address. A document converting for the first time is refused.
 */
export async function replaceOriginal(ctx: V2Context, doc: DocumentRecord, source: UploadSource, spooledPath: string | undefined): Promise<void> {
  const outcome = await replaceDocumentFile(ctx.deps, { doc, source, spooledPath, now: ctx.now, requestId: ctx.requestId });
  if (outcome.ok) return;
  if (outcome.reason === "not-found") throw notFound();
  throw new V2Error(400, "The document's file is still converting", { publishFailedReason: "file_not_converted" });
}
