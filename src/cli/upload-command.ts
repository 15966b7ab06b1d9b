import { basename } from "node:path";
import { parseArgs } from "node:util";
import { waitForConversion } from "../client/document-wait.ts";
import { QuireClient, unwrap, type ApiAnswer } from "../client/quire-client.ts";
import { progressBoard, type UploadProgress } from "./upload-progress.ts";

const USAGE = `usage: quire upload <file|url>... [--wait] [--title T] [--name N] [--folder ID]... [--tags a,b] [--description D] [--access public|private]
  several files or addresses go up at once, each with its own progress line
  --wait   follow each conversion to its end; print each reader's address (or why it failed)
  server and credentials from QUIRE_URL (default http://localhost:8080), QUIRE_API_KEY, QUIRE_API_SECRET`;

/** Uploads running at once: enough to fill a link, few enough not to trip the server's rate limit. */
const PARALLEL = 4;
/** A small document is live within a second or two: look soon, then less and less often. */
const POLL_FIRST_MS = 200;
const POLL_MAX_MS = 2000;

export interface CommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

/** How one target ended: the record (without --wait), the reader's address, or a refusal/failure. */
interface Outcome {
  target: string;
  ok: boolean;
  record?: Record<string, unknown>;
  line: string;
}

/**
 * `quire upload`: files (with a progress bar each) or web addresses, several at once; prints the
 * records, or with `--wait` the reader's address of each once its conversion ends.
 */
export async function uploadCommand(args: string[], env: Record<string, string | undefined>, io: CommandIo = process): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      title: { type: "string" }, name: { type: "string" }, folder: { type: "string", multiple: true },
      tags: { type: "string" }, description: { type: "string" }, access: { type: "string" },
      wait: { type: "boolean", default: false }, help: { type: "boolean", default: false },
    },
  });
  if (values.help || positionals.length === 0 || !env.QUIRE_API_KEY || !env.QUIRE_API_SECRET) {
    io.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const baseUrl = env.QUIRE_URL ?? "http://localhost:8080";
  const client = new QuireClient({ baseUrl, apiKey: env.QUIRE_API_KEY, apiSecret: env.QUIRE_API_SECRET });
  const params: Record<string, string> = {};
  for (const key of ["title", "name", "tags", "description", "access"] as const) {
    const v = values[key];
    if (v !== undefined) params[key] = v;
  }
  if (values.folder?.length) params.folderIds = values.folder.join(",");

  const board = progressBoard(io.stderr);
  const labels = uniqueLabels(positionals);
  const outcomes: Outcome[] = new Array(positionals.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < positionals.length; i = next++) {
      const progress = board.track(labels[i]!);
      outcomes[i] = await uploadOne(client, positionals[i]!, params, { wait: values.wait, baseUrl, progress });
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PARALLEL, positionals.length) }, lane));
  } finally {
    board.stop();
  }
  writeOutcomes(io, outcomes, values.wait);
  return outcomes.every((o) => o.ok) ? 0 : 1;
}

/** File names label the bars; a name given twice gets its position, so no two bars look alike. */
function uniqueLabels(targets: string[]): string[] {
  const names = targets.map((t) => (isAddress(t) ? t : basename(t)));
  return names.map((n, i) => (names.indexOf(n) === names.lastIndexOf(n) ? n : `${n} (#${i + 1})`));
}

const isAddress = (target: string) => /^https?:\/\//i.test(target);

async function uploadOne(
  client: QuireClient,
  target: string,
  params: Record<string, string>,
  opts: { wait: boolean; baseUrl: string; progress: UploadProgress },
): Promise<Outcome> {
  const { progress } = opts;
  let record: Record<string, unknown>;
  try {
    const answer: ApiAnswer = isAddress(target)
      ? await client.call("document.url_upload", { ...params, slurpUrl: target })
      : await client.upload(target, params, (sent, total) => progress.sending(sent, total));
    record = unwrap(answer).document as Record<string, unknown>;
  } catch (err) {
    const line = `refused: ${(err as Error).message}`;
    progress.done(line);
    return { target, ok: false, line };
  }
  if (!opts.wait) {
    progress.done("uploaded");
    return { target, ok: true, record, line: "uploaded" };
  }
  const started = Date.now();
  progress.converting(0);
  try {
    const doc = await waitForConversion(client, String(record.documentId), String(record.orgDocName), {
      pollMs: { first: POLL_FIRST_MS, max: POLL_MAX_MS },
      onPending: () => progress.converting(Math.round((Date.now() - started) / 1000)),
    });
    if (doc.state === "F") {
      const line = `conversion failed: ${doc.errorMessage} (error ${doc.errorCode})`;
      progress.done(line);
      return { target, ok: false, line };
    }
    const address = `${opts.baseUrl.replace(/\/+$/, "")}/${encodeURIComponent(doc.username)}/docs/${encodeURIComponent(doc.name)}`;
    progress.done(`live at ${address}`);
    return { target, ok: true, line: address };
  } catch (err) {
    const line = `could not follow the conversion: ${(err as Error).message}`;
    progress.done(line);
    return { target, ok: false, line };
  }
}

/**
 * Without --wait: the record as JSON (an array of them for several targets), refusals on stderr.
 * With --wait: the reader's address alone for one target (`url=$(quire upload --wait f.pdf)`),
 * `target<TAB>address` lines for several; failures in words on stderr.
 */
function writeOutcomes(io: CommandIo, outcomes: Outcome[], wait: boolean): void {
  // A terminal's bars may be cut to its width: failures are said again in full. Plain lines said them already.
  if (io.stderr.isTTY) for (const o of outcomes) if (!o.ok) io.stderr.write(`${o.target}: ${o.line}\n`);
  const good = outcomes.filter((o) => o.ok);
  if (wait) {
    for (const o of good) io.stdout.write(outcomes.length === 1 ? `${o.line}\n` : `${o.target}\t${o.line}\n`);
  } else if (outcomes.length === 1) {
    if (good[0]) io.stdout.write(`${JSON.stringify({ document: good[0].record }, null, 2)}\n`);
  } else {
    io.stdout.write(`${JSON.stringify(good.map((o) => ({ document: o.record })), null, 2)}\n`);
  }
}
