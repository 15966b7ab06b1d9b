import { createHmac, timingSafeEqual } from "node:crypto";
import http, { type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One POST a receiver got. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Order of arrival among all requests this receiver got. */
  index: number;
}

/** What to answer: an HTTP status, or "hold" (never answer; the connection stays open until the sender goes). */
export type Reply = number | "hold";

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** The requests held open (their responses), to let go of at the end. */
  held: ServerResponse[];
  close(): Promise<void>;
}

/** A local webhook receiver on a free port that records every request and answers as `reply` says. */
export async function startReceiver(reply: (r: Received) => Reply = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r: Received = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), index: received.length };
      received.push(r);
      const answer = reply(r);
      if (answer === "hold") held.push(res);
      else res.writeHead(answer, { "content-type": "text/plain" }).end("thanks");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    held,
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Checks `Quire-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` as a receiver
 * would, written here from the documented rule alone (docs/webhooks.md), not with Quire's code.
 */
export function signatureValid(header: string | string[] | undefined, body: string, secret: string, toleranceSeconds = 300): boolean {
  if (typeof header !== "string") return false;
  const parts = new Map(header.split(",").map((p) => p.split("=", 2) as [string, string]));
  const t = parts.get("t");
  const v1 = parts.get("v1");
  if (!t || !/^\d+$/.test(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1)) return false;
  if (Math.abs(Date.now() / 1000 - Number(t)) > toleranceSeconds) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(v1, "hex"));
}
