import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** A static file served at a URL holding its content hash, so it can be cached for a year. */
export interface Asset {
  url: string;
  body: Buffer;
  contentType: string;
}

const SOURCES = [
  { name: "reader", ext: "js", contentType: "text/javascript; charset=utf-8" },
  { name: "reader", ext: "css", contentType: "text/css; charset=utf-8" },
  { name: "icon", ext: "svg", contentType: "image/svg+xml" },
  // The publisher's app (src/web/app/): its own small script and styles, loaded only by its pages.
  { name: "app", ext: "js", contentType: "text/javascript; charset=utf-8" },
  { name: "app", ext: "css", contentType: "text/css; charset=utf-8" },
  // Loaded only by the app's upload and sharing pages (progress bars, live embed preview).
  { name: "app-upload", ext: "js", contentType: "text/javascript; charset=utf-8" },
  { name: "app-share", ext: "js", contentType: "text/javascript; charset=utf-8" },
  // Readership statistics (docs/statistics.md): the reader's beacons, and the app's charts, drawn by
  // uPlot from npm, served from here like every other asset (no third-party request, nothing inline).
  { name: "reader-stats", ext: "js", contentType: "text/javascript; charset=utf-8" },
  { name: "app-stats", ext: "js", contentType: "text/javascript; charset=utf-8" },
  { name: "app-stats", ext: "css", contentType: "text/css; charset=utf-8" },
  { name: "uplot", ext: "js", contentType: "text/javascript; charset=utf-8", from: "uplot/dist/uPlot.iife.min.js" },
  { name: "uplot", ext: "css", contentType: "text/css; charset=utf-8", from: "uplot/dist/uPlot.min.css" },
] as const;

export interface WebAssets {
  readerJs: Asset;
  readerCss: Asset;
  icon: Asset;
  appJs: Asset;
  appCss: Asset;
  appUploadJs: Asset;
  appShareJs: Asset;
  readerStatsJs: Asset;
  appStatsJs: Asset;
  appStatsCss: Asset;
  uplotJs: Asset;
  uplotCss: Asset;
  /** By URL path, for the asset route. */
  byPath: Map<string, Asset>;
}

/**
 * Read once at start: the bundle is plain browser JavaScript (no build step, no framework), so what
 * is in src/web/assets is exactly what is served.
 */
export function loadWebAssets(): WebAssets {
  const byPath = new Map<string, Asset>();
  const require = createRequire(import.meta.url);
  const loaded = SOURCES.map((source) => {
    const { name, ext, contentType } = source;
    const body = readFileSync("from" in source ? require.resolve(source.from) : new URL(`./assets/${name}.${ext}`, import.meta.url));
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
    const asset: Asset = { url: `/_assets/${name}.${hash}.${ext}`, body, contentType };
    byPath.set(asset.url, asset);
    return asset;
  });
  return { readerJs: loaded[0]!, readerCss: loaded[1]!, icon: loaded[2]!, appJs: loaded[3]!, appCss: loaded[4]!, appUploadJs: loaded[5]!, appShareJs: loaded[6]!,
    readerStatsJs: loaded[7]!, appStatsJs: loaded[8]!, appStatsCss: loaded[9]!, uplotJs: loaded[10]!, uplotCss: loaded[11]!, byPath };
}
