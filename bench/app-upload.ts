/**
 * Upload throughput of a 100 MB file through the web app (`POST /app/upload`, session and CSRF
 * header) against the API's upload endpoint (`svc.document.upload`, signed) of the same server in
 * the same run (issue 14: target at least 0.9 of the API), with the process's peak memory above
 * its idle level while each runs (bounded as the API's: the file is streamed to the spool, never
 * held). Both requests are sent the same way: a streamed multipart body read from disk.
 *
 * Part of `npm run bench -- app`.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { request, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QuireClient } from "../src/client/quire-client.ts";
import { AppClient, givePassword, TEST_APP_ENV } from "../test/helpers/app-client.ts";
import { startTestServer } from "../test/helpers/test-server.ts";

const FILE_MB = 100;
const ROUNDS = 3;

/** POSTs fields, then the file, as one streamed multipart body; answers the status. */
function postMultipart(url: string, headers: Record<string, string>, fields: Record<string, string>, path: string, size: number): Promise<number> {
  const boundary = `----quirebench${randomBytes(8).toString("hex")}`;
  const head = Buffer.from(
    Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join("") +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      headers: { ...headers, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(head.length + size + tail.length) },
    });
    req.on("response", (res: IncomingMessage) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.write(head);
    const file = createReadStream(path);
    file.pipe(req, { end: false });
    file.on("end", () => req.end(tail));
    file.on("error", (err) => req.destroy(err));
  });
}

/** Runs `send` while sampling this process's RSS; answers seconds and the peak above the start. */
async function measured(send: () => Promise<number>, expected: number): Promise<{ s: number; peakMb: number }> {
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t = process.hrtime.bigint();
  const status = await send();
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  clearInterval(sampler);
  if (status !== expected) throw new Error(`upload answered ${status}, expected ${expected}`);
  return { s, peakMb: (peak - base) / 2 ** 20 };
}

export async function benchAppUpload(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "quire-bench-app-upload-"));
  // The record is what is measured, not its conversion: no worker runs.
  const server = await startTestServer({ ...TEST_APP_ENV, QUIRE_RATE_BURST: "1000000", QUIRE_RATE_PER_SECOND: "0", QUIRE_MAX_UPLOAD_BYTES: String((FILE_MB + 1) * 2 ** 20) });
  try {
    // A PDF header and random bytes: detection takes it as a PDF, as it would a real one.
    const path = join(dir, "big.pdf");
    await writeFile(path, Buffer.concat([Buffer.from("%PDF-1.4\n"), randomBytes(FILE_MB * 2 ** 20 - 9)]));
    const size = (await stat(path)).size;
    await givePassword(server, "tester");
    const app = new AppClient(server.url);
    if ((await app.signIn("tester")).status !== 303) throw new Error("sign-in failed");
    await app.get("/app/upload"); // its CSRF token
    const client = new QuireClient({ baseUrl: server.url, apiKey: server.account.apiKey, apiSecret: server.account.apiSecret });

    const viaApp = () => postMultipart(`${server.url}/app/upload`, { cookie: app.cookieHeader(), "x-csrf-token": app.csrf, accept: "application/json" }, {}, path, size);
    const viaApi = () => postMultipart(`${server.url}/upload/1_0`, {}, client.signed("document.upload", { format: "json" }), path, size);
    const results = { app: [] as number[], api: [] as number[], appMb: 0, apiMb: 0 };
    await viaApi(); // warm-up: code, spool folder, page cache of the file
    for (let round = 0; round < ROUNDS; round++) {
      const api = await measured(viaApi, 200);
      const web = await measured(viaApp, 201);
      results.api.push(api.s);
      results.app.push(web.s);
      results.apiMb = Math.max(results.apiMb, api.peakMb);
      results.appMb = Math.max(results.appMb, web.peakMb);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const mbps = (s: number) => size / 2 ** 20 / s;
    const [api, web] = [median(results.api), median(results.app)];
    process.stdout.write(`\n${FILE_MB} MB upload, median of ${ROUNDS}, client and server in this process\n`);
    process.stdout.write(`baseline API upload endpoint (svc.document.upload)  ${api.toFixed(2)} s  ${mbps(api).toFixed(0)} MB/s  peak RSS +${results.apiMb.toFixed(0)} MB\n`);
    process.stdout.write(`app /app/upload                                     ${web.toFixed(2)} s  ${mbps(web).toFixed(0)} MB/s  peak RSS +${results.appMb.toFixed(0)} MB\n`);
    process.stdout.write(`ratio app/API throughput: ${(api / web).toFixed(2)}x (target at least 0.9)\n`);
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
