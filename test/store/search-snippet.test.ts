import assert from "node:assert/strict";
import { test } from "node:test";
import { matchWindow, pageSnippet } from "../../src/store/search-snippet.ts";

const O = "\u0001";
const C = "\u0002";
const words = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `w${from + i}`).join(" ");

test("a snippet is the 16 words around the page's densest matches, marked, with … where the page goes on", () => {
  const page = `${words(0, 30)} ${O}lone${C} ${words(31, 60)} ${O}pair${C} w61 ${O}pair${C}\n${words(63, 90)}`;
  assert.equal(pageSnippet(page, O, C), "…w57 w58 w59 [[pair]] w61 [[pair]] w63 w64 w65 w66 w67 w68 w69 w70 w71 w72…");
});

test("a match at the page's start or end keeps the snippet inside the page", () => {
  assert.equal(pageSnippet(`${O}first${C} ${words(1, 40)}`, O, C), `[[first]] ${words(1, 16)}…`);
  assert.equal(pageSnippet(`${words(0, 40)} ${O}last${C}`, O, C), `…${words(25, 40)} [[last]]`);
  assert.equal(pageSnippet(`a ${O}short${C} page`, O, C), "a [[short]] page");
});

test("a phrase cut by the snippet's edge is still closed", () => {
  const page = `${words(0, 3)} ${O}a ${words(4, 30)}${C}`;
  assert.equal(pageSnippet(page, O, C), `${words(0, 3)} [[a ${words(4, 16)}]]…`);
});

test("a page without a match gives its first words", () => {
  assert.equal(pageSnippet(words(0, 20), O, C), `${words(0, 16)}…`);
});

test("the window a highlighter marks: around the first word of the query as written, cut at spaces, saying where the page goes on", () => {
  const page = `${words(0, 60)} The Lighthouse-keeper wrote. ${words(60, 200)}`;
  const found = matchWindow(page, ["lighthouse", "wrote"])!;
  assert.ok(found.before && found.after);
  assert.ok(found.text.includes("The Lighthouse-keeper wrote."), found.text);
  assert.ok(found.text.length < 700);
  assert.match(found.text, /^w\d+ /, "starts at a word");
  assert.match(found.text, / w\d+$/, "ends at a word");
  assert.deepEqual(matchWindow("Café crème at the harbour.", ["creme"]), { text: "Café crème at the harbour.", before: false, after: false });
});

test("no window when the query's words are there only inside others, or in another form", () => {
  assert.equal(matchWindow("The lighthouses and the keepers.", ["lighthouse", "keeper"]), undefined);
  assert.equal(matchWindow("mislighthouse", ["lighthouse"]), undefined);
  assert.equal(matchWindow("", ["a"]), undefined);
  assert.equal(matchWindow("a page", []), undefined);
});

test("a snippet of a window says the page goes on where the window was cut", () => {
  assert.equal(pageSnippet(`a ${O}b${C} c`, O, C, { before: true, after: true }), "…a [[b]] c…");
});
