import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Caller, callerOf, expectCreated, expectFailure, FORM, formEncode, getNormal, multipart, postNormal, rawHttp, type RawResponse, sign, SLURP, URL_UPLOAD, urlUpload } from "../helpers/api-client.ts";
import { type Format, JSON_TYPE, JSONP_TYPE } from "../helpers/api-answers.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/**
 * The order of checks of decisions §2, steps 1 (transport), 2 (key), 4 (signature, action)
 * and 5 (signature value), each with its code and field, in both formats; every failure stores
 * nothing. Step 6 is in api-conventions-params.test.ts.
 */

let server: TestServer;
let c: Caller;

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
});
after(() => server.close());

const FORMATS = ["xml", "json"] as const;

/** Takes a JSONP answer's JSON out of its callback, so it can be read as plain JSON. */
function unwrapJsonp(cb: string) {
  return (res: RawResponse): RawResponse => {
    assert.equal(res.headers["content-type"], JSONP_TYPE);
    assert.ok(res.body.startsWith(`${cb}(`) && res.body.endsWith(")"), res.body);
    const body = res.body.slice(cb.length + 1, -1);
    return { ...res, body, headers: { ...res.headers, "content-type": JSON_TYPE } };
  };
}

/** `format` rides in the query so that it is readable even when the rest of the request is not. */
const fq = (format: Format) => `format=${format}`;

describe("step 1: transport", () => {
  for (const format of FORMATS) {
    test(`${format}: GET carrying a Content-Type is 200 without field, however good the request`, async () => {
      for (const type of [FORM, "text/plain", ""]) {
        await expectFailure(server, () => getNormal(c, urlUpload(c, { format }), [["Content-Type", type]]), format, "200");
      }
    });

    test(`${format}: POST with a content type the normal endpoint does not take is 200 without field`, async () => {
      const params = urlUpload(c);
      const mp = multipart(params);
      const bodies: Array<[string, string]> = [
        ["application/json", JSON.stringify(params)],
        ["text/plain", formEncode(params)],
        [mp.contentType, mp.body],
      ];
      for (const [type, body] of bodies) {
        await expectFailure(server, () => postNormal(c, body, type, fq(format)), format, "200");
      }
    });

    test(`${format}: a wrong content type is 200 even when apiKey is missing`, async () => {
      const body = JSON.stringify({ action: URL_UPLOAD, slurpUrl: SLURP });
      await expectFailure(server, () => postNormal(c, body, "application/json", fq(format)), format, "200");
    });

    test(`${format}: the upload endpoint refuses form-encoded and boundary-less multipart posts with 200`, async () => {
      const body = formEncode(urlUpload(c));
      for (const type of [FORM, "multipart/form-data"]) {
        const send = () =>
          rawHttp(server.url, {
            method: "POST",
            path: `/upload/1_0?${fq(format)}`,
            headers: [["Content-Type", type], ["Content-Length", String(body.length)]],
            body,
          });
        await expectFailure(server, send, format, "200");
      }
    });

    test(`${format}: a POST with a body but no Content-Type is 200`, async () => {
      const body = formEncode(urlUpload(c));
      const send = () =>
        rawHttp(server.url, { method: "POST", path: `/1_0?${fq(format)}`, headers: [["Content-Length", String(body.length)]], body });
      await expectFailure(server, send, format, "200");
    });

    test(`${format}: a charset other than UTF-8 is 201`, async () => {
      for (const charset of ["iso-8859-1", "windows-1252", "utf-16"]) {
        const send = () => postNormal(c, urlUpload(c), `${FORM}; charset=${charset}`, fq(format));
        await expectFailure(server, send, format, "201");
      }
    });

    test(`${format}: a value that is not UTF-8 is 201 on it, before the key is looked at`, async () => {
      // no apiKey at all: step 1 comes before step 2
      for (const bad of ["%FF", "ab%C3", "%C0%AF", "%ED%A0%80"]) {
        await expectFailure(server, () => getNormal(c, `${fq(format)}&action=${URL_UPLOAD}&title=${bad}`), format, "201", "title");
        const send = () => postNormal(c, `action=${URL_UPLOAD}&description=x${bad}`, FORM, fq(format));
        await expectFailure(server, send, format, "201", "description");
      }
    });

    test(`${format}: a name given twice is 201 on it, in the query, in the body, or in both`, async () => {
      const once = urlUpload(c, { title: "one" });
      const withoutTitle = formEncode(Object.entries(once).filter(([k]) => k !== "title"));
      await expectFailure(server, () => getNormal(c, `${fq(format)}&${withoutTitle}&title=one&title=two`), format, "201", "title");
      await expectFailure(server, () => postNormal(c, `${withoutTitle}&title=one&title=one`, FORM, fq(format)), format, "201", "title");
      await expectFailure(server, () => postNormal(c, `${withoutTitle}&title=one`, FORM, `${fq(format)}&title=two`), format, "201", "title");
      await expectFailure(server, () => postNormal(c, formEncode(once), FORM, `${fq(format)}&apiKey=${c.apiKey}`), format, "201", "apiKey");
    });
  }

  test("a failure found while reading is answered in the format asked for, wherever format stands", async () => {
    await expectFailure(server, () => getNormal(c, "title=%FF&title=2&format=json"), "json", "201", "title");
    await expectFailure(server, () => getNormal(c, "title=1&title=2&format=json"), "json", "201", "title");
    await expectFailure(server, () => postNormal(c, "title=a&format=json", FORM, "title=b"), "json", "201", "title");
    await expectFailure(server, () => postNormal(c, "format=json", FORM, "description=%FF"), "json", "201", "description");
    await expectFailure(server, () => getNormal(c, "apiKey=%FF&format=json&jsonCallback=cb&format=xml").then(unwrapJsonp("cb")), "json", "201", "apiKey");
  });

  test("a POST with no body and no Content-Type is read from the query string", async () => {
    const query = formEncode(urlUpload(c, { format: "json" }));
    // neither Content-Length nor Transfer-Encoding: no body
    const doc = await expectCreated(server, () => rawHttp(server.url, { method: "POST", path: `/1_0?${query}` }), "json");
    assert.equal(doc.orgDocName, SLURP);
    const again = formEncode(urlUpload(c, { format: "json" }));
    await expectCreated(server, () => rawHttp(server.url, { method: "POST", path: `/1_0?${again}`, headers: [["Content-Length", "0"]] }), "json");
  });

  test("a form-encoded POST may carry parameters in both the query and the body", async () => {
    const { format: _f, ...rest } = urlUpload(c, { format: "json", title: "split" });
    const doc = await expectCreated(server, () => postNormal(c, rest, FORM, "format=json"), "json");
    assert.equal(doc.title, "split");
  });

  test("charset=utf-8 in any usual spelling is accepted", async () => {
    for (const charset of ["utf-8", "UTF-8", "\"utf-8\"", "utf8"]) {
      await expectCreated(server, () => postNormal(c, urlUpload(c), `${FORM}; charset=${charset}`), "xml");
    }
  });
});

describe("step 2: apiKey", () => {
  for (const format of FORMATS) {
    test(`${format}: absent or empty apiKey is 009`, async () => {
      const { apiKey: _k, ...noKey } = urlUpload(c, { format });
      await expectFailure(server, () => getNormal(c, noKey), format, "009");
      await expectFailure(server, () => getNormal(c, { ...noKey, apiKey: "" }), format, "009");
      // nothing else either: the key comes first
      await expectFailure(server, () => getNormal(c, { format }), format, "009");
    });

    test(`${format}: a key that is not 32 characters of [a-z0-9], or that no account has, is 010`, async () => {
      const keys = [
        c.apiKey.slice(0, 31),
        `${c.apiKey}a`,
        c.apiKey.toUpperCase(),
        `${c.apiKey.slice(0, 31)}-`,
        c.apiKey === "0".repeat(32) ? "1".repeat(32) : "0".repeat(32),
      ];
      for (const apiKey of keys) {
        // signed with the account's secret: only the key is wrong
        const params = sign({ format, action: URL_UPLOAD, apiKey, slurpUrl: SLURP }, c.apiSecret);
        await expectFailure(server, () => getNormal(c, params), format, "010");
        // a bad key is 010 before a missing signature or action is looked at
        await expectFailure(server, () => getNormal(c, { format, apiKey }), format, "010");
      }
    });

    test(`${format}: a revoked key is 010`, async () => {
      const apiKey = `revoked${format}`.padEnd(32, "0");
      const apiSecret = "s".repeat(32);
      assert.deepEqual(await server.services.store.accounts.addKey("tester", apiKey, apiSecret, Date.now()), { ok: true });
      const mine: Caller = { server, apiKey, apiSecret };
      await expectCreated(server, () => getNormal(mine, urlUpload(mine, { format })), format);
      assert.equal(await server.services.store.accounts.revokeKey(apiKey, Date.now()), true);
      await expectFailure(server, () => getNormal(mine, urlUpload(mine, { format })), format, "010");
      // the account's other key still works
      await expectCreated(server, () => getNormal(c, urlUpload(c, { format })), format);
    });
  }
});

describe("step 4: signature and action present, action known", () => {
  for (const format of FORMATS) {
    test(`${format}: signature absent or empty is 200 on signature`, async () => {
      const { signature: _s, ...unsigned } = urlUpload(c, { format });
      await expectFailure(server, () => getNormal(c, unsigned), format, "200", "signature");
      await expectFailure(server, () => getNormal(c, { ...unsigned, signature: "" }), format, "200", "signature");
      // before a missing action
      await expectFailure(server, () => getNormal(c, { format, apiKey: c.apiKey }), format, "200", "signature");
    });

    test(`${format}: action absent or empty is 200 on action`, async () => {
      await expectFailure(server, () => getNormal(c, sign({ format, apiKey: c.apiKey, slurpUrl: SLURP }, c.apiSecret)), format, "200", "action");
      const empty = sign({ format, apiKey: c.apiKey, action: "", slurpUrl: SLURP }, c.apiSecret);
      await expectFailure(server, () => getNormal(c, empty), format, "200", "action");
    });

    test(`${format}: an unknown action or one under a prefix not accepted is 201 on action`, async () => {
      const actions = [
        "svc.document.nothing",
        "svc.documents.list.x",
        "issuu.document.url_upload",
        "document.url_upload",
        "SVC.document.url_upload",
        "svc",
        "url_upload",
      ];
      for (const action of actions) {
        await expectFailure(server, () => getNormal(c, urlUpload(c, { format, action })), format, "201", "action");
        // step 4 before step 5: a wrong signature does not change it
        const badSig = { ...urlUpload(c, { format, action }), signature: "0".repeat(32) };
        await expectFailure(server, () => getNormal(c, badSig), format, "201", "action");
      }
    });

    test(`${format}: svc.document.url_upload on the upload endpoint is 201 on action`, async () => {
      const mp = multipart(urlUpload(c, { format }));
      const send = () =>
        rawHttp(server.url, {
          method: "POST",
          path: "/upload/1_0",
          headers: [["Content-Type", mp.contentType], ["Content-Length", String(Buffer.byteLength(mp.body))]],
          body: mp.body,
        });
      await expectFailure(server, send, format, "201", "action");
    });
  }
});

describe("step 5: the signature", () => {
  for (const format of FORMATS) {
    test(`${format}: a wrong signature is 011`, async () => {
      const good = urlUpload(c, { format, title: "T" });
      const wrong: Array<Record<string, string>> = [
        { ...good, signature: "0".repeat(32) },
        { ...good, signature: good.signature!.slice(1) },
        sign({ format, action: URL_UPLOAD, apiKey: c.apiKey, slurpUrl: SLURP, title: "T" }, "x".repeat(32)),
        // a parameter added after signing
        { ...good, description: "added" },
        // a value changed after signing
        { ...good, title: "t" },
      ];
      for (const params of wrong) await expectFailure(server, () => getNormal(c, params), format, "011");
      // step 5 before step 6: the missing slurpUrl is not reached
      await expectFailure(server, () => getNormal(c, { format, action: URL_UPLOAD, apiKey: c.apiKey, signature: "f".repeat(32) }), format, "011");
    });

    test(`${format}: the signature may be sent in uppercase hex`, async () => {
      const params = urlUpload(c, { format });
      await expectCreated(server, () => getNormal(c, { ...params, signature: params.signature!.toUpperCase() }), format);
    });
  }
});
