import { parseArgs } from "node:util";
import cliProgress from "cli-progress";
import { QuireClient, unwrap } from "../client/quire-client.ts";

const USAGE = `usage: quire upload <file|url> [--title T] [--name N] [--folder ID]... [--tags a,b] [--description D] [--access public|private]
  server and credentials from QUIRE_URL (default http://localhost:8080), QUIRE_API_KEY, QUIRE_API_SECRET`;

/** `quire upload`: a file (with a progress bar when large) or a web address; prints the document record. */
export async function uploadCommand(args: string[], env: Record<string, string | undefined>): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      title: { type: "string" }, name: { type: "string" }, folder: { type: "string", multiple: true },
      tags: { type: "string" }, description: { type: "string" }, access: { type: "string" },
    },
  });
  const target = positionals[0];
  if (!target || !env.QUIRE_API_KEY || !env.QUIRE_API_SECRET) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const client = new QuireClient({ baseUrl: env.QUIRE_URL ?? "http://localhost:8080", apiKey: env.QUIRE_API_KEY, apiSecret: env.QUIRE_API_SECRET });
  const params: Record<string, string> = {};
  for (const key of ["title", "name", "tags", "description", "access"] as const) {
    const v = values[key];
    if (v !== undefined) params[key] = v;
  }
  if (values.folder?.length) params.folderIds = values.folder.join(",");

  let answer;
  if (/^https?:\/\//i.test(target)) {
    answer = await client.call("document.url_upload", { ...params, slurpUrl: target });
  } else {
    const bar = new cliProgress.SingleBar({ format: "uploading [{bar}] {percentage}% {value}/{total} bytes", stream: process.stderr }, cliProgress.Presets.shades_classic);
    let started = false;
    answer = await client.upload(target, params, (sent, total) => {
      if (total < 1024 * 1024) return; // small files need no bar
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.update(sent);
    });
    if (started) bar.stop();
  }
  try {
    process.stdout.write(`${JSON.stringify(unwrap(answer), null, 2)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`upload refused: ${(err as Error).message}\n`);
    return 1;
  }
}
