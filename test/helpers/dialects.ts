import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { openStore, type Store } from "../../src/store/open-store.ts";

export const PG_ADMIN_URL = process.env.QUIRE_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** Whether PostgreSQL answers; the reason is shown as the skip message when it does not. */
export async function postgresUnavailable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("select 1");
    return undefined;
  } catch (err) {
    return `PostgreSQL not reachable at ${PG_ADMIN_URL}: ${(err as Error).message}`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Runs one statement as the PostgreSQL admin user (create or drop a test database); answers its rows. */
export async function adminQuery(sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

let fileCopy: Promise<boolean> | undefined;

/**
 * Creates an empty test database; answers its address. From PostgreSQL 15 on, by copying the template's files
 * (`strategy file_copy`): the default there writes the whole template through the write-ahead log,
 * 76 ms of the server's processor time a database against 16 (and 230 ms against 60 on the clock),
 * for databases no test needs to survive a crash of the server.
 */
export async function createDatabase(name: string): Promise<string> {
  fileCopy ??= adminQuery("show server_version_num").then((rows) => Number(rows[0]?.server_version_num) >= 150000);
  await adminQuery(`create database ${name}${(await fileCopy) ? " strategy file_copy" : ""}`);
  return databaseUrl(name);
}

/** The address of the test database `name`, on the admin URL's server. */
export function databaseUrl(name: string): string {
  return PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
}

/**
 * Drops a test database once its connections are gone. A pool that has just been ended may
 * still be closing some of them; terminating those (`with (force)`) makes their clients raise an
 * error after the test, with nobody listening. So wait for them a little, and force only then.
 */
export async function dropDatabase(name: string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    try {
      await adminQuery(`drop database if exists ${name}`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== "55006") throw err; // object_in_use: sessions remain
      await sleep(50);
    }
  }
  await adminQuery(`drop database if exists ${name} with (force)`);
}

export interface DialectCase {
  name: "sqlite" | "postgres";
  /** Opens a fresh, migrated store of this dialect; `drop` removes it with its database or file. */
  open(): Promise<{ store: Store; url: string; drop(): Promise<void> }>;
}

export const DIALECTS: DialectCase[] = [
  {
    name: "sqlite",
    async open() {
      const dir = await mkdtemp(join(tmpdir(), "quire-store-"));
      const url = join(dir, "quire.db");
      const store = await openStore(url);
      return { store, url, drop: async () => { await store.close(); await rm(dir, { recursive: true, force: true }); } };
    },
  },
  {
    name: "postgres",
    async open() {
      const dbName = `quire_test_${randomBytes(6).toString("hex")}`;
      const url = await createDatabase(dbName);
      const store = await openStore(url);
      return {
        store,
        url,
        drop: async () => {
          await store.close();
          await dropDatabase(dbName);
        },
      };
    },
  },
];
