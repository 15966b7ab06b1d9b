import { createHash } from "node:crypto";
import { IMAGE_EXTENSION } from "../domain/page-images.ts";

/**
 * The public identity of a document: nothing here leads to its blobs without the reader's routes.
 * `blobId` only feeds the version token's hash, never a URL.
 */
export interface PublicDoc {
  username: string;
  name: string;
  documentId: string;
  blobId: string;
}

export const PAGE_SIZES = ["thumb", "read"] as const;
export type PageSize = (typeof PAGE_SIZES)[number];
export const COVER_SIZES = ["small", "medium", "large"] as const;
export type CoverSize = (typeof COVER_SIZES)[number];

/**
 * Cache-busting token of a document's images and text. They are written once by the conversion of
 * one file and never change; a new file (src/domain/document-replacement.ts) lies under a new
 * `blobId`, and a name can pass to another document: the token is made of both, so an immutable URL
 * leads only to the pages it was made for. A hash: the `blobId` itself is never shown.
 */
export function imageVersion(d: Pick<PublicDoc, "documentId" | "blobId">): string {
  return createHash("sha256").update(`${d.documentId}/${d.blobId}`).digest("hex").slice(0, 12);
}

export const profilePath = (username: string) => `/${encodeURIComponent(username)}`;
export const docPath = (d: Pick<PublicDoc, "username" | "name">) => `${profilePath(d.username)}/docs/${encodeURIComponent(d.name)}`;
export const embedPath = (d: PublicDoc) => `${docPath(d)}/embed`;
export const downloadPath = (d: PublicDoc) => `${docPath(d)}/download`;
export const pagePath = (d: PublicDoc, size: PageSize, page: number) => `${docPath(d)}/pages/${size}/${page}.${IMAGE_EXTENSION}?v=${imageVersion(d)}`;
export const coverPath = (d: PublicDoc, size: CoverSize) => `${docPath(d)}/cover/${size}.${IMAGE_EXTENSION}?v=${imageVersion(d)}`;
/** The text layer's page texts: `<base>/<n>.json?v=<version>` (the reader's script adds the rest). */
export const textBasePath = (d: PublicDoc) => `${docPath(d)}/text`;
