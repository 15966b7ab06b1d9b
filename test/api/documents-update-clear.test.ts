import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { acceptedUrlUpload, call, type Caller, callerOf, type Params } from "../helpers/api-client.ts";
import { assertDocument, assertError, FORMATS, type Format } from "../helpers/api-answers.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";

/**
 * `svc.document.update` with `clear` (issue 26 item 2): an empty parameter counts as absent
 * (decisions §4), so emptying a field is said by naming it in `clear`.
 */

let server: TestServer;
let c: Caller;
let n = 0;

before(async () => {
  server = await startTestServer();
  c = callerOf(server);
});
after(() => server.close());

const fresh = () =>
  acceptedUrlUpload(server, c, {
    name: `clr-${n++}`, title: "Original", tags: "one,two", description: "orig",
    infoLink: "https://example.org/about", soundUrl: "https://example.org/a.mp3",
  });
const update = async (params: Params, format: Format = "json") => assertDocument(await call(c, "document.update", params, format), format);

describe("svc.document.update clear", () => {
  for (const format of FORMATS) {
    test(`${format}: clear empties the fields it names and keeps the rest`, async () => {
      const before = await fresh();
      const doc = await update({ name: before.name as string, clear: "description, tags" }, format);
      assert.equal(doc.description ?? "", "");
      assert.equal(String(doc.tags ?? ""), "");
      assert.equal(doc.title, "Original");
      assert.equal(doc.infoLink, "https://example.org/about");
      const both = await update({ name: before.name as string, clear: "infoLink,soundUrl" }, format);
      assert.equal(both.infoLink ?? "", "");
      assert.equal(both.soundUrl ?? "", "");
      // The record says so too, and the description is the publisher's from now on.
      const rec = await server.services.store.documents.getByNameOrId(1, before.name as string);
      assert.equal(rec?.description, "");
      assert.deepEqual(rec?.tags, []);
      assert.equal(rec?.descriptionGiven, true);
    });

    test(`${format}: an empty clear changes nothing; a field cleared and set at once, or one that cannot be cleared, is 201 on clear`, async () => {
      const before = await fresh();
      const same = await update({ name: before.name as string, clear: "" }, format);
      assert.equal(same.description, "orig");
      const bads: Params[] = [{ clear: "description", description: "new" }, { clear: "tags", tags: "x" }, { clear: "title" }, { clear: "name" }, { clear: "description,nope" }, { clear: "Description" }];
      for (const bad of bads) {
        assertError(await call(c, "document.update", { name: before.name as string, ...bad }, format), format, "201", "clear");
      }
      const after = await update({ name: before.name as string }, format);
      assert.equal(after.description, "orig", "a refused update changed nothing");
    });
  }
});
