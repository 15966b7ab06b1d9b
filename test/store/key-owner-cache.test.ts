import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { dbOf } from "../helpers/store-db.ts";

/**
 * Every API request reads its key's owner (revocation, secret, documents version). On SQLite the
 * answer is kept in memory while the database reports no write at all since it was read; these
 * tests change the rows in every way a deployment can and expect the very next read to see it.
 * PostgreSQL reads the row every time; the same tests hold there.
 */

const pgSkip = await postgresUnavailable();

for (const dialect of DIALECTS) {
  const skip = dialect.name === "postgres" ? pgSkip : undefined;
  describe(`key owner reads on ${dialect.name}`, { skip }, () => {
    let store: Store;
    /** A second connection, as the worker, the CLI or another API process has. */
    let elsewhere: Store;
    let drop: () => Promise<void>;
    const SECRET = "s".repeat(32);
    let n = 0;
    const newKey = () => String(++n).padStart(32, "k");

    before(async () => {
      let url: string;
      ({ store, url, drop } = await dialect.open());
      elsewhere = await openStore(url);
    });
    after(async () => {
      await elsewhere?.close();
      await drop?.();
    });

    let lastUsername = "";
    async function accountWithKey(): Promise<string> {
      const key = newKey();
      lastUsername = `user${n}`;
      assert.ok((await store.accounts.createWithKey(lastUsername, key, SECRET, 1)).ok);
      // Read twice, so that the next read could come from memory.
      assert.ok(await store.accounts.getKeyOwnerForSigning(key));
      assert.ok(await store.accounts.getKeyOwnerForSigning(key));
      return key;
    }

    test("a key revoked by another connection is gone on the next read", async () => {
      const key = await accountWithKey();
      assert.equal(await elsewhere.accounts.revokeKey(key, 2), true);
      assert.equal(await store.accounts.getKeyOwnerForSigning(key), undefined);
    });

    test("a key revoked through this store is gone on the next read", async () => {
      const key = await accountWithKey();
      assert.equal(await store.accounts.revokeKey(key, 2), true);
      assert.equal(await store.accounts.getKeyOwnerForSigning(key), undefined);
    });

    test("an unknown key added by another connection is found on the next read", async () => {
      await accountWithKey();
      const added = newKey();
      assert.equal(await store.accounts.getKeyOwnerForSigning(added), undefined);
      assert.equal(await store.accounts.getKeyOwnerForSigning(added), undefined);
      assert.deepEqual(await elsewhere.accounts.addKey(lastUsername, added, "t".repeat(32), 2), { ok: true });
      const owner = await store.accounts.getKeyOwnerForSigning(added);
      assert.equal(owner?.apiSecret, "t".repeat(32));
    });

    test("raw SQL on this store's own connection is seen on the next read", async () => {
      const key = await accountWithKey();
      const before = (await store.accounts.getKeyOwnerForSigning(key))!;
      await sql`update accounts set documents_version = documents_version + 5 where id = ${before.accountId}`.execute(dbOf(store));
      assert.equal((await store.accounts.getKeyOwnerForSigning(key))!.documentsVersion, before.documentsVersion + 5);
      await sql`update api_keys set revoked_at = 3 where api_key = ${key}`.execute(dbOf(store));
      assert.equal(await store.accounts.getKeyOwnerForSigning(key), undefined);
    });

    // On SQLite no other connection commits while a transaction is open: it is begun IMMEDIATE and
    // holds the write lock (src/store/dialects/sqlite.ts; test/store/sqlite-write-transactions.test.ts).
    test("a change committed elsewhere while this store is inside a transaction is not hidden", { skip: dialect.name === "sqlite" && "SQLite transactions hold the write lock from their start" }, async () => {
      const key = await accountWithKey();
      let read: Promise<unknown> | undefined;
      await dbOf(store).transaction().execute(async (trx) => {
        // The transaction's first read fixes its snapshot (SQLite WAL): later commits by others are invisible to it.
        await trx.selectFrom("accounts").select("id").execute();
        assert.equal(await elsewhere.accounts.revokeKey(key, 2), true);
        // Asked while the transaction is open; awaited after it ends, since it may need the connection.
        read = store.accounts.getKeyOwnerForSigning(key);
      });
      assert.equal(await read, undefined);
    });

    test("a key revoked elsewhere while this connection iterates a query is refused", { skip: dialect.name === "postgres" && "streams need pg-cursor" }, async () => {
      const key = await accountWithKey();
      let read: Promise<{ apiSecret: string } | undefined> | undefined;
      for await (const row of dbOf(store).selectFrom("accounts").select("id").stream()) {
        assert.ok(row.id);
        if (read) continue;
        // The open iteration reads from a snapshot taken before the revocation.
        assert.equal(await elsewhere.accounts.revokeKey(key, 2), true);
        read = store.accounts.getKeyOwnerForSigning(key);
      }
      assert.equal(await read, undefined);
    });

    test("a read asked while the connection iterates a query gets the current row", { skip: dialect.name === "postgres" && "streams need pg-cursor" }, async () => {
      const key = await accountWithKey();
      let read: Promise<{ apiSecret: string } | undefined> | undefined;
      for await (const row of dbOf(store).selectFrom("accounts").select("id").stream()) {
        assert.ok(row.id);
        read ??= store.accounts.getKeyOwnerForSigning(key);
      }
      assert.equal((await read)?.apiSecret, SECRET);
    });

    test("the documents version moved by another connection is seen on the next read", async () => {
      const key = await accountWithKey();
      const before = (await store.accounts.getKeyOwnerForSigning(key))!;
      await sql`update accounts set documents_version = documents_version + 1 where id = ${before.accountId}`.execute(dbOf(elsewhere));
      assert.equal((await store.accounts.getKeyOwnerForSigning(key))!.documentsVersion, before.documentsVersion + 1);
    });
  });
}
