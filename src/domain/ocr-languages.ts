/**
 * Which Tesseract languages read a document: its `language` (ISO 639-1, decisions §3) mapped to
 * Tesseract's traineddata name when that is installed, else the configured default list.
 */

/** ISO 639-1 → Tesseract traineddata (tessdata 4.x names), for every language Tesseract has a model of. */
export const ISO_639_1_TO_TESSERACT: Readonly<Record<string, string>> = Object.freeze({
  af: "afr", am: "amh", ar: "ara", as: "asm", az: "aze", be: "bel", bg: "bul", bn: "ben", bo: "bod",
  br: "bre", bs: "bos", ca: "cat", co: "cos", cs: "ces", cy: "cym", da: "dan", de: "deu", dv: "div",
  dz: "dzo", el: "ell", en: "eng", eo: "epo", es: "spa", et: "est", eu: "eus", fa: "fas", fi: "fin",
  fo: "fao", fr: "fra", fy: "fry", ga: "gle", gd: "gla", gl: "glg", gu: "guj", he: "heb", hi: "hin",
  hr: "hrv", ht: "hat", hu: "hun", hy: "hye", id: "ind", is: "isl", it: "ita", iu: "iku", ja: "jpn",
  jv: "jav", ka: "kat", kk: "kaz", km: "khm", kn: "kan", ko: "kor", ku: "kmr", ky: "kir", la: "lat",
  lb: "ltz", lo: "lao", lt: "lit", lv: "lav", mi: "mri", mk: "mkd", ml: "mal", mn: "mon", mr: "mar",
  ms: "msa", mt: "mlt", my: "mya", nb: "nor", ne: "nep", nl: "nld", nn: "nor", no: "nor", oc: "oci",
  or: "ori", pa: "pan", pl: "pol", ps: "pus", pt: "por", qu: "que", ro: "ron", ru: "rus", sa: "san",
  sd: "snd", si: "sin", sk: "slk", sl: "slv", sq: "sqi", sr: "srp", su: "sun", sv: "swe", sw: "swa",
  ta: "tam", te: "tel", tg: "tgk", th: "tha", ti: "tir", tl: "fil", to: "ton", tr: "tur", tt: "tat",
  ug: "uig", uk: "ukr", ur: "urd", uz: "uzb", vi: "vie", yi: "yid", yo: "yor", zh: "chi_sim",
});

/**
 * The default when nothing is configured: English alone. On eurotext (six languages on one page)
 * eng reads at 2.2 % CER in 0.59 CPU s, eng+deu+fra+spa at 1.2 % in 1.37 s, all six installed at
 * 1.2 % in 2.17 s (bench/ocr.ts): every language costs every page, so more is the operator's choice.
 */
export const DEFAULT_OCR_LANGUAGES: readonly string[] = ["eng"];

/** Traineddata that are not languages to read with. */
const NOT_LANGUAGES = new Set(["osd", "equ"]);

/**
 * The `-l` list for a document: its language when set and installed, else the defaults that are
 * installed, else English (tesseract's own fallback). Never an empty list.
 */
export function ocrLanguages(documentLanguage: string | undefined, defaults: readonly string[], installed: ReadonlySet<string>): string[] {
  const usable = (l: string) => installed.has(l) && !NOT_LANGUAGES.has(l);
  const mapped = documentLanguage ? ISO_639_1_TO_TESSERACT[documentLanguage.toLowerCase()] : undefined;
  if (mapped && usable(mapped)) return [mapped];
  const chosen = [...new Set(defaults)].filter(usable);
  if (chosen.length) return chosen;
  return ["eng"];
}

/** Parses QUIRE_OCR_LANGUAGES ("eng+deu" or "eng,deu"): Tesseract names, lowercase letters and "_". */
export function parseLanguageList(raw: string): string[] | undefined {
  const list = raw.split(/[+,\s]+/).map((l) => l.trim()).filter((l) => l !== "");
  return list.length && list.every((l) => /^[a-z]{3}(_[a-z]+)?$/.test(l)) ? list : undefined;
}
