import type { ColumnType, Generated } from "kysely";
import type { JobKind } from "../domain/job-kinds.ts";

/** Column types as the application sees them (CamelCasePlugin maps to snake_case in SQL). Booleans are 0/1, times epoch ms. */
export interface AccountsTable {
  id: Generated<number>;
  username: string;
  createdAt: number;
  /** Maintained by triggers (migration 0003): never written by the application. */
  documentsVersion: ColumnType<number, never, never>;
}

export interface ApiKeysTable {
  apiKey: string;
  accountId: number;
  apiSecret: string;
  createdAt: number;
  revokedAt: number | null;
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
  access: string;
  state: string;
  category: string;
  type: string;
  language: string;
  orgDocType: string;
  orgDocName: string;
  origin: string;
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
}

export interface FoldersTable {
  folderId: string;
  accountId: number;
  name: string;
  description: string;
  createdAt: number;
  updatedAt: number;
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

export interface Database {
  accounts: AccountsTable;
  apiKeys: ApiKeysTable;
  documents: DocumentsTable;
  folders: FoldersTable;
  jobs: JobsTable;
  bookmarks: BookmarksTable;
  bookmarkFolders: BookmarkFoldersTable;
  embeds: EmbedsTable;
}
