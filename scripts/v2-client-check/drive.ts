// Drives every operation of Issuu's TypeScript SDK (issuu/issuu-api-sdk, loaded from the folder
// CHECK_SDK_DIR outside this repository, unchanged) against the Quire that run.ts started, and
// checks what the SDK returns or throws: the happy paths, and the unhappy ones its users meet (an
// unknown or another account's slug, a bad token, a revoked one, a publish refused, a wrong value,
// token guessing). Started by run.ts with ISSUU_API_SDK_URL set, which the SDK reads when its
// src/services/api.ts loads. Writes its outcomes as JSON to CHECK_RESULT.
//
// Each check is `pass`, `fail`, or `sdk-bug`: a defect of the SDK itself that would fail the same
// way against api.issuu.com (named with its file and line in docs/api-v2.md); for those the check
// also makes sure Quire's answer was the right one, through the SDK's own axios instance.
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";

// The SDK is plain TypeScript with no declarations this repository can see: its calls are untyped here.
type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run.ts sets it)`);
  return v;
};
const sdkDir = env("CHECK_SDK_DIR");
const token = env("CHECK_TOKEN");
const spareToken = env("CHECK_SPARE_TOKEN");
const otherToken = env("CHECK_OTHER_TOKEN");
const fileUrl = env("CHECK_FILE_URL");
const pdfBytes = await readFile(env("CHECK_PDF"));
const verbose = process.env.CHECK_VERBOSE === "1";

// The SDK logs every failure with console.error before it throws; those lines are the expected
// ones of the unhappy paths. Kept out of the report unless --verbose.
const sdkLog: string[] = [];
console.error = (...parts: unknown[]) => {
  const line = parts.map((p) => (typeof p === "string" ? p : JSON.stringify(p))).join(" ");
  if (verbose) process.stderr.write(`  [sdk] ${line}\n`);
  else sdkLog.push(line);
};

const Issuu: (token: string) => Any = ((await import(pathToFileURL(join(sdkDir, "index.ts")).href)) as Any).default;
const { api } = (await import(pathToFileURL(join(sdkDir, "src/services/api.ts")).href)) as Any;
let sdk: Any = Issuu(token);
const { draft, publication, stack, user } = sdk;

interface Outcome {
  name: string;
  outcome: "pass" | "fail" | "sdk-bug";
  detail: string;
}
const outcomes: Outcome[] = [];
class SdkBug extends Error {}

async function check(name: string, body: () => Promise<string | void>): Promise<void> {
  const started = Date.now();
  let o: Outcome;
  try {
    const detail = (await body()) ?? "";
    o = { name, outcome: "pass", detail };
  } catch (err) {
    if (err instanceof SdkBug) o = { name, outcome: "sdk-bug", detail: err.message };
    else o = { name, outcome: "fail", detail: err instanceof Error ? (err.stack ?? err.message) : JSON.stringify(err) };
  }
  outcomes.push(o);
  const mark = o.outcome === "pass" ? "ok  " : o.outcome === "sdk-bug" ? "SDK " : "FAIL";
  process.stdout.write(`${mark} ${name} (${Date.now() - started} ms)${o.detail ? `: ${o.detail.split("\n").join("\n       ")}` : ""}\n`);
}

/** What the SDK throws for an HTTP failure: `{status, data}` (every controller but getMyFeatures). */
async function rejection(p: Promise<unknown>): Promise<{ status?: number; data?: Any }> {
  try {
    await p;
  } catch (err) {
    return err as { status?: number; data?: Any };
  }
  throw new Error("expected the SDK call to fail, it succeeded");
}

/** The SDK's error for one call, when it is not its `{status, data}` shape. */
async function thrown(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected the SDK call to fail, it succeeded");
}

async function loads(url: string, type?: RegExp): Promise<Buffer> {
  const r = await fetch(url);
  assert.equal(r.status, 200, `${url} answers ${r.status}`);
  if (type) assert.match(r.headers.get("content-type") ?? "", type, `${url} content type`);
  return Buffer.from(await r.arrayBuffer());
}

const PDF_BLOB = () => new Blob([pdfBytes], { type: "application/pdf" });
// The SDK's own tests' create body (tests/unit/draft.test.ts), with a loopback file for w3.org's.
const jestDraft = () => ({
  confirmCopyright: true,
  fileUrl,
  info: { access: "PUBLIC", title: "Test Draft", description: "This is a test draft from Jest", preview: false, type: "book", showDetectedLinks: true, downloadable: true, originalPublishDate: "2021-10-01", scheduledTime: undefined },
});

/** The polling loop of saveAndUploadDraft (draft.controller.ts) and of the SDK's tests: GET until DONE. */
async function pollDone(slug: string, pauseMs: number): Promise<{ doc: Any; polls: number }> {
  const deadline = Date.now() + 120_000;
  for (let polls = 1; ; polls++) {
    const doc = await draft.getDraftBySlug(slug);
    if (doc.fileInfo.conversionStatus === "DONE") return { doc, polls };
    assert.notEqual(doc.fileInfo.conversionStatus, "FAILED", `conversion of ${slug} failed: ${JSON.stringify(doc.fileInfo)}`);
    if (Date.now() > deadline) throw new Error(`${slug} still ${doc.fileInfo.conversionStatus} after 120 s`);
    if (pauseMs > 0) await sleep(pauseMs);
  }
}

const state: { metaSlug?: string; urlSlug?: string; pubSlug?: string; publicLocation?: string; stackId?: string } = {};

// ---------- user ----------

await check("user.getMyProfile", async () => {
  const me = await user.getMyProfile();
  assert.equal(me.username, "checker");
  assert.equal(typeof me.userId, "number");
  assert.equal(typeof me.ownerId, "number");
  assert.equal(typeof me.displayName, "string");
  assert.equal(me.isTeams, false);
  assert.equal(typeof me.profileImages, "object");
  return `userId ${me.userId}`;
});

await check("user.getMyFeatures", async () => {
  const f = await user.getMyFeatures();
  for (const k of ["fullscreenShare", "download", "detectedLinks"]) assert.equal(typeof f[k], "boolean", k);
  for (const k of ["publishedDocumentLimitLeft", "unlistedDocumentLimitLeft", "sizeUploadLimitMb", "pageUploadLimit", "publishedDocumentLimit", "unlistedDocumentLimit"]) {
    assert.ok(typeof f[k] === "number" || f[k] === "unlimited", `${k} = ${JSON.stringify(f[k])}`);
  }
  return `sizeUploadLimitMb ${f.sizeUploadLimitMb}, pageUploadLimit ${f.pageUploadLimit}`;
});

// ---------- drafts ----------

await check("draft.createNewDraft without a file", async () => {
  const d = await draft.createNewDraft({ confirmCopyright: true, info: { access: "PUBLIC", title: "Annual report 2026", description: "<p>Numbers</p>", preview: false, type: "editorial", downloadable: true } });
  assert.equal(d.state, "DRAFT");
  assert.equal(typeof d.slug, "string");
  assert.equal(d.owner, "checker");
  assert.equal(typeof d.location, "string");
  assert.match(d.created, /^\d{4}-\d\d-\d\dT/);
  assert.equal(d.changes.title, "Annual report 2026");
  assert.equal(d.fileInfo, undefined, "no file yet");
  state.metaSlug = d.slug;
  return d.slug;
});

await check("draft.createNewDraft with fileUrl (the SDK's own test body)", async () => {
  const d = await draft.createNewDraft(jestDraft());
  // tests/unit/draft.test.ts expects all of these right after the create.
  for (const k of ["slug", "owner", "fileInfo", "location", "created"]) assert.notEqual(d[k], undefined, k);
  assert.equal(d.state, "DRAFT");
  state.urlSlug = d.slug;
  // `cover` is absent on a draft (docs/api-v2.md: a draft's images are not public yet).
  return `fileInfo ${JSON.stringify(d.fileInfo)}; cover ${d.cover === undefined ? "absent (Quire: drafts have none)" : "present"}`;
});

await check("draft.getDraftBySlug polled without a pause until DONE (the SDK's tests' loop)", async () => {
  const { doc, polls } = await pollDone(state.urlSlug!, 0);
  assert.equal(doc.state, "DRAFT");
  assert.equal(doc.fileInfo.type, "PDF");
  assert.equal(doc.fileInfo.pageCount, 1);
  return `${polls} polls, never a 429`;
});

await check("draft.uploadDocumentToDraftBySlug (multipart `file` named blob, confirmCopyright 'true')", async () => {
  const d = await draft.uploadDocumentToDraftBySlug(state.metaSlug!, { file: PDF_BLOB(), confirmCopyright: "true" }, () => undefined);
  for (const k of ["name", "type", "size", "pageCount", "conversionStatus"]) assert.notEqual(d.fileInfo[k], undefined, `fileInfo.${k}`);
  assert.equal(d.fileInfo.name, "blob");
  assert.equal(d.fileInfo.size, pdfBytes.length);
  assert.equal(d.fileInfo.isCopyrightConfirmed, true);
  return `fileInfo ${JSON.stringify(d.fileInfo)}`;
});

await check("draft.getDraftBySlug polled every 1000 ms until DONE (saveAndUploadDraft's loop)", async () => {
  const { polls } = await pollDone(state.metaSlug!, 1000);
  return `${polls} polls`;
});

await check("draft.updateDraftBySlug of a draft", async () => {
  const d = await draft.updateDraftBySlug(state.metaSlug!, { info: { description: "<p>Numbers, checked</p>" } });
  assert.equal(d.state, "DRAFT");
  assert.equal(d.changes.description, "<p>Numbers, checked</p>");
  assert.equal(d.changes.title, "Annual report 2026", "fields not sent are kept");
});

await check("draft.publishDraftBySlug with desiredName (cleaned by the SDK to [a-z0-9])", async () => {
  const r = await draft.publishDraftBySlug(state.metaSlug!, { desiredName: "Annual Report 2026!" });
  assert.equal(typeof r.location, "string");
  assert.match(r.publicLocation, /\/checker\/docs\/annualreport2026$/);
  await loads(r.publicLocation, /^text\/html/);
  state.pubSlug = state.metaSlug;
  state.publicLocation = r.publicLocation;
  return r.publicLocation;
});

await check("draft.getDraftBySlug of a published document", async () => {
  const d = await draft.getDraftBySlug(state.pubSlug!);
  assert.equal(d.state, "PUBLISHED");
});

await check("draft.publishDraftBySlug refused: no file (publishFailedReason missing_file)", async () => {
  const d = await draft.createNewDraft({ info: { title: "Nothing attached", access: "PRIVATE" } });
  const e = await rejection(draft.publishDraftBySlug(d.slug));
  assert.ok(e.status === 400 || e.status === 422, `status ${e.status}`);
  assert.equal(e.data.publishFailedReason, "missing_file");
  assert.equal(typeof e.data.message, "string");
  await draft.deleteDraftBySlug(d.slug);
  return `${e.status} ${JSON.stringify(e.data)}`;
});

await check("draft.publishDraftBySlug refused while converting (file_not_converted)", async () => {
  const d = await draft.createNewDraft(jestDraft());
  const e = await rejection(draft.publishDraftBySlug(d.slug)).catch((err: Error) => {
    // Converted before the publish arrived: nothing to show about the refusal this time.
    if (/succeeded/.test(err.message)) return undefined;
    throw err;
  });
  await pollDone(d.slug, 200);
  await draft.deleteDraftBySlug(d.slug);
  if (!e) return "not shown: the conversion ended before the publish arrived";
  assert.equal(e.status, 400);
  assert.equal(e.data.publishFailedReason, "file_not_converted");
  return `${e.status} ${JSON.stringify(e.data)}`;
});

await check("draft.updateDraftBySlug refused: a value outside the enum (400 naming the field)", async () => {
  const e = await rejection(draft.updateDraftBySlug(state.urlSlug!, { info: { access: "SECRET" } }));
  assert.equal(e.status, 400);
  assert.match(e.data.message, /access/);
  return JSON.stringify(e.data);
});

// ---------- publications ----------

await check("publication.getPublicationBySlug", async () => {
  const p = await publication.getPublicationBySlug(state.pubSlug!);
  assert.equal(p.slug, state.pubSlug);
  assert.equal(p.state, "PUBLISHED");
  assert.equal(p.title, "Annual report 2026");
  assert.equal(p.description, "<p>Numbers, checked</p>");
  assert.equal(p.access, "PUBLIC");
  assert.equal(p.downloadable, true);
  assert.equal(p.publicLocation, state.publicLocation);
  assert.equal(p.fileInfo.conversionStatus, "DONE");
  for (const size of ["small", "medium", "large"]) {
    assert.equal(typeof p.cover[size].width, "number");
    await loads(p.cover[size].url, /^image\/jpeg/);
  }
  return "covers small/medium/large load";
});

await check("publication.getPublicationAssetsBySlug", async () => {
  const a = await publication.getPublicationAssetsBySlug(state.pubSlug!, "image", 10, 1);
  assert.ok(a.results.length > 0);
  assert.ok(a.links);
  assert.equal(a.pageSize, 10);
  const page = a.results[0];
  assert.equal(page.pageNumber, 1);
  for (const url of Object.values(page.assets.image) as string[]) await loads(url, /^image\//);
  for (const url of Object.values(page.assets.text) as string[]) await loads(url);
  return `${a.results.length} page(s); image ${Object.keys(page.assets.image).join("/")}, text ${Object.keys(page.assets.text).join("/")}`;
});

await check("publication.getPublicationReaderShareBySlug", async () => {
  const r = await publication.getPublicationReaderShareBySlug(state.pubSlug!);
  assert.equal(r.url, state.publicLocation);
  await loads(r.url, /^text\/html/);
});

await check("publication.getPublicationFullscreenShareBySlug", async () => {
  const r = await publication.getPublicationFullscreenShareBySlug(state.pubSlug!, { startPage: 1, pageLayout: "single", autoflip: false, hideShare: true });
  assert.ok(r.url.startsWith(state.publicLocation!), r.url);
  await loads(r.url, /^text\/html/);
  return r.url;
});

for (const format of ["PNG", "SVG"] as const) {
  await check(`publication.getPublicationQRCodeShareBySlug ${format}`, async () => {
    const r = await publication.getPublicationQRCodeShareBySlug(state.pubSlug!, { format, fullscreenSettings: { startPage: 1 } });
    assert.ok(r.pointedUrl.startsWith(state.publicLocation!), r.pointedUrl);
    const img = await loads(r.qrCodeUrl, format === "PNG" ? /^image\/png/ : /^image\/svg\+xml/);
    if (format === "PNG") assert.deepEqual([...img.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    else assert.match(img.toString("utf8"), /<svg/);
    return `points at ${r.pointedUrl}`;
  });
}

await check("publication.getPublicationFullscreenShareBySlug and getPublicationQRCodeShareBySlug without options", async () => {
  // Axios sends these with no body and `Content-Type: application/x-www-form-urlencoded`.
  const share = await publication.getPublicationFullscreenShareBySlug(state.pubSlug!);
  assert.ok(share.url.startsWith(state.publicLocation!), share.url);
  const qr = await publication.getPublicationQRCodeShareBySlug(state.pubSlug!);
  await loads(qr.qrCodeUrl, /^image\/png/);
  return `${share.url}; ${qr.qrCodeUrl.replace(/t=.*/, "t=…")}`;
});

await check("publication.getPublicationEmbedCodeBySlug", async () => {
  const r = await publication.getPublicationEmbedCodeBySlug(state.pubSlug!, { responsive: true, width: "100%", height: 600, hideIssuuLogo: true, hideShareButton: false, bgColor: "ffffff" });
  const m = /<iframe[^>]* src="([^"]+)"/.exec(r.embed);
  assert.ok(m, r.embed);
  await loads(m[1]!.replaceAll("&amp;", "&"), /^text\/html/);
  return r.embed;
});

await check("draft.updateDraftBySlug of a published document stages `changes`; a second publish applies them", async () => {
  const u = await draft.updateDraftBySlug(state.pubSlug!, { info: { title: "Annual report 2026, revised" } });
  assert.equal(u.state, "PUBLISHED");
  assert.equal(u.changes.title, "Annual report 2026, revised");
  assert.equal((await publication.getPublicationBySlug(state.pubSlug!)).title, "Annual report 2026", "readers keep the published title meanwhile");
  const r = await draft.publishDraftBySlug(state.pubSlug!, { desiredName: "another-name" });
  assert.equal(r.publicLocation, state.publicLocation, "desiredName is ignored on a later publish");
  assert.equal((await publication.getPublicationBySlug(state.pubSlug!)).title, "Annual report 2026, revised");
});

await check("draft.uploadDocumentToDraftBySlug of a published document (a new file, same address)", async () => {
  const d = await draft.uploadDocumentToDraftBySlug(state.pubSlug!, { file: PDF_BLOB(), confirmCopyright: "true" });
  assert.equal(d.state, "PUBLISHED");
  await pollDone(state.pubSlug!, 200);
  await loads(state.publicLocation!, /^text\/html/);
});

// ---------- lists ----------

await check("user.getMyDrafts (with and without q)", async () => {
  const all = await user.getMyDrafts();
  assert.equal(typeof all.count, "number");
  assert.equal(all.pageSize, 10);
  assert.ok(all.links.self);
  assert.ok(all.results.some((d: Any) => d.slug === state.urlSlug));
  assert.ok(!all.results.some((d: Any) => d.slug === state.pubSlug), "a published document is no draft");
  const q = await user.getMyDrafts("test draft", 1, 5);
  assert.equal(q.pageSize, 5);
  assert.ok(q.results.every((d: Any) => /test draft/i.test(`${d.changes?.title} ${d.changes?.description}`)));
  return `count ${all.count}; q matched ${q.count}`;
});

await check("user.getMyPublications (ALL, PUBLISHED, UNLISTED, SCHEDULED)", async () => {
  const all = await user.getMyPublications();
  assert.ok(all.results.some((p: Any) => p.slug === state.pubSlug));
  const published = await user.getMyPublications("revised", "PUBLISHED", 1, 10);
  assert.deepEqual(published.results.map((p: Any) => p.slug), [state.pubSlug]);
  const unlisted = await user.getMyPublications(undefined, "UNLISTED");
  assert.ok(!unlisted.results.some((p: Any) => p.slug === state.pubSlug), "a PUBLIC document is not unlisted");
  const scheduled = await user.getMyPublications(undefined, "SCHEDULED");
  assert.equal(typeof scheduled.count, "number");
  return `count ${all.count}`;
});

// ---------- stacks ----------

await check("stack.createNewStack (the id as a bare string)", async () => {
  const id = await stack.createNewStack({ accessType: "PUBLIC", description: "This is a test stack", title: "Test Stack" });
  assert.equal(typeof id, "string");
  assert.ok(id.length > 0);
  state.stackId = id;
  return id;
});

await check("stack.getStack", async () => {
  const s = await stack.getStack(state.stackId!);
  assert.deepEqual(s, { id: state.stackId, title: "Test Stack", description: "This is a test stack", accessType: "PUBLIC" });
});

await check("stack.updateStack", async () => {
  const s = await stack.updateStack(state.stackId!, { title: "Test Stack 2", accessType: "UNLISTED" });
  assert.deepEqual(s, { id: state.stackId, title: "Test Stack 2", description: "This is a test stack", accessType: "UNLISTED" });
});

await check("stack.addStackItem, then stack.getStackItems until listed (the SDK's tests' retry)", async () => {
  const deadline = Date.now() + 20_000;
  let items: Any;
  do {
    await stack.addStackItem(state.stackId!, state.pubSlug!);
    items = await stack.getStackItems(state.stackId!, { includeUnlisted: true, size: 10, page: 1 });
  } while (items.results.length === 0 && Date.now() < deadline && (await sleep(2000), true));
  // types/stack.d.ts (stored version) names the list `publications`; the note's newer SDK and Quire, `results`.
  assert.deepEqual(items.results, [state.pubSlug]);
  assert.equal(items.count, 1);
  return JSON.stringify(items);
});

await check("stack.addStackItem refused for a draft (only published documents)", async () => {
  const e = await rejection(stack.addStackItem(state.stackId!, state.urlSlug!));
  assert.ok(e.status !== undefined && e.status >= 400 && e.status < 500, `status ${e.status}`);
  return `${e.status} ${JSON.stringify(e.data)}`;
});

await check("user.getMyStacks (showUnlisted false / true)", async () => {
  const hidden = await user.getMyStacks();
  assert.ok(!hidden.results.some((s: Any) => s.id === state.stackId), "an UNLISTED stack is left out by default");
  const shown = await user.getMyStacks(true, 1, 10);
  assert.ok(shown.results.some((s: Any) => s.id === state.stackId));
  assert.equal(typeof shown.count, "number");
});

await check("stack.removeStackItem", async () => {
  await stack.removeStackItem(state.stackId!, state.pubSlug!);
  const items = await stack.getStackItems(state.stackId!);
  assert.equal(items.count, 0);
});

await check("stack.deleteStack, then stack.getStack is 404", async () => {
  await stack.deleteStack(state.stackId!);
  const e = await rejection(stack.getStack(state.stackId!));
  assert.equal(e.status, 404);
  assert.equal(e.data.message, "Not Found");
});

// ---------- statistics, everything at once ----------

await check("user.getMyStats (account, and one publication this month)", async () => {
  const all = await user.getMyStats();
  const one = await user.getMyStats("thisMonth", state.pubSlug);
  for (const s of [all, one]) for (const k of ["averageTimeSpent", "clicks", "impressions", "reads"]) assert.equal(typeof s[k], "number", k);
  return JSON.stringify(one);
});

await check("user.getAllData (six requests at once)", async () => {
  const [drafts, pubs, stacks, stats, me, features] = await user.getAllData(1, 10);
  assert.equal(typeof drafts.count, "number");
  assert.equal(typeof pubs.count, "number");
  assert.equal(typeof stacks.count, "number");
  assert.equal(typeof stats.reads, "number");
  assert.equal(me.username, "checker");
  assert.equal(typeof features.download, "boolean");
});

// ---------- scheduled publishing ----------

await check("draft.publishDraftBySlug with info.scheduledTime: SCHEDULED, then PUBLISHED by the worker", async () => {
  const d = await draft.createNewDraft(jestDraft());
  await pollDone(d.slug, 200);
  const at = new Date(Date.now() + 4000).toISOString();
  await draft.updateDraftBySlug(d.slug, { info: { scheduledTime: at } });
  const r = await draft.publishDraftBySlug(d.slug, { desiredName: "later" });
  assert.match(r.publicLocation, /\/checker\/docs\/later$/);
  assert.equal((await draft.getDraftBySlug(d.slug)).state, "SCHEDULED");
  assert.ok((await user.getMyPublications(undefined, "SCHEDULED")).results.some((p: Any) => p.slug === d.slug));
  const deadline = Date.now() + 60_000;
  while ((await draft.getDraftBySlug(d.slug)).state !== "PUBLISHED") {
    if (Date.now() > deadline) throw new Error("not published 60 s after its scheduledTime");
    await sleep(500);
  }
  await loads(r.publicLocation, /^text\/html/);
  await publication.deletePublicationBySlug(d.slug);
});

// ---------- saveAndUploadDraft / createAndUploadDraft ----------

for (const method of ["saveAndUploadDraft", "createAndUploadDraft"] as const) {
  await check(`draft.${method} (create, upload, poll, publish)`, async () => {
    const before = (await user.getMyDrafts(undefined, 1, 100)).count as number;
    const progress: number[] = [];
    const err = await thrown(draft[method]({ confirmCopyright: true, info: { title: `Via ${method}`, access: "PUBLIC" } }, { file: PDF_BLOB(), confirmCopyright: "true" }, true, (p: number) => progress.push(p), { desiredName: method, checkConversionStatusTimeout: 200 })).catch((e: Error) => e);
    if (err instanceof Error && /succeeded/.test(err.message)) return "published";
    // draft.controller.ts declares `isAborted` (line 272) but reads `is_aborted` (first at line 302):
    // a ReferenceError once the draft is made, whatever the server answers.
    if (err instanceof ReferenceError && /is_aborted is not defined/.test(err.message)) {
      const drafts = await user.getMyDrafts(undefined, 1, 100);
      const made = drafts.results.find((d: Any) => d.changes?.title === `Via ${method}`);
      assert.ok(made && drafts.count === before + 1, "the server made the draft before the SDK failed");
      // Finish the job through the SDK's steps one by one: the same requests saveAndUploadDraft makes.
      await draft.uploadDocumentToDraftBySlug(made.slug, { file: PDF_BLOB(), confirmCopyright: "true" });
      await pollDone(made.slug, 200);
      const r = await draft.publishDraftBySlug(made.slug, { desiredName: method });
      await loads(r.publicLocation, /^text\/html/);
      throw new SdkBug(`ReferenceError "${err.message}" after the create (progress ${progress.join(",")}); the same steps one by one publish: ${r.publicLocation}`);
    }
    throw err;
  });
}

// ---------- unhappy paths ----------

await check("draft.getDraftBySlug of an unknown slug: {status 404, data {message 'Not Found'}}", async () => {
  const e = await rejection(draft.getDraftBySlug("000000000000-00000000000000000000000000000000"));
  assert.equal(e.status, 404);
  assert.deepEqual(e.data, { message: "Not Found" });
});

await check("another account's slug is 404 for every operation on it", async () => {
  sdk = Issuu(otherToken); // the SDK keeps one token per process (api.ts setToken)
  try {
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["getDraftBySlug", () => draft.getDraftBySlug(state.pubSlug!)],
      ["updateDraftBySlug", () => draft.updateDraftBySlug(state.pubSlug!, { info: { title: "mine now" } })],
      ["publishDraftBySlug", () => draft.publishDraftBySlug(state.urlSlug!)],
      ["deleteDraftBySlug", () => draft.deleteDraftBySlug(state.urlSlug!)],
      ["getPublicationBySlug", () => publication.getPublicationBySlug(state.pubSlug!)],
      ["getPublicationAssetsBySlug", () => publication.getPublicationAssetsBySlug(state.pubSlug!, "image")],
      ["getPublicationReaderShareBySlug", () => publication.getPublicationReaderShareBySlug(state.pubSlug!)],
      ["getPublicationEmbedCodeBySlug", () => publication.getPublicationEmbedCodeBySlug(state.pubSlug!)],
      ["getPublicationQRCodeShareBySlug", () => publication.getPublicationQRCodeShareBySlug(state.pubSlug!, { format: "PNG" })],
      ["getPublicationFullscreenShareBySlug", () => publication.getPublicationFullscreenShareBySlug(state.pubSlug!)],
      ["deletePublicationBySlug", () => publication.deletePublicationBySlug(state.pubSlug!)],
      ["getMyStats(slug)", () => user.getMyStats(undefined, state.pubSlug!)],
    ];
    for (const [name, call] of calls) assert.equal((await rejection(call())).status, 404, name);
    const theirs = await user.getMyDrafts();
    assert.equal(theirs.count, 0, "the other account sees none of checker's drafts");
  } finally {
    sdk = Issuu(token);
  }
  assert.equal((await publication.getPublicationBySlug(state.pubSlug!)).title, "Annual report 2026, revised", "nothing changed");
});

await check("draft.uploadDocumentToDraftBySlug to an unknown slug (the SDK's error path)", async () => {
  const err = await thrown(draft.uploadDocumentToDraftBySlug("000000000000-00000000000000000000000000000000", { file: PDF_BLOB(), confirmCopyright: "true" }));
  // draft.controller.ts line 199: `await error.response.json()`; an axios response has no json().
  if (err instanceof TypeError && /json is not a function/.test(err.message)) {
    const form = new FormData();
    form.append("file", PDF_BLOB());
    form.append("confirmCopyright", "true");
    const direct = await api.patch("/drafts/000000000000-00000000000000000000000000000000/upload", form, { validateStatus: () => true });
    assert.equal(direct.status, 404);
    assert.deepEqual(direct.data, { message: "Not Found" });
    throw new SdkBug(`TypeError "${err.message}" instead of the server's answer, which was ${direct.status} ${JSON.stringify(direct.data)}`);
  }
  throw new Error(`unexpected: ${String(err)}`);
});

await check("draft.deleteDraftBySlug, then getDraftBySlug is 404", async () => {
  await draft.deleteDraftBySlug(state.urlSlug!);
  assert.equal((await rejection(draft.getDraftBySlug(state.urlSlug!))).status, 404);
});

await check("publication.deletePublicationBySlug, then getPublicationBySlug is 404 and the page is gone", async () => {
  await publication.deletePublicationBySlug(state.pubSlug!);
  const e = await rejection(publication.getPublicationBySlug(state.pubSlug!));
  assert.equal(e.status, 404);
  assert.equal((await fetch(state.publicLocation!)).status, 404);
});

await check("an invalid token: 401 {message 'Invalid token'} (getMyProfile's {status,data}, getMyFeatures' AxiosError)", async () => {
  sdk = Issuu("qv2_not-a-token-at-all");
  try {
    const e = await rejection(user.getMyProfile());
    assert.equal(e.status, 401);
    assert.deepEqual(e.data, { message: "Invalid token" });
    const raw = (await thrown(user.getMyFeatures())) as Any; // getMyFeatures rethrows axios' own error
    assert.equal(raw.response.status, 401);
  } finally {
    sdk = Issuu(token);
  }
});

await check("revoking a token (DELETE /oauth/access, the newer SDK's user.revokeToken) ends it", async () => {
  // The stored user.controller.ts has no revokeToken; the SDK's newer one sends exactly this
  // request with its axios instance (research note §1.1: user.controller.ts line 249).
  sdk = Issuu(spareToken);
  try {
    assert.equal((await user.getMyProfile()).username, "checker");
    const r = await api.delete("/oauth/access");
    assert.equal(r.status, 200);
    const e = await rejection(user.getMyProfile());
    assert.equal(e.status, 401);
  } finally {
    sdk = Issuu(token);
  }
  assert.equal((await user.getMyProfile()).username, "checker", "the other token still works");
});

await check("token guessing: 429 after repeated invalid tokens, and a valid token is refused meanwhile from that address", async () => {
  let status: number | undefined;
  let tries = 0;
  sdk = Issuu("qv2_guess");
  try {
    while (tries < 40) {
      tries++;
      status = (await rejection(user.getMyProfile())).status;
      if (status === 429) break;
    }
  } finally {
    sdk = Issuu(token);
  }
  assert.equal(status, 429, `after ${tries} guesses`);
  const e = await rejection(user.getMyProfile());
  assert.equal(e.status, 429);
  return `429 after ${tries} guesses`;
});

await writeFile(env("CHECK_RESULT"), JSON.stringify(outcomes, null, 1));
if (!verbose && outcomes.some((o) => o.outcome === "fail")) process.stdout.write(`\nThe SDK's own console.error lines:\n${sdkLog.map((l) => `  ${l}`).join("\n")}\n`);
process.exit(outcomes.some((o) => o.outcome === "fail") ? 1 : 0);
