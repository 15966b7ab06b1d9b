import assert from "node:assert/strict";
import { test } from "node:test";
import { buildNewDocument, newBlobId, newDocumentIds } from "../../src/domain/document.ts";
import type { StatEvent } from "../../src/store/statistics.ts";
import { lastView } from "../../src/store/stat-batch.ts";
import { StatsCounter } from "../../src/web/stats-counter.ts";
import { DIALECTS } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

const sqlite = DIALECTS.find((d) => d.name === "sqlite")!;

async function withDocument() {
  const opened = await sqlite.open();
  const { store } = opened;
  const accountId = (await seedAccount(store, "alice", "a".repeat(32), "s".repeat(32), 1));
  const now = Date.now();
  const doc = buildNewDocument(
    newDocumentIds(now),
    { accountId, username: "alice", origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId: newBlobId() },
    {
      name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "",
      language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "",
      publishDate: undefined, folderIds: [],
    },
    now,
  );
  await store.documents.insertWithJob(doc, "convert-document");
  await dbOf(store).updateTable("documents").set({ state: "A", pageCount: 2 }).where("documentId", "=", doc.documentId).execute();
  return { ...opened, accountId, documentId: doc.documentId };
}

const views = (documentId: string, n: number, at = Date.now()): StatEvent[] =>
  Array.from({ length: n }, (_, i) => ({ kind: "view", documentId, readerKey: `r${i}`, addressKey: `a${i}`, at, embedded: false, referrerHost: "", startPage: 1 }));

test("a normal stop writes everything buffered: nothing is lost", async () => {
  const { store, drop, accountId, documentId } = await withDocument();
  try {
    const counter = new StatsCounter(store);
    counter.start();
    for (const e of views(documentId, 2500)) counter.push(e);
    await counter.stop();
    assert.equal(counter.pending, 0);
    const day = new Date().toISOString().slice(0, 10);
    const r = await store.statistics.report({ accountId, documentId, range: { from: day, to: day } });
    assert.equal(r.totals.views, 2500);
  } finally {
    await drop();
  }
});

test("with the database gone, a flush neither throws nor loses the buffer; the buffer stays bounded", async () => {
  const { store, drop, documentId } = await withDocument();
  const counter = new StatsCounter(store);
  await store.close();
  for (const e of views(documentId, 10)) counter.push(e);
  await counter.flush();
  assert.equal(counter.pending, 10, "kept for the next tick");
  for (const e of views(documentId, 250_000)) counter.push(e);
  assert.ok(counter.pending <= 200_000, `bounded: ${counter.pending}`);
  assert.ok(counter.dropped > 0);
  await counter.flush();
  await drop().catch(() => undefined);
});

const visits = (documentId: string, n: number, at: number): StatEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    kind: "view", documentId, visitor: { address: `192.0.2.${i}`, addressGroup: `192.0.2.${i}`, userAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0" },
    at, embedded: false, referrerHost: "", startPage: 1,
  }));

test("while the database is gone, no address waits for it: visitors are keyed with the day's salt the process holds, else dropped after a minute", async () => {
  const now = Date.now();
  const held = await withDocument();
  try {
    await held.store.dailySalts.saltFor(now);
    const counter = new StatsCounter(held.store, undefined, () => now);
    await held.store.close();
    for (const e of visits(held.documentId, 10, now)) counter.push(e);
    assert.equal(counter.heldVisitors, 10);
    await counter.flush();
    assert.equal(counter.pending, 10, "kept for the next tick");
    assert.equal(counter.heldVisitors, 0, "keyed: no address or user agent kept");
  } finally {
    await held.drop().catch(() => undefined);
  }

  const saltless = await withDocument();
  try {
    const counter = new StatsCounter(saltless.store, undefined, () => now);
    await saltless.store.close();
    for (const e of visits(saltless.documentId, 5, now - 61_000)) counter.push(e);
    for (const e of visits(saltless.documentId, 5, now)) counter.push(e);
    await counter.flush();
    assert.equal(counter.pending, 5, "the recent ones kept");
    assert.equal(counter.heldVisitors, 5);
    assert.equal(counter.dropped, 5, "those held over a minute dropped");
  } finally {
    await saltless.drop().catch(() => undefined);
  }
});

test("the buffer is bounded by its memory too: distinct long user agents are dropped past 64 MB, however few the events", () => {
  const counter = new StatsCounter({} as never);
  const at = Date.now();
  // Each visitor's user agent is new and 512 characters (as long as a visitor keeps): about 1 KB held each.
  for (let i = 0; i < 100_000; i++) {
    const userAgent = `${String(i).padStart(8, "0")}${"x".repeat(504)}`;
    counter.pushView(lastView(), "d1", at, "192.0.2.1", "192.0.2.1", userAgent, false, 1, "");
  }
  assert.ok(counter.dropped > 0, "some dropped");
  assert.ok(counter.pending < 100_000 && counter.pending > 30_000, `held ${counter.pending}`);
  assert.equal(counter.pending + counter.dropped, 100_000);
});
