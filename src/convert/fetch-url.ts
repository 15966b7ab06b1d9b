import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import http from "node:http";
import type { ClientRequest, IncomingMessage } from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { Socket } from "node:net";
import { finished } from "node:stream/promises";
import { classifyAddress, describeCategory, isPublicAddress } from "./address-policy.ts";
import { ConversionError } from "./conversion-error.ts";
import { guardedLookup } from "./guarded-lookup.ts";
import { countOf } from "../domain/counts.ts";

/**
 * Fetches a user-supplied `slurpUrl` to a file. This is an SSRF boundary: the address check runs inside
 * the socket's DNS lookup (and on literal IPs before connecting), so the addresses checked are the ones
 * connected to and a DNS answer cannot change between check and use.
 */
export interface FetchOptions {
  maxBytes: number; // 100 MiB in production; the body is cut, and the fetch fails, beyond it
  allowPrivate: boolean; // QUIRE_FETCH_ALLOW_PRIVATE=1, tests and local use only: every address allowed
  connectTimeoutMs: number; // per hop, DNS included, until the TCP connection is up
  idleTimeoutMs: number; // no byte for this long fails the fetch
  totalTimeoutMs: number; // the whole fetch, redirects included; past it the fetch fails for good
  /**
   * Fewer bytes than this per second over a window of `rateWindowMs` (the first one counting from
   * the request) fail the fetch for good: a server that trickles a byte now and then passes the
   * idle rule, and would otherwise hold a worker slot for the whole total time. 0 or unset: no floor.
   */
  minBytesPerSecond?: number;
  rateWindowMs?: number; // default 10 s
  maxRedirects?: number; // default 5
  signal?: AbortSignal; // the worker cancels (document deleted)
  /**
   * TEST ONLY: replaces the public-address rule (ignored when allowPrivate is true), so a test can allow
   * one loopback address as the first hop and deny another. Production code must never set it.
   */
  isAllowedAddress?: (ip: string) => boolean;
}

export interface FetchResult {
  finalUrl: string;
  size: number;
  contentType: string | undefined;
  fileName: string | undefined;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// No Accept-Encoding: the stored bytes (and the size limit) are then those of the file itself.
const REQUEST_HEADERS = { "user-agent": "Quire/0.1 (+document fetcher)", accept: "*/*" };

export async function fetchToFile(url: string, destPath: string, opts: FetchOptions): Promise<FetchResult> {
  const run = new FetchRun(opts);
  try {
    return await run.fetch(url, destPath);
  } catch (err) {
    const failure = run.failure ?? toConversionError(err); // before the cleanup below can add secondary errors
    run.dispose();
    if (run.fileCreated) await rm(destPath, { force: true }).catch(() => {}); // the fetch error matters more
    throw failure;
  } finally {
    run.dispose();
  }
}

class FetchRun {
  /** The first failure wins: destroying streams afterwards produces secondary errors that must not mask it. */
  failure: ConversionError | undefined;
  fileCreated = false;
  private readonly opts: FetchOptions;
  private readonly allowed: (ip: string) => boolean;
  private req: ClientRequest | undefined;
  private res: IncomingMessage | undefined;
  private totalTimer: NodeJS.Timeout | undefined;
  private rateTimer: NodeJS.Timeout | undefined;
  /** Body bytes received so far, for the minimum rate. */
  private received = 0;
  private readonly onAbort = (): void => {
    this.fail(new ConversionError("fetch", "The fetch was cancelled.", { cause: this.opts.signal?.reason }));
  };

  constructor(opts: FetchOptions) {
    this.opts = opts;
    this.allowed = opts.allowPrivate ? () => true : (opts.isAllowedAddress ?? isPublicAddress);
  }

  async fetch(url: string, destPath: string): Promise<FetchResult> {
    const { signal } = this.opts;
    if (signal?.aborted) this.onAbort();
    signal?.addEventListener("abort", this.onAbort, { once: true });
    const ms = this.opts.totalTimeoutMs;
    const limit = ms >= 1000 ? countOf(Math.round(ms / 1000), "second") : countOf(ms, "millisecond");
    // Permanent: the same server answering as slowly would run out of time again.
    this.totalTimer = setTimeout(() => this.fail(fetchError(`The fetch took longer than ${limit}.`, false)), ms);
    this.watchRate();

    const maxRedirects = this.opts.maxRedirects ?? 5;
    let target = parseTarget(url);
    for (let redirects = 0; ; redirects++) {
      const res = await this.send(target);
      const status = res.statusCode ?? 0;
      if (REDIRECT_STATUSES.has(status)) {
        res.destroy();
        const location = res.headers.location;
        if (!location) throw fetchError(`The server answered HTTP ${status} without a redirect address.`, false);
        if (redirects >= maxRedirects) throw fetchError(`The address redirected more than ${maxRedirects} times.`, false);
        target = parseTarget(location, target);
        continue;
      }
      if (status < 200 || status > 299) throw fetchError(`The server answered HTTP ${status}.`, status === 429 || status >= 500);
      const size = await this.receive(res, destPath);
      return {
        finalUrl: target.href,
        size,
        contentType: res.headers["content-type"],
        fileName: dispositionFileName(res.headers["content-disposition"]) ?? pathFileName(target),
      };
    }
  }

  dispose(): void {
    clearTimeout(this.totalTimer);
    clearInterval(this.rateTimer);
    this.opts.signal?.removeEventListener("abort", this.onAbort);
    this.res?.destroy();
    this.req?.destroy();
  }

  private fail(err: ConversionError): void {
    this.failure ??= err;
    this.res?.destroy(err);
    this.req?.destroy(err);
  }

  /** Fails the fetch for good when a window passes with fewer bytes than the minimum rate asks. */
  private watchRate(): void {
    const rate = this.opts.minBytesPerSecond ?? 0;
    if (rate <= 0) return;
    const windowMs = this.opts.rateWindowMs ?? 10_000;
    const floor = (rate * windowMs) / 1000;
    let atWindowStart = 0;
    this.rateTimer = setInterval(() => {
      if (this.received - atWindowStart < floor) {
        this.fail(fetchError(`The server sent the file too slowly (less than ${formatBytes(rate)} per second).`, false));
      }
      atWindowStart = this.received;
    }, windowMs);
  }

  /** The caller learns only that the address is unusable: which it was (no such name, a private address) is for the log. */
  private refuse(ip: string): ConversionError {
    const err = unusableAddress(`resolves to ${describeCategory(classifyAddress(ip))} (${ip})`);
    this.failure ??= err;
    return err;
  }

  /** One hop: resolves with the response head; the body is left unread. */
  private send(target: URL): Promise<IncomingMessage> {
    if (this.failure) return Promise.reject(this.failure);
    // Node does not call `lookup` for IP literals, so they are checked here; they cannot change.
    const host = target.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) && !this.allowed(host)) return Promise.reject(this.refuse(host));

    const client = target.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      // agent: false, so no pooled socket (connected without this lookup) is ever reused.
      const req = client.request(target, { method: "GET", headers: REQUEST_HEADERS, agent: false, lookup: this.lookup });
      this.req = req;
      this.res = undefined;
      const connectFailed = fetchError("The server did not accept a connection in time.", true);
      const connectTimer = setTimeout(() => this.fail(connectFailed), this.opts.connectTimeoutMs);
      req.once("socket", (socket: Socket) => {
        socket.once("connect", () => {
          clearTimeout(connectTimer);
          this.checkPeer(socket);
        });
      });
      req.once("close", () => clearTimeout(connectTimer));
      // A socket timeout: counts from connect, reset by every byte, so it is the idle rule for the body too.
      req.setTimeout(this.opts.idleTimeoutMs, () => this.fail(fetchError("The server stopped sending data.", true)));
      req.on("error", reject);
      req.once("response", (res) => {
        res.on("error", () => {}); // reported through the body pipeline or `failure`, never as a crash
        this.res = res;
        resolve(res);
      });
      req.end();
    });
  }

  /** Checks every resolved address, not just the first: the socket may try any of them. */
  private readonly lookup = guardedLookup((ip) => this.allowed(ip), (ip) => this.refuse(ip));

  /** Defence in depth: the peer actually connected to must also pass. */
  private checkPeer(socket: Socket): void {
    const ip = socket.remoteAddress;
    if (ip !== undefined && !this.allowed(ip)) this.fail(this.refuse(ip));
  }

  private async receive(res: IncomingMessage, destPath: string): Promise<number> {
    const max = this.opts.maxBytes;
    const declared = Number(res.headers["content-length"]);
    if (Number.isFinite(declared) && declared > max) throw tooLarge(max); // dispose() drops the connection
    this.fileCreated = true;
    const file = createWriteStream(destPath);
    // Never destroyed with an error of ours, so whatever it emits is a disk problem: not a fetch error.
    file.on("error", (cause) => this.fail(new ConversionError("internal", "The fetched file could not be stored.", { transient: true, cause })));
    let size = 0;
    try {
      for await (const chunk of res as AsyncIterable<Buffer>) {
        size += chunk.length;
        this.received = size;
        if (size > max) throw tooLarge(max);
        if (!file.write(chunk)) await once(file, "drain");
      }
      if (!res.complete) throw fetchError("The connection closed before the whole file arrived.", true);
      file.end();
      await finished(file);
    } finally {
      // Closed before the caller removes the file: an open still under way (a busy thread pool, a
      // slow disk) would otherwise create it after the removal.
      if (!file.closed) {
        const closed = new Promise<void>((resolve) => file.once("close", () => resolve())); // after an error too, which the listener above reports
        file.destroy();
        await closed;
      }
    }
    return size;
  }
}

function fetchError(message: string, transient: boolean, cause?: unknown): ConversionError {
  return new ConversionError("fetch", message, { transient, cause });
}

/**
 * One sentence for a name that does not resolve and for one that resolves to an address that is
 * refused: telling them apart would let a caller probe which internal names exist.
 */
const UNUSABLE_ADDRESS = "The server name could not be found, or its address is not allowed.";

function unusableAddress(detail: string, cause?: unknown): ConversionError {
  return new ConversionError("fetch", UNUSABLE_ADDRESS, { transient: false, cause, detail });
}

function tooLarge(max: number): ConversionError {
  return fetchError(`The file is larger than ${formatBytes(max)}.`, false);
}

function formatBytes(n: number): string {
  const MiB = 1024 * 1024;
  if (n >= MiB && n % MiB === 0) return `${n / MiB} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return countOf(n, "byte");
}

function parseTarget(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw fetchError(base ? "The server redirected to an invalid address." : "The address is not a valid URL.", false);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw fetchError("Only http and https addresses can be fetched.", false);
  }
  if (url.username || url.password) {
    throw fetchError("The address contains a user name or password; the file must be publicly reachable without login.", false);
  }
  return url;
}

/** Maps Node's network errors to sentences; anything unrecognised is treated as passing trouble. */
function toConversionError(err: unknown): ConversionError {
  if (err instanceof ConversionError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? "";
  switch (code) {
    case "ENOTFOUND":
      return unusableAddress("no such host (ENOTFOUND)", err);
    case "EAI_AGAIN":
      return fetchError("The server name could not be looked up right now.", true, err);
    case "ECONNREFUSED":
      return fetchError("The server refused the connection.", true, err);
    case "ECONNRESET": case "EPIPE":
      return fetchError("The connection to the server was interrupted.", true, err);
    case "ETIMEDOUT":
      return fetchError("The connection to the server timed out.", true, err);
    case "EHOSTUNREACH": case "ENETUNREACH":
      return fetchError("The server could not be reached.", true, err);
  }
  if (code.startsWith("HPE_")) return fetchError("The server sent an invalid HTTP response.", false, err);
  if (/CERT|TLS|SSL/.test(code)) return fetchError("The server's secure (TLS) connection could not be verified.", false, err);
  return fetchError("The file could not be fetched.", true, err);
}

function dispositionFileName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const extended = /(?:^|;)\s*filename\*\s*=\s*([^']*)'[^']*'([^;\s]+)/i.exec(header);
  if (extended) {
    const [, charset = "", encoded = ""] = extended;
    try {
      const name = /^utf-8$/i.test(charset)
        ? decodeURIComponent(encoded)
        : encoded.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      const clean = cleanFileName(name);
      if (clean) return clean;
    } catch {
      // malformed percent-encoding: fall back to the plain parameter
    }
  }
  const quoted = /(?:^|;)\s*filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header);
  if (quoted) return cleanFileName((quoted[1] ?? "").replace(/\\(.)/g, "$1"));
  const token = /(?:^|;)\s*filename\s*=\s*([^;\s]+)/i.exec(header);
  return token ? cleanFileName(token[1] ?? "") : undefined;
}

function pathFileName(url: URL): string | undefined {
  const segment = url.pathname.split("/").pop() ?? "";
  try {
    return cleanFileName(decodeURIComponent(segment));
  } catch {
    return cleanFileName(segment);
  }
}

/** The name is advisory and remote-controlled: keep only a base name without control characters. */
function cleanFileName(name: string): string | undefined {
  const base = (name.split(/[/\\]/).pop() ?? "").replace(/\p{Cc}/gu, "").trim();
  return base && base !== "." && base !== ".." ? base.slice(0, 255) : undefined;
}
