import { randomUUID } from "node:crypto";
import { classifyAddress } from "./address-policy.ts";
import { documentView } from "./document-view.ts";
import type { DocumentRecord } from "./document.ts";
import { invalid } from "./errors.ts";
import { resourceFieldsJson, type Resource } from "./resource.ts";
import { formatDate, parseHttpUrl, parseList } from "./values.ts";

/** The events a webhook may ask for (decisions §12); the default is all of them. */
export const WEBHOOK_EVENTS = ["document.active", "document.failed", "document.deleted", "comment.created"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export function isWebhookEvent(value: string): value is WebhookEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

/** What a delivery is while it is tried, and how it ended. */
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * `url` of `svc.webhook.set`: the rules of `slurpUrl` (decisions §4, §12): an absolute http/https
 * URL of at most 2048 characters, no user name or password in it (the fetch refuses those too), and
 * an address written as a literal must pass the server-side request rule now; a name is checked
 * after DNS resolution at every delivery. `allowPrivate` is QUIRE_FETCH_ALLOW_PRIVATE.
 */
export function parseWebhookUrl(value: string, allowPrivate: boolean): string {
  const url = parseHttpUrl("url", value);
  if (url.username !== "" || url.password !== "") throw invalid("url");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!allowPrivate && isIpLiteral(host) && classifyAddress(host) !== "public") throw invalid("url");
  return value;
}

/**
 * The WHATWG parser has already turned every IPv4 spelling (`0x7f.1`, `2130706433`) into dotted
 * form, so a host is a literal when it is dotted decimal or holds a colon (IPv6).
 */
function isIpLiteral(host: string): boolean {
  return host.includes(":") || /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
}

/** `events`: a list of the three names; absent or empty means all of them; anything else is 201. */
export function parseWebhookEvents(value: string | undefined): WebhookEvent[] {
  if (value === undefined) return [...WEBHOOK_EVENTS];
  const items = parseList(value);
  if (items.some((e) => !isWebhookEvent(e))) throw invalid("events");
  return items.length > 0 ? (items as WebhookEvent[]) : [...WEBHOOK_EVENTS];
}

/** The body of a delivery (decisions §12), frozen when the state change is written. */
export function deliveryBody(event: WebhookEvent, record: DocumentRecord, now: number): string {
  return JSON.stringify({ event, created: formatDate(now), document: resourceFieldsJson(documentView(record)) });
}

/** A `comment.created` delivery (decisions §16): the document as the API answers it, and the comment. */
export function commentDeliveryBody(record: DocumentRecord, comment: Resource, now: number): string {
  return JSON.stringify({ event: "comment.created", created: formatDate(now), document: resourceFieldsJson(documentView(record)), comment: resourceFieldsJson(comment) });
}

export function newDeliveryId(): string {
  return randomUUID();
}

/** When to try a delivery again, and for how long at most. */
export interface RetryPolicy {
  /** Waits after the 1st, 2nd… failed attempt; the last one repeats. */
  scheduleMs: readonly number[];
  /** No attempt starts later than this after the delivery was written (24 hours by default). */
  windowMs: number;
}

/**
 * After `attempts` failed attempts, when the next one runs; undefined when it would fall beyond
 * the window: the delivery is then failed for good.
 */
export function nextAttemptAt(attempts: number, createdAt: number, now: number, policy: RetryPolicy): number | undefined {
  const schedule = policy.scheduleMs;
  const wait = schedule[Math.min(attempts, schedule.length) - 1] ?? schedule[schedule.length - 1] ?? 0;
  const at = now + wait;
  return at > createdAt + policy.windowMs ? undefined : at;
}

