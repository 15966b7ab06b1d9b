import assert from "node:assert/strict";
import { test } from "node:test";
import { markTerms } from "../../src/web/snippet-marks.ts";

test("a snippet's matches are marked as the search matches them: case and accents folded", () => {
  assert.equal(markTerms("Un Été à Paris, l'été dernier", "ete").value, "Un <mark>Été</mark> à Paris, l&#39;<mark>été</mark> dernier");
  assert.equal(markTerms("Helvetica and helveticaB", "HELVETICA b").value, "<mark>Helvetica</mark> and <mark>helveticaB</mark>");
  // A ligature folds to two letters: the character holding them is marked whole.
  assert.equal(markTerms("the ﬁrst ﬁle", "fi").value, "the <mark>ﬁ</mark>rst <mark>ﬁ</mark>le");
  assert.equal(markTerms("nothing here", "absent").value, "nothing here");
  assert.equal(markTerms("", "x").value, "");
});

test("hostile snippet text stays text, marked or not", () => {
  const out = markTerms(`<img src=x onerror="alert(1)"> & <script>img</script>`, "img").value;
  assert.equal(out, `&lt;<mark>img</mark> src=x onerror=&quot;alert(1)&quot;&gt; &amp; &lt;script&gt;<mark>img</mark>&lt;/script&gt;`);
  assert.doesNotMatch(out, /<(?!\/?mark>)/, "no tag but <mark>");
});
