/**
 * Load figures of issue 7, against a real `quire serve --no-worker` process:
 *  - 1,000 concurrent signed url_upload requests (each a record and a job written): p50, p99 and
 *    requests/s, next to 1,000 concurrent requests the server refuses before any database work
 *    (error 009), as the baseline of the HTTP path alone;
 *  - 50 concurrent 10 MB uploads: MiB/s, next to writing the same bytes into 50 files in the same
 *    folder with fsync (what a durable upload cannot beat).
 *
 * `npm run bench -- load`
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, open, rm } from "node:fs/promises";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAccount } from "../src/accounts/account-admin.ts";
import { openStore } from "../src/store/open-store.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const URL_UPLOADS = 1000;
const FILE_UPLOADS = 50;
const FILE_BYTES = 10 * 1024 * 1024;

function sign(secret: string, params: Record<string, string>): Record<string, string> {
  const names = Object.keys(params).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const hash = createHash("md5").update(secret);
  for (const n of names) hash.update(n).update(params[n]!);
  return { ...params, signature: hash.digest("hex") };
}

const form = (p: Record<string, string>) => Buffer.from(Object.entries(p).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&"));

function post(agent: Agent, url: string, contentType: string, body: Buffer): Promise<{ ms: number; ok: boolean }> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers: { "content-type": contentType, "content-length": body.length } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ ms: performance.now() - t, ok: text.includes('stat="ok"') || text.includes('"stat":"ok"') }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function burst(bodies: Buffer[], url: string, contentType: (i: number) => string) {
  const agent = new Agent({ keepAlive: true, maxSockets: bodies.length });
  const t = performance.now();
  const answers = await Promise.all(bodies.map((b, i) => post(agent, url, contentType(i), b)));
  const wall = performance.now() - t;
  agent.destroy();
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  const q = (x: number) => ms[Math.min(ms.length - 1, Math.floor(x * ms.length))]!;
  return { wall, p50: q(0.5), p99: q(0.99), perSecond: (answers.length / wall) * 1000, ok: answers.filter((a) => a.ok).length };
}

export async function benchLoad(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "quire-bench-load-"));
  const store = await openStore(join(dataDir, "quire.db"));
  const account = await createAccount(store, "bench");
  await store.close();
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "serve", "--no-worker"], {
    cwd: ROOT,
    env: { ...process.env, QUIRE_DATA_DIR: dataDir, QUIRE_PORT: "0", QUIRE_DEMO_ACCOUNT: "0", QUIRE_LOG_LEVEL: "silent", QUIRE_RATE_PER_SECOND: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /Quire listening on (http:\/\/\S+) /.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once("exit", () => reject(new Error(`quire serve exited: ${out}`)));
    });
    const FORM = "application/x-www-form-urlencoded";
    const refused = await burst(Array.from({ length: URL_UPLOADS }, () => form({ action: "svc.document.url_upload", format: "json" })), `${url}/1_0`, () => FORM);
    const uploads = await burst(
      Array.from({ length: URL_UPLOADS }, (_, i) =>
        form(sign(account.apiSecret, { action: "svc.document.url_upload", apiKey: account.apiKey, format: "json", slurpUrl: `https://example.com/${i}.pdf` })),
      ),
      `${url}/1_0`,
      () => FORM,
    );
    const f = (n: number) => n.toFixed(0);
    process.stdout.write(
      `${URL_UPLOADS} concurrent url_upload: ${uploads.ok} ok, p50 ${f(uploads.p50)} ms, p99 ${f(uploads.p99)} ms, ${f(uploads.perSecond)}/s\n` +
        `  baseline, ${URL_UPLOADS} concurrent requests refused before the database (009): p50 ${f(refused.p50)} ms, p99 ${f(refused.p99)} ms, ${f(refused.perSecond)}/s\n` +
        `  ratio (url_upload / baseline throughput): ${(uploads.perSecond / refused.perSecond).toFixed(2)}\n`,
    );

    const file = Buffer.alloc(FILE_BYTES, 0x20);
    file.write("%PDF-1.4\n%", 0);
    const boundaries = Array.from({ length: FILE_UPLOADS }, () => `----bench${randomBytes(8).toString("hex")}`);
    const bodies = boundaries.map((b, i) => {
      const p = sign(account.apiSecret, { action: "svc.document.upload", apiKey: account.apiKey, format: "json" });
      const head = Object.entries(p).map(([k, v]) => `--${b}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join("");
      return Buffer.concat([Buffer.from(`${head}--${b}\r\nContent-Disposition: form-data; name="file"; filename="${i}.pdf"\r\n\r\n`), file, Buffer.from(`\r\n--${b}--\r\n`)]);
    });
    const files = await burst(bodies, `${url}/upload/1_0`, (i) => `multipart/form-data; boundary=${boundaries[i]}`);
    const mib = (FILE_UPLOADS * FILE_BYTES) / 1048576;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: FILE_UPLOADS }, async (_, i) => {
        const fh = await open(join(dataDir, "blobs", `baseline-${i}`), "w");
        await fh.writeFile(file);
        await fh.sync();
        await fh.close();
      }),
    );
    const diskMiBs = mib / ((performance.now() - t) / 1000);
    const uploadMiBs = mib / (files.wall / 1000);
    process.stdout.write(
      `${FILE_UPLOADS} concurrent 10 MB uploads: ${files.ok} ok, p50 ${f(files.p50)} ms, p99 ${f(files.p99)} ms, ${uploadMiBs.toFixed(1)} MiB/s\n` +
        `  baseline, the same bytes written to ${FILE_UPLOADS} files with fsync: ${diskMiBs.toFixed(1)} MiB/s\n` +
        `  ratio (uploads / disk): ${(uploadMiBs / diskMiBs).toFixed(2)}\n`,
    );
  } finally {
    child.kill("SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchLoad();
