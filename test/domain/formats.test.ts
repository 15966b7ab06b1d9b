import assert from "node:assert/strict";
import { test } from "node:test";
import { formatNamedOtherwise } from "../../src/domain/document.ts";
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

test("only a file upload's name is compared with its content; a URL upload's name is its address", () => {
  assert.equal(formatNamedOtherwise({ origin: "apiupload", orgDocName: "scan.pdf", orgDocType: "png" }), "pdf");
  assert.equal(formatNamedOtherwise({ origin: "apislurp", orgDocName: "https://example.com/scan.pdf", orgDocType: "png" }), undefined);
});
