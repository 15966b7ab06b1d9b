import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A PostgreSQL server of a test's own, in a temp folder on a free port, that the test may stop and
 * start (an outage) without disturbing the shared cluster other tests use. PostgreSQL refuses to
 * run as root, so as root its programs run as the `postgres` user.
 */
export interface PrivatePostgres {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

function binDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "pg_ctl"))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}

/** Why a private server cannot be had here (as the skip message), or undefined. */
export function privatePostgresUnavailable(): string | undefined {
  if (!binDir()) return "no PostgreSQL server programs under /usr/lib/postgresql";
  if (process.getuid?.() !== 0) return "a private PostgreSQL server is started as root (it runs as the postgres user)";
  return undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir()!;
  const dir = await mkdtemp(join(tmpdir(), "quire-pg-"));
  const { stdout } = await run("id", ["-u", "postgres"]);
  const { stdout: gid } = await run("id", ["-g", "postgres"]);
  await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  const data = join(dir, "data");
  const asPostgres = (cmd: string, args: string[]) => run("runuser", ["-u", "postgres", "--", join(bin, cmd), ...args], { timeout: 60_000 });
  await asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const start = () => asPostgres("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "60", "start"]).then(() => {});
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    // As the outage: `-m immediate`, no goodbye to any client.
    stop: () => asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).then(() => {}),
    start,
    async destroy() {
      await asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
