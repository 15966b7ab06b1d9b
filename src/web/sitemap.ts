import { escapeXml } from "./html.ts";

export interface SitemapEntry {
  loc: string;
  lastmod: number;
}

/** sitemaps.org XML; one file holds up to 50 000 addresses, which is the cap applied by the caller. */
export function sitemapXml(entries: readonly SitemapEntry[]): string {
  const urls = entries
    .map((e) => `<url><loc>${escapeXml(e.loc)}</loc><lastmod>${new Date(e.lastmod).toISOString()}</lastmod></url>`)
    .join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls}\n</urlset>\n`;
}
