import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { subscribe } from "node:diagnostics_channel";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { classifyAddress, isPublicAddress } from "../../src/convert/address-policy.ts";
import { ConversionError } from "../../src/convert/conversion-error.ts";
import { fetchToFile } from "../../src/convert/fetch-url.ts";
import type { FetchOptions } from "../../src/convert/fetch-url.ts";
import { delayFsOpen } from "../helpers/slow-open.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
interface TestServer { port: number; url(path: string): string; connections: number; requests: IncomingMessage[]; close(): Promise<void> }

async function startServer(handler: Handler, host = "127.0.0.1"): Promise<TestServer> {
  const server: Server = createServer((req, res) => {
    ts.requests.push(req);
    handler(req, res);
  });
  server.on("connection", () => ts.connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const ts: TestServer = {
    port,
    url: (path) => `http://${host}:${port}${path}`,
    connections: 0,
    requests: [],
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return ts;
}

const BODY = randomBytes(50_000);
const BIG = Buffer.alloc(5000, 0x61);

const routes: Record<string, Handler> = {
  "/docs/report%20final.pdf": (_req, res) => res.writeHead(200, { "content-type": "application/pdf" }).end(BODY),
  "/named": (_req, res) => res.writeHead(200, { "content-disposition": 'attachment; filename="Quarterly \\"Q3\\".pdf"' }).end(BODY),
  "/named-utf8": (_req, res) =>
    res.writeHead(200, { "content-disposition": "attachment; filename=fallback.pdf; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf" }).end(BODY),
  "/big-chunked": (_req, res) => {
    res.writeHead(200);
    for (let i = 0; i < 5; i++) res.write(BIG.subarray(i * 1000, (i + 1) * 1000));
    res.end();
  },
  "/big-declared": (_req, res) => res.writeHead(200, { "content-length": "5000" }).flushHeaders(), // headers only, then silence
  "/stall": (_req, res) => res.writeHead(200, { "content-length": "1000" }).write(BIG.subarray(0, 100)), // then silence
  "/dribble": (_req, res) => {
    res.writeHead(200);
    const timer = setInterval(() => res.write("x"), 50);
    res.on("close", () => clearInterval(timer));
  },
  "/404": (_req, res) => res.writeHead(404).end("nope"),
  "/429": (_req, res) => res.writeHead(429).end(),
  "/503": (_req, res) => res.writeHead(503).end(),
};

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? "/";
  const hop = /^\/chain\/(\d+)$/.exec(path);
  if (hop) {
    const n = Number(hop[1]);
    if (n === 0) return void res.writeHead(200, { "content-type": "text/plain" }).end("end of chain");
    return void res.writeHead(n % 2 ? 302 : 307, { location: `${n - 1}` }).end(); // relative on purpose
  }
  const route = routes[path];
  if (route) route(req, res);
  else res.writeHead(500).end("unknown test route");
}

// Every TCP client socket this process creates: proves a literal-IP refusal happened before any connection
// attempt, also where no local server listens. (For a host name the socket exists before its lookup.)
let socketsCreated = 0;
subscribe("net.client.socket", () => socketsCreated++);

const OPTS: FetchOptions = { maxBytes: 1 << 20, allowPrivate: true, connectTimeoutMs: 2000, idleTimeoutMs: 2000, totalTimeoutMs: 10_000 };
const GUARD = { timeout: 15_000 };
/** The one message for a name that does not resolve and an address that is refused. */
const UNUSABLE = /^The server name could not be found, or its address is not allowed\.$/;

let server: TestServer;
let dir: string;
let n = 0;
const dest = (): string => join(dir, `out-${++n}.bin`);

/** Asserts a ConversionError of kind "fetch" matching `message` and `transient`, and no file left at `path`. */
function fails(url: string, opts: FetchOptions, message: RegExp, transient: boolean): Promise<ConversionError> {
  const path = dest();
  return assertFetchFails(fetchToFile(url, path, opts), path, message, transient);
}

async function assertFetchFails(p: Promise<unknown>, path: string, message: RegExp, transient: boolean): Promise<ConversionError> {
  const err = await p.then(
    () => assert.fail("the fetch should have failed"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ConversionError, `expected a ConversionError, got ${String(err)}`);
  assert.equal(err.kind, "fetch");
  assert.match(err.message, message);
  assert.equal(err.transient, transient, `transient for "${err.message}"`);
  assert.doesNotMatch(err.message, /\n\s+at /, "no stack trace in the message");
  assert.equal(existsSync(path), false, "no file is left behind");
  return err;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "quire-fetch-"));
  server = await startServer(handle);
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe("fetchToFile: success", () => {
  test("streams the body to the file; fileName from the path", GUARD, async () => {
    const path = dest();
    const r = await fetchToFile(server.url("/docs/report%20final.pdf"), path, OPTS);
    assert.deepEqual(await readFile(path), BODY);
    assert.equal(r.size, BODY.length);
    assert.equal(r.fileName, "report final.pdf");
    assert.equal(r.contentType, "application/pdf");
    assert.equal(r.finalUrl, server.url("/docs/report%20final.pdf"));
    const req = server.requests.at(-1);
    assert.equal(req?.headers["user-agent"], "Quire/0.1 (+document fetcher)");
    assert.equal(req?.headers.accept, "*/*");
    assert.equal(req?.headers.cookie, undefined);
    assert.equal(req?.headers.authorization, undefined);
  });

  test("fileName from Content-Disposition (quoted, and RFC 5987 filename*)", GUARD, async () => {
    const quoted = await fetchToFile(server.url("/named"), dest(), OPTS);
    assert.equal(quoted.fileName, 'Quarterly "Q3".pdf');
    assert.equal(quoted.size, BODY.length);
    const extended = await fetchToFile(server.url("/named-utf8"), dest(), OPTS);
    assert.equal(extended.fileName, "Résumé.pdf");
  });

  test("a host name goes through the checked lookup and connects", GUARD, async () => {
    const r = await fetchToFile(`http://localhost:${server.port}/docs/report%20final.pdf`, dest(), OPTS);
    assert.equal(r.size, BODY.length);
  });

  test("a chain of 5 redirects (relative Location, 302 and 307) succeeds", GUARD, async () => {
    const path = dest();
    const r = await fetchToFile(server.url("/chain/5"), path, OPTS);
    assert.equal(r.finalUrl, server.url("/chain/0"));
    assert.equal(await readFile(path, "utf8"), "end of chain");
  });
});

describe("fetchToFile: address rules (allowPrivate=false)", () => {
  const strict: FetchOptions = { ...OPTS, allowPrivate: false };
  const connectionsNow = (): number => server.connections + socketsCreated;
  const lookups = (): number => server.connections;

  for (const url of [
    (p: number) => `http://127.0.0.1:${p}/docs/report%20final.pdf`,
    (p: number) => `http://localhost:${p}/docs/report%20final.pdf`, // refused at DNS time
    (p: number) => `http://[::1]:${p}/`,
    (p: number) => `http://2130706433:${p}/`,
    (p: number) => `http://0x7f.1:${p}/`,
    (p: number) => `http://[::ffff:127.0.0.1]:${p}/`,
    () => "http://169.254.169.254/latest/meta-data/",
    () => "http://10.0.0.1/",
    () => "http://0.0.0.0/",
  ]) {
    const shown = url(0).replace(":0/", ":PORT/");
    const counter = shown.includes("localhost") ? lookups : connectionsNow;
    test(`refuses ${shown} without connecting`, GUARD, async () => {
      const seen = counter();
      const err = await fails(url(server.port), strict, UNUSABLE, false);
      assert.match(err.detail ?? "", /^resolves to .* \(.+\)$/, "the log learns which rule refused it");
      assert.equal(counter(), seen, "no connection was attempted");
    });
  }

  test("names the rule in the detail for the log only: loopback, metadata, private", GUARD, async () => {
    assert.match((await fails(server.url("/"), strict, UNUSABLE, false)).detail ?? "", /loopback/);
    assert.match((await fails("http://169.254.169.254/", strict, UNUSABLE, false)).detail ?? "", /metadata/);
    assert.match((await fails("http://10.0.0.1/", strict, UNUSABLE, false)).detail ?? "", /private network/);
  });

  test("a name that does not exist and one that resolves to a private address get the same message", GUARD, async () => {
    const missing = await fails("http://no-such-host.invalid/", strict, UNUSABLE, false);
    const internal = await fails(`http://localhost:${server.port}/`, strict, UNUSABLE, false);
    assert.equal(missing.message, internal.message);
    assert.match(missing.detail ?? "", /no such host/);
    assert.match(internal.detail ?? "", /loopback/);
  });

  test("refuses other schemes and URLs with credentials, without connecting", GUARD, async () => {
    const seen = connectionsNow();
    await fails(`ftp://127.0.0.1:${server.port}/x`, OPTS, /Only http and https/, false);
    await fails("file:///etc/passwd", OPTS, /Only http and https/, false);
    await fails(server.url("/x").replace("//", "//user:pass@"), OPTS, /without login/, false);
    await fails("not a url", OPTS, /not a valid URL/, false);
    assert.equal(connectionsNow(), seen, "no connection was attempted");
  });

  test("a redirect from an allowed address to a disallowed one is refused", GUARD, async () => {
    const inner = await startServer((_req, res) => res.writeHead(200).end("secret"), "127.0.0.2");
    const outer = await startServer((_req, res) => res.writeHead(302, { location: inner.url("/secret") }).end(), "127.0.0.1");
    try {
      const hooked: FetchOptions = { ...strict, isAllowedAddress: (ip) => ip === "127.0.0.1" };
      const err = await fails(outer.url("/"), hooked, UNUSABLE, false);
      assert.match(err.detail ?? "", /loopback/);
      assert.equal(outer.requests.length, 1, "the first hop was fetched");
      assert.equal(inner.connections, 0, "the redirect target saw no connection");
    } finally {
      await Promise.all([inner.close(), outer.close()]);
    }
  });

  test("the DNS-time check applies to names whose address the hook denies", GUARD, async () => {
    const seen = lookups();
    const hooked: FetchOptions = { ...strict, isAllowedAddress: (ip) => ip !== "127.0.0.1" };
    await fails(`http://localhost:${server.port}/`, hooked, /not allowed/, false);
    assert.equal(lookups(), seen, "the server saw no connection");
  });
});

describe("fetchToFile: failures", () => {
  test("more than 5 redirects fails", GUARD, async () => {
    await fails(server.url("/chain/6"), OPTS, /redirected more than 5 times/, false);
    await fails(server.url("/chain/2"), { ...OPTS, maxRedirects: 1 }, /more than 1 times/, false);
  });

  test("a body over maxBytes is cut and leaves no file", GUARD, async () => {
    await fails(server.url("/big-chunked"), { ...OPTS, maxBytes: 1000 }, /^The file is larger than 1000 bytes\.$/, false);
  });

  test("a body cut while the disk is still opening the file leaves no file, then or later", GUARD, async () => {
    // A busy thread pool or a slow disk: the file's open ends after the body has been cut. Its
    // removal must wait for it, or the open creates the file after the removal (seen in a full run).
    const slow = delayFsOpen(100);
    try {
      const path = dest();
      await assertFetchFails(fetchToFile(server.url("/big-chunked"), path, { ...OPTS, maxBytes: 1000 }), path, /larger than 1000 bytes/, false);
      await slow.opened;
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(existsSync(path), false, "no file appears once the open has ended");
    } finally {
      slow.restore();
    }
  });

  test("Content-Length over maxBytes is refused before the body", GUARD, async () => {
    // The server never sends the body: only the early refusal can end this before the idle timeout.
    await fails(server.url("/big-declared"), { ...OPTS, maxBytes: 1000, idleTimeoutMs: 10_000 }, /larger than 1000 bytes/, false);
  });

  test("idle timeout mid-body is transient and leaves no file", GUARD, async () => {
    await fails(server.url("/stall"), { ...OPTS, idleTimeoutMs: 300 }, /stopped sending/, true);
  });

  test("total timeout is permanent: the same server would run out of time again", GUARD, async () => {
    await fails(server.url("/dribble"), { ...OPTS, totalTimeoutMs: 400 }, /took longer than/, false);
  });

  test("a server sending below the minimum rate is cut after one window, for good", GUARD, async () => {
    // /dribble sends a byte every 50 ms: it never trips the idle rule, and would run to the total limit.
    await fails(server.url("/dribble"), { ...OPTS, totalTimeoutMs: 60_000, minBytesPerSecond: 1000, rateWindowMs: 300 }, /too slowly \(less than 1000 bytes per second\)/, false);
  });

  test("a fast server passes the minimum rate", GUARD, async () => {
    const path = dest();
    await fetchToFile(server.url("/docs/report%20final.pdf"), path, { ...OPTS, minBytesPerSecond: 1000, rateWindowMs: 300 });
    assert.deepEqual(await readFile(path), BODY);
  });

  test("HTTP 404 is permanent; 503 and 429 are transient", GUARD, async () => {
    await fails(server.url("/404"), OPTS, /^The server answered HTTP 404\.$/, false);
    await fails(server.url("/503"), OPTS, /HTTP 503/, true);
    await fails(server.url("/429"), OPTS, /HTTP 429/, true);
  });

  test("a refused connection is transient", GUARD, async () => {
    const gone = await startServer(() => {});
    await gone.close();
    await fails(gone.url("/"), OPTS, /refused the connection/, true);
  });

  test("a file that cannot be written is an internal error, not a fetch error", GUARD, async () => {
    const err = await fetchToFile(server.url("/named"), join(dir, "missing-dir", "x"), OPTS).catch((e: unknown) => e);
    assert.ok(err instanceof ConversionError);
    assert.equal(err.kind, "internal");
  });

  test("an abort signal cancels mid-body and leaves no file", GUARD, async () => {
    const ac = new AbortController();
    const path = dest();
    const started = fetchToFile(server.url("/stall"), path, { ...OPTS, signal: ac.signal, idleTimeoutMs: 10_000 });
    // The file exists once the response head has arrived: the abort then lands mid-body.
    while (!existsSync(path)) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    await assertFetchFails(started, path, /cancelled/, false);
    await fails(server.url("/404"), { ...OPTS, signal: AbortSignal.abort() }, /cancelled/, false);
  });
});

describe("address classifier", () => {
  const allowed = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700::1111", "2001:4860:4860::8888", "64:ff9b::808:808"];
  const denied: Array<[string, string]> = [
    ["127.0.0.1", "loopback"], ["127.255.255.254", "loopback"], ["::1", "loopback"],
    ["10.0.0.1", "private"], ["172.16.0.1", "private"], ["172.31.255.255", "private"], ["192.168.1.1", "private"],
    ["100.64.0.1", "private"], ["fc00::1", "private"], ["fd12:3456::1", "private"],
    ["169.254.1.1", "linkLocal"], ["fe80::1", "linkLocal"], ["fe80::1%eth0", "linkLocal"],
    ["169.254.169.254", "metadata"], ["100.100.100.200", "metadata"], ["fd00:ec2::254", "metadata"], ["192.0.0.192", "metadata"],
    ["0.0.0.0", "special"], ["::", "special"], ["255.255.255.255", "special"], ["224.0.0.1", "special"], ["239.255.255.250", "special"],
    ["ff02::1", "special"], ["240.0.0.1", "special"], ["198.18.0.1", "special"], ["198.19.255.255", "special"],
    ["192.0.2.1", "special"], ["198.51.100.1", "special"], ["203.0.113.1", "special"], ["2001:db8::1", "special"], ["3fff::1", "special"],
    ["192.0.0.8", "special"], ["fec0::1", "special"], ["100::1", "special"], ["4000::1", "special"],
    // IPv4 embedded in IPv6
    ["::ffff:127.0.0.1", "loopback"], ["::ffff:7f00:1", "loopback"], ["::ffff:10.0.0.1", "private"], ["::ffff:169.254.169.254", "metadata"],
    ["::127.0.0.1", "loopback"], ["::7f00:1", "loopback"], ["::10.0.0.1", "private"], ["::8.8.8.8", "special"],
    ["64:ff9b::7f00:1", "loopback"], ["64:ff9b::a00:1", "private"], ["64:ff9b::a9fe:a9fe", "metadata"], ["64:ff9b:1::808:808", "special"],
    ["2002:7f00:1::1", "loopback"], ["2002:a00:1::", "private"], ["2002:a9fe:a9fe::", "metadata"], ["2002:808:808::1", "special"],
    ["::ffff:0:127.0.0.1", "special"], ["2001::1", "special"],
    ["not-an-ip", "invalid"], ["", "invalid"], ["0x7f.1", "invalid"], ["2130706433", "invalid"],
  ];
  for (const ip of allowed) test(`allows ${ip}`, () => assert.equal(classifyAddress(ip), "public"));
  for (const [ip, category] of denied) {
    test(`denies ${ip || "(empty)"} as ${category}`, () => {
      assert.equal(classifyAddress(ip), category);
      assert.equal(isPublicAddress(ip), false);
    });
  }
});
