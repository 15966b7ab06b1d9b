/**
 * Issue 11 item 2: the disk held at peak by 20 concurrent file-first 100 MB uploads with no valid
 * key (the file part before `apiKey` and `signature`, so it is spooled before anyone knows who sent
 * it), against the configured bound, with the default configuration. Run twice: all 20 from one
 * address (the per-address bound holds), then from 20 addresses 127.0.0.1-20 (the total bound
 * holds). The spool folder is polled every 5 ms; the figure is peak / bound (≤ 1 is the goal).
 *
 * `npm run bench -- preauth`
 */
import { join } from "node:path";
import { fileFirstLength, fileFirstUpload, watchFolderBytes } from "../test/helpers/file-first-upload.ts";
import { startTestServer } from "../test/helpers/test-server.ts";

const UPLOADS = 20;
const FILE_BYTES = 100_000_000;
const MiB = 1024 * 1024;
const BOGUS = { apiKey: "z".repeat(32), signature: "0".repeat(32), action: "svc.document.upload" };
/** Written in pieces, so that what the server reads is spread over the run as a real upload's is. */
const PIECE = 4 * MiB;

async function attack(uploadUrl: string, spoolDir: string, addresses: string[]): Promise<{ peak: number; codes: Record<string, number>; seconds: number }> {
  const started = Date.now();
  const watch = watchFolderBytes(spoolDir);
  const declaredLength = fileFirstLength(FILE_BYTES, BOGUS);
  const uploads = addresses.map((localAddress) => fileFirstUpload(uploadUrl, { localAddress, declaredLength }));
  try {
    await Promise.all(
      uploads.map(async (u) => {
        for (let sent = 0; sent < FILE_BYTES && !u.answered(); sent += PIECE) await u.writeFile(Math.min(PIECE, FILE_BYTES - sent));
        u.finish(BOGUS);
      }),
    );
    const answers = await Promise.all(uploads.map((u) => u.answer.catch(() => ({ status: 0, text: "no answer" }))));
    const codes: Record<string, number> = {};
    for (const a of answers) {
      const code = /code="(\d{3})"/.exec(a.text)?.[1] ?? (a.text.includes('stat="ok"') ? "ok" : "none");
      codes[code] = (codes[code] ?? 0) + 1;
    }
    return { peak: await watch.stop(), codes, seconds: (Date.now() - started) / 1000 };
  } finally {
    for (const u of uploads) u.abort();
    await watch.stop();
  }
}

export async function benchPreauth(): Promise<void> {
  const server = await startTestServer();
  try {
    const { preauthSpoolBytes: total, preauthSpoolBytesPerAddress: perAddress } = server.config;
    const spoolDir = join(server.config.blobDir, ".tmp");
    const uploadUrl = `${server.uploadUrl}/1_0`;
    const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
    process.stdout.write(`bounds (defaults): ${mib(perAddress)} per address, ${mib(total)} in all; ${UPLOADS} file-first uploads of ${FILE_BYTES / 1e6} MB, no valid key\n`);
    for (const [label, addresses, bound] of [
      ["one address", Array<string>(UPLOADS).fill("127.0.0.1"), perAddress],
      [`${UPLOADS} addresses`, Array.from({ length: UPLOADS }, (_, i) => `127.0.0.${i + 1}`), total],
    ] as const) {
      const r = await attack(uploadUrl, spoolDir, [...addresses]);
      process.stdout.write(
        `${label.padEnd(13)} peak on disk ${mib(r.peak)} vs bound ${mib(bound)}: ratio ${(r.peak / bound).toFixed(3)} ` +
          `(without a bound: up to ${mib(UPLOADS * FILE_BYTES)}); answers ${JSON.stringify(r.codes)}; ${r.seconds.toFixed(1)} s\n`,
      );
    }
  } finally {
    await server.close();
  }
}
