import { HOST_RE } from "../domain/host-names.ts";

/**
 * What a request says about the address it was sent to. Fastify's `protocol` and `host` read
 * X-Forwarded-Proto/-Host only from a proxy QUIRE_TRUST_PROXY names, the socket and `Host` otherwise.
 */
export interface OriginRequest {
  protocol: string;
  host: string | undefined;
}

/** The request's own origin, when its host is a well-formed one; any scheme but https counts as http. */
export function requestOrigin(req: OriginRequest): string | undefined {
  const host = (req.host ?? "").toLowerCase();
  if (!HOST_RE.test(host)) return undefined;
  return `${req.protocol === "https" ? "https" : "http"}://${host}`;
}

/**
 * Where copied links and embed codes point (the app's sharing page, get_html_code, v2): the
 * configured public address, else the one the caller's own request was sent to, which is only a
 * guess (`guessed`): readers may come through another name or proxy. The origin is undefined
 * only for a request whose Host is not a host at all; links are then relative.
 */
export function linkOrigin(config: { publicUrl: string | undefined }, req: OriginRequest): { origin: string | undefined; guessed: boolean } {
  if (config.publicUrl) return { origin: config.publicUrl, guessed: false };
  return { origin: requestOrigin(req), guessed: true };
}
