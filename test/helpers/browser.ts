import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core";
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import sharp from "sharp";

/**
 * Debian's Chromium, never a downloaded browser: its headless shell (package
 * chromium-headless-shell, the same Blink and V8 as `chromium`, without the browser's own UI and
 * services), which is what Playwright runs for headless tests by default. The same tests cost
 * about a third less processor time there (csp-browser 21 -> 12 CPU-s, reader, app and links
 * browser files 137 -> 99). QUIRE_CHROMIUM=/usr/bin/chromium runs them in the full browser.
 */
export const CHROMIUM_PATH = process.env.QUIRE_CHROMIUM ?? "/usr/bin/chromium-headless-shell";
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync",
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS, headless: true });
}

/** What a page did that a test must see: console errors, failed loads, requests to other hosts. */
export interface PageWatch {
  errors: string[];
  foreignRequests: string[];
}

/** A page that records console errors, page errors and every request leaving `origin`. */
export async function watchedPage(context: BrowserContext, origin: string): Promise<{ page: Page; watch: PageWatch }> {
  const page = await context.newPage();
  const watch: PageWatch = { errors: [], foreignRequests: [] };
  page.on("console", (m) => {
    if (m.type() === "error") watch.errors.push(m.text());
  });
  page.on("pageerror", (e) => watch.errors.push(String(e)));
  page.on("request", (r) => {
    const url = r.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith("data:") && url !== "about:blank") watch.foreignRequests.push(url);
  });
  return { page, watch };
}

export async function newContext(browser: Browser, opts: BrowserContextOptions = {}): Promise<BrowserContext> {
  return browser.newContext({ viewport: { width: 1280, height: 800 }, ...opts });
}

const AXE_PATH = fileURLToPath(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url));

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/** axe-core run in the page; the context must bypass CSP for the injected script. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: AXE_PATH });
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(options: { resultTypes: string[] }): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: unknown[] }> }> } }).axe;
    // Only the violations are read: axe then skips the selectors and details of every passing node
    // (its documented speed option; the rules run and the violations found are the same).
    const r = await axe.run({ resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
  return found.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * With QUIRE_APP_SCREENSHOTS set to a folder (docs/app), writes the page as `<name>.png` there,
 * from its top, as a small palette PNG: the screenshots of docs/app.md.
 */
export async function appScreenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.QUIRE_APP_SCREENSHOTS;
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0));
  await writeFile(`${dir}/${name}.png`, await sharp(await page.screenshot({ fullPage: false })).png({ palette: true, quality: 80 }).toBuffer());
}
