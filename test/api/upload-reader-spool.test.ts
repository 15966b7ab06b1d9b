import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { readUpload } from "../../src/uploads/upload-reader.ts";
import { QuireError } from "../../src/domain/errors.ts";
import { newBoundary, partHead } from "../helpers/multipart.ts";
import { delayFsOpen } from "../helpers/slow-open.ts";

/**
 * The spool file of an upload that fails while the disk is still opening it: the client leaving,
 * or the meter refusing the first chunk (the disk guard's, in production). Its removal must wait
 * for the open: removed before the open had ended, the file was created after its removal and
 * stayed. The refused upload did so before the fix (stream.pipeline rejects without waiting for
 * the destination's open); the same was seen with fetched files in a full run on a busy machine
 * (src/convert/fetch-url.ts).
 */
let dir: string;
let server: Server;
let port: number;
const settled: Promise<unknown>[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "quire-spool-"));
  let n = 0;
  server = createServer((req, res) => {
    const read = readUpload(req, { add: () => undefined }, {
      maxBytes: 1 << 20,
      tempPath: async () => join(dir, `spool-${++n}`),
      beforeFile: async () => undefined,
      onLimit: async () => new QuireError("205"),
      // /refused: the meter (the disk guard's, in production) refuses the first chunk.
      ...(req.url === "/refused" ? { spoolMeter: async () => () => new QuireError("012") } : {}),
    });
    settled.push(read.then(() => res.end(), () => res.destroy()));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
});

after(async () => {
  server.close();
  await rm(dir, { recursive: true, force: true });
});

for (const [what, path, leaves] of [
  ["a client that leaves", "/upload", true],
  ["an upload its meter refuses", "/refused", false],
] as const) {
  test(`${what} while the disk is still opening the spool file leaves no file, then or later`, async () => {
    const slow = delayFsOpen(200);
    try {
      const boundary = newBoundary();
      const head = partHead(boundary, { name: "file", filename: "a.pdf" });
      const socket = connect(port, "127.0.0.1");
      socket.on("error", () => undefined);
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n`,
      );
      socket.write(Buffer.concat([head, Buffer.from("%PDF-1.4\n"), Buffer.alloc(4096)]));
      await slow.began;
      if (leaves) socket.destroy();
      await Promise.all(settled);
      await slow.opened;
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(await readdir(dir), [], "no spool file once the open has ended");
      socket.destroy();
    } finally {
      slow.restore();
    }
  });
}
