import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import assert from "node:assert/strict";
import { createDatabase, dropDatabase } from "./dialects.ts";
import { FIXTURES } from "./paths.ts";
import { startTestServer, type TestServer } from "./test-server.ts";

/** A test server over a fresh database of the dialect named (SQLite file, or a PostgreSQL database of its own). */
export async function startServerOn(dialect: "sqlite" | "postgres", env: Record<string, string> = {}): Promise<TestServer> {
  if (dialect === "sqlite") return startTestServer(env);
  const dbName = `quire_v2_${randomBytes(6).toString("hex")}`;
  const server = await startTestServer({ ...env, QUIRE_DATABASE_URL: await createDatabase(dbName) });
  return {
    ...server,
    async close() {
      await server.close();
      await dropDatabase(dbName);
    },
  };
}

/** A loopback HTTP server answering a fixture file at `/<name>` (for `fileUrl`), and its base address. */
export async function fixtureHost(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? "/").slice(1).split("?")[0]!);
    if (!/^[a-z0-9.-]+$/i.test(name)) return void res.writeHead(404).end();
    readFile(join(FIXTURES, name)).then(
      (bytes) => res.writeHead(200, { "content-type": "application/pdf", "content-length": bytes.length }).end(bytes),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

/** The enums a strict client (the C# SDK) parses: one value outside them breaks its whole answer (research §2.6). */
export function assertV2Enums(doc: Record<string, any>): void { // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.ok(["DRAFT", "PUBLISHED", "SCHEDULED", "UNPUBLISHED", "QUARANTINED"].includes(doc.state), `state ${doc.state}`);
  if (doc.fileInfo) {
    assert.ok(["UNKNOWN", "DOC", "ODP", "ODT", "PDF", "PPT", "RTF", "SXI", "SXW", "WPD", "EPUB", "MOBI"].includes(doc.fileInfo.type), `fileInfo.type ${doc.fileInfo.type}`);
    assert.ok(["DONE", "CONVERTING", "FAILED"].includes(doc.fileInfo.conversionStatus));
    for (const k of ["name", "size", "pageCount", "isCopyrightConfirmed"]) assert.ok(k in doc.fileInfo, `fileInfo.${k}`);
  }
  for (const info of [doc, doc.changes]) {
    if (info?.access !== undefined) assert.ok(["PUBLIC", "PRIVATE"].includes(info.access), `access ${info.access}`);
    if (info?.type !== undefined) assert.ok(["editorial", "book", "promotional", "other"].includes(info.type), `type ${info.type}`);
  }
  assert.equal(typeof doc.slug, "string");
  assert.equal(typeof doc.owner, "string");
  assert.equal(typeof doc.location, "string");
  assert.match(doc.created, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
}
