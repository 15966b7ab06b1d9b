import type { Kysely } from "kysely";
import { SecretBox } from "../domain/secret-box.ts";
import { isWebhookEvent, type WebhookEvent } from "../domain/webhooks.ts";
import type { Database } from "./schema.ts";

/** An account's webhook as `svc.webhook.get` answers it: never its secret. */
export interface WebhookSettings {
  url: string;
  events: WebhookEvent[];
}

/** What a delivery needs: where to post and the secret to sign with (opened). */
export interface WebhookForDelivery extends WebhookSettings {
  secret: string;
}

/** The secret is bound to its account when sealed, so a sealed value copied to another row does not open. */
const sealedFor = (accountId: number): string => `webhook:${accountId}`;

const parseEvents = (json: string): WebhookEvent[] => (JSON.parse(json) as string[]).filter(isWebhookEvent);

/**
 * One webhook per account (decisions §12). Its secret is stored as apiSecrets are: sealed with
 * QUIRE_SECRET_KEY when it is set (src/domain/secret-box.ts), and only the two queries named for
 * the callers that need it (set/rotate answer it, the delivery signs with it) ever open it.
 */
export function webhooksRepo(db: Kysely<Database>, secrets: SecretBox = new SecretBox([])) {
  return {
    /**
     * Creates the account's webhook with `newSecret`, or changes its address and events and keeps
     * the secret it has (receivers keep verifying); answers the webhook with its secret.
     */
    async set(accountId: number, settings: WebhookSettings, newSecret: string, now: number): Promise<WebhookForDelivery> {
      const events = JSON.stringify(settings.events);
      return db.transaction().execute(async (trx) => {
        await trx
          .insertInto("webhooks")
          .values({ accountId, url: settings.url, events, secret: secrets.seal(newSecret, sealedFor(accountId)), createdAt: now, updatedAt: now })
          .onConflict((oc) => oc.column("accountId").doUpdateSet({ url: settings.url, events, updatedAt: now }))
          .execute();
        const row = await trx.selectFrom("webhooks").select("secret").where("accountId", "=", accountId).executeTakeFirstOrThrow();
        return { ...settings, secret: secrets.open(row.secret, sealedFor(accountId)) };
      });
    },

    async get(accountId: number): Promise<WebhookSettings | undefined> {
      const row = await db.selectFrom("webhooks").select(["url", "events"]).where("accountId", "=", accountId).executeTakeFirst();
      return row && { url: row.url, events: parseEvents(row.events) };
    },

    /** For the delivery job, and the app's webhook page the once it shows a new secret: the webhook with its secret opened. */
    async getForDelivery(accountId: number): Promise<WebhookForDelivery | undefined> {
      const row = await db.selectFrom("webhooks").select(["url", "events", "secret"]).where("accountId", "=", accountId).executeTakeFirst();
      return row && { url: row.url, events: parseEvents(row.events), secret: secrets.open(row.secret, sealedFor(accountId)) };
    },

    /** A new secret for the account's webhook; undefined when it has none. */
    async rotateSecret(accountId: number, newSecret: string, now: number): Promise<WebhookForDelivery | undefined> {
      const row = await db
        .updateTable("webhooks")
        .set({ secret: secrets.seal(newSecret, sealedFor(accountId)), updatedAt: now })
        .where("accountId", "=", accountId)
        .returning(["url", "events"])
        .executeTakeFirst();
      return row && { url: row.url, events: parseEvents(row.events), secret: newSecret };
    },

    /**
     * `quire accounts reseal`, for webhook secrets: seals every one with the first secret key, as
     * apiSecrets are (accounts.ts, resealSecrets). Rows that cannot be opened are left as they are.
     */
    async resealSecrets(): Promise<{ resealed: number; current: number; unreadable: number; changedMeanwhile: number }> {
      if (!secrets.enabled) throw new Error("QUIRE_SECRET_KEY is not set: there is no key to seal with");
      const counts = { resealed: 0, current: 0, unreadable: 0, changedMeanwhile: 0 };
      for (const row of await db.selectFrom("webhooks").select(["accountId", "secret"]).execute()) {
        let secret: string;
        try {
          secret = secrets.open(row.secret, sealedFor(row.accountId));
        } catch {
          counts.unreadable++;
          continue;
        }
        if (secrets.isCurrent(row.secret)) {
          counts.current++;
          continue;
        }
        const r = await db
          .updateTable("webhooks")
          .set({ secret: secrets.seal(secret, sealedFor(row.accountId)) })
          .where("accountId", "=", row.accountId)
          .where("secret", "=", row.secret)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) > 0) counts.resealed++;
        else counts.changedMeanwhile++;
      }
      return counts;
    },

    /** Removes the webhook; its deliveries not yet made end failed when their turn comes. */
    async delete(accountId: number): Promise<void> {
      await db.deleteFrom("webhooks").where("accountId", "=", accountId).execute();
    },
  };
}
