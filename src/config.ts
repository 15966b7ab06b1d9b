import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { parseSecretKeys } from "./domain/secret-box.ts";
import { HOST_RE } from "./domain/host-names.ts";
import { DEFAULT_OCR_LANGUAGES, parseLanguageList } from "./domain/ocr-languages.ts";
import { FLUSH_EVERY_MS } from "./domain/statistics.ts";
import { DEFAULT_HASH_COST } from "./domain/passwords.ts";

/** Everything Quire reads from the environment, validated as a whole, typed and frozen. Nothing else reads process.env. */
export interface Config {
  host: string;
  port: number;
  uploadPort: number | undefined;
  publicUrl: string | undefined;
  /**
   * QUIRE_HOME: what `/` answers. Unset or empty: the home page (sign in, search, recent public
   * documents). A path on this site (`/app`, `/demo`) or an http(s) address: a 302 redirect there.
   */
  homeRedirect: string | undefined;
  /**
   * QUIRE_ALLOWED_HOSTS: `Host` values (`name` or `name:port`, lowercase) whose own address the public
   * pages may write into absolute links when publicUrl is unset; any other Host gets none.
   */
  allowedHosts: readonly string[];
  /**
   * QUIRE_TRUST_PROXY: which peers may say, in X-Forwarded-For/-Proto/-Host, who the client is and
   * which address it asked for (Fastify's `trustProxy`): false (the default) trusts no one, a number
   * trusts that many hops of proxies, a list trusts those addresses and CIDR ranges.
   */
  trustProxy: false | number | readonly string[];
  /** Characters of text kept per page and per document (the reader's HTML, text layer and search). */
  textMaxPageChars: number;
  textMaxDocumentChars: number;
  dataDir: string;
  databaseUrl: string;
  blobDir: string;
  /** QUIRE_BLOB_URL: `s3://bucket/prefix` stores blobs in S3 instead of blobDir. */
  blobUrl: string | undefined;
  /** AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL: an S3-compatible server (MinIO…); path-style addressing then. */
  s3Endpoint: string | undefined;
  s3Region: string;
  /** QUIRE_METRICS_PORT: where `quire worker` answers /metrics, /healthz and /readyz; unset, nowhere. */
  metricsPort: number | undefined;
  actionPrefixes: readonly string[];
  maxUploadBytes: number;
  logLevel: string;
  createDemoAccount: boolean;
  /** QUIRE_STATISTICS: count readership on the public pages (decisions §15); `0` turns counting off. */
  statistics: boolean;
  /**
   * How often counted views are written (ms; 1,000, not an operator setting): the most counting a
   * killed process loses. The tests' servers set it small, so that a count they wait for is written
   * in a few ms instead of a second.
   */
  statsFlushMs: number;
  /** Scratch space of conversions (page images before upload, LibreOffice profiles). */
  tmpDir: string;
  /**
   * QUIRE_MIN_FREE_DISK_MB: below this much free space in the blob folder (local blobs) or the
   * temp folder, new uploads are refused (012), conversions wait, and /readyz answers 503. 0: never.
   */
  minFreeDiskBytes: number;
  /** QUIRE_DISK_FULL_WAIT_HOURS: how long a conversion waits for disk space before its document fails, saying so. */
  diskFullWaitMs: number;
  /**
   * QUIRE_CONVERTER_STALL_SECONDS: a converter (LibreOffice, poppler, Tesseract) that uses no
   * processor time for this long is stopped or starved: it is killed and its job retried.
   */
  converterStallMs: number;
  workerConcurrency: number;
  officeSlots: number;
  officeTimeoutMs: number;
  officeRestartEvery: number;
  /** Tests and local use only: lets URL uploads reach loopback and private addresses. */
  fetchAllowPrivate: boolean;
  /** A URL upload's whole fetch, redirects included; past it the document fails (code 1), not retried. */
  fetchTimeoutMs: number;
  /** A fetch slower than this over any 10 s is cut and fails for good: a trickling server cannot hold a slot. */
  fetchMinBytesPerSecond: number;
  /** Jobs of one account one worker's regular slots run at once (QUIRE_JOBS_PER_ACCOUNT, default all of them). */
  jobsPerAccount: number;
  /** Extra slots for accounts with nothing running on the worker (QUIRE_WORKER_NEWCOMER_SLOTS, default 1). */
  newcomerSlots: number;
  jobTimeoutMs: number;
  /** How long a claimed job stays a worker's without a heartbeat; a dead worker's job is taken over after it. */
  jobLeaseMs: number;
  maxAttempts: number;
  maxProcessingMs: number;
  maxPages: number;
  /** Pixels of all the frames of an image document together (QUIRE_MAX_IMAGE_MEGAPIXELS × 10^6); beyond them, code 5. */
  maxImagePixels: number;
  /** Error 012: requests an API key may make at once (the leaky bucket's size). */
  rateBurst: number;
  /** Error 012: requests per second an API key may make in the long run; 0 turns the limit off. */
  ratePerSecond: number;
  /**
   * QUIRE_SEARCH_CONCURRENCY: searches one process runs at once (SQLite: threads, each with its own
   * read connection, off the event loop; PostgreSQL: connections). QUIRE_SEARCH_QUEUE: searches that
   * may wait for them; past it a search is refused at once (503 on pages, error 012 in the API).
   */
  searchConcurrency: number;
  searchQueue: number;
  /**
   * The anonymous pages' budget per client address (an IPv6 /64): search, the reader's `?q=`, a
   * reader page not yet built, text.json and oEmbed each take one from a leaky bucket of
   * QUIRE_ANONYMOUS_BURST that drains at QUIRE_ANONYMOUS_PER_SECOND (0: no budget); past it, 429.
   */
  anonymousBurst: number;
  anonymousPerSecond: number;
  /**
   * log2 of scrypt's N for new web app passwords (QUIRE_PASSWORD_HASH_COST, default 14 with p = 5:
   * src/domain/passwords.ts); older hashes stay valid and are rehashed with it at their next sign-in.
   */
  passwordHashCost: number;
  /** Web app sign-in attempts for one username from one address (or device), then one more every 15 minutes / this (QUIRE_SIGNIN_ATTEMPTS_PER_ACCOUNT). */
  signInAttemptsPerAccount: number;
  /** Failed web app sign-ins for one username from clients it does not know, from all addresses, per hour (QUIRE_SIGNIN_FAILURES_PER_ACCOUNT). */
  signInFailuresPerAccount: number;
  /** Web app sign-in attempts from one address (an IPv6 /64), likewise (QUIRE_SIGNIN_ATTEMPTS_PER_ADDRESS). */
  signInAttemptsPerAddress: number;
  /** Readers' comments from one address (an IPv6 /64), then one more every 15 minutes / this (QUIRE_COMMENTS_PER_ADDRESS). */
  commentsPerAddress: number;
  /** Readers' ratings from one address, likewise (QUIRE_RATINGS_PER_ADDRESS). */
  ratingsPerAddress: number;
  /**
   * Bytes that upload files sent before their request's apiKey and signature may hold on disk
   * together (QUIRE_PREAUTH_SPOOL_BYTES), and from one client address (an IPv6 /64) together
   * (QUIRE_PREAUTH_SPOOL_BYTES_PER_ADDRESS). 0 refuses such files.
   */
  preauthSpoolBytes: number;
  preauthSpoolBytesPerAddress: number;
  /** QUIRE_SECRET_KEY: apiSecrets are stored sealed with the first key; every key opens. Empty: stored plain. */
  secretKeys: readonly Buffer[];
  /** A connection idle this long is closed (slow clients, slowloris). */
  connectionTimeoutMs: number;
  /** A request must have sent all its headers within this long, however slowly it trickles them. */
  headersTimeoutMs: number;
  /** Blobs no document references are removed by the worker's clean-up pass once older than this. */
  orphanGraceMs: number;
  /** QUIRE_OCR_LANGUAGES: Tesseract languages for documents without a `language` (those installed are used). */
  ocrLanguages: readonly string[];
  /** QUIRE_OCR_CONCURRENCY: pages one conversion OCRs at once (one tesseract per core at most). */
  ocrConcurrency: number;
  /**
   * A document of more pages than QUIRE_FANOUT_MIN_PAGES is converted as page-range jobs of
   * QUIRE_FANOUT_RANGE_PAGES pages that any worker may take (issue 16); shorter ones by one job.
   */
  fanoutMinPages: number;
  fanoutRangePages: number;
  /** QUIRE_RENDER_PROCESSES: pdftoppm processes one conversion (or page range) runs at once; unset, the renderer's default (2). */
  renderProcesses: number | undefined;
  /** QUIRE_BWRAP: the bubblewrap program every converter runs in (src/convert/sandbox.ts). */
  bwrapPath: string;
  /** QUIRE_UNSAFE_NO_SANDBOX=1: converters run unconfined, seeing the whole machine. Unsafe. */
  unsafeNoSandbox: boolean;
  /** QUIRE_WEBHOOK_RETRY_SCHEDULE: waits after the 1st, 2nd… failed delivery attempt; the last repeats. */
  webhookRetryScheduleMs: readonly number[];
  /** QUIRE_WEBHOOK_RETRY_FOR: how long a delivery is retried before it is marked failed (decisions §12: 24 h). */
  webhookRetryWindowMs: number;
  /** QUIRE_WEBHOOK_TIMEOUT_SECONDS: one delivery attempt, connection and answer, at most this long. */
  webhookTimeoutMs: number;
}

/** `500ms`, `10s`, `5m`, `24h` (a bare number is seconds): milliseconds, or undefined when unreadable. */
export function parseDuration(raw: string): number | undefined {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(raw.trim());
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? "s"] ?? 1000;
  const ms = Number(m[1]) * unit;
  return Number.isSafeInteger(ms) ? ms : undefined;
}

const DEFAULT_WEBHOOK_RETRY_SCHEDULE = "10s,30s,1m,5m,15m,30m,1h";

export const DEFAULT_MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
/** Far above what a normal client sends; the historic service allowed a burst of 20 and 3/s. */
export const DEFAULT_RATE_BURST = 300;
export const DEFAULT_RATE_PER_SECOND = 50;

/** One core for the event loop, the others (up to 4) for searches. */
const DEFAULT_SEARCH_CONCURRENCY = Math.max(1, Math.min(4, availableParallelism() - 1));


/** proxy-addr's names for address ranges, which Fastify's trustProxy accepts beside addresses and CIDRs. */
const PROXY_RANGE_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** An IPv4 or IPv6 address, with an optional /prefix within its family's bits. */
function isAddressOrCidr(value: string): boolean {
  const slash = value.indexOf("/");
  const address = slash === -1 ? value : value.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  if (slash === -1) return true;
  const bits = value.slice(slash + 1);
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * QUIRE_TRUST_PROXY: unset, empty, `0`, `off` or `false` trusts no proxy; a whole number trusts that
 * many hops; otherwise a comma-separated list of addresses, CIDR ranges and proxy-addr's range
 * names. `true`/`all` are refused: trusting every peer lets any client choose its own address.
 */
export function parseTrustProxy(raw: string | undefined, problems: string[]): false | number | readonly string[] {
  const value = (raw ?? "").trim().toLowerCase();
  if (value === "" || value === "0" || value === "off" || value === "false") return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops <= 32) return hops;
    problems.push(`QUIRE_TRUST_PROXY=${JSON.stringify(raw)}: expected a number of proxy hops from 1 to 32`);
    return false;
  }
  const list = value.split(",").map((v) => v.trim()).filter((v) => v !== "");
  const bad = list.filter((v) => !PROXY_RANGE_NAMES.has(v) && !isAddressOrCidr(v));
  if (bad.length > 0 || list.length === 0) {
    problems.push(`QUIRE_TRUST_PROXY=${JSON.stringify(raw)}: expected off, a number of hops, or addresses and CIDR ranges joined by commas (${bad.map((b) => JSON.stringify(b)).join(", ") || "none given"} not understood)`);
    return false;
  }
  return list;
}

export { HOST_RE };

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Readonly<Config> {
  const problems: string[] = [];

  const int = (name: string, fallback: number | undefined, min: number, max: number): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)}: expected an integer from ${min} to ${max}`);
      return fallback;
    }
    return n;
  };

  const num = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = Number(raw);
    if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !Number.isFinite(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)}: expected a number from ${min} to ${max}`);
      return fallback;
    }
    return n;
  };

  const dataDir = resolve(env.QUIRE_DATA_DIR || "./data");
  const prefixes = (env.QUIRE_ACTION_PREFIXES ?? "svc").split(",").map((p) => p.trim()).filter((p) => p !== "");
  for (const p of prefixes) {
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(p)) problems.push(`QUIRE_ACTION_PREFIXES: ${JSON.stringify(p)} is not a plain word`);
  }
  if (prefixes.length === 0) problems.push("QUIRE_ACTION_PREFIXES: at least one prefix is needed");

  const blobUrl = env.QUIRE_BLOB_URL || undefined;
  if (blobUrl !== undefined && !/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/.test(blobUrl)) {
    problems.push(`QUIRE_BLOB_URL=${blobUrl}: expected s3://bucket[/prefix]`);
  }
  const s3Endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  if (s3Endpoint !== undefined && !/^https?:\/\/[^/]+/.test(s3Endpoint)) problems.push(`AWS_ENDPOINT_URL(_S3)=${s3Endpoint}: expected http(s)://host[:port]`);

  const publicUrl = env.QUIRE_PUBLIC_URL || undefined;
  if (publicUrl !== undefined && !/^https?:\/\/[^/]+/.test(publicUrl)) problems.push(`QUIRE_PUBLIC_URL=${publicUrl}: expected http(s)://host[:port]`);

  const homeRedirect = env.QUIRE_HOME?.trim() || undefined;
  if (homeRedirect !== undefined && !/^(\/(?![/\\])[\x21-\x7e]*|https?:\/\/[^/\s]+[\x21-\x7e]*)$/.test(homeRedirect)) {
    problems.push(`QUIRE_HOME=${homeRedirect}: expected a path on this site (/app, /<username>) or an http(s):// address`);
  }

  const allowedHosts = (env.QUIRE_ALLOWED_HOSTS ?? "").split(",").map((h) => h.trim().toLowerCase()).filter((h) => h !== "");
  for (const h of allowedHosts) {
    if (!HOST_RE.test(h)) problems.push(`QUIRE_ALLOWED_HOSTS: ${JSON.stringify(h)} is not a host name or host:port`);
  }

  const trustProxy = parseTrustProxy(env.QUIRE_TRUST_PROXY, problems);

  const logLevel = env.QUIRE_LOG_LEVEL || "info";
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(logLevel)) {
    problems.push(`QUIRE_LOG_LEVEL=${logLevel}: expected fatal, error, warn, info, debug, trace or silent`);
  }

  let secretKeys: Buffer[] = [];
  try {
    secretKeys = parseSecretKeys(env.QUIRE_SECRET_KEY ?? "");
  } catch (err) {
    // The message names the key's position, never its value.
    problems.push(`QUIRE_SECRET_KEY: ${(err as Error).message}`);
  }

  const ocrLanguages = env.QUIRE_OCR_LANGUAGES ? parseLanguageList(env.QUIRE_OCR_LANGUAGES) : [...DEFAULT_OCR_LANGUAGES];
  if (!ocrLanguages) problems.push(`QUIRE_OCR_LANGUAGES=${JSON.stringify(env.QUIRE_OCR_LANGUAGES)}: expected Tesseract language names joined by "+" or ",", e.g. eng+deu`);
  const workerConcurrency = int("QUIRE_WORKER_CONCURRENCY", availableParallelism(), 1, 256) ?? 1;
  // By default one account may use every slot (a single publisher keeps full speed); the newcomer
  // slot starts another account's job at once however long the first one's take.
  const jobsPerAccount = Math.min(workerConcurrency, int("QUIRE_JOBS_PER_ACCOUNT", workerConcurrency, 1, 1024) ?? 1);
  const newcomerSlots = int("QUIRE_WORKER_NEWCOMER_SLOTS", 1, 0, 64) ?? 1;
  const maxUploadBytes = int("QUIRE_MAX_UPLOAD_BYTES", DEFAULT_MAX_UPLOAD_BYTES, 1, Number.MAX_SAFE_INTEGER) ?? DEFAULT_MAX_UPLOAD_BYTES;
  // One largest file-first upload per address, four at once in all: real clients within it are served.
  const preauthSpoolBytesPerAddress = int("QUIRE_PREAUTH_SPOOL_BYTES_PER_ADDRESS", maxUploadBytes, 0, Number.MAX_SAFE_INTEGER) ?? maxUploadBytes;
  const preauthSpoolBytes = int("QUIRE_PREAUTH_SPOOL_BYTES", 4 * maxUploadBytes, 0, Number.MAX_SAFE_INTEGER) ?? 4 * maxUploadBytes;

  const scheduleRaw = env.QUIRE_WEBHOOK_RETRY_SCHEDULE || DEFAULT_WEBHOOK_RETRY_SCHEDULE;
  const webhookRetryScheduleMs = scheduleRaw.split(",").map((d) => parseDuration(d));
  if (webhookRetryScheduleMs.some((d) => d === undefined) || webhookRetryScheduleMs.length > 100) {
    problems.push(`QUIRE_WEBHOOK_RETRY_SCHEDULE=${JSON.stringify(scheduleRaw)}: expected durations joined by commas, e.g. 10s,1m,1h`);
  }
  const windowRaw = env.QUIRE_WEBHOOK_RETRY_FOR || "24h";
  const webhookRetryWindowMs = parseDuration(windowRaw);
  if (webhookRetryWindowMs === undefined || webhookRetryWindowMs < 1000 || webhookRetryWindowMs > 30 * 86_400_000) {
    problems.push(`QUIRE_WEBHOOK_RETRY_FOR=${JSON.stringify(windowRaw)}: expected a duration from 1s to 720h, e.g. 24h`);
  }

  const config: Config = {
    host: env.QUIRE_HOST || "127.0.0.1",
    port: int("QUIRE_PORT", 8080, 0, 65535) ?? 8080,
    uploadPort: int("QUIRE_UPLOAD_PORT", undefined, 0, 65535),
    publicUrl: publicUrl?.replace(/\/+$/, ""),
    homeRedirect,
    allowedHosts,
    trustProxy,
    textMaxPageChars: int("QUIRE_TEXT_MAX_PAGE_CHARS", 20_000, 100, 10_000_000) ?? 20_000,
    textMaxDocumentChars: int("QUIRE_TEXT_MAX_DOCUMENT_CHARS", 1_000_000, 1000, 100_000_000) ?? 1_000_000,
    dataDir,
    databaseUrl: env.QUIRE_DATABASE_URL || resolve(dataDir, "quire.db"),
    blobDir: resolve(env.QUIRE_BLOB_DIR || resolve(dataDir, "blobs")),
    blobUrl,
    s3Endpoint,
    s3Region: env.AWS_REGION || env.AWS_DEFAULT_REGION || "us-east-1",
    metricsPort: int("QUIRE_METRICS_PORT", undefined, 0, 65535),
    actionPrefixes: prefixes,
    maxUploadBytes,
    logLevel,
    createDemoAccount: env.QUIRE_DEMO_ACCOUNT !== "0",
    statistics: env.QUIRE_STATISTICS !== "0",
    statsFlushMs: FLUSH_EVERY_MS,
    tmpDir: resolve(env.QUIRE_TMP_DIR || resolve(dataDir, "tmp")),
    minFreeDiskBytes: (int("QUIRE_MIN_FREE_DISK_MB", 256, 0, 1 << 30) ?? 256) * 1024 * 1024,
    diskFullWaitMs: (int("QUIRE_DISK_FULL_WAIT_HOURS", 6, 1, 168) ?? 6) * 3_600_000,
    converterStallMs: (int("QUIRE_CONVERTER_STALL_SECONDS", 30, 1, 3600) ?? 30) * 1000,
    workerConcurrency,
    officeSlots: int("QUIRE_OFFICE_SLOTS", availableParallelism(), 1, 64) ?? 1,
    officeTimeoutMs: (int("QUIRE_OFFICE_TIMEOUT_SECONDS", 120, 1, 3600) ?? 120) * 1000,
    officeRestartEvery: int("QUIRE_OFFICE_RESTART_EVERY", 200, 1, 100_000) ?? 200,
    fetchAllowPrivate: env.QUIRE_FETCH_ALLOW_PRIVATE === "1",
    fetchTimeoutMs: (int("QUIRE_FETCH_TIMEOUT_SECONDS", 120, 5, 3600) ?? 120) * 1000,
    jobsPerAccount,
    newcomerSlots,
    fetchMinBytesPerSecond: int("QUIRE_FETCH_MIN_BYTES_PER_SECOND", 16_384, 0, 1 << 30) ?? 16_384,
    jobTimeoutMs: (int("QUIRE_JOB_TIMEOUT_SECONDS", 900, 10, 86_400) ?? 900) * 1000,
    jobLeaseMs: (int("QUIRE_JOB_LEASE_SECONDS", 60, 2, 3600) ?? 60) * 1000,
    maxAttempts: int("QUIRE_JOB_MAX_ATTEMPTS", 4, 1, 100) ?? 4,
    maxProcessingMs: (int("QUIRE_MAX_PROCESSING_MINUTES", 60, 1, 10_080) ?? 60) * 60_000,
    maxPages: int("QUIRE_MAX_PAGES", 2000, 1, 100_000) ?? 2000,
    maxImagePixels: (int("QUIRE_MAX_IMAGE_MEGAPIXELS", 400, 1, 1_000_000) ?? 400) * 1e6,
    rateBurst: int("QUIRE_RATE_BURST", DEFAULT_RATE_BURST, 1, 1_000_000) ?? DEFAULT_RATE_BURST,
    ratePerSecond: num("QUIRE_RATE_PER_SECOND", DEFAULT_RATE_PER_SECOND, 0, 1_000_000),
    searchConcurrency: int("QUIRE_SEARCH_CONCURRENCY", DEFAULT_SEARCH_CONCURRENCY, 1, 64) ?? DEFAULT_SEARCH_CONCURRENCY,
    searchQueue: int("QUIRE_SEARCH_QUEUE", 64, 0, 100_000) ?? 64,
    anonymousBurst: int("QUIRE_ANONYMOUS_BURST", 60, 1, 1_000_000) ?? 60,
    anonymousPerSecond: num("QUIRE_ANONYMOUS_PER_SECOND", 2, 0, 1_000_000),
    passwordHashCost: int("QUIRE_PASSWORD_HASH_COST", DEFAULT_HASH_COST, 12, 20) ?? DEFAULT_HASH_COST,
    signInAttemptsPerAccount: int("QUIRE_SIGNIN_ATTEMPTS_PER_ACCOUNT", 10, 1, 10_000) ?? 10,
    signInAttemptsPerAddress: int("QUIRE_SIGNIN_ATTEMPTS_PER_ADDRESS", 30, 1, 100_000) ?? 30,
    signInFailuresPerAccount: int("QUIRE_SIGNIN_FAILURES_PER_ACCOUNT", 50, 1, 100_000) ?? 50,
    commentsPerAddress: int("QUIRE_COMMENTS_PER_ADDRESS", 5, 1, 1_000_000) ?? 5,
    ratingsPerAddress: int("QUIRE_RATINGS_PER_ADDRESS", 30, 1, 1_000_000) ?? 30,
    preauthSpoolBytes,
    preauthSpoolBytesPerAddress,
    secretKeys,
    connectionTimeoutMs: (int("QUIRE_CONNECTION_TIMEOUT_SECONDS", 60, 1, 3600) ?? 60) * 1000,
    headersTimeoutMs: (int("QUIRE_HEADERS_TIMEOUT_SECONDS", 60, 1, 3600) ?? 60) * 1000,
    orphanGraceMs: (int("QUIRE_ORPHAN_GRACE_MINUTES", 60, 1, 10_080) ?? 60) * 60_000,
    ocrLanguages: ocrLanguages ?? [...DEFAULT_OCR_LANGUAGES],
    ocrConcurrency: int("QUIRE_OCR_CONCURRENCY", availableParallelism(), 1, 256) ?? 1,
    fanoutMinPages: int("QUIRE_FANOUT_MIN_PAGES", 48, 1, 1_000_000) ?? 48,
    fanoutRangePages: int("QUIRE_FANOUT_RANGE_PAGES", 24, 1, 100_000) ?? 24,
    renderProcesses: int("QUIRE_RENDER_PROCESSES", undefined, 1, 64),
    bwrapPath: resolve(env.QUIRE_BWRAP || "/usr/bin/bwrap"),
    unsafeNoSandbox: env.QUIRE_UNSAFE_NO_SANDBOX === "1",
    webhookRetryScheduleMs: webhookRetryScheduleMs.map((d) => d ?? 0),
    webhookRetryWindowMs: webhookRetryWindowMs ?? 86_400_000,
    webhookTimeoutMs: (int("QUIRE_WEBHOOK_TIMEOUT_SECONDS", 10, 1, 120) ?? 10) * 1000,
    ...overrides,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
