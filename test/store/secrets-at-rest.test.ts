import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, describe, test } from "node:test";
import { addKey, createAccount } from "../../src/accounts/account-admin.ts";
import { accountsCommand } from "../../src/cli/accounts-command.ts";
import { loadConfig } from "../../src/config.ts";
import { newApiToken } from "../../src/domain/accounts.ts";
import { parseSecretKeys, SecretBox } from "../../src/domain/secret-box.ts";
import { signatureMatches } from "../../src/domain/signature.ts";
import { openStore, type Store } from "../../src/store/open-store.ts";
import { DIALECTS, postgresUnavailable } from "../helpers/dialects.ts";
import { call } from "../helpers/api-client.ts";
import { startTestServer } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

/** Issue 7, secrets at rest: with QUIRE_SECRET_KEY set, apiSecret is stored encrypted and still signs requests. */

const KEY_A = randomBytes(32).toString("hex");
const KEY_B = randomBytes(32).toString("base64");

async function storedSecret(store: Store, apiKey: string): Promise<string> {
  const row = await dbOf(store).selectFrom("apiKeys").select("apiSecret").where("apiKey", "=", apiKey).executeTakeFirstOrThrow();
  return row.apiSecret;
}

describe("apiSecret at rest", () => {
  test("with a key set, the stored secret is sealed and a signed request still succeeds", async () => {
    const server = await startTestServer({ QUIRE_SECRET_KEY: KEY_A });
    try {
      const { apiKey, apiSecret } = server.account;
      const stored = await storedSecret(server.services.store, apiKey);
      assert.match(stored, /^qsb1:[0-9a-f]{8}:/);
      assert.ok(!stored.includes(apiSecret), "the secret does not appear in the stored value");
      const answer = JSON.parse((await call({ server, apiKey, apiSecret }, "documents.list")).body) as { rsp: { stat: string } };
      assert.equal(answer.rsp.stat, "ok");
      const forged = JSON.parse((await call({ server, apiKey, apiSecret: stored }, "documents.list")).body) as { rsp: { _content: { error: { code: string } } } };
      assert.equal(forged.rsp._content.error.code, "011", "the stored value itself does not sign");
    } finally {
      await server.close();
    }
  });

  for (const dialect of DIALECTS) {
    test(`plain rows keep working, keys rotate, a sealed secret is bound to its apiKey (${dialect.name})`, async (t) => {
      if (dialect.name === "postgres") {
        const skip = await postgresUnavailable();
        if (skip) return t.skip(skip);
      }
      const opened = await dialect.open();
      after(() => opened.drop());
      // Written before any key was set: stored as it is.
      const legacy = await createAccount(opened.store, "legacy");
      assert.equal(await storedSecret(opened.store, legacy.apiKey), legacy.apiSecret);

      const withA = await openStore(opened.url, { secretKeys: parseSecretKeys(KEY_A) });
      const sealedA = await addKey(withA, "legacy");
      assert.equal((await withA.accounts.getKeyOwnerForSigning(legacy.apiKey))?.apiSecret, legacy.apiSecret, "plain row read as it is");
      assert.equal((await withA.accounts.getKeyOwnerForSigning(sealedA.apiKey))?.apiSecret, sealedA.apiSecret);
      await withA.close();

      // Rotation: B first seals new secrets, A still opens the old ones.
      const rotated = await openStore(opened.url, { secretKeys: parseSecretKeys(`${KEY_B},${KEY_A}`) });
      const sealedB = await addKey(rotated, "legacy");
      assert.equal((await rotated.accounts.getKeyOwnerForSigning(sealedA.apiKey))?.apiSecret, sealedA.apiSecret);
      assert.equal((await rotated.accounts.getKeyOwnerForSigning(sealedB.apiKey))?.apiSecret, sealedB.apiSecret);
      assert.notEqual((await storedSecret(rotated, sealedB.apiKey)).split(":")[1], (await storedSecret(rotated, sealedA.apiKey)).split(":")[1]);
      await rotated.close();

      // Without the key that sealed it, a secret cannot be read: an error, never a wrong secret.
      const onlyB = await openStore(opened.url, { secretKeys: parseSecretKeys(KEY_B) });
      await assert.rejects(onlyB.accounts.getKeyOwnerForSigning(sealedA.apiKey), /sealed with key [0-9a-f]{8}/);
      await onlyB.close();

      // `quire accounts reseal` with B first: every row (plain, sealed with A, with B) ends sealed with B.
      const resealing = await openStore(opened.url, { secretKeys: parseSecretKeys(`${KEY_B},${KEY_A}`) });
      assert.deepEqual(await resealing.accounts.resealSecrets(), { resealed: 2, current: 1, unreadable: 0, unreadableRevoked: 0, changedMeanwhile: 0 });
      assert.equal(await accountsCommand(resealing, ["reseal"]), 0, "a second pass finds nothing to do");
      await resealing.close();
      // …so A can be dropped: B alone opens them all.
      const afterReseal = await openStore(opened.url, { secretKeys: parseSecretKeys(KEY_B) });
      for (const c of [legacy, sealedA, sealedB]) {
        assert.equal((await afterReseal.accounts.getKeyOwnerForSigning(c.apiKey))?.apiSecret, c.apiSecret);
        assert.match(await storedSecret(afterReseal, c.apiKey), /^qsb1:/);
      }
      await afterReseal.close();
      // With only A, nothing can be opened: nothing is changed, and the command says so with exit 1.
      // A revoked key's row is counted apart: it signs nothing, so it alone would not fail the command.
      const wrongKey = await openStore(opened.url, { secretKeys: parseSecretKeys(KEY_A) });
      assert.equal(await wrongKey.accounts.revokeKey(sealedA.apiKey, 5), true);
      const before = await storedSecret(wrongKey, legacy.apiKey);
      assert.deepEqual(await wrongKey.accounts.resealSecrets(), { resealed: 0, current: 0, unreadable: 2, unreadableRevoked: 1, changedMeanwhile: 0 });
      assert.equal(await accountsCommand(wrongKey, ["reseal"]), 1);
      assert.equal(await storedSecret(wrongKey, legacy.apiKey), before);
      await wrongKey.close();
      // A damaged row sealed with the current key is unreadable, not "already current".
      const damaged = await openStore(opened.url, { secretKeys: parseSecretKeys(KEY_B) });
      const stored = await storedSecret(damaged, sealedB.apiKey);
      await dbOf(damaged).updateTable("apiKeys").set({ apiSecret: `${stored.slice(0, -4)}AAAA` }).where("apiKey", "=", sealedB.apiKey).execute();
      assert.deepEqual(await damaged.accounts.resealSecrets(), { resealed: 0, current: 2, unreadable: 1, unreadableRevoked: 0, changedMeanwhile: 0 });
      await damaged.close();
      await assert.rejects(opened.store.accounts.resealSecrets(), /QUIRE_SECRET_KEY is not set/);

      // A sealed value copied onto another key's row does not open (the apiKey is authenticated data).
      const box = new SecretBox(parseSecretKeys(KEY_A));
      assert.throws(() => box.open(box.seal("s3cret", newApiToken()), newApiToken()));
    });
  }

  test("a malformed QUIRE_SECRET_KEY is a configuration error that does not echo the value", () => {
    const bad = "not-a-key-" + "z".repeat(30);
    assert.throws(() => loadConfig({ QUIRE_SECRET_KEY: bad }), (err: Error) => /QUIRE_SECRET_KEY: key 1/.test(err.message) && !err.message.includes(bad));
    assert.throws(() => loadConfig({ QUIRE_SECRET_KEY: randomBytes(16).toString("hex") }), /QUIRE_SECRET_KEY/);
  });
});

describe("signature comparison", () => {
  // decisions §3 asks for a constant-time comparison: crypto.timingSafeEqual, which throws on
  // buffers of different lengths; the wrapper must answer false for those, never throw.
  test("answers false for other lengths, is case-insensitive, and never throws", () => {
    const sig = "0123456789abcdef0123456789abcdef";
    assert.equal(signatureMatches(sig, sig), true);
    assert.equal(signatureMatches(sig, sig.toUpperCase()), true);
    assert.equal(signatureMatches(sig, sig.slice(0, 31)), false);
    assert.equal(signatureMatches(sig, `${sig}0`), false);
    assert.equal(signatureMatches(sig, ""), false);
    assert.equal(signatureMatches(sig, "é".repeat(16)), false, "same character count, other byte length");
    assert.equal(signatureMatches(sig, `${sig.slice(0, 31)}0`), false);
  });
});
