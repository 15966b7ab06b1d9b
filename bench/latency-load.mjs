// A closed-loop HTTP load in a process of its own (bench/stats.ts), kept for the whole benchmark:
// each job it is sent ({ url, connections, durationMs, userAgents }) runs `connections` keep-alive
// connections, each sending the next request as soon as the previous one is answered, for
// `durationMs`, and every answer's latency is taken with the monotonic clock in microseconds
// (autocannon's p99 is whole milliseconds, too coarse for a page answered in one or two); the
// answer is { latencies, failures, seconds }. Requests take their user agents from `userAgents`
// (the last list sent) in turn.
//
// One process for every round: a process started for each round spent its own start (40–60 ms of
// processor time on a 2-core machine) and its code's first, unoptimised requests in the round it
// measured, a share that grows as rounds get shorter (docs/statistics.md, "An eleventh machine").
//
// Written on plain sockets, each request's bytes made once per address and user agent list: node:http's
// client spent about as much processor time per request as the server it measured, so on a 2-core
// machine the load itself kept the second core busy, and whatever else the server ran (its
// statistics writer) took its processor time from the server's requests rather than from an idle
// core. The answers are HTTP/1.1 with a Content-Length or chunked, as Fastify sends them.
// Plain JavaScript: the child needs no loader for it. Its own process, so that the processor time
// of the bench's process is the servers' alone.
import { connect } from "node:net";

const HEAD_END = Buffer.from("\r\n\r\n");

/**
 * Where the answer at the start of `buf` ends (its byte length), or -1 while it is incomplete; its
 * status in `status.code`.
 */
function answerLength(buf, status) {
  const headEnd = buf.indexOf(HEAD_END);
  if (headEnd < 0) return -1;
  const head = buf.toString("latin1", 0, headEnd);
  status.code = Number(head.slice(9, 12));
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) {
    const total = headEnd + 4 + Number(length[1]);
    return buf.length >= total ? total : -1;
  }
  if (!/\r\ntransfer-encoding:\s*chunked/i.test(head)) throw new Error(`an answer without a length: ${head.slice(0, 200)}`);
  let at = headEnd + 4;
  for (;;) {
    const lineEnd = buf.indexOf("\r\n", at, "latin1");
    if (lineEnd < 0) return -1;
    const size = parseInt(buf.toString("latin1", at, lineEnd), 16);
    if (size === 0) {
      // No trailers are sent: the last chunk's line is followed by one empty line.
      return buf.length >= lineEnd + 4 ? lineEnd + 4 : -1;
    }
    at = lineEnd + 2 + size + 2;
    if (at > buf.length) return -1;
  }
}

const lane = (target, requests, end, sent, latencies, counts) =>
  new Promise((resolve) => {
    const socket = connect({ host: target.hostname, port: Number(target.port) });
    socket.setNoDelay(true);
    let pending = Buffer.alloc(0);
    let t0 = 0n;
    const status = { code: 0 };
    const next = () => {
      if (performance.now() >= end) {
        socket.end();
        resolve();
        return;
      }
      t0 = process.hrtime.bigint();
      socket.write(requests[sent.n++ % requests.length]);
    };
    socket.on("connect", next);
    socket.on("data", (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const n = answerLength(pending, status);
      if (n < 0) return;
      latencies.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (status.code !== 200) counts.failures++;
      pending = pending.subarray(n);
      next();
    });
    socket.on("error", () => {
      counts.failures++;
      resolve();
    });
    // A connection the server closes ends its lane (resolving twice is harmless).
    socket.on("close", () => resolve());
  });

let userAgents = [];
/** Every request's bytes by address, for the current user agent list. */
const built = new Map();

function requestsFor(url) {
  let requests = built.get(url);
  if (!requests) {
    const target = new URL(url);
    requests = userAgents.map((ua) =>
      Buffer.from(`GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nUser-Agent: ${ua}\r\nAccept: text/html\r\n\r\n`, "latin1"));
    built.set(url, requests);
  }
  return requests;
}

process.on("message", async (job) => {
  if (job.userAgents) {
    userAgents = job.userAgents;
    built.clear();
  }
  const target = new URL(job.url);
  const requests = requestsFor(job.url);
  const latencies = [];
  const counts = { failures: 0 };
  const sent = { n: 0 };
  const end = performance.now() + job.durationMs;
  await Promise.all(Array.from({ length: job.connections }, () => lane(target, requests, end, sent, latencies, counts)));
  process.send({ latencies, failures: counts.failures, seconds: job.durationMs / 1000 });
});
// Ends with the benchmark that started it.
process.on("disconnect", () => process.exit(0));
