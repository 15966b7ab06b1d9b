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
  // Ratings and comments under the reader (src/web/reader-comments.ts), loaded by that section only.
  { name: "reader-feedback", ext: "js", contentType: "text/javascript; charset=utf-8" },
  { name: "reader-feedback", ext: "css", contentType: "text/css; charset=utf-8" },
  // Readership statistics (docs/statistics.md): the reader's beacons, and the app's charts, drawn by
  // uPlot from npm, served from here like every other asset (no third-party request, nothing inline).
  { name: "reader-stats", ext: "js", contentType: "text/javascript; charset=utf-8" },
  { name: "app-stats", ext: "js", contentType: "text/javascript; charset=utf-8" },
  { name: "app-stats", ext: "css", contentType: "text/css; charset=utf-8" },
  { name: "uplot", ext: "js", contentType: "text/javascript; charset=utf-8", from: "uplot/dist/uPlot.iife.min.js" },
  { name: "uplot", ext: "css", contentType: "text/css; charset=utf-8", from: "uplot/dist/uPlot.min.css" },
] as const;

/** An inline script of Quire's own, allowed by the hash of its exact text (the CSP's 'sha256-…'). */
export interface InlineScript {
  text: string;
  hash: string;
}

export interface WebAssets {
  readerJs: Asset;
  /** The public pages' one inline script: it adds readerJs (page-layout.ts, web-headers.ts). */
  readerLoader: InlineScript;
  /**
   * The public pages' second inline script, first in their head: it marks the page as scripted
   * before its first paint, so the reader's layout (reader.css `.js`) is there from the start and
   * nothing moves when reader.js arrives (issue 30: no layout shift).
   */
  scriptedFlag: InlineScript;
  readerCss: Asset;
  icon: Asset;
  appJs: Asset;
  appCss: Asset;
  appUploadJs: Asset;
  appShareJs: Asset;
  feedbackJs: Asset;
  feedbackCss: Asset;
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
  const readerJs = loaded[0]!;
  const feedbackJs = loaded[7]!;
  const readerStatsJs = loaded[9]!;
  return {
    readerJs, feedbackJs, readerStatsJs, readerLoader: loaderOf([readerJs, feedbackJs, readerStatsJs]), scriptedFlag: inlineScript('document.documentElement.className="js"'), readerCss: loaded[1]!, icon: loaded[2]!,
    appJs: loaded[3]!, appCss: loaded[4]!, appUploadJs: loaded[5]!, appShareJs: loaded[6]!, feedbackCss: loaded[8]!,
    appStatsJs: loaded[10]!, appStatsCss: loaded[11]!, uplotJs: loaded[12]!, uplotCss: loaded[13]!, byPath,
  };
}

/**
 * A fixed inline script that adds the public pages' scripts (each does nothing on a page without
 * its part): allowed by its hash, it makes a page whose bytes are the same for every reader
 * (cached, ETag'd) run our scripts and nothing else. The addresses are written into the script
 * itself, never read from the page, so no markup can redirect them.
 */
function loaderOf(assets: readonly Asset[]): InlineScript {
  return inlineScript(`(()=>{for(const u of ${JSON.stringify(assets.map((a) => a.url))}){const s=document.createElement("script");s.src=u;s.async=false;document.body.appendChild(s)}})()`);
}

function inlineScript(text: string): InlineScript {
  return { text, hash: `sha256-${createHash("sha256").update(text).digest("base64")}` };
}
