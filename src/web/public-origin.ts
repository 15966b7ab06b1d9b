import { HOST_RE, type Config } from "../config.ts";
import { requestOrigin, type OriginRequest } from "../ops/request-origin.ts";

export { linkOrigin, requestOrigin } from "../ops/request-origin.ts";

/**
 * The absolute origin the public pages may write into links (canonical, OpenGraph, sitemap,
 * robots.txt), or undefined when there is none to trust. The `Host` header is the client's to
 * choose: it counts only when it is one the operator listed (QUIRE_ALLOWED_HOSTS), a bare name in
 * the list allowing any port. Without QUIRE_PUBLIC_URL and such a Host, pages use relative links
 * and leave out what must be absolute.
 */
export function publicOrigin(config: Pick<Config, "publicUrl" | "allowedHosts">, req: OriginRequest): string | undefined {
  if (config.publicUrl) return config.publicUrl;
  const origin = requestOrigin(req);
  if (origin === undefined) return undefined;
  const host = (req.host ?? "").toLowerCase();
  const name = host.replace(/:[0-9]+$/, "");
  if (!config.allowedHosts.includes(host) && !config.allowedHosts.includes(name)) return undefined;
  return origin;
}

/**
 * The origin of a user-given http(s) address, for a Content-Security-Policy source: undefined for
 * anything but a plain scheme://host[:port], since URL accepts hosts (`x;sandbox`) that would add
 * directives to the policy.
 */
export function plainHttpOrigin(value: string): string | undefined {
  // Most documents have no such address (""): a URL that throws costs a reader page more than the rest of its headers.
  if (!/^https?:/i.test(value.trimStart())) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const origin = url.origin;
  return origin === `${url.protocol}//${url.host}` && HOST_RE.test(url.host) ? origin : undefined;
}
