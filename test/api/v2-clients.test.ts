import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { postgresUnavailable } from "../helpers/dialects.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { until } from "../helpers/poll.ts";
import type { TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";
import { sdk, tokenFor, v2Request, type V2Answer } from "../helpers/v2-client.ts";
import { assertV2Enums, fixtureHost, startServerOn } from "../helpers/v2-server.ts";

/**
 * What each real v2 client sends (research note §2.7, §5), against a real server and worker on
 * both dialects: the TS SDK's axios requests and polling, the PHP library's Guzzle requests, the
 * WordPress plugin's curl requests, the C# SDK's enums and multipart.
 */

const PDF = "pdf-quartz-firefox-1page.pdf";
const pgSkip = await postgresUnavailable();

/** A success as every client needs it: exactly 200, JSON, and never a top-level `message` (PHP reads that as an error). */
function ok(r: V2Answer, what: string): any { // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.equal(r.status, 200, `${what}: ${r.status} ${r.text}`);
  assert.match(r.type, /^application\/json/, what);
  if (r.json !== null && typeof r.json === "object" && !Array.isArray(r.json)) assert.ok(!("message" in r.json), `${what} has no message`);
  return r.json;
}

for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`v2 clients on ${dialect}`, { skip: dialect === "postgres" ? pgSkip : undefined }, () => {
    let server: TestServer;
    let worker: TestWorker;
    let files: { url: string; close(): Promise<void> };
    let token: string;
    before(async () => {
      server = await startServerOn(dialect);
      worker = await startTestWorker(server, { startOffice: false, allowPrivate: true });
      files = await fixtureHost();
      token = await tokenFor(server);
    });
    after(async () => {
      await files.close();
      await worker.stop();
      await server.close();
    });

    test("the TS SDK: create, upload a Blob (part `file`, name `blob`), poll without delay, publish, share, stack, revoke", async () => {
      const c = sdk(server, token);
      const draft = ok(await c.post("drafts", { confirmCopyright: true, info: { access: "PUBLIC", title: "Annual report", description: "<p>Numbers</p>", preview: false, type: "book", showDetectedLinks: true, downloadable: true, originalPublishDate: "2021-10-01" } }), "create");
      assert.equal(draft.state, "DRAFT");
      assert.equal(draft.fileInfo, undefined, "no file yet");
      assert.equal(draft.changes.title, "Annual report");
      assertV2Enums(draft);

      const form = new FormData();
      form.append("file", new Blob([await readFile(join(FIXTURES, PDF))], { type: "text/plain" }));
      form.append("confirmCopyright", "true");
      const uploaded = ok(await v2Request(server, "PATCH", `drafts/${draft.slug}/upload`, { headers: { Authorization: `Bearer ${token}` }, body: form }), "upload");
      assert.equal(uploaded.fileInfo.name, "blob");
      assert.equal(uploaded.fileInfo.type, "PDF");
      assert.equal(uploaded.fileInfo.isCopyrightConfirmed, true);
      assertV2Enums(uploaded);

      // saveAndUploadDraft's loop: GET until DONE, no pause between requests (never a 429).
      let polled: any; // eslint-disable-line @typescript-eslint/no-explicit-any
      await until(async () => {
        polled = ok(await c.get(`drafts/${draft.slug}`), "poll");
        return polled.fileInfo.conversionStatus === "DONE";
      }, 60_000, "conversion DONE", 0);
      assert.equal(polled.fileInfo.pageCount, 1);
      assert.equal(polled.state, "DRAFT");

      const published = ok(await c.post(`drafts/${draft.slug}/publish`, { desiredName: "annualreport" }), "publish");
      assert.match(published.publicLocation, /\/tester\/docs\/annualreport$/);
      assert.equal(typeof published.location, "string");
      assert.equal((await fetch(published.publicLocation)).status, 200, "the public address loads");
      assert.equal(ok(await c.get(`drafts/${draft.slug}`), "draft after publish").state, "PUBLISHED");

      const pub = ok(await c.get(`publications/${draft.slug}`), "publication");
      assertV2Enums(pub);
      assert.equal(pub.slug, draft.slug);
      assert.equal(pub.title, "Annual report");
      assert.equal(pub.downloadable, true);
      for (const size of ["small", "medium", "large"]) {
        const img = await fetch(pub.cover[size].url);
        assert.equal(img.status, 200, `cover ${size} loads`);
        assert.match(img.headers.get("content-type") ?? "", /^image\/jpeg/);
      }
      const assets = ok(await c.get(`publications/${draft.slug}/assets?assetType=image&size=10&page=1`), "assets");
      assert.ok(assets.results.length > 0 && assets.links && assets.pageSize === 10);
      assert.equal((await fetch(assets.results[0].assets.image.read)).status, 200, "page image loads");
      assert.equal((await fetch(assets.results[0].assets.text.json)).status, 200, "page text loads");
      assert.match(ok(await c.get(`publications/${draft.slug}/reader`), "reader").url, /\/tester\/docs\/annualreport$/);
      assert.match(ok(await c.post(`publications/${draft.slug}/fullscreen`, { startPage: 1, pageLayout: "double", autoflip: false }), "fullscreen").url, /annualreport/);
      const embed = ok(await c.get(`publications/${draft.slug}/embed?responsive=true&width=100%25&height=100%25`), "embed");
      assert.match(embed.embed, /^<iframe src="[^"]+\/tester\/docs\/annualreport\/embed" width="100%" height="100%"/);
      const qr = ok(await c.post(`publications/${draft.slug}/qrcode`, { format: "PNG" }), "qrcode");
      assert.match(qr.pointedUrl, /annualreport$/);
      const png = await fetch(qr.qrCodeUrl);
      assert.equal(png.status, 200);
      assert.deepEqual([...Buffer.from(await png.arrayBuffer()).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
      // The SDK's fullscreen and QR code calls without options: axios 1.x sends no body, typed as a form
      // (the real SDK met a 415 here: scripts/v2-client-check). A form that has a body is still refused.
      const bare = (path: string, body?: string) => v2Request(server, "POST", path, { headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-www-form-urlencoded" }, ...(body !== undefined ? { body } : {}) });
      assert.match(ok(await bare(`publications/${draft.slug}/fullscreen`), "fullscreen without options").url, /annualreport$/);
      assert.match(ok(await bare(`publications/${draft.slug}/qrcode`), "qrcode without options").qrCodeUrl, /qr\.png/);
      assert.equal((await bare(`publications/${draft.slug}/fullscreen`, "startPage=2")).status, 415);

      // Stacks: the id comes back as a bare JSON string; adding is polled until visible.
      const created = await c.post("stacks", { accessType: "PUBLIC", description: "Yearly", title: "Reports" });
      const stackId = ok(created, "stack create");
      assert.equal(typeof stackId, "string");
      assert.equal(created.text, JSON.stringify(stackId));
      ok(await c.post(`stacks/${stackId}/items`, { slug: draft.slug }), "add item");
      await until(async () => ok(await c.get(`stacks/${stackId}/items?includeUnlisted=true&size=10&page=1`), "items").results.length > 0, 10_000, "item listed");
      const patched = ok(await c.patch(`stacks/${stackId}`, { title: "Reports 2", accessType: "UNLISTED" }), "stack patch");
      assert.deepEqual(patched, { id: stackId, title: "Reports 2", description: "Yearly", accessType: "UNLISTED" });
      ok(await c.delete(`stacks/${stackId}/items/${draft.slug}`), "remove item");
      assert.equal(ok(await c.get(`stacks/${stackId}/items`), "items after").count, 0);

      // getAllData: six requests at once.
      const all = await Promise.all(["drafts?page=1&size=10", "publications?page=1&size=10", "stacks?page=1&size=10", "stats", "user/me", "user/features"].map((p) => c.get(p)));
      for (const r of all) ok(r, "getAllData");
      for (const k of ["averageTimeSpent", "clicks", "impressions", "reads", "downloads", "shares"]) assert.equal(typeof all[3]!.json[k], "number", k);
      assert.equal(all[4]!.json.username, "tester");
      assert.equal(all[4]!.json.isTeams, false);
      assert.equal(all[5]!.json.sizeUploadLimitMb, Math.floor(server.config.maxUploadBytes / 1048576));

      ok(await c.delete(`stacks/${stackId}`), "stack delete");
      assert.equal((await c.get(`stacks/${stackId}`)).status, 404);
      ok(await c.delete("oauth/access"), "revoke");
      const after = await c.get("user/me");
      assert.equal(after.status, 401);
      assert.deepEqual(after.json, { message: "Invalid token" });
      token = await tokenFor(server);
    });

    test("the PHP library: every request with Content-Type JSON and the body `[]`, q='' and state=ALL, a fileUrl draft", async () => {
      const guzzle = (method: string, path: string, body: unknown = []) =>
        v2Request(server, method, path, { headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", "User-Agent": "GuzzleHttp/7" }, body: JSON.stringify(body) });
      const drafts = ok(await guzzle("GET", "drafts?q=&page=1&size=10"), "drafts list");
      assert.equal(typeof drafts.count, "number");
      const created = ok(await guzzle("POST", "drafts", {
        confirmCopyright: true, fileUrl: `${files.url}/${PDF}`,
        info: { file: 0, access: "PUBLIC", title: "From an address", description: "first", preview: false, type: "editorial", showDetectedLinks: false, downloadable: false, originalPublishDate: "1970-01-01T00:00:00.000Z" },
      }), "create with fileUrl");
      assert.ok(created.fileInfo, "fileInfo once a file is given");
      // PHP's test: the whole body again with a new description, read back under `changes`.
      const updated = ok(await guzzle("PATCH", `drafts/${created.slug}`, { info: { title: "From an address", description: "second", access: "PUBLIC" } }), "update");
      assert.equal(updated.changes.description, "second");
      // README: 10 tries, 2 s apart (here: until DONE), then publish with `[]`.
      await until(async () => ok(await guzzle("GET", `drafts/${created.slug}`), "get").fileInfo.conversionStatus === "DONE", 60_000, "DONE");
      const published = ok(await guzzle("POST", `drafts/${created.slug}/publish`), "publish []");
      assert.equal(typeof published.publicLocation, "string");
      assert.equal(typeof published.location, "string");
      const list = ok(await guzzle("GET", "publications?q=&state=ALL&page=1&size=10"), "publications");
      assert.equal(list.pageSize, 10);
      assert.equal(typeof list.results[0].state, "string");
      assert.ok(list.results.some((p: { slug: string }) => p.slug === created.slug));
      const stack = ok(await guzzle("POST", "stacks", { accessType: "PUBLIC", description: "d", title: "PHP stack" }), "stack");
      assert.equal(typeof stack, "string");
      const stacks = ok(await guzzle("GET", "stacks?showUnlisted=false&page=1&size=1"), "stacks");
      assert.equal(stacks.pageSize, 1);
      assert.equal(typeof stacks.results[0].id, "string");
      ok(await guzzle("DELETE", `publications/${created.slug}`), "delete []");
      assert.equal((await guzzle("GET", `publications/${created.slug}`)).status, 404);
      ok(await guzzle("DELETE", `stacks/${stack}`), "stack delete []");
    });

    test("the WordPress plugin: Content-Type on bodiless GETs, string booleans, page as an offset, stray parameters", async () => {
      const curl = (method: string, path: string, body?: string) =>
        v2Request(server, method, path, { headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, ...(body !== undefined ? { body } : {}) });
      const created = ok(await curl("POST", "drafts", JSON.stringify({
        confirmCopyright: "true",
        info: { title: "WP doc", description: "from a form", access: "PUBLIC", downloadable: "false", showDetectedLinks: "true", preview: "false", type: "editorial" },
      })), "create");
      assert.equal(created.changes.downloadable, false);
      assert.equal(created.changes.showDetectedLinks, true);
      const patched = ok(await curl("PATCH", `drafts/${created.slug}`, JSON.stringify({ info: { title: "WP doc 2", downloadable: "true", access: "PRIVATE" } })), "patch");
      assert.equal(patched.changes.title, "WP doc 2");
      assert.equal(patched.changes.downloadable, true);
      assert.equal(patched.changes.access, "PRIVATE");
      const page0 = ok(await curl("GET", "publications?size=10&page=0&orgDocName=x.pdf&format=json"), "page=0");
      assert.equal(page0.pageSize, 10);
      ok(await curl("GET", "drafts/"), "trailing slash");
      ok(await curl("GET", `drafts/${created.slug}`, ""), "empty body");
      ok(await curl("DELETE", `drafts/${created.slug}`, ""), "delete with empty body");
      assert.equal((await curl("GET", `drafts/${created.slug}`)).status, 404);
    });

    test("the C# SDK: every field serialised, its aliases (fileId, promotion, fullScreenSettings, +00:00), multipart with confirmCopyright false", async () => {
      const net = (method: string, path: string, body?: unknown) =>
        v2Request(server, method, path, { headers: { Authorization: `Bearer ${token}`, Accept: "application/json", ...(body !== undefined ? { "Content-Type": "application/json; charset=utf-8" } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      const created = ok(await net("POST", "drafts", {
        confirmCopyright: false,
        info: { fileId: 0, access: "PRIVATE", title: "NET doc", description: "", preview: false, type: "promotion", showDetectedLinks: false, downloadable: false, originalPublishDate: "2024-06-10T00:00:00+00:00" },
      }), "create");
      assertV2Enums(created);
      assert.equal(created.changes.type, "promotional");
      assert.equal(created.changes.originalPublishDate, "2024-06-10T00:00:00.000Z");
      const form = new FormData();
      form.append("confirmCopyright", "false");
      form.append("file", new Blob([await readFile(join(FIXTURES, PDF))], { type: "application/pdf" }), "report.pdf");
      const up = ok(await v2Request(server, "PATCH", `drafts/${created.slug}/upload`, { headers: { Authorization: `Bearer ${token}` }, body: form }), "upload");
      assert.equal(up.fileInfo.name, "report.pdf");
      assertV2Enums(up);
      await until(async () => ok(await net("GET", `drafts/${created.slug}`), "get").fileInfo.conversionStatus === "DONE", 60_000, "DONE");
      ok(await net("POST", `drafts/${created.slug}/publish`, { desiredName: "net-doc" }), "publish");
      const pub = ok(await net("GET", `publications/${created.slug}`), "get");
      assertV2Enums(pub);
      assert.equal(pub.access, "PRIVATE");
      const page = ok(await net("GET", "publications?page=1&size=10"), "list");
      for (const p of page.results) assertV2Enums(p);
      assert.equal(typeof page.count, "number");
      const embed = ok(await net("GET", `publications/${created.slug}/embed?responsive=true&width=100%25&height=100%25&hideIssuuLogo=false&hideShareButton=false&showOtherPublications=false`), "embed");
      assert.match(embed.embed, /<iframe /);
      const qr = ok(await net("POST", `publications/${created.slug}/qrcode`, {
        format: "SVG",
        fullScreenSettings: { startPage: 1, pageLayout: "single", autoflip: false, backgroundColor: "#ffffff", backgroundImagePosition: "stretch", showOtherPublications: false, hideShare: false },
      }), "qr");
      const svg = await fetch(qr.qrCodeUrl);
      assert.equal(svg.status, 200);
      assert.match(await svg.text(), /<svg/);
    });
  });
}
