// A closed-loop HTTP load in a process of its own (bench/stats.ts): `connections` keep-alive
// connections each send the next request as soon as the previous one is answered, for
// `durationMs`, and every answer's latency is taken with the monotonic clock in microseconds
// (autocannon's p99 is whole milliseconds, too coarse for a page answered in one or two).
// Requests take their user agents from `userAgents` in turn.
// Plain JavaScript: the child needs no loader for it. Its own process, so that the processor time
// of the bench's process is the servers' alone.
import { Agent, request } from "node:http";

const { url, connections, durationMs, userAgents } = JSON.parse(process.argv[2]);
let sent = 0;
const agent = new Agent({ keepAlive: true, maxSockets: connections });
const latencies = [];
let failures = 0;
const end = performance.now() + durationMs;

const once = () =>
  new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const req = request(url, { agent, headers: { "user-agent": userAgents[sent++ % userAgents.length] } }, (res) => {
      res.resume();
      res.on("end", () => {
        if (res.statusCode !== 200) failures++;
        latencies.push(Number(process.hrtime.bigint() - t0) / 1000);
        resolve();
      });
    });
    req.on("error", () => {
      failures++;
      resolve();
    });
    req.end();
  });

const lane = async () => {
  while (performance.now() < end) await once();
};
await Promise.all(Array.from({ length: connections }, lane));
agent.destroy();
process.send({ latencies, failures, seconds: durationMs / 1000 }, () => process.disconnect());
