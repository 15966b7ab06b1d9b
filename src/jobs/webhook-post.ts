import http from "node:http";
import https from "node:https";
import { isIP, type Socket } from "node:net";
import { isPublicAddress } from "../domain/address-policy.ts";
import { guardedLookup } from "../convert/guarded-lookup.ts";

export interface WebhookPostOptions {
  /** QUIRE_FETCH_ALLOW_PRIVATE=1: receivers on loopback and private addresses allowed (tests, local use). */
  allowPrivate: boolean;
  /** The whole attempt: connection, request and the answer's head. */
  timeoutMs: number;
}

/** How an attempt went: `ok` only for a 2xx answer; `error` is a sentence for the deliveries list. */
export interface PostResult {
  ok: boolean;
  error: string;
}

/** As the URL upload says it: which of "no such name" and "a private address" it was would let callers probe names. */
const UNUSABLE_ADDRESS = "The receiver's name could not be found, or its address is not allowed.";

class RefusedAddress extends Error {
  constructor(readonly ip: string) {
    super(UNUSABLE_ADDRESS);
  }
}

/**
 * Posts one delivery. The receiver's address is checked by the rule of URL uploads
 * (src/domain/address-policy.ts) after DNS resolution, inside the connection's own lookup, and
 * again on the peer connected to; redirects are not followed (a 3xx is a failed attempt, like
 * anything but 2xx). Never throws: every failure is an answer.
 */
export function postWebhook(url: string, headers: Readonly<Record<string, string>>, body: string, opts: WebhookPostOptions, signal?: AbortSignal): Promise<PostResult> {
  const allowed = opts.allowPrivate ? () => true : isPublicAddress;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ ok: false, error: "The webhook's address is not a valid URL." });
  }
  const host = target.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) && !allowed(host)) return Promise.resolve({ ok: false, error: UNUSABLE_ADDRESS });
  const client = target.protocol === "https:" ? https : target.protocol === "http:" ? http : undefined;
  if (!client) return Promise.resolve({ ok: false, error: "Only http and https addresses can receive webhooks." });

  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const finish = (result: PostResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      req.destroy();
      resolve(result);
    };
    const seconds = Math.max(1, Math.round(opts.timeoutMs / 1000));
    const timer = setTimeout(() => finish({ ok: false, error: `The receiver did not answer within ${seconds} seconds.` }), opts.timeoutMs);
    const onAbort = (): void => finish({ ok: false, error: "The delivery was interrupted." });
    const payload = Buffer.from(body, "utf8");
    // agent: false, so no pooled socket (connected without this lookup) is ever reused.
    const req = client.request(target, {
      method: "POST",
      agent: false,
      lookup: guardedLookup(allowed, (ip) => new RefusedAddress(ip)),
      headers: { ...headers, "content-type": "application/json; charset=utf-8", "content-length": String(payload.length), "user-agent": "Quire-Webhooks/0.1" },
    });
    req.once("socket", (socket: Socket) => {
      socket.once("connect", () => {
        // Defence in depth: the peer actually connected to must pass too.
        const ip = socket.remoteAddress;
        if (ip !== undefined && !allowed(ip)) finish({ ok: false, error: UNUSABLE_ADDRESS });
      });
    });
    req.on("error", (err) => finish({ ok: false, error: describeNetworkError(err) }));
    req.once("response", (res) => {
      res.on("error", () => {});
      const status = res.statusCode ?? 0;
      finish(status >= 200 && status <= 299 ? { ok: true, error: "" } : { ok: false, error: `The receiver answered HTTP ${status}.` });
    });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    req.end(payload);
  });
}

function describeNetworkError(err: unknown): string {
  if (err instanceof RefusedAddress) return UNUSABLE_ADDRESS;
  switch ((err as NodeJS.ErrnoException | undefined)?.code ?? "") {
    case "ENOTFOUND":
      return UNUSABLE_ADDRESS;
    case "ECONNREFUSED":
      return "The receiver refused the connection.";
    case "ECONNRESET":
    case "EPIPE":
      return "The connection to the receiver was interrupted.";
    case "EAI_AGAIN":
      return "The receiver's name could not be looked up right now.";
    default:
      return /CERT|TLS|SSL/.test(String((err as NodeJS.ErrnoException | undefined)?.code)) ? "The receiver's secure (TLS) connection could not be verified." : "The delivery could not be sent.";
  }
}
