import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * apiSecret at rest (issue 7): AES-256-GCM under a key from the environment (QUIRE_SECRET_KEY).
 * A sealed value reads `qsb1:<key id>:<base64url(iv ‖ tag ‖ ciphertext)>`; the apiKey it belongs to
 * is bound in as associated data, so a sealed secret copied onto another key's row does not open.
 * Values without the prefix are plain rows written before a key was set, and are read as they are.
 *
 * Rotation: QUIRE_SECRET_KEY takes several keys, comma-separated; the first seals new secrets and
 * every one of them opens. Put the new key first, re-seal the existing rows with it
 * (`quire accounts reseal`), then drop the old keys.
 */
const PREFIX = "qsb1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** 32 bytes, written as 64 hex digits or as base64; several separated by commas. */
export function parseSecretKeys(raw: string): Buffer[] {
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s, i) => {
      const key = /^[0-9a-fA-F]{64}$/.test(s) ? Buffer.from(s, "hex") : Buffer.from(s, "base64");
      if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(s) && key.toString("base64").replace(/=+$/, "") !== s.replace(/=+$/, ""))) {
        throw new Error(`key ${i + 1} is not 32 bytes as 64 hex digits or base64 (openssl rand -hex 32 makes one)`);
      }
      return key;
    });
}

const keyId = (key: Buffer): string => createHash("sha256").update(key).digest("hex").slice(0, 8);

export class SecretBox {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly sealing: { id: string; key: Buffer } | undefined;

  constructor(keys: readonly Buffer[]) {
    this.keys = new Map(keys.map((k) => [keyId(k), k]));
    this.sealing = keys[0] ? { id: keyId(keys[0]), key: keys[0] } : undefined;
  }

  /** Whether new secrets are stored sealed. */
  get enabled(): boolean {
    return this.sealing !== undefined;
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(`${PREFIX}:`);
  }

  /** Whether `stored` is already what `seal` would make of it now: sealed with the first key. */
  isCurrent(stored: string): boolean {
    return this.sealing !== undefined && stored.startsWith(`${PREFIX}:${this.sealing.id}:`);
  }

  /** The key id new secrets are sealed with, for messages (never the key). */
  get sealingKeyId(): string | undefined {
    return this.sealing?.id;
  }

  /** The value to store: sealed when a key is set, else the secret as it is. */
  seal(secret: string, apiKey: string): string {
    if (!this.sealing) return secret;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.sealing.key, iv).setAAD(Buffer.from(apiKey, "utf8"));
    const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    return `${PREFIX}:${this.sealing.id}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
  }

  /** The secret from its stored value; throws when it was sealed under a key we do not have, or altered. */
  open(stored: string, apiKey: string): string {
    if (!SecretBox.isSealed(stored)) return stored;
    const [, id, data] = stored.split(":");
    const key = this.keys.get(id ?? "");
    // Names the key id only: apiKeys and secrets never reach a log.
    if (!key || data === undefined) throw new Error(`an apiSecret is sealed with key ${id}, which QUIRE_SECRET_KEY does not hold`);
    const raw = Buffer.from(data, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES)).setAAD(Buffer.from(apiKey, "utf8"));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  }
}
