import { CATEGORIES, DOCUMENT_TYPES } from "./codes.ts";
import type { Access } from "./document.ts";
import {
  MAX_DESCRIPTION_LENGTH, MAX_TITLE_LENGTH, optionalAccess, optionalBool, optionalCoded, optionalDate, optionalHttpUrl,
  optionalLanguage, optionalRatingsAllowed, optionalSoundUrl, optionalTags, text, type ParamGetter,
} from "./document-options.ts";
import { invalid, missing } from "./errors.ts";
import { isValidDocumentName, isXmlSafe, parseList } from "./values.ts";

/** What `svc.document.update` may change (decisions §8); an absent field stays as it is. */
export interface DocumentChanges {
  title?: string;
  tags?: string[];
  description?: string;
  language?: string;
  category?: string;
  type?: string;
  publishDate?: number;
  access?: Access;
  commentsAllowed?: boolean;
  downloadable?: boolean;
  explicit?: boolean;
  infoLink?: string;
  ratingsAllowed?: boolean;
  soundUrl?: string;
  newName?: string;
}

/**
 * The fields `clear` may empty. A parameter sent empty counts as absent (decisions §4), so an
 * update cannot say "empty" with the field itself: `clear=description,tags` says it.
 */
export const CLEARABLE_FIELDS = ["description", "tags", "infoLink", "soundUrl"] as const;
type Clearable = (typeof CLEARABLE_FIELDS)[number];
const EMPTY: { [K in Clearable]: DocumentChanges[K] } = { description: "", tags: [], infoLink: "", soundUrl: "" };

/**
 * `clear`: a list of CLEARABLE_FIELDS to empty. A name it cannot clear, or one also sent with a
 * value (which of the two was meant?), is 201 on `clear`.
 */
function readClear(get: ParamGetter, changes: DocumentChanges): void {
  const value = get("clear");
  if (value === undefined) return;
  if (!isXmlSafe(value)) throw invalid("clear");
  for (const name of parseList(value)) {
    const field = CLEARABLE_FIELDS.find((f) => f === name);
    if (field === undefined || changes[field] !== undefined) throw invalid("clear");
    Object.assign(changes, { [field]: EMPTY[field] });
  }
}

/**
 * The parameters of `svc.document.update` in the order of its table (decisions §8), with the
 * value rules of the upload (decisions §4): the first absent required one is 200, the first
 * malformed one 201. Whether `name` exists and `newName` is free needs the store (the action).
 */
export function readDocumentUpdate(get: ParamGetter): { name: string; changes: DocumentChanges } {
  const name = get("name");
  if (name === undefined) throw missing("name");
  if (!isValidDocumentName(name)) throw invalid("name");
  const changes: DocumentChanges = {
    title: text(get, "title", MAX_TITLE_LENGTH),
    tags: optionalTags(get),
    description: text(get, "description", MAX_DESCRIPTION_LENGTH),
    language: optionalLanguage(get),
    category: optionalCoded(get, "category", CATEGORIES),
    type: optionalCoded(get, "type", DOCUMENT_TYPES),
    publishDate: optionalDate(get, "publishDate"),
    access: optionalAccess(get),
    commentsAllowed: optionalBool(get, "commentsAllowed"),
    downloadable: optionalBool(get, "downloadable"),
    explicit: optionalBool(get, "explicit"),
    infoLink: optionalHttpUrl(get, "infoLink"),
    ratingsAllowed: optionalRatingsAllowed(get),
    soundUrl: optionalSoundUrl(get),
  };
  const newName = get("newName");
  if (newName !== undefined) {
    if (!isValidDocumentName(newName)) throw invalid("newName");
    changes.newName = newName;
  }
  readClear(get, changes);
  for (const key of Object.keys(changes) as Array<keyof DocumentChanges>) if (changes[key] === undefined) delete changes[key];
  return { name, changes };
}
