import { LogController, type FastifyReply, type FastifyRequest } from "fastify";
import pino, { type DestinationStream } from "pino";
import { outcomeOf } from "./request-outcome.ts";

/**
 * Lines gather in memory up to this many bytes (some twenty) before one write: the access line
 * was a fifth of the CPU of a `svc.documents.list` (issue 30 item 4, `npm run bench -- api`).
 */
const ACCESS_LOG_BUFFER_BYTES = 4096;

/**
 * A line waits at most about this long before it is written, however quiet the server: a timer
 * writes what has gathered every half second, and one that falls while a write is in flight is
 * caught by the next, so a SIGKILL (or a crash) loses at most the last second of lines. A normal
 * stop loses none (`flushAccessLog`).
 */
export const ACCESS_LOG_FLUSH_MS = 500;

/** Where the API's log goes (stdout by default): gathered, with the bounded loss above. */
export function accessLogDestination(fd = 1): GatheredLines {
  return new GatheredLines(pino.destination({ dest: fd, sync: false, minLength: ACCESS_LOG_BUFFER_BYTES }));
}

const gathering = new Set<GatheredLines>();
// What is still gathered when the process exits some other way than a normal stop.
process.on("exit", () => gathering.forEach((g) => g.writeOutSync()));

/**
 * Lines kept in an array and handed to the file's stream in 4 KiB pieces: sonic-boom measures the
 * whole of its pending string on every write (a 4 KiB string flattened per line), so it gets
 * twenty lines at once instead of one.
 */
export class GatheredLines implements DestinationStream {
  private lines: string[] = [];
  private bytes = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly out: ReturnType<typeof pino.destination>) {
    // Unref'd: it never keeps a stopping process alive.
    this.timer = setInterval(() => this.flush(), ACCESS_LOG_FLUSH_MS).unref();
    gathering.add(this);
  }

  write(line: string): void {
    this.lines.push(line);
    // UTF-16 units, not bytes: near enough for when to write.
    this.bytes += line.length;
    if (this.bytes >= ACCESS_LOG_BUFFER_BYTES) this.pass();
  }

  /** Writes out what has gathered; `done` once it is written (or could not be). */
  flush(done?: (err?: Error) => void): void {
    this.pass();
    this.out.flush(done);
  }

  writeOutSync(): void {
    this.pass();
    try {
      this.out.flushSync();
    } catch {
      // stdout gone or not open yet: nothing more can be done at exit.
    }
  }

  private pass(): void {
    if (this.lines.length === 0) return;
    this.out.write(this.lines.join(""));
    this.lines = [];
    this.bytes = 0;
  }
}

/** Writes out every gathered line; on a normal stop, once the servers are closed. */
export function flushAccessLog(stream: GatheredLines): Promise<void> {
  // An error (stdout closed by its reader) must not hold up the stop: the lines are lost either way.
  return new Promise((resolve) => stream.flush(() => resolve()));
}

/**
 * The HTTP logger as `quire serve` runs it. Query strings carry apiKey and signature: only the
 * path is ever logged. `stream` is where the lines go (`accessLogDestination`; the benchmark
 * points it at /dev/null).
 */
export function httpLoggerOptions(level: string, stream?: DestinationStream) {
  return {
    level,
    serializers: { req: (r: { method: string; url: string; id: string }) => ({ method: r.method, url: r.url.split("?")[0], reqId: r.id }) },
    ...(stream ? { stream } : {}),
  };
}

/**
 * One line per request, once it is answered. Fastify's own pair of lines ("incoming request",
 * "request completed") cost twice as much on the busiest path and still lacked the API action
 * and error code, which are what an operator looks for.
 */
export class AccessLog extends LogController {
  override incomingRequest(): void {}

  /** Fastify's own line names the raw URL, query (key, signature) included; "answered" says 404. */
  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url;
    const api = route !== undefined && route.endsWith("/1_0") ? outcomeOf(request) : undefined;
    const line = {
      method: request.method,
      path: request.url.split("?")[0],
      status: reply.statusCode,
      ...(api ? { action: api.action, code: api.code } : {}),
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) reply.log.error({ ...line, err: error }, "request errored");
    else reply.log.info(line, "answered");
  }
}
