/**
 * First path segments the server uses for itself. A username equal to one of them would make
 * `/<username>` ambiguous, so the public pages refuse them and account creation should too.
 */
export const RESERVED_PATHS: ReadonlySet<string> = new Set([
  "1_0", "upload", "_assets", "sitemap.xml", "robots.txt", "favicon.ico", "healthz", "readyz", "metrics",
  "api", "docs", "admin", "static", "assets", "login", "logout", "www", "feed", "rss",
]);

export function isReservedPath(segment: string): boolean {
  return RESERVED_PATHS.has(segment.toLowerCase());
}
