import type { Store } from "../../src/store/open-store.ts";

/** A store-level account with a given key (tests that need fixed keys); its id, or a failed test. */
export async function seedAccount(store: Pick<Store, "accounts">, username: string, apiKey: string, apiSecret: string, now: number): Promise<number> {
  const created = await store.accounts.createWithKey(username, apiKey, apiSecret, now);
  if (!created.ok) throw new Error(`account ${username}: ${created.reason}`);
  return created.id;
}
