import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { violationsOf } from "../../src/ops/csp-reports.ts";
import { fetchFrom } from "../helpers/app-client.ts";
import { sample } from "../helpers/metrics-text.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

const REPORT = {
  "csp-report": {
    "document-uri": "http://127.0.0.1/tester/docs/x?q=private+words",
    "violated-directive": "script-src-elem",
    "effective-directive": "script-src-elem",
    "blocked-uri": "inline",
    "source-file": "http://127.0.0.1/tester/docs/x",
    "line-number": 12,
  },
};

/** The report endpoint of the pages' Content-Security-Policy: bounded, counted, never a way in. */
describe("/_csp-report", { timeout: 60_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.close());

  /** A report POSTed as browsers send one, from a chosen local address (127.0.0.x: distinct clients). */
  const send = (body: string, type: string, from = "127.0.0.1") =>
    fetchFrom(from, `${server.url}/_csp-report`, { method: "POST", headers: { "content-type": type }, body });
  const counted = async (outcome: string, directive: string) =>
    sample(await (await fetch(`${server.url}/metrics`)).text(), "quire_csp_reports_total", { outcome, directive }) ?? 0;

  test("both report formats are taken and counted by directive", async () => {
    assert.equal((await send(JSON.stringify(REPORT), "application/csp-report")).status, 204);
    const modern = [{ type: "csp-violation", url: "http://127.0.0.1/app", body: { documentURL: "http://127.0.0.1/app/documents", effectiveDirective: "script-src-attr", blockedURL: "inline" } }];
    assert.equal((await send(JSON.stringify(modern), "application/reports+json")).status, 204);
    assert.equal(await counted("logged", "script-src-elem"), 1);
    assert.equal(await counted("logged", "script-src-attr"), 1);
  });

  test("what is logged is bounded, and a page's query (a reader's search) is not kept", () => {
    const [v] = violationsOf({ "csp-report": { ...REPORT["csp-report"], "blocked-uri": "x".repeat(100_000), "effective-directive": "made-up directive" } });
    assert.equal(v!.page, "/tester/docs/x");
    assert.equal(v!.blocked.length, 300);
    assert.equal(v!.directive, "made-up");
    assert.equal(violationsOf(Array.from({ length: 1000 }, () => ({ type: "csp-violation", body: { effectiveDirective: "img-src" } }))).length, 20);
    for (const hostile of [null, 1, "x", [], {}, { "csp-report": [] }, { __proto__: { "csp-report": {} } }, [{ type: "csp-violation", body: null }]]) assert.deepEqual(violationsOf(hostile), []);
  });

  test("hostile bodies: wrong type 415, not a report 400, oversized 413 (declared or sent), and the server stays up", async () => {
    assert.equal((await send(JSON.stringify(REPORT), "text/plain", "127.0.0.20")).status, 415);
    assert.equal((await send("{not json", "application/csp-report", "127.0.0.20")).status, 400);
    assert.equal((await send(JSON.stringify({ hello: 1 }), "application/json", "127.0.0.20")).status, 400);
    assert.equal((await send(JSON.stringify({ "csp-report": { pad: "x".repeat(20_000) } }), "application/csp-report", "127.0.0.20")).status, 413);
    // Chunked, no length declared: reading stops at the bound.
    const url = new URL(server.url);
    const status = await new Promise<string>((resolve, reject) => {
      const s = connect({ host: url.hostname, port: Number(url.port), localAddress: "127.0.0.21" }, () => {
        s.write("POST /_csp-report HTTP/1.1\r\nHost: x\r\nContent-Type: application/csp-report\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (let i = 0; i < 40; i++) s.write(`400\r\n${"x".repeat(0x400)}\r\n`);
      });
      let got = "";
      s.on("data", (d: Buffer) => {
        got += d.toString();
        if (got.includes("\r\n")) {
          resolve(got.split("\r\n")[0]!);
          s.destroy();
        }
      });
      s.on("error", reject);
    });
    assert.match(status, / 413 /);
    // A client that leaves in the middle of its body.
    await new Promise<void>((resolve) => {
      const s = connect({ host: url.hostname, port: Number(url.port) }, () => {
        s.write("POST /_csp-report HTTP/1.1\r\nHost: x\r\nContent-Type: application/csp-report\r\nContent-Length: 5000\r\n\r\n{\"csp-");
        s.destroy();
        resolve();
      });
    });
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.ok((await counted("refused", "none")) >= 4);
  });

  test("a flood from one address is dropped past 30 a minute; another address is still heard", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 35; i++) statuses.push((await send(JSON.stringify(REPORT), "application/csp-report", "127.0.0.30")).status);
    assert.deepEqual(statuses.slice(0, 30), Array(30).fill(204));
    assert.deepEqual(statuses.slice(30), Array(5).fill(429));
    assert.equal((await send(JSON.stringify(REPORT), "application/csp-report", "127.0.0.31")).status, 204);
    assert.equal(await counted("dropped", "none"), 5);
  });
});
