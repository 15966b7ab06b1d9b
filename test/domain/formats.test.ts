import assert from "node:assert/strict";
import { test } from "node:test";
import { typeClaimedByName } from "../../src/domain/formats.ts";

/** Decisions §5: the content decides the format; a name that says otherwise is only reported. */
test("a file's name claims another format only when its extension names a supported one that is not the content's", () => {
  assert.equal(typeClaimedByName("scan.pdf", "png"), "pdf");
  assert.equal(typeClaimedByName("Letter.DOC", "wpd"), "doc");
  assert.equal(typeClaimedByName("photo.JPEG", "png"), "jpg");
  // Variants and aliases of the content's own type agree with it.
  assert.equal(typeClaimedByName("photo.jpeg", "jpg"), undefined);
  assert.equal(typeClaimedByName("scan.TIFF", "tif"), undefined);
  assert.equal(typeClaimedByName("report.pdf", "pdf"), undefined);
  // No extension, an unknown one, a dot only in a folder name, or an unknown content: nothing claimed.
  assert.equal(typeClaimedByName("scan", "png"), undefined);
  assert.equal(typeClaimedByName("scan.xyz", "png"), undefined);
  assert.equal(typeClaimedByName("a.pdf/scan", "png"), undefined);
  assert.equal(typeClaimedByName("report.pdf", "unknown"), undefined);
});
