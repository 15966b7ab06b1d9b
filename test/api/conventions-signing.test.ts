import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { type Caller, expectCreated, expectFailure, FORM, formEncode, getNormal, postNormal, SLURP } from "../helpers/api-client.ts";
import { independentSignature, SIGNING_VECTOR } from "../helpers/independent-sign.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/**
 * Signing (decisions §3) against a server that also accepts the historic prefix
 * (QUIRE_ACTION_PREFIXES=svc,issuu), with the published test vector's key and secret.
 * That `issuu.` is refused when not configured is in api-conventions-checks.test.ts.
 */

const VECTOR = SIGNING_VECTOR;

let server: TestServer;
let v: Caller;

before(async () => {
  server = await startTestServer({ QUIRE_ACTION_PREFIXES: "svc,issuu" });
  assert.deepEqual(await server.services.store.accounts.addKey("tester", VECTOR.apiKey, VECTOR.secret, Date.now()), { ok: true });
  v = { server, apiKey: VECTOR.apiKey, apiSecret: VECTOR.secret };
});
after(() => server.close());

const FORMATS = ["xml", "json"] as const;

/** Query text with the signature over the decoded values appended. */
function signedQuery(encodedPairs: string, decoded: Record<string, string>, secret = VECTOR.secret): string {
  return `${encodedPairs}&signature=${independentSignature(secret, decoded)}`;
}

describe("the published test vector", () => {
  test("its parameters sign to 7431d31140cf412ab5caa73586d6324a", () => {
    assert.equal(independentSignature(VECTOR.secret, VECTOR.params), VECTOR.signature);
    assert.equal(VECTOR.signature, "7431d31140cf412ab5caa73586d6324a");
  });

  for (const format of FORMATS) {
    test(`${format}: its key and secret sign an issuu.document.url_upload the server accepts`, async () => {
      const params = {
        action: "issuu.document.url_upload",
        apiKey: VECTOR.apiKey,
        access: "public",
        responseParams: "title,description",
        format,
        slurpUrl: SLURP,
      };
      const signature = independentSignature(VECTOR.secret, params);
      const doc = await expectCreated(server, () => getNormal(v, { ...params, signature }), format);
      assert.equal(doc.username, "tester");
      assert.equal(doc.origin, "apislurp");
      await expectCreated(server, () => postNormal(v, { ...params, signature: signature.toUpperCase() }), format);
      await expectFailure(server, () => getNormal(v, { ...params, signature: independentSignature("x".repeat(32), params) }), format, "011");
    });

    test(`${format}: the svc prefix is still accepted next to issuu`, async () => {
      const params = { action: "svc.document.url_upload", apiKey: VECTOR.apiKey, format, slurpUrl: SLURP };
      await expectCreated(server, () => getNormal(v, { ...params, signature: independentSignature(VECTOR.secret, params) }), format);
    });
  }
});

describe("values are signed decoded, names in byte order", () => {
  const title = "Größe 日本";

  for (const format of FORMATS) {
    const base = { action: "issuu.document.url_upload", apiKey: VECTOR.apiKey, format, slurpUrl: SLURP };
    const head = formEncode(base);

    test(`${format}: non-ASCII with + or %20 for the space, in the query or the body`, async () => {
      const decoded = { ...base, title };
      for (const encoded of ["Gr%C3%B6%C3%9Fe+%E6%97%A5%E6%9C%AC", "Gr%C3%B6%C3%9Fe%20%E6%97%A5%E6%9C%AC", "Gr%c3%b6%c3%9fe+%e6%97%a5%e6%9c%ac"]) {
        const q = signedQuery(`${head}&title=${encoded}`, decoded);
        assert.equal((await expectCreated(server, () => getNormal(v, q), format)).title, title);
        assert.equal((await expectCreated(server, () => postNormal(v, q, FORM), format)).title, title);
      }
      // a literal plus is sent as %2B and signed as "+"
      const plus = signedQuery(`${head}&title=a%2Bb+c`, { ...base, title: "a+b c" });
      assert.equal((await expectCreated(server, () => getNormal(v, plus), format)).title, "a+b c");
    });

    test(`${format}: a signature over the URL-encoded text is 011`, async () => {
      const encoded = "Gr%C3%B6%C3%9Fe%20%E6%97%A5%E6%9C%AC";
      const q = signedQuery(`${head}&title=${encoded}`, { ...base, title: encoded });
      await expectFailure(server, () => getNormal(v, q), format, "011");
      const plus = signedQuery(`${head}&title=a+b`, { ...base, title: "a+b" });
      await expectFailure(server, () => getNormal(v, plus), format, "011");
    });

    test(`${format}: every parameter is signed, unknown and empty ones too, sorted by bytes`, async () => {
      // byte order puts "Zeta" before "access"; a case-insensitive sort would not
      const extra = { Zeta: "1", alpha: "2", empty: "", title };
      const q = signedQuery(formEncode({ ...base, ...extra }), { ...base, ...extra });
      await expectCreated(server, () => getNormal(v, q), format);
      const { empty: _e, ...withoutEmpty } = extra;
      const missingEmpty = signedQuery(formEncode({ ...base, ...extra }), { ...base, ...withoutEmpty });
      await expectFailure(server, () => getNormal(v, missingEmpty), format, "011");
      const caseInsensitive = `${formEncode({ ...base, ...extra })}&signature=${caseInsensitiveSignature({ ...base, ...extra })}`;
      await expectFailure(server, () => getNormal(v, caseInsensitive), format, "011");
    });

    test(`${format}: query and body parameters are signed together`, async () => {
      const decoded = { ...base, title, description: "body part" };
      const signature = independentSignature(VECTOR.secret, decoded);
      const body = formEncode({ description: "body part", signature });
      await expectCreated(server, () => postNormal(v, body, FORM, formEncode({ ...base, title })), format);
    });
  }
});

/** The wrong sort, to show the server does not use it. */
function caseInsensitiveSignature(params: Record<string, string>): string {
  const names = Object.keys(params).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  let text = VECTOR.secret;
  for (const n of names) text += n + params[n];
  return md5(text);
}

function md5(text: string): string {
  return createHash("md5").update(text, "utf8").digest("hex");
}
