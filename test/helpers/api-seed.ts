import assert from "node:assert/strict";
import { createAccount } from "../../src/accounts/account-admin.ts";
import { buildNewDocument, newBlobId, newDocumentIds, type DocumentOptions, type DocumentRecord } from "../../src/domain/document.ts";
import { toRow } from "../../src/store/documents.ts";
import type { Caller } from "./api-client.ts";
import type { TestServer } from "./test-server.ts";
import { dbOf } from "./store-db.ts";

/** Accounts and documents put straight into a test server's store, so API tests need no conversion. */

/** A second account on the same server, as a caller. */
export async function otherCaller(server: TestServer, username: string): Promise<Caller & { accountId: number }> {
  const creds = await createAccount(server.services.store, username);
  return { server, apiKey: creds.apiKey, apiSecret: creds.apiSecret, accountId: await accountIdOf(server, creds.apiKey) };
}

/** The account id behind a caller (or an API key). */
export async function accountIdOf(server: TestServer, who: Pick<Caller, "apiKey"> | string): Promise<number> {
  const owner = await server.services.store.accounts.getKeyOwnerForSigning(typeof who === "string" ? who : who.apiKey);
  assert.ok(owner);
  return owner.accountId;
}

const OPTIONS: DocumentOptions = {
  name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined,
  downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000",
  type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [],
};

/** A new PDF document record of `owner`, as an API upload would build it. */
function newRecord(
  ids: ReturnType<typeof newDocumentIds>,
  owner: { accountId: number; username: string },
  originalSize: number,
  options: Partial<DocumentOptions>,
  now: number,
): DocumentRecord {
  return buildNewDocument(
    ids,
    { ...owner, origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize, blobId: newBlobId() },
    { ...OPTIONS, ...options },
    now,
  );
}

let seq = 0;
/** A record written straight into the store (no job), any field set as the test needs. */
export async function seedDoc(
  server: TestServer,
  owner: { accountId: number; username: string },
  fields: Partial<DocumentRecord> = {},
): Promise<DocumentRecord> {
  const now = Date.now();
  const ids = newDocumentIds(now);
  // distinct, increasing ids even within one second
  ids.publicationId = (seq++).toString(16).padStart(8, "0") + ids.publicationId.slice(8);
  ids.documentId = `${ids.revisionId}-${ids.publicationId}`;
  const doc = { ...newRecord(ids, owner, 1, {}, now), ...fields };
  await dbOf(server.services.store).insertInto("documents").values(toRow(doc)).execute();
  return doc;
}

/**
 * A document put straight into the store with its job, then (unless `state` is P) marked active
 * with `pageCount` pages or failed: no conversion is needed.
 */
export async function insertDocument(
  server: TestServer,
  c: Caller,
  opts: { state?: "P" | "A" | "F"; pageCount?: number; title?: string; name?: string } = {},
): Promise<{ documentId: string; name: string }> {
  const store = server.services.store;
  const owner = await store.accounts.getKeyOwnerForSigning(c.apiKey);
  assert.ok(owner);
  const now = Date.now();
  const doc = newRecord(newDocumentIds(now), { accountId: owner.accountId, username: owner.username }, 10, { title: opts.title, name: opts.name }, now);
  await store.documents.insertWithJob(doc, "convert-document");
  const state = opts.state ?? "A";
  if (state === "A") {
    assert.ok(await store.documents.markActive(doc.documentId, { pageCount: opts.pageCount ?? 5, coverWidth: 0, coverHeight: 0, description: undefined, name: undefined }, now));
  } else if (state === "F") {
    assert.ok(await store.documents.markFailed(doc.documentId, 3, "The file is corrupt.", now));
  }
  return { documentId: doc.documentId, name: doc.name };
}
