import { html, trusted, type Html } from "./html.ts";
import type { WebAssets } from "./web-assets.ts";

export interface PageMeta {
  title: string;
  description?: string;
  /** Address of the page for rel=canonical: absolute when the public origin is known, else relative. */
  canonical?: string;
  /** Absolute address of the page for og:url, only from a trusted origin (never from an unchecked Host). */
  shareUrl?: string;
  /** Absolute address of an image for sharing cards, from a trusted origin likewise. */
  image?: string;
  noindex?: boolean;
  /**
   * Seconds after which the page reloads itself without script (documents still processing). With
   * script the page polls instead and reloads only once: a timed refresh would keep interrupting
   * screen readers (WCAG 2.2.1).
   */
  refreshSeconds?: number;
  lang?: string;
  bodyClass?: string;
  /** oEmbed discovery: the endpoint's absolute addresses for this page (reader pages only). */
  oembed?: { json: string; xml: string };
  /** The image the page shows first (the reader's start page): asked for before the stylesheet, at high priority. */
  preloadImage?: { srcset: string; sizes: string };
}

/**
 * The document shell every public page shares: one stylesheet, and one script added by a fixed
 * inline loader at the end of the body (allowed by its hash, web-headers.ts), so the page's bytes
 * are the same for every reader and can be cached; no other inline code, no event attributes.
 */
export function pageLayout(meta: PageMeta, assets: WebAssets, body: Html): Html {
  const description = meta.description ? meta.description.slice(0, 300) : undefined;
  return html`<!doctype html>
<html lang="${meta.lang || "en"}" class="no-js">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${meta.title}</title>
${description !== undefined && html`<meta name="description" content="${description}">`}
${meta.noindex && html`<meta name="robots" content="noindex, nofollow">`}
${meta.refreshSeconds !== undefined && html`<noscript><meta http-equiv="refresh" content="${meta.refreshSeconds}"></noscript>`}
${meta.canonical !== undefined && html`<link rel="canonical" href="${meta.canonical}">`}
${!meta.noindex && meta.canonical !== undefined && html`<meta property="og:type" content="article">
<meta property="og:title" content="${meta.title}">
${meta.shareUrl !== undefined && html`<meta property="og:url" content="${meta.shareUrl}">`}
${description !== undefined && html`<meta property="og:description" content="${description}">`}
${meta.image !== undefined && html`<meta property="og:image" content="${meta.image}">`}
<meta name="twitter:card" content="${meta.image !== undefined ? "summary_large_image" : "summary"}">
<meta name="twitter:title" content="${meta.title}">
${description !== undefined && html`<meta name="twitter:description" content="${description}">`}
${meta.image !== undefined && html`<meta name="twitter:image" content="${meta.image}">`}`}
${meta.oembed !== undefined && html`<link rel="alternate" type="application/json+oembed" href="${meta.oembed.json}" title="${meta.title}">
<link rel="alternate" type="text/xml+oembed" href="${meta.oembed.xml}" title="${meta.title}">`}
${meta.preloadImage !== undefined && html`<link rel="preload" as="image" imagesrcset="${meta.preloadImage.srcset}" imagesizes="${meta.preloadImage.sizes}" fetchpriority="high">`}
<link rel="icon" href="${assets.icon.url}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.readerCss.url}">
</head>
<body${meta.bodyClass ? html` class="${meta.bodyClass}"` : ""}>
${body}
<script>${trusted(assets.readerLoader.text)}</script>
</body>
</html>
`;
}
