import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, test } from "node:test";
import { uploadCommand } from "../../src/cli/upload-command.ts";
import { FIXTURES, PROJECT_ROOT, QUIRE_BIN } from "../helpers/paths.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { startTestWorker, type TestWorker } from "../helpers/test-worker.ts";

/** `quire upload` several files at once, and `--wait` until each is live or failed (issue 14 item 8). */

const ONE_PAGE = join(FIXTURES, "pdf-quartz-firefox-1page.pdf");
const ROTATED = join(FIXTURES, "pdf-rotated-page.pdf");
const NO_FONTS = join(FIXTURES, "pdf-acrobat9-fonts-not-embedded.pdf");
/** Detected as a PDF (accepted), but poppler cannot open it: the conversion fails. */
const CORRUPT = join(FIXTURES, "bad", "pdf-corrupt-no-trailer.pdf");
/** Not a document at all: refused at upload (201 on file). */
const ZIP = join(FIXTURES, "bad", "hello.zip");

let server: TestServer;
let worker: TestWorker;
let env: Record<string, string>;

before(async () => {
  server = await startTestServer();
  worker = await startTestWorker(server, { startOffice: false, maxAttempts: 1 });
  env = { QUIRE_URL: server.url, QUIRE_API_KEY: server.account.apiKey, QUIRE_API_SECRET: server.account.apiSecret };
});
after(async () => {
  await worker.stop();
  await server.close();
});

/** Runs `quire upload` as its own process (the server lives in this one, so it must not block). */
function quireUpload(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [QUIRE_BIN, "upload", ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("exit", (code) => resolve({ code, out, err }));
  });
}

/** A terminal as cli-progress sees one: isTTY and a width; everything written is kept. */
function fakeTerminal(): PassThrough & { isTTY: boolean; columns: number; text(): string } {
  const chunks: string[] = [];
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 160, text: () => chunks.join("") });
  stream.on("data", (c: Buffer) => chunks.push(c.toString()));
  return stream;
}

describe("quire upload --wait", () => {
  test("several files at once: each ends live at its reader's address, failed in words, or refused", async () => {
    const run = await quireUpload("--wait", ONE_PAGE, ROTATED, CORRUPT, ZIP);
    assert.equal(run.code, 1, "one failure and one refusal: exit 1");
    const lines = run.out.trim().split("\n");
    assert.equal(lines.length, 2, run.out);
    for (const [file, line] of [[ONE_PAGE, lines[0]], [ROTATED, lines[1]]] as const) {
      const [target, address] = line!.split("\t");
      assert.equal(target, file);
      assert.match(address!, new RegExp(`^${server.url}/tester/docs/[a-z0-9_.-]+$`));
      const page = await fetch(address!);
      assert.equal(page.status, 200, `the reader answers at ${address}`);
    }
    // Not a terminal: one plain line per stage of each file, no escape codes.
    assert.ok(!run.err.includes("\u001b["), "no escape codes");
    assert.match(run.err, /^pdf-quartz-firefox-1page\.pdf: converting$/m);
    assert.match(run.err, /^pdf-quartz-firefox-1page\.pdf: live at http/m);
    assert.match(run.err, /^pdf-corrupt-no-trailer\.pdf: conversion failed: .+ \(error \d+\)$/m);
    assert.match(run.err, /^hello\.zip: refused: 201 .*\(file\)$/m);
  });

  test("on a terminal each file has its own bar; one file alone prints only its address", async () => {
    const stderr = fakeTerminal();
    const stdout = fakeTerminal();
    const single = fakeTerminal();
    const [code, singleCode] = await Promise.all([
      uploadCommand(["--wait", NO_FONTS, ONE_PAGE], env, { stdout, stderr }),
      uploadCommand(["--wait", "--title", "Alone", NO_FONTS], env, { stdout: single, stderr: fakeTerminal() }),
    ]);
    assert.equal(code, 0, stderr.text());
    const drawn = stderr.text();
    for (const label of ["pdf-acrobat9-fonts-not-embedded.pdf", "pdf-quartz-firefox-1page.pdf"]) {
      assert.match(drawn, new RegExp(`${label.replace(/\./g, "\\.")}\\s*\\[[█░]+\\] 100% live at http`), `a finished bar for ${label}`);
    }
    assert.equal(stdout.text().trim().split("\n").length, 2);
    assert.equal(singleCode, 0);
    assert.match(single.text(), new RegExp(`^${server.url}/tester/docs/alone\\n$`));
  });

  test("without --wait several files print their records as a JSON array", async () => {
    const stdout = fakeTerminal();
    const code = await uploadCommand([ONE_PAGE, ROTATED], env, { stdout, stderr: fakeTerminal() });
    assert.equal(code, 0);
    const records = JSON.parse(stdout.text()) as Array<{ document: { state: string; orgDocName: string } }>;
    assert.deepEqual(records.map((r) => r.document.orgDocName), ["pdf-quartz-firefox-1page.pdf", "pdf-rotated-page.pdf"]);
    assert.ok(records.every((r) => r.document.state === "P"), "answered at once, before any conversion");
  });
});
