import { randomBytes } from "node:crypto";
import { typeClaimedByName, type OrgDocType, type RecordedDocType } from "./formats.ts";
import { isXmlSafe } from "./values.ts";
import { NO_RATINGS, type RatingCounts } from "./comments.ts";

/**
 * P processing, A published, F failed; D a v2 draft not being converted (converted, or with no file
 * yet): only v2 answers ever show it (decisions §14).
 */
export type DocumentState = "P" | "A" | "F" | "D";
export type DocumentOrigin = "apiupload" | "apislurp";
export type Access = "public" | "private";

/** The stored document (decisions §5); `blobId` is the private part of its blob keys and is never answered. */
export interface DocumentRecord {
  documentId: string;
  revisionId: string;
  publicationId: string;
  accountId: number;
  username: string;
  name: string;
  nameGiven: boolean;
  title: string;
  description: string;
  descriptionGiven: boolean;
  access: Access;
  state: DocumentState;
  category: string;
  type: string;
  language: string;
  orgDocType: RecordedDocType;
  orgDocName: string;
  origin: DocumentOrigin;
  pageCount: number;
  publishDate: number;
  createdAt: number;
  updatedAt: number;
  tags: string[];
  folderIds: string[];
  commentsAllowed: boolean;
  ratingsAllowed: boolean;
  downloadable: boolean;
  explicit: boolean;
  infoLink: string;
  soundUrl: string;
  slurpUrl: string;
  coverWidth: number;
  coverHeight: number;
  errorCode: number;
  errorMessage: string;
  blobId: string;
  originalSize: number;
  /** Ratings of 1…5 stars (decisions §16), kept on the record so every answer carries them. */
  ratingCounts: RatingCounts;
  /** Moves when the approved comments under the reader change (the reader page is cached by record). */
  commentsVersion: number;
  /** How many approved comments it has (shown under the reader while comments are allowed). */
  commentsShown: number;
  /** A v2 draft not published yet (decisions §14): never public, never in v1 lists. Absent: false. */
  draft?: boolean;
}

/** What the caller may set at upload (the parameter table of interface §4.2, decisions §4). */
export interface DocumentOptions {
  name: string | undefined;
  title: string | undefined;
  tags: string[];
  commentsAllowed: boolean;
  description: string | undefined;
  downloadable: boolean;
  infoLink: string;
  language: string;
  access: Access;
  explicit: boolean;
  category: string;
  type: string;
  ratingsAllowed: boolean;
  soundUrl: string;
  publishDate: number | undefined;
  folderIds: string[];
}

/** `yymmddhhmmss` in UTC (decisions §5). */
export function revisionIdAt(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, "").slice(2, 14);
}

export function newDocumentIds(now: number): { documentId: string; revisionId: string; publicationId: string } {
  const revisionId = revisionIdAt(now);
  const publicationId = randomBytes(16).toString("hex");
  return { documentId: `${revisionId}-${publicationId}`, revisionId, publicationId };
}

/** A random key part for blobs: public ids never lead to the files (issue: keys not guessable). */
/**
 * The format an uploaded file's name claims when its content is another (decisions §5: such a file
 * is published as what it is, and the app tells the publisher). A URL upload's name is its address:
 * nothing to tell there.
 */
export function formatNamedOtherwise(doc: Pick<DocumentRecord, "origin" | "orgDocName" | "orgDocType">): OrgDocType | undefined {
  return doc.origin === "apiupload" ? typeClaimedByName(doc.orgDocName, doc.orgDocType) : undefined;
}

export function newBlobId(): string {
  return randomBytes(18).toString("base64url");
}

/** decisions §5: the file name without its extension for file uploads. */
export function titleFromFileName(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? "";
  const dot = base.lastIndexOf(".");
  const stem = (dot > 0 ? base.slice(0, dot) : base).trim();
  return stem === "" ? "Untitled" : stem;
}

/** decisions §5: the last path segment without extension for URL uploads, else `Untitled`. */
export function titleFromUrl(url: URL): string {
  const segments = url.pathname.split("/").filter((s) => s !== "");
  const last = segments.at(-1);
  if (last === undefined) return "Untitled";
  let decoded = last;
  try {
    decoded = decodeURIComponent(last);
  } catch {
    // a malformed escape is shown as sent
  }
  // An escape decoding to a character XML cannot carry (%01, %EF%BF%BE) would make the XML answer
  // drop it or be ill-formed while JSON kept it; such a segment is shown as sent, like a caller's title must be XML-safe.
  if (!isXmlSafe(decoded)) decoded = last;
  return titleFromFileName(decoded);
}

/** The type a URL's extension names (`.jpeg` is jpg, `.docm` docx), while the file is not fetched yet (decisions §5). */
export function docTypeFromUrl(url: URL, typeOf: (ext: string) => RecordedDocType | undefined): RecordedDocType {
  const m = /\.([A-Za-z0-9]+)$/.exec(url.pathname);
  const ext = m?.[1]?.toLowerCase();
  return (ext !== undefined ? typeOf(ext) : undefined) ?? "unknown";
}

export interface NewDocumentSource {
  accountId: number;
  username: string;
  origin: DocumentOrigin;
  orgDocType: RecordedDocType;
  orgDocName: string;
  defaultTitle: string;
  slurpUrl: string;
  originalSize: number;
  blobId: string;
}

export function buildNewDocument(
  ids: { documentId: string; revisionId: string; publicationId: string },
  source: NewDocumentSource,
  options: DocumentOptions,
  now: number,
): DocumentRecord {
  return {
    ...ids,
    accountId: source.accountId,
    username: source.username,
    name: options.name ?? ids.documentId,
    nameGiven: options.name !== undefined,
    title: options.title ?? source.defaultTitle,
    description: options.description ?? "",
    descriptionGiven: options.description !== undefined,
    access: options.access,
    state: "P",
    category: options.category,
    type: options.type,
    language: options.language,
    orgDocType: source.orgDocType,
    orgDocName: source.orgDocName,
    origin: source.origin,
    pageCount: 0,
    publishDate: options.publishDate ?? now,
    createdAt: now,
    updatedAt: now,
    tags: options.tags,
    folderIds: options.folderIds,
    commentsAllowed: options.commentsAllowed,
    ratingsAllowed: options.ratingsAllowed,
    downloadable: options.downloadable,
    explicit: options.explicit,
    infoLink: options.infoLink,
    soundUrl: options.soundUrl,
    slurpUrl: source.slurpUrl,
    coverWidth: 0,
    coverHeight: 0,
    errorCode: 0,
    errorMessage: "",
    blobId: source.blobId,
    originalSize: source.originalSize,
    ratingCounts: NO_RATINGS,
    commentsVersion: 0,
    commentsShown: 0,
  };
}
