#!/usr/bin/env node
// Runs a real v2 client library, unchanged, against a real Quire (issue 28: "A real v2 client
// library, run unchanged against the server from outside the project, must pass every operation
// it has"). Today the client is Issuu's own TypeScript SDK (`issuu/issuu-api-sdk`), which is not
// on the npm registry: its source lives in a folder OUTSIDE this repository, with its one runtime
// dependency (axios) installed there (docs/api-v2.md, "A real client against Quire"). Nothing of
// it enters this repository: drive.ts imports it from that folder at run time.
//
// For each database (SQLite, and PostgreSQL when one answers at QUIRE_TEST_PG_URL or
// postgres://postgres@127.0.0.1:5432/postgres), it does what an operator does: `quire accounts
// create` two accounts, `quire accounts create-token`, `quire serve` (API and worker) on a free
// port; then it runs drive.ts in a process of its own with ISSUU_API_SDK_URL pointing at that
// server, as the SDK's README would have a user do, and prints what each SDK operation gave.
//
// Not part of `npm test` (CI has no copy of the SDK). Run it as
//   npm run check:v2-client -- <sdk-folder> [--sqlite | --postgres] [--verbose]
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const FIXTURES = resolve(REPO, "../shared/fixtures");
const QUIRE_BIN = join(REPO, "bin/quire.js");
const PDF = "pdf-quartz-firefox-1page.pdf";
const PG_ADMIN_URL = process.env.QUIRE_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const args = process.argv.slice(2);
const verbose = args.includes("--verbose");
const only = args.includes("--sqlite") ? "sqlite" : args.includes("--postgres") ? "postgres" : undefined;
const sdkArg = args.find((a) => !a.startsWith("--"));
if (!sdkArg) usage("no SDK folder given");
const sdkDir = resolve(sdkArg);
if (!existsSync(join(sdkDir, "index.ts")) || !existsSync(join(sdkDir, "src/services/api.ts"))) usage(`${sdkDir} does not hold the SDK's index.ts and src/services/api.ts`);
if (!existsSync(join(sdkDir, "node_modules/axios"))) usage(`${sdkDir}/node_modules/axios is missing: run \`npm install\` in that folder`);
if (sdkDir === REPO || sdkDir.startsWith(`${REPO}/`)) usage("the SDK must live outside this repository");

function usage(problem: string): never {
  process.stderr.write(`${problem}\nusage: npm run check:v2-client -- <sdk-folder> [--sqlite | --postgres] [--verbose]\n`);
  process.exit(2);
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** `quire <args>` to its end; its stdout. */
function quire(argv: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [QUIRE_BIN, ...argv], { cwd: REPO, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.once("exit", (code) => (code === 0 ? resolvePromise(out) : reject(new Error(`quire ${argv.join(" ")} exited ${code}: ${out}${err}`))));
  });
}

async function tokenOf(username: string, env: Record<string, string>): Promise<string> {
  const m = /^token: (\S+)$/m.exec(await quire(["accounts", "create-token", username], env));
  if (!m) throw new Error(`no token printed for ${username}`);
  return m[1]!;
}

/** A loopback server answering the PDF fixture, for `fileUrl` (fetched by Quire as v1's slurpUrl). */
async function fixtureHost(): Promise<{ url: string; close(): Promise<void> }> {
  const bytes = await readFile(join(FIXTURES, PDF));
  const server = createHttpServer((req, res) => {
    if (req.url !== `/${PDF}`) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/pdf", "content-length": bytes.length }).end(bytes);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/${PDF}`, close: () => new Promise((r) => server.close(() => r())) };
}

async function postgresAnswers(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

async function adminQuery(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

interface Outcome {
  name: string;
  outcome: "pass" | "fail" | "sdk-bug";
  detail: string;
}

async function runOn(dialect: "sqlite" | "postgres"): Promise<Outcome[]> {
  const dataDir = await mkdtemp(join(tmpdir(), "quire-v2client-"));
  const dbName = `quire_v2client_${randomBytes(6).toString("hex")}`;
  const env: Record<string, string> = {
    QUIRE_DATA_DIR: dataDir,
    QUIRE_HOST: "127.0.0.1",
    QUIRE_PORT: String(await freePort()),
    QUIRE_LOG_LEVEL: "warn",
    // The fixture host is on loopback, which fileUrl (as slurpUrl) refuses otherwise.
    QUIRE_FETCH_ALLOW_PRIVATE: "1",
    QUIRE_OFFICE_SLOTS: "1",
    QUIRE_WORKER_CONCURRENCY: "2",
  };
  if (dialect === "postgres") {
    await adminQuery(`create database ${dbName}`);
    env.QUIRE_DATABASE_URL = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${dbName}`);
  }
  const files = await fixtureHost();
  let serve: ReturnType<typeof spawn> | undefined;
  try {
    await quire(["accounts", "create", "checker"], env);
    await quire(["accounts", "create", "other"], env);
    const token = await tokenOf("checker", env);
    const spare = await tokenOf("checker", env);
    const other = await tokenOf("other", env);

    serve = spawn(process.execPath, [QUIRE_BIN, "serve"], { cwd: REPO, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let serveOut = "";
    serve.stderr!.on("data", (c: Buffer) => (serveOut += c.toString()));
    const address = await new Promise<string>((resolveAddress, reject) => {
      const timer = setTimeout(() => reject(new Error(`quire serve did not start in 60 s:\n${serveOut}`)), 60_000);
      serve!.stdout!.on("data", (c: Buffer) => {
        serveOut += c.toString();
        const m = /Quire listening on (\S+)/.exec(serveOut);
        if (m) {
          clearTimeout(timer);
          resolveAddress(m[1]!);
        }
      });
      serve!.once("exit", (code) => reject(new Error(`quire serve exited ${code}:\n${serveOut}`)));
    });
    process.stdout.write(`\n== ${dialect}: quire serve at ${address}, SDK from ${sdkDir}\n`);

    const resultFile = join(dataDir, "v2-client-result.json");
    const code = await new Promise<number>((resolveCode) => {
      const driver = spawn(process.execPath, ["--import", "tsx", join(REPO, "scripts/v2-client-check/drive.ts")], {
        cwd: REPO,
        env: {
          ...process.env,
          ISSUU_API_SDK_URL: `${address}/v2/`,
          CHECK_SDK_DIR: sdkDir,
          CHECK_TOKEN: token,
          CHECK_SPARE_TOKEN: spare,
          CHECK_OTHER_TOKEN: other,
          CHECK_FILE_URL: files.url,
          CHECK_PDF: join(FIXTURES, PDF),
          CHECK_RESULT: resultFile,
          CHECK_VERBOSE: verbose ? "1" : "",
        },
        stdio: "inherit",
      });
      driver.once("exit", (c) => resolveCode(c ?? 1));
    });
    if (!existsSync(resultFile)) throw new Error(`the driver wrote no result (exit ${code})`);
    return JSON.parse(await readFile(resultFile, "utf8")) as Outcome[];
  } finally {
    if (serve && serve.exitCode === null) {
      const exited = new Promise((r) => serve!.once("exit", r));
      serve.kill("SIGTERM");
      await exited;
    }
    await files.close();
    if (dialect === "postgres") await adminQuery(`drop database if exists ${dbName} with (force)`);
    await rm(dataDir, { recursive: true, force: true });
  }
}

const dialects: Array<"sqlite" | "postgres"> = [];
if (only !== "postgres") dialects.push("sqlite");
if (only !== "sqlite") {
  if (await postgresAnswers()) dialects.push("postgres");
  else process.stdout.write(`PostgreSQL does not answer at ${PG_ADMIN_URL}: SQLite only\n`);
}
let failed = 0;
const summary: string[] = [];
for (const dialect of dialects) {
  const outcomes = await runOn(dialect);
  const count = (o: Outcome["outcome"]) => outcomes.filter((x) => x.outcome === o).length;
  failed += count("fail");
  summary.push(`${dialect}: ${count("pass")} passed, ${count("sdk-bug")} known SDK defects (the server answered right), ${count("fail")} failed`);
}
process.stdout.write(`\n${summary.join("\n")}\n`);
process.exit(failed > 0 ? 1 : 0);
