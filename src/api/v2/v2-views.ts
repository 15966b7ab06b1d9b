import { COVER_WIDTHS, IMAGE_EXTENSION } from "../../domain/page-images.ts";
import type { DocumentRecord } from "../../domain/document.ts";
import type { Replacement } from "../../domain/document-replacement.ts";
import {
  conversionStatusOf, hasFile, v2Access, v2Extras, v2FileType, v2StateOf, type V2Row,
} from "../../domain/v2-documents.ts";

/** The answers' shapes, with exactly the field names, types and enum values the clients parse (research §2.5, §2.6). */

const iso = (ms: number): string => new Date(ms).toISOString();

/** Public address of a document (the reader's, decisions §10): `/<username>/docs/<name>`. */
export function publicPath(doc: Pick<DocumentRecord, "username" | "name">): string {
  return `/${encodeURIComponent(doc.username)}/docs/${encodeURIComponent(doc.name)}`;
}

/** The document's page in the publisher's app (v2's `location`). */
export function appLocation(origin: string, doc: Pick<DocumentRecord, "documentId">): string {
  return `${origin}/app/documents/${encodeURIComponent(doc.documentId)}`;
}

type Cover = { url: string; width: number; height: number };

/** The three covers of a published document (the reader's cover images). */
function covers(origin: string, doc: DocumentRecord): { small: Cover; medium: Cover; large: Cover } | undefined {
  // A draft's pages are not public yet: its covers would not load, so none are answered.
  if (doc.draft === true || doc.coverWidth <= 0 || doc.coverHeight <= 0) return undefined;
  const one = (size: keyof typeof COVER_WIDTHS): Cover => ({
    url: `${origin}${publicPath(doc)}/cover/${size}.${IMAGE_EXTENSION}`,
    width: COVER_WIDTHS[size],
    height: Math.round((COVER_WIDTHS[size] * doc.coverHeight) / doc.coverWidth),
  });
  return { small: one("small"), medium: one("medium"), large: one("large") };
}

/** `DocumentInformation` as the record and the v2 row hold it now. */
function information(doc: DocumentRecord, row: V2Row | undefined) {
  const x = v2Extras(row);
  return {
    access: v2Access(doc.access),
    title: doc.title,
    description: doc.description,
    preview: x.preview,
    type: x.type,
    showDetectedLinks: x.showDetectedLinks,
    downloadable: doc.downloadable,
    originalPublishDate: iso(doc.publishDate),
    ...(row?.scheduledAt != null ? { scheduledTime: iso(row.scheduledAt) } : {}),
  };
}

/**
 * `Document` (research §2.5.1): `changes` holds a draft's information, or a published one's staged
 * edits. While a new file converts beside a published document's pages, or after it failed,
 * `fileInfo` is that file's (`CONVERTING`, then `FAILED` with `failureReason`); the pages stay the
 * published ones (src/domain/document-replacement.ts).
 */
export function documentV2View(origin: string, doc: DocumentRecord, row: V2Row | undefined, replacement?: Replacement): Record<string, unknown> {
  const cover = covers(origin, doc);
  const x = v2Extras(row);
  const changes = doc.draft === true ? information(doc, row) : { ...(row?.changes ?? {}) };
  return {
    slug: doc.documentId,
    owner: doc.username,
    ...(cover ? { cover } : {}),
    ...(hasFile(doc)
      ? {
          fileInfo: {
            isCopyrightConfirmed: x.isCopyrightConfirmed,
            name: replacement?.orgDocName ?? doc.orgDocName,
            size: replacement?.originalSize ?? doc.originalSize,
            pageCount: doc.pageCount,
            type: v2FileType(replacement?.orgDocType ?? doc.orgDocType),
            conversionStatus: replacement ? (replacement.state === "P" ? "CONVERTING" : "FAILED") : conversionStatusOf(doc),
            ...(replacement?.state === "F" ? { failureReason: replacement.errorMessage } : doc.state === "F" ? { failureReason: doc.errorMessage } : {}),
          },
        }
      : {}),
    state: v2StateOf(doc, row),
    location: appLocation(origin, doc),
    changes,
    created: iso(doc.createdAt),
  };
}

/** `Publication` (research §2.5.3): the document, its information at the top level, its public address. */
export function publicationView(origin: string, doc: DocumentRecord, row: V2Row | undefined, replacement?: Replacement): Record<string, unknown> {
  return { ...documentV2View(origin, doc, row, replacement), ...information(doc, row), publicLocation: `${origin}${publicPath(doc)}` };
}

export interface StackLike {
  folderId: string;
  name: string;
  description: string;
}

export function stackView(f: StackLike, accessType: string | undefined): Record<string, unknown> {
  return { id: f.folderId, title: f.name, description: f.description, accessType: accessType === "PUBLIC" ? "PUBLIC" : "UNLISTED" };
}

/** `Paged<T>` (research §2.5.4, §4.1): absolute links, `next` only when there is more. */
export function paged<T>(origin: string, path: string, results: T[], page: number, size: number, count: number) {
  const href = (p: number) => ({ href: `${origin}/v2/${path}?size=${size}&page=${p}` });
  const links: Record<string, { href: string }> = { self: href(page) };
  if (page * size < count) links.next = href(page + 1);
  if (page > 1) links.previous = href(page - 1);
  return { results, links, pageSize: size, count };
}
