import { createHmac, hash, randomBytes } from "node:crypto";
import ipaddr from "ipaddr.js";

/**
 * Recognising a returning reader without storing who they are (decisions §15), as the
 * privacy-first web analytics do: a reader is the keyed hash of their address, their user agent
 * and the document, under a salt that is drawn at random for each UTC day and deleted after it.
 * Nothing but the hash is ever kept; once the day's salt is gone, nobody (Quire included) can
 * tell whether two days' readers were the same, nor recompute a key from an address.
 */

/** Bytes of a day's salt (drawn with `newDailySalt`). */
const SALT_BYTES = 32;
/** Bytes of the reader key kept: 128 bits, so two readers of a document never share one by chance. */
const KEY_BYTES = 16;
/** An absurd user agent is cut before hashing: it is only a distinguishing input, never stored. */
const USER_AGENT_MAX = 512;

/** The UTC day `now` (epoch ms) falls in, as `YYYY-MM-DD`: the salt's and the daily rows' day. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** A fresh random salt, base64url, for a day that has none yet. */
export function newDailySalt(): string {
  return randomBytes(SALT_BYTES).toString("base64url");
}

/** An IPv4 address as a socket gives it (no leading zeros): already in its one written form. */
const PLAIN_IPV4 = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Whether `address` is an IPv4 address in its one written form (what ipaddr.js would answer unchanged). */
export function isPlainIPv4(address: string): boolean {
  return PLAIN_IPV4.test(address);
}

/** The same client written two ways (an IPv4-mapped IPv6 address, letter case) hashes alike. */
function normalAddress(address: string): string {
  // The common case without parsing: it is counted on every view, on the request path.
  if (PLAIN_IPV4.test(address)) return address;
  return ipaddr.isValid(address) ? ipaddr.process(address).toString() : address;
}

/**
 * The reader key: HMAC-SHA256 under the day's salt of (address, user agent, document id),
 * base64url of its first 128 bits. The same reader of the same document on the same day gets
 * the same key; another document, another browser or another day gives an unrelated one.
 */
export function readerKey(salt: string, address: string, userAgent: string, documentId: string): string {
  const mac = createHmac("sha256", salt);
  // NUL cannot occur in a header or an address, so no two inputs run together into the same text.
  mac.update(`${normalAddress(address)}\0${userAgent.slice(0, USER_AGENT_MAX)}\0${documentId}`);
  return firstBytesBase64url(mac.digest("base64url"));
}

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** Whole characters the first KEY_BYTES bytes fill (6 bits each), and the bits left over for the next one. */
const KEY_WHOLE_CHARS = Math.floor((KEY_BYTES * 8) / 6);
const KEY_LEFT_BITS = (KEY_BYTES * 8) % 6;

/**
 * The base64url of a digest's first KEY_BYTES bytes, from the whole digest's base64url: the same
 * text as `digest().subarray(0, KEY_BYTES).toString("base64url")` (so a day's keys do not change
 * with this code), without the Buffer, its slice and its second encoding, which cost about as much
 * as the HMAC itself (the writer makes one or two keys a view). The last character of the key
 * carries the byte's last bits followed by zeros where the whole digest's carries the next byte's.
 */
function firstBytesBase64url(whole: string): string {
  const last = BASE64URL.indexOf(whole[KEY_WHOLE_CHARS]!) & ((0b111111 << (6 - KEY_LEFT_BITS)) & 0b111111);
  return whole.slice(0, KEY_WHOLE_CHARS) + BASE64URL[last];
}

/** A reader as their request showed them: hashed into keys when their batch is written, never stored (decisions §15). */
export interface Visitor {
  address: string;
  /** The unit the address is counted in (src/ops/client-address.ts: an IPv6 /64 is one address). */
  addressGroup: string;
  userAgent: string;
}

/** A user agent as a visitor holds it: at most USER_AGENT_MAX characters. */
export function visitorUserAgent(userAgent: string): string {
  return userAgent.length > USER_AGENT_MAX ? userAgent.slice(0, USER_AGENT_MAX) : userAgent;
}

/** A visitor, its user agent cut as `readerKey` reads it (a buffered visitor holds no more than is hashed). */
export function newVisitor(address: string, addressGroup: string, userAgent: string): Visitor {
  return { address, addressGroup, userAgent: visitorUserAgent(userAgent) };
}

/**
 * A visitor's keys for a document under the day's salt: the reader's, and their address's alone
 * (another "document" in the hash, so the address alone never yields a reader's key): the second
 * bounds how many readers one address can count as.
 */
export function visitorKeys(salt: string, v: Visitor, documentId: string): { readerKey: string; addressKey: string } {
  return { readerKey: readerKey(salt, v.address, v.userAgent, documentId), addressKey: addressKey(salt, v.addressGroup, documentId) };
}

/** The key of an address group for a document (visitorKeys): what bounds the readers one address counts as. */
export function addressKey(salt: string, addressGroup: string, documentId: string): string {
  return readerKey(salt, addressGroup, "", `address:${documentId}`);
}

/**
 * The keys made under one day's salt, each made once however many batches ask for it: a reader's
 * beacons, and a flood's views, come back batch after batch. Remembered by another salted hash
 * of the same inputs, one that costs a fifth of the HMAC (SHA-256 once, no HMAC object), so what
 * it holds tells no more than the day's keys themselves: never an address. At most `max` keys,
 * then it starts again.
 */
export class SaltKeys {
  private readonly made = new Map<string, string>();

  constructor(
    readonly salt: string,
    private readonly max = 100_000,
  ) {}

  readerKey(address: string, userAgent: string, documentId: string): string {
    const by = hash("sha256", `${this.salt}\0${address}\0${userAgent}\0${documentId}`, "base64url");
    let key = this.made.get(by);
    if (key === undefined) {
      if (this.made.size >= this.max) this.made.clear();
      key = readerKey(this.salt, address, userAgent, documentId);
      this.made.set(by, key);
    }
    return key;
  }

  addressKey(addressGroup: string, documentId: string): string {
    return this.readerKey(addressGroup, "", `address:${documentId}`);
  }
}
