import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { blobKeys } from "../../src/blobs/blob-keys.ts";
import { buildNewDocument, newBlobId, newDocumentIds } from "../../src/domain/document.ts";
import { CONVERT_DOCUMENT, CONVERT_PAGES, planPageRanges } from "../../src/domain/job-kinds.ts";
import type { Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";
import { seedAccount } from "../helpers/seed-account.ts";

const pgSkip = await postgresUnavailable();

for (const dialect of DIALECTS) {
  describe(`page ranges on ${dialect.name}`, { skip: dialect.name === "postgres" ? pgSkip : undefined }, () => {
    let store: Store;
    let drop: () => Promise<void>;
    let accountId: number;
    before(async () => {
      ({ store, drop } = await dialect.open());
      accountId = (await seedAccount(store, "ranges", "r".repeat(32), "s".repeat(32), 1));
    });
    after(async () => drop?.());

    async function splitDocument(pages: number, rangePages: number) {
      const now = Date.now();
      const blobId = newBlobId();
      const doc = buildNewDocument(
        newDocumentIds(now),
        { accountId, username: "ranges", origin: "apiupload", orgDocType: "pdf", orgDocName: "a.pdf", defaultTitle: "a", slurpUrl: "", originalSize: 1, blobId },
        { name: undefined, title: undefined, tags: [], commentsAllowed: true, description: undefined, downloadable: false, infoLink: "", language: "", access: "public", explicit: false, category: "000000", type: "000000", ratingsAllowed: true, soundUrl: "", publishDate: undefined, folderIds: [] },
        now,
      );
      await store.documents.insertWithJob(doc, CONVERT_DOCUMENT);
      // The document's own job split it and ended.
      await dbOf(store).updateTable("jobs").set({ state: "done" }).where("documentId", "=", doc.documentId).execute();
      const ok = await store.pageRanges.fanOut(
        { documentId: doc.documentId, accountId, pageCount: pages, pdfKey: blobKeys.original(blobId), textLayerIsOurs: false, ranges: planPageRanges(pages, rangePages) },
        now,
      );
      assert.equal(ok, true);
      const jobs = (await store.jobs.getForDocument(doc.documentId)).filter((j) => j.kind === CONVERT_PAGES);
      // Held as a worker holds them: completing a range needs its lease.
      for (const j of jobs) await dbOf(store).updateTable("jobs").set({ state: "running", leaseOwner: `w${j.id}`, leaseUntil: now + 60_000 }).where("id", "=", j.id).execute();
      return { documentId: doc.documentId, jobs: jobs.map((j) => j.id) };
    }

    test("ranges done at once, in any order, enqueue the publishing job exactly once", async () => {
      const { documentId, jobs } = await splitDocument(40, 4);
      const counted = await Promise.all(jobs.map((id) => store.pageRanges.completeRange(id, `w${id}`, undefined, Date.now())));
      assert.ok(counted.every(Boolean));
      const again = await Promise.all(jobs.map((id) => store.pageRanges.completeRange(id, `w${id}`, undefined, Date.now())));
      assert.ok(again.every((c) => !c), "a range counts once");
      assert.equal((await store.pageRanges.getFanout(documentId))!.rangesLeft, 0);
      const publishing = (await store.jobs.getForDocument(documentId)).filter((j) => j.kind === CONVERT_DOCUMENT && j.state === "queued");
      assert.equal(publishing.length, 1);
      assert.deepEqual(await store.pageRanges.progress(documentId), { pageCount: 40, pagesReady: 40 });
    });

    test("a worker that lost its lease counts for nothing; covers come with the range of page 1", async () => {
      const { documentId, jobs } = await splitDocument(10, 5);
      assert.equal(await store.pageRanges.completeRange(jobs[0]!, "someone-else", { width: 600, height: 800 }, Date.now()), false);
      assert.equal(await store.pageRanges.completeRange(jobs[0]!, `w${jobs[0]}`, { width: 600, height: 800 }, Date.now()), true);
      const split = (await store.pageRanges.getFanout(documentId))!;
      assert.deepEqual([split.rangesLeft, split.coverWidth, split.coverHeight], [1, 600, 800]);
      assert.deepEqual(await store.pageRanges.progress(documentId), { pageCount: 10, pagesReady: 5 });
    });

    test("a split goes with its document", async () => {
      const { documentId } = await splitDocument(10, 5);
      const doc = (await store.documents.getForConversion(documentId))!;
      await store.documents.deleteByNames(accountId, [doc.name]);
      assert.equal(await store.pageRanges.getFanout(documentId), undefined);
      const left = await dbOf(store).selectFrom("pageRanges").select("jobId").where("documentId", "=", documentId).execute();
      assert.deepEqual(left, []);
    });
  });
}
