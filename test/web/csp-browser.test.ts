import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { DocumentRecord } from "../../src/domain/document.ts";
import { givePassword, signInBrowser, TEST_APP_ENV } from "../helpers/app-client.ts";
import { launchChromium, newContext } from "../helpers/browser.ts";
import { sample } from "../helpers/metrics-text.ts";
import { until } from "../helpers/poll.ts";
import { READER_FIXTURE, startWebFixture, type WebFixture } from "../helpers/web-fixture.ts";

declare global {
  interface Window {
    __ran?: string[];
    __violations?: Array<{ directive: string; blocked: string }>;
    quireJsonp?: (answer: unknown) => void;
  }
}

/**
 * Issue 23 item 7: on Quire's pages no script runs unless Quire put it there. An HTML injection is
 * simulated as an attacker would get one: markup added to the page's bytes on their way to the
 * browser, the server's own headers kept.
 */
describe("strict script policy in Chromium", { timeout: 240_000 }, () => {
  let fx: WebFixture;
  let browser: Browser;
  let context: BrowserContext;
  let doc: DocumentRecord;
  let base: string;
  let jsonpPath: string;

  const reportsLogged = async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    let n = 0;
    for (const directive of ["script-src-elem", "script-src-attr", "script-src"]) n += sample(text, "quire_csp_reports_total", { outcome: "logged", directive }) ?? 0;
    return n;
  };

  /** A page whose HTML at `path` gets `markup` before `</body>`, as an injection would put it there. */
  async function injectedPage(path: string, markup: string, policy?: (csp: string) => string): Promise<Page> {
    const page = await context.newPage();
    await page.addInitScript(() => {
      window.__ran = [];
      window.__violations = [];
      window.quireJsonp = () => window.__ran!.push("jsonp");
      document.addEventListener("securitypolicyviolation", (e) => window.__violations!.push({ directive: e.effectiveDirective, blocked: e.blockedURI }));
    });
    await page.route(`${base}${path}`, async (route) => {
      const res = await route.fetch();
      const headers = { ...res.headers() };
      delete headers["content-encoding"];
      delete headers["content-length"];
      assert.match(headers["content-security-policy"] ?? "", /script-src/);
      if (policy) headers["content-security-policy"] = policy(headers["content-security-policy"]!);
      await route.fulfill({ response: res, headers, body: (await res.text()).replace("</body>", `${markup}</body>`) });
    });
    await page.goto(`${base}${path}`);
    // Quire's own script ran (the page is whole) before anything is concluded: the app's marks the
    // page "js"; on public pages the head's line does that before any script, and reader.js adds "js-ran".
    await page.waitForSelector(path.startsWith("/app") ? "html.js" : "html.js-ran");
    return page;
  }

  before(async () => {
    fx = await startWebFixture(TEST_APP_ENV);
    base = fx.server.url;
    await givePassword(fx.server, "tester");
    doc = await fx.publish(READER_FIXTURE, { title: "Policy test" });
    assert.equal(doc.state, "A");
    jsonpPath = `/1_0?${new URLSearchParams(fx.client.signed("documents.list", { jsonCallback: "quireJsonp" })).toString()}`;
    browser = await launchChromium();
    context = await newContext(browser);
    const page = await context.newPage();
    await signInBrowser(page, base, "tester");
    await page.close();
  });
  after(async () => {
    await browser?.close();
    await fx?.close();
  });

  test("the JSONP answer used below is JavaScript this origin serves, and under the former policy (script-src 'self') the injection runs (the controls)", async () => {
    const res = await fetch(base + jsonpPath);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^quireJsonp\(\{/);
    const former = (csp: string) => csp.replace(/script-src [^;]+/, "script-src 'self'");
    const page = await injectedPage("/app/documents", `<script src="${jsonpPath.replaceAll("&", "&amp;")}"></script>`, former);
    await page.waitForFunction(() => window.__ran!.includes("jsonp"));
    await page.close();
  });

  for (const [name, path] of [["the app", "/app/documents"], ["the reader", "READER"], ["the embed", "EMBED"]] as const) {
    test(`${name}: an inline script without the nonce does not run, and the browser reports it`, async () => {
      const target = path === "READER" ? `/${doc.username}/docs/${doc.name}` : path === "EMBED" ? `/${doc.username}/docs/${doc.name}/embed` : path;
      const before = await reportsLogged();
      const page = await injectedPage(target, `<script>window.__ran.push("inline")</script><img src="x" onerror="window.__ran.push('handler')">`);
      await page.waitForFunction(() => window.__violations!.length >= 2);
      assert.deepEqual(await page.evaluate(() => window.__ran), []);
      await until(async () => (await reportsLogged()) >= before + 2, 30_000, "the violation reports to reach /_csp-report");
      await page.close();
    });

    test(`${name}: a JSONP answer of this origin cannot be loaded as a script`, async () => {
      const target = path === "READER" ? `/${doc.username}/docs/${doc.name}` : path === "EMBED" ? `/${doc.username}/docs/${doc.name}/embed` : path;
      const page = await injectedPage(target, `<script src="${jsonpPath.replaceAll("&", "&amp;")}"></script>`);
      await page.waitForFunction(() => window.__violations!.some((v) => v.blocked.includes("/1_0")));
      if (path === "/app/documents") {
        // The app's pages trust only their nonce: a script element added through the DOM is refused too.
        await page.evaluate(async (src) => {
          const s = document.createElement("script");
          s.src = src;
          await new Promise<void>((resolve) => {
            s.addEventListener("error", () => resolve());
            s.addEventListener("load", () => resolve());
            document.body.append(s);
          });
        }, jsonpPath);
      }
      assert.deepEqual(await page.evaluate(() => window.__ran), []);
      await page.close();
    });
  }

  test("every page of the app: scripts only by src with the answer's nonce, no inline script or event attribute", async () => {
    const page = await context.newPage();
    const appDoc = (await fx.server.services.store.documents.list({ accountId: doc.accountId, pageSize: 1, startIndex: 0, sortBy: "publishDate", order: "desc" })).records[0]!;
    for (const path of ["/app/sign-in", "/app/documents", "/app/upload", "/app/folders", "/app/keys", `/app/documents/${appDoc.documentId}`, `/app/documents/${appDoc.documentId}/share`, `/app/documents/${appDoc.documentId}/delete`, "/app/no-such-page"]) {
      // The sign-in form as a signed-out visitor sees it; the rest signed in.
      const { status, csp, body } = path === "/app/sign-in"
        ? await fetch(base + path).then(async (r) => ({ status: r.status, csp: r.headers.get("content-security-policy"), body: await r.text() }))
        : await page.request.get(base + path, { maxRedirects: 0 }).then(async (r) => ({ status: r.status(), csp: r.headers()["content-security-policy"], body: await r.text() }));
      assert.ok(status === 200 || (status === 404 && path === "/app/no-such-page"), `${path}: ${status}`);
      const nonce = /'nonce-([^']+)'/.exec(csp ?? "")?.[1];
      assert.ok(nonce, path);
      const scripts = [...body.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
      assert.ok(scripts.length >= 1, path);
      for (const [, attrs, text] of scripts) {
        assert.match(attrs!, new RegExp(`^ src="/_assets/[a-z-]+\\.[0-9a-f]{16}\\.js" nonce="${nonce.replace(/[+/]/g, "\\$&")}" defer$`), path);
        assert.equal(text, "", path);
      }
      assert.doesNotMatch(body, /\son[a-z]+=|javascript:/i, path);
    }
    await page.close();
  });

  test("the policies: a fresh nonce per app answer, no 'self' for scripts, the same hash on every cached reader answer", async () => {
    const page = await context.newPage();
    const first = await page.goto(`${base}/app/documents`);
    const second = await page.goto(`${base}/app/documents`);
    const a = first!.headers()["content-security-policy"]!;
    const b = second!.headers()["content-security-policy"]!;
    const nonceOf = (csp: string) => /'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonceOf(a) && nonceOf(b) && nonceOf(a) !== nonceOf(b));
    for (const csp of [a, b]) {
      assert.match(csp, /script-src 'nonce-[A-Za-z0-9+/]{22}=='(;|$)/);
      assert.match(csp, /object-src 'none'/);
      assert.match(csp, /base-uri 'none'/);
    }
    const reader = `${base}/${doc.username}/docs/${doc.name}`;
    const r1 = await fetch(reader);
    const r2 = await fetch(reader);
    assert.equal(r2.headers.get("x-cache"), "hit");
    const c1 = r1.headers.get("content-security-policy")!;
    assert.equal(c1, r2.headers.get("content-security-policy"));
    assert.match(c1, /script-src 'sha256-[A-Za-z0-9+/]{43}=' 'sha256-[A-Za-z0-9+/]{43}=' 'strict-dynamic'(;|$)/);
    assert.doesNotMatch(c1, /script-src[^;]*'self'/);
    assert.doesNotMatch(await r1.text(), /nonce=/, "a cached page carries no nonce");
    await page.close();
  });
});
