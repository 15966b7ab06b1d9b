/**
 * First path segments the server uses for itself. A username equal to one of them would make
 * `/<username>` ambiguous, so accounts are never created with them and the public pages never
 * take such a segment for a user.
 */
export const RESERVED_USERNAMES: ReadonlySet<string> = new Set([
  "1_0", "upload", "_assets", "_csp-report", "sitemap.xml", "robots.txt", "favicon.ico", "healthz", "readyz", "metrics",
  "api", "docs", "admin", "static", "assets", "login", "logout", "www", "feed", "rss", "search", "oembed",
  // The publisher's web app (decisions §13) lives under /app; the rest are names people would take for it.
  "app", "signin", "sign-in", "signout", "sign-out", "account", "settings", "dashboard",
]);

/** Compared without regard to case: `Upload` is refused along with `upload`. */
export function isReservedUsername(segment: string): boolean {
  return RESERVED_USERNAMES.has(segment.toLowerCase());
}
