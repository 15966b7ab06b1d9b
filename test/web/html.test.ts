import assert from "node:assert/strict";
import { test } from "node:test";
import { escapeText, html, safeHttpUrl, trusted } from "../../src/web/html.ts";

/** Every user-given string the public pages show goes through `html`; these are the strings an attacker would try. */
const HOSTILE = [
  "<script>alert(1)</script>",
  `"><img src=x onerror=alert(1)>`,
  "'; alert(1); '",
  "</title><script>alert(1)</script>",
  "`${alert(1)}`",
  "\u0000\u0007\u001b[31m\u007f\u0085",
  "\u202Egnp.exe\u202C \u2066isolated\u2069",
  "&amp; &lt; &#60;",
];

test("hostile strings interpolated into markup come out as inert text", () => {
  for (const s of HOSTILE) {
    const out = html`<title>${s}</title><p title="${s}" data-x='${s}'>${s}</p><ul>${[s, s].map((t) => html`<li>${t}</li>`)}</ul>`.value;
    // The only tags are the template's own, and no quote of the value can end an attribute.
    assert.deepEqual(out.match(/<\/?[a-z]+/g), ["<title", "</title", "<p", "</p", "<ul", "<li", "</li", "<li", "</li", "</ul"], s);
    assert.equal(out.match(/"/g)?.length, 2, s);
    assert.equal(out.match(/'/g)?.length, 2, s);
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    assert.doesNotMatch(out, /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/, s);
  }
});

test("escaping keeps the text a reader should see", () => {
  assert.equal(escapeText(`a < b & "c" 'd'`), "a &lt; b &amp; &quot;c&quot; &#39;d&#39;");
  assert.equal(escapeText("Été 漢字 🙂\ttab\nline"), "Été 漢字 🙂\ttab\nline");
  assert.equal(escapeText("&amp;"), "&amp;amp;", "an entity the user typed is shown as typed, not decoded");
  assert.equal(html`${"x"}${trusted("<b>")}${undefined}${null}${false}${3}`.value, "x<b>3");
});

test("only http(s) addresses become links", () => {
  assert.equal(safeHttpUrl("https://example.com/a?b=c"), "https://example.com/a?b=c");
  for (const bad of ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,<script>", "vbscript:x", "//evil.example", "/relative", ""]) {
    assert.equal(safeHttpUrl(bad), undefined, bad);
  }
});
