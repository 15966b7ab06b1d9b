import { CATEGORIES, DOCUMENT_TYPES, LANGUAGES } from "./codes.ts";
import type { Access, DocumentOptions } from "./document.ts";
import { invalid } from "./errors.ts";
import { charLength, isValidDocumentName, isXmlSafe, parseBoolean, parseDate, parseHttpUrl, parseList } from "./values.ts";

/** A parameter as the operation sees it: an empty value counts as absent (decisions §4). */
export type ParamGetter = (name: string) => string | undefined;

/** Checks that need the store, injected so the rules stay free of I/O. */
export interface OptionChecks {
  isNameTaken(name: string): Promise<boolean>;
  ownsAllFolders(folderIds: string[]): Promise<boolean>;
}

export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 100;
export const MAX_DESCRIPTION_LENGTH = 1000;
/** The spec gives titles no limit; this one keeps hostile input bounded and is documented in docs/api.md. */
export const MAX_TITLE_LENGTH = 500;

/** Every string field must be text XML can carry; otherwise 201 on that field. */
export function text(get: ParamGetter, field: string, maxLength: number): string | undefined {
  const value = get(field);
  if (value === undefined) return undefined;
  if (charLength(value) > maxLength || !isXmlSafe(value)) throw invalid(field);
  return value;
}

/** A whole number in decimal digits (at most nine) from `min` to `max`, else 201 on the field; absent is undefined. */
export function wholeNumber(get: ParamGetter, field: string, min: number, max: number): number | undefined {
  const value = get(field);
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw invalid(field);
  const n = Number(value);
  if (n < min || n > max) throw invalid(field);
  return n;
}

/** An absolute http(s) URL (decisions §4), or undefined when absent. */
export function optionalHttpUrl(get: ParamGetter, field: string): string | undefined {
  const value = get(field);
  if (value === undefined) return undefined;
  parseHttpUrl(field, value);
  return value;
}

/** `soundUrl`: an http(s) URL whose path ends in `.mp3` or `.m3u`, or undefined when absent. */
export function optionalSoundUrl(get: ParamGetter): string | undefined {
  const value = optionalHttpUrl(get, "soundUrl");
  if (value !== undefined && !/\.(mp3|m3u)$/i.test(new URL(value).pathname)) throw invalid("soundUrl");
  return value;
}

/** A six-digit code of `table` (category, type), or undefined when absent. */
export function optionalCoded(get: ParamGetter, field: string, table: Readonly<Record<string, string>>): string | undefined {
  const value = get(field);
  if (value === undefined) return undefined;
  if (!Object.hasOwn(table, value)) throw invalid(field);
  return value;
}

/** `tags` (decisions §4: at most 50, each at most 100 characters), or undefined when absent. */
export function optionalTags(get: ParamGetter): string[] | undefined {
  const value = get("tags");
  if (value === undefined) return undefined;
  if (!isXmlSafe(value)) throw invalid("tags");
  const list = parseList(value);
  if (list.length > MAX_TAGS || list.some((t) => charLength(t) > MAX_TAG_LENGTH)) throw invalid("tags");
  return list;
}

/** An ISO 639-1 code, or undefined when absent. */
export function optionalLanguage(get: ParamGetter): string | undefined {
  const value = get("language");
  if (value !== undefined && !LANGUAGES.has(value)) throw invalid("language");
  return value;
}

/** `public` or `private`, or undefined when absent. */
export function optionalAccess(get: ParamGetter): Access | undefined {
  const value = get("access");
  if (value !== undefined && value !== "public" && value !== "private") throw invalid("access");
  return value;
}

/** A boolean (decisions §4), or undefined when absent. */
export function optionalBool(get: ParamGetter, field: string): boolean | undefined {
  const value = get(field);
  return value === undefined ? undefined : parseBoolean(field, value);
}

/** `ratingsAllowed`, or its other spelling `ratingAllowed` (the first wins when both are sent). */
export function optionalRatingsAllowed(get: ParamGetter): boolean | undefined {
  const field = get("ratingsAllowed") !== undefined ? "ratingsAllowed" : "ratingAllowed";
  return optionalBool(get, field);
}

/** `publishDate` (decisions §4) as epoch ms, or undefined when absent. */
export function optionalDate(get: ParamGetter, field: string): number | undefined {
  const value = get(field);
  return value === undefined ? undefined : parseDate(field, value);
}

/**
 * The optional parameters shared by both upload operations, validated in the order of the
 * interface's table so the first offending one is named (decisions §2 step 6).
 */
export async function readDocumentOptions(get: ParamGetter, checks: OptionChecks): Promise<DocumentOptions> {
  const name = get("name");
  if (name !== undefined && (!isValidDocumentName(name) || (await checks.isNameTaken(name)))) throw invalid("name");
  const title = text(get, "title", MAX_TITLE_LENGTH);
  const tagList = optionalTags(get) ?? [];
  const commentsAllowed = optionalBool(get, "commentsAllowed") ?? true;
  const description = text(get, "description", MAX_DESCRIPTION_LENGTH);
  const downloadable = optionalBool(get, "downloadable") ?? false;
  const infoLink = optionalHttpUrl(get, "infoLink") ?? "";
  const language = optionalLanguage(get) ?? "";
  const access = optionalAccess(get) ?? "public";
  const explicit = optionalBool(get, "explicit") ?? false;
  const category = optionalCoded(get, "category", CATEGORIES) ?? "000000";
  const type = optionalCoded(get, "type", DOCUMENT_TYPES) ?? "000000";
  const ratingsAllowed = optionalRatingsAllowed(get) ?? true;
  const sound = optionalSoundUrl(get) ?? "";
  const publishDate = optionalDate(get, "publishDate");
  const folderIds = parseList(get("folderIds") ?? "");
  if (folderIds.length > 0 && !(await checks.ownsAllFolders(folderIds))) throw invalid("folderIds");
  return {
    name, title, tags: tagList, commentsAllowed, description, downloadable, infoLink, language,
    access, explicit, category, type, ratingsAllowed, soundUrl: sound, publishDate, folderIds,
  };
}
