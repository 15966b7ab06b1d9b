import type { ColumnType, Generated } from "kysely";
import type { Access, DocumentOrigin, DocumentState } from "../domain/document.ts";
import type { RecordedDocType } from "../domain/formats.ts";
import type { Replacement } from "../domain/document-replacement.ts";
import type { JobKind } from "../domain/job-kinds.ts";

/** Column types as the application sees them (CamelCasePlugin maps to snake_case in SQL). Booleans are 0/1, times epoch ms. */
export interface AccountsTable {
  id: Generated<number>;
  username: string;
  createdAt: number;
  /** Maintained by triggers (migration 0003): never written by the application. */
  documentsVersion: ColumnType<number, never, never>;
  /** scrypt hash of the web app's password (migration 0006); null: the account cannot sign in to the app. */
  passwordHash: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1: new comments are published at once; 0: held for the publisher's approval (migration 0014). */
  publishComments: ColumnType<number, number | undefined, number>;
}

export interface AppSessionsTable {
  /** SHA-256 of the session id, hex. */
  idHash: string;
  /** Null while nobody has signed in with it. */
  accountId: number | null;
  /** The session object as JSON. */
  data: string;
  expiresAt: number;
  createdAt: number;
}

export interface AppSecretsTable {
  name: string;
  value: string;
}

export interface ApiKeysTable {
  apiKey: string;
  accountId: number;
  apiSecret: string;
  createdAt: number;
  revokedAt: number | null;
  /** The publisher's name for the key (migration 0017); "" when none was given. */
  label: ColumnType<string, string | undefined, string>;
}

export interface DocumentsTable {
  documentId: string;
  revisionId: string;
  publicationId: string;
  accountId: number;
  name: string;
  nameGiven: number;
  title: string;
  description: string;
  descriptionGiven: number;
  access: Access;
  state: DocumentState;
  category: string;
  type: string;
  language: string;
  /** "unknown" until a URL upload's original is fetched. */
  orgDocType: RecordedDocType;
  orgDocName: string;
  origin: DocumentOrigin;
  pageCount: number;
  publishDate: number;
  createdAt: number;
  updatedAt: number;
  tags: string;
  folderIds: string;
  commentsAllowed: number;
  ratingsAllowed: number;
  downloadable: number;
  explicit: number;
  infoLink: string;
  soundUrl: string;
  slurpUrl: string;
  coverWidth: number;
  coverHeight: number;
  errorCode: number;
  errorMessage: string;
  blobId: string;
  originalSize: number;
  /** How many ratings of 1…5 stars the document has (migration 0014); written by document-ratings.ts only. */
  stars1: number;
  stars2: number;
  stars3: number;
  stars4: number;
  stars5: number;
  /** Moves whenever the approved comments a reader sees change (migration 0014). */
  commentsVersion: number;
  /** How many of its comments are approved (migration 0014): the reader's count without counting rows. */
  commentsShown: number;
  /** 1 while a v2 draft is not published (migration 0015): never public, never in v1 lists. */
  draft: ColumnType<number, number | undefined, number>;
}

/** A v2 bearer token (migration 0015, decisions §14): only its SHA-256 is kept. */
export interface ApiTokensTable {
  tokenHash: string;
  /** The token's first characters, to tell tokens apart in lists. */
  prefix: string;
  accountId: number;
  createdAt: number;
  lastUsedAt: number | null;
}

/** What only the v2 API knows of a document (migration 0015). */
export interface DocumentV2Table {
  documentId: string;
  /** JSON: preview, type, showDetectedLinks, isCopyrightConfirmed. */
  info: string;
  /** JSON of the edits to a published document staged until its next publish; null when none. */
  changes: string | null;
  /** When a scheduled publish is due (epoch ms); null when none. */
  scheduledAt: number | null;
}

export interface FoldersTable {
  folderId: string;
  accountId: number;
  name: string;
  description: string;
  createdAt: number;
  updatedAt: number;
  /** v2 stacks' `PUBLIC` or `UNLISTED` (migration 0015); no longer read since 0019: `onProfile` is what v2's accessType answers. */
  accessType: ColumnType<string, string | undefined, string>;
  /** 1 when the folder is shown on its owner's public profile (migration 0019; 0 by default). */
  onProfile: ColumnType<number, number | undefined, number>;
}

export interface JobsTable {
  id: Generated<number>;
  kind: JobKind;
  documentId: string;
  /** The account whose work this is (migration 0005), so claims can be shared fairly among accounts; 0 when unknown. */
  accountId: number;
  state: string;
  attempts: number;
  runAt: number;
  leaseUntil: number | null;
  leaseOwner: string | null;
  lastError: string;
  createdAt: number;
  updatedAt: number;
  /** The API request that enqueued the job (migration 0004); null for jobs from elsewhere. */
  requestId: ColumnType<string | null, string | null | undefined, never>;
}

export interface BookmarksTable {
  bookmarkId: string;
  accountId: number;
  documentId: string;
  title: string;
  description: string;
  page: number;
  createdAt: number;
  updatedAt: number;
}

export interface BookmarkFoldersTable {
  bookmarkId: string;
  folderId: string;
  addedAt: number;
}

export interface EmbedsTable {
  id: Generated<number>;
  accountId: number;
  documentId: string;
  readerStartPage: number;
  width: number;
  height: number;
  createdAt: number;
  updatedAt: number;
}

/** One webhook per account (migration 0008, decisions §12). */
export interface WebhooksTable {
  accountId: number;
  url: string;
  /** JSON array of event names. */
  events: string;
  /** Sealed like apiSecrets when QUIRE_SECRET_KEY is set (src/domain/secret-box.ts). */
  secret: string;
  createdAt: number;
  updatedAt: number;
}

/** A delivery of one event, written in the transaction of the state change it reports. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  /** The `Quire-Delivery` header: the same on every attempt, so a receiver can drop repeats. */
  deliveryId: string;
  accountId: number;
  /** Not a reference: a `document.deleted` delivery outlives its document. */
  documentId: string;
  event: string;
  body: string;
  status: string;
  attempts: number;
  nextAttemptAt: number;
  /** Who is posting it now, and until when: one attempt at a time, in order per document. */
  leaseOwner: string | null;
  leaseUntil: number | null;
  lastError: string;
  createdAt: number;
  deliveredAt: number | null;
  updatedAt: number;
}

/** A document split into page-range jobs (migration 0009). */
export interface PageFanoutsTable {
  documentId: string;
  pageCount: number;
  rangesLeft: number;
  /** The blob the ranges render: the original when it is a PDF, else the PDF made from it. */
  pdfKey: string;
  textLayerIsOurs: number;
  /** Set by the range holding page 1, which renders the covers. */
  coverWidth: number;
  coverHeight: number;
  createdAt: number;
}

export interface PageRangesTable {
  documentId: string;
  firstPage: number;
  lastPage: number;
  jobId: number;
  pagesReady: number;
  done: number;
}

/** The salt of reader recognition for one UTC day (migration 0013): deleted once the day is over. */
export interface DailySaltsTable {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  salt: string;
}

/** One reader's rating of a document on one UTC day (decisions §15, §16; migration 0014). */
export interface DocumentRatingsTable {
  documentId: string;
  day: string;
  /** The daily-salted reader key (src/domain/reader-identity.ts): no address or user agent is stored. */
  readerKey: string;
  stars: number;
  createdAt: number;
  updatedAt: number;
}

/** A reader's comment (decisions §16; migration 0014). */
export interface DocumentCommentsTable {
  commentId: string;
  documentId: string;
  accountId: number;
  /** The display name the reader gave, plain text. */
  author: string;
  /** Plain text, at most 2,000 characters. */
  body: string;
  state: "pending" | "approved" | "hidden";
  createdAt: number;
  updatedAt: number;
}

/** One document's figures on one UTC day (migration 0013); counts only, nothing about a reader. */
export interface StatDaysTable {
  documentId: string;
  day: string;
  accountId: number;
  impressions: number;
  views: number;
  embeddedViews: number;
  reads: number;
  /** Seconds spent by the day's readers who read (averageTimeSpent = readSeconds / reads). */
  readSeconds: number;
  downloads: number;
  shares: number;
  clicks: number;
}

/** How many of the day's readers got no further than `page`: the depth curve is its running sum from the end. */
export interface StatPagesTable {
  documentId: string;
  day: string;
  page: number;
  readers: number;
}

/** Views by referring host ("" for none) and whether through an embed. */
export interface StatReferrersTable {
  documentId: string;
  day: string;
  host: string;
  embedded: number;
  accountId: number;
  views: number;
}

/**
 * What one reader (their key under the day's salt) was counted for that day, so that they count
 * once; also rows whose key is the address alone (`newcomers`: readers counted from it). Deleted
 * with the day's salt.
 */
export interface StatReadersTable {
  day: string;
  readerKey: string;
  documentId: string;
  firstAt: number;
  lastAt: number;
  viewed: number;
  read: number;
  downloaded: number;
  maxPage: number;
  seconds: number;
  shares: number;
  clicks: number;
  newcomers: number;
}

/** An account's figures per day: the sum of its documents' stat_days (a deleted document's leave by trigger). */
export interface StatAccountDaysTable {
  accountId: number;
  day: string;
  impressions: number;
  views: number;
  embeddedViews: number;
  reads: number;
  readSeconds: number;
  downloads: number;
  shares: number;
  clicks: number;
}

export interface StatAccountReferrersTable {
  accountId: number;
  day: string;
  host: string;
  embedded: number;
  views: number;
}

/** A document's main figures per month (`YYYY-MM`): top documents over long periods. */
export interface StatMonthsTable {
  documentId: string;
  month: string;
  accountId: number;
  impressions: number;
  views: number;
  reads: number;
  readSeconds: number;
}

/** The content hash of a file uploaded through the app (migration 0017): "already uploaded as …". */
export interface UploadChecksumsTable {
  documentId: string;
  accountId: number;
  sha256: string;
}

/**
 * A new file for a document that stays published meanwhile (migration 0016): converted under its
 * own `blobId` by the job `jobId`; `state` P while converting, F when it failed (the document keeps
 * its pages). Gone once the document switched to it.
 */
export type DocumentReplacementsTable = Replacement;

/** A name a document had before it was renamed (migration 0017): its old addresses lead to it. */
export interface DocumentOldNamesTable {
  accountId: number;
  name: string;
  documentId: string;
  renamedAt: number;
}

export interface Database {
  uploadChecksums: UploadChecksumsTable;
  accounts: AccountsTable;
  documentOldNames: DocumentOldNamesTable;
  apiKeys: ApiKeysTable;
  documents: DocumentsTable;
  folders: FoldersTable;
  jobs: JobsTable;
  bookmarks: BookmarksTable;
  bookmarkFolders: BookmarkFoldersTable;
  embeds: EmbedsTable;
  webhooks: WebhooksTable;
  webhookDeliveries: WebhookDeliveriesTable;
  pageFanouts: PageFanoutsTable;
  pageRanges: PageRangesTable;
  appSessions: AppSessionsTable;
  appSecrets: AppSecretsTable;
  documentRatings: DocumentRatingsTable;
  documentComments: DocumentCommentsTable;
  apiTokens: ApiTokensTable;
  documentV2: DocumentV2Table;
  documentReplacements: DocumentReplacementsTable;
  dailySalts: DailySaltsTable;
  statDays: StatDaysTable;
  statPages: StatPagesTable;
  statReferrers: StatReferrersTable;
  statReaders: StatReadersTable;
  statAccountDays: StatAccountDaysTable;
  statAccountReferrers: StatAccountReferrersTable;
  statMonths: StatMonthsTable;
}
