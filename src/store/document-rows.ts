import { expressionBuilder, type Expression, type Selectable, type SqlBool } from "kysely";
import type { DocumentRecord } from "../domain/document.ts";
import type { Database, DocumentsTable } from "./schema.ts";

type Row = Selectable<DocumentsTable>;

const documentsEb = expressionBuilder<Database, "documents">();

/**
 * What any public listing may show of another account (decisions §10, §14): a public, active,
 * published document (a v2 draft never is). One rule for folders, bookmarks, the home page and the
 * sitemap; for a query that has the `documents` table by that name.
 */
export const listedPublicly: Expression<SqlBool> = documentsEb.and([
  documentsEb("documents.state", "=", "A"),
  documentsEb("documents.access", "=", "public"),
  documentsEb("documents.draft", "=", 0),
]);

/** A record as its row: lists as JSON text, booleans as 0/1. */
export function toRow(d: DocumentRecord): Row {
  return {
    documentId: d.documentId, revisionId: d.revisionId, publicationId: d.publicationId, accountId: d.accountId,
    name: d.name, nameGiven: d.nameGiven ? 1 : 0, title: d.title, description: d.description,
    descriptionGiven: d.descriptionGiven ? 1 : 0, access: d.access, state: d.state, category: d.category,
    type: d.type, language: d.language, orgDocType: d.orgDocType, orgDocName: d.orgDocName, origin: d.origin,
    pageCount: d.pageCount, publishDate: d.publishDate, createdAt: d.createdAt, updatedAt: d.updatedAt,
    tags: JSON.stringify(d.tags), folderIds: JSON.stringify(d.folderIds), commentsAllowed: d.commentsAllowed ? 1 : 0,
    ratingsAllowed: d.ratingsAllowed ? 1 : 0, downloadable: d.downloadable ? 1 : 0, explicit: d.explicit ? 1 : 0,
    infoLink: d.infoLink, soundUrl: d.soundUrl, slurpUrl: d.slurpUrl, coverWidth: d.coverWidth,
    coverHeight: d.coverHeight, errorCode: d.errorCode, errorMessage: d.errorMessage, blobId: d.blobId,
    originalSize: d.originalSize, stars1: d.ratingCounts[0], stars2: d.ratingCounts[1], stars3: d.ratingCounts[2],
    stars4: d.ratingCounts[3], stars5: d.ratingCounts[4], commentsVersion: d.commentsVersion, commentsShown: d.commentsShown,
    draft: d.draft === true ? 1 : 0,
  };
}

export function fromRow(row: Row & { username: string }): DocumentRecord {
  const { stars1, stars2, stars3, stars4, stars5, draft, ...r } = row;
  return {
    ...r,
    ratingCounts: [stars1, stars2, stars3, stars4, stars5],
    nameGiven: r.nameGiven === 1,
    descriptionGiven: r.descriptionGiven === 1,
    tags: JSON.parse(r.tags) as string[],
    folderIds: JSON.parse(r.folderIds) as string[],
    commentsAllowed: r.commentsAllowed === 1,
    ratingsAllowed: r.ratingsAllowed === 1,
    downloadable: r.downloadable === 1,
    explicit: r.explicit === 1,
    // Only a v2 draft carries the flag: every other record reads as it did before v2.
    ...(draft === 1 ? { draft: true } : {}),
  };
}
