import { createHash } from "node:crypto";
import { ALL_VARIANT_WIDTHS, IMAGE_EXTENSION, THUMB_VARIANT_WIDTH, VARIANT_WIDTHS, type VariantWidth } from "../domain/page-images.ts";

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
/** A folder shown on its owner's profile (issue 26 item 9): by id, so a rename breaks no link. */
export const publicFolderPath = (username: string, folderId: string) => `${profilePath(username)}/folders/${encodeURIComponent(folderId)}`;
export const docPath = (d: Pick<PublicDoc, "username" | "name">) => `${profilePath(d.username)}/docs/${encodeURIComponent(d.name)}`;
export const embedPath = (d: PublicDoc) => `${docPath(d)}/embed`;
export const downloadPath = (d: PublicDoc) => `${docPath(d)}/download`;
/**
 * The one place page images' addresses are made (the reader's markup and, through its data, its
 * script): a page at one of the variant widths, in the format the browser's Accept asks for
 * (src/page-variants.ts). The masters' old addresses (`pages/read/N.jpg`, `pages/thumb/N.jpg`) keep
 * working but are no longer written into pages.
 */
export const pageImagePath = (d: PublicDoc, width: VariantWidth, page: number) => `${docPath(d)}/pages/w${width}/${page}?v=${imageVersion(d)}`;
/** `srcset` of a page: every reading width, so a browser takes what its layout and density need. */
export const pageSrcset = (d: PublicDoc, page: number) => VARIANT_WIDTHS.map((w) => `${pageImagePath(d, w, page)} ${w}w`).join(", ");
export const thumbImagePath = (d: PublicDoc, page: number) => pageImagePath(d, THUMB_VARIANT_WIDTH, page);

/** The variant a `pages/<size>/<file>` address names (`w800`, `3`), if it names one. */
export function variantOf(size: string, file: string): { width: VariantWidth; page: number } | undefined {
  const w = /^w([1-9][0-9]{0,4})$/.exec(size);
  const width = ALL_VARIANT_WIDTHS.find((v) => v === Number(w?.[1]));
  if (width === undefined || !/^[1-9][0-9]{0,5}$/.test(file)) return undefined;
  return { width, page: Number(file) };
}

/** Whether an Accept header takes WebP (and does not refuse it with q=0). */
export function acceptsWebp(accept: string | undefined): boolean {
  for (const part of (accept ?? "").split(",")) {
    const [type, ...params] = part.trim().toLowerCase().split(";");
    if (type?.trim() !== "image/webp") continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    return q === undefined || Number(q) > 0;
  }
  return false;
}

export const coverPath = (d: PublicDoc, size: CoverSize) => `${docPath(d)}/cover/${size}.${IMAGE_EXTENSION}?v=${imageVersion(d)}`;
/** The text layer's page texts: `<base>/<n>.json?v=<version>` (the reader's script adds the rest). */
export const textBasePath = (d: PublicDoc) => `${docPath(d)}/text`;
