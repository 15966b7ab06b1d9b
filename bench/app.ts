/**
 * Server time of the web app's documents page for an account holding 10,000 documents (issue 14:
 * target under 100 ms at p99), against the API's `svc.documents.list` of the same page (20
 * documents, newest first) measured in the same run: both answer from the same store query, so
 * the ratio is what the page's session check and HTML add.
 *
 * `npm run bench -- app` (then the upload part, bench/app-upload.ts). Requests go through Fastify's inject (no sockets), alternating page and
 * API, each asking for a different page so that no answer comes from a cache.
 */
import { randomBytes } from "node:crypto";
import { QuireClient } from "../src/client/quire-client.ts";
import type { DocumentRecord } from "../src/domain/document.ts";
import { toRow } from "../src/store/documents.ts";
import { DOCUMENTS_PAGE_SIZE } from "../src/web/app/documents-page.ts";
import { AppClient, givePassword, TEST_APP_ENV } from "../test/helpers/app-client.ts";
import { startTestServer } from "../test/helpers/test-server.ts";
import { benchAppUpload } from "./app-upload.ts";
import { dbOf } from "../test/helpers/store-db.ts";

const DOCUMENTS = 10_000;
const RUNS = 400;

function record(accountId: number, i: number, now: number): DocumentRecord {
  const publicationId = randomBytes(16).toString("hex");
  const revisionId = String(250101000000 + i).padStart(12, "0");
  const documentId = `${revisionId}-${publicationId}`;
  return {
    documentId, revisionId, publicationId, accountId, username: "tester", name: `document-${i}`, nameGiven: true,
    title: `Document number ${i}`, description: `The description of document ${i}.`, descriptionGiven: true,
    access: i % 3 === 0 ? "private" : "public", state: i % 50 === 0 ? "F" : "A", category: "000000", type: "000000",
    language: "en", orgDocType: "pdf", orgDocName: `document-${i}.pdf`, origin: "apiupload", pageCount: 1 + (i % 40),
    publishDate: now - i * 60_000, createdAt: now - i * 60_000, updatedAt: now - i * 60_000, tags: ["bench"], folderIds: [],
    commentsAllowed: true, ratingsAllowed: true, downloadable: false, explicit: false, infoLink: "", soundUrl: "", slurpUrl: "",
    coverWidth: 0, coverHeight: 0, errorCode: i % 50 === 0 ? 3 : 0, errorMessage: "", blobId: randomBytes(16).toString("hex"), originalSize: 1000,
    ratingCounts: [0, 0, 0, 0, 0], commentsVersion: 0, commentsShown: 0,
  };
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

export async function benchApp(): Promise<void> {
  const server = await startTestServer({ ...TEST_APP_ENV, QUIRE_RATE_BURST: "1000000", QUIRE_RATE_PER_SECOND: "0" });
  try {
    const now = Date.now();
    const rows = Array.from({ length: DOCUMENTS }, (_, i) => toRow(record(1, i, now)));
    for (let i = 0; i < rows.length; i += 500) await dbOf(server.services.store).insertInto("documents").values(rows.slice(i, i + 500)).execute();
    await givePassword(server, "tester");
    const browserless = new AppClient(server.url);
    if ((await browserless.signIn("tester")).status !== 303) throw new Error("sign-in failed");
    const cookie = browserless.cookieHeader();
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });

    const pages = DOCUMENTS / DOCUMENTS_PAGE_SIZE;
    const order = Array.from({ length: RUNS }, (_, i) => 1 + ((i * 7919) % pages));
    const times = { page: [] as number[], api: [] as number[] };
    const time = async (run: () => Promise<{ statusCode: number; body: string }>, check: (body: string) => boolean) => {
      const t = process.hrtime.bigint();
      const res = await run();
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      if (res.statusCode !== 200 || !check(res.body)) throw new Error(`unexpected answer ${res.statusCode}: ${res.body.slice(0, 200)}`);
      return ms;
    };
    for (let warm = 0; warm < 2; warm++) {
      for (const [i, page] of order.entries()) {
        const pageMs = await time(
          () => server.app.inject({ method: "GET", url: `/app/documents?page=${page}`, headers: { cookie } }),
          (b) => b.includes(`Page ${page} of ${pages}`),
        );
        const body = new URLSearchParams(client.signed("documents.list", {
          documentSortBy: "publishDate", resultOrder: "desc", startIndex: String((page - 1) * DOCUMENTS_PAGE_SIZE), pageSize: String(DOCUMENTS_PAGE_SIZE),
          // A different parameter from the warm-up pass's keeps the API's answer cache out of the baseline.
          responseParams: (i + warm) % 2 === 0 ? "documentId,title,state,pageCount,access,publishDate,orgDocType,name" : "documentId,title,state,pageCount,access,publishDate,orgDocType,name,description",
        })).toString();
        const apiMs = await time(
          () => server.app.inject({ method: "POST", url: "/1_0", headers: { "content-type": "application/x-www-form-urlencoded" }, payload: body }),
          (b) => b.includes('"stat":"ok"'),
        );
        // The first pass warms the code and the database's pages; the second is measured.
        if (warm === 1) {
          times.page.push(pageMs);
          times.api.push(apiMs);
        }
      }
    }
    const line = (name: string, xs: number[]) => `${name.padEnd(34)} p50 ${percentile(xs, 0.5).toFixed(2).padStart(7)} ms   p99 ${percentile(xs, 0.99).toFixed(2).padStart(7)} ms`;
    process.stdout.write(`${DOCUMENTS} documents in the account, ${RUNS} requests each, pages spread over all ${pages}\n`);
    process.stdout.write(`${line("app /app/documents?page=N", times.page)}\n`);
    process.stdout.write(`${line("baseline svc.documents.list (API)", times.api)}\n`);
    process.stdout.write(`ratio app/API: p50 ${(percentile(times.page, 0.5) / percentile(times.api, 0.5)).toFixed(2)}x, p99 ${(percentile(times.page, 0.99) / percentile(times.api, 0.99)).toFixed(2)}x (target: app p99 under 100 ms)\n`);
  } finally {
    await server.close();
  }
  await benchAppUpload();
}
