import { CATEGORIES, DOCUMENT_TYPES, LANGUAGES } from "../../domain/codes.ts";
import type { DocumentRecord } from "../../domain/document.ts";
import { MAX_DESCRIPTION_LENGTH, MAX_TITLE_LENGTH } from "../../domain/document-options.ts";
import { CLEARABLE_FIELDS } from "../../domain/document-update.ts";
import { html, type Html } from "../html.ts";
import { field } from "./app-context.ts";
import { errorBox } from "./app-errors.ts";
import { csrfField } from "./app-layout.ts";
import { languageName, shortDate } from "./app-words.ts";

/** The form's fields are the API's parameters of `svc.document.update`, by the same names. */
const TEXT_FIELDS = ["title", "description", "tags", "newName", "language", "category", "type", "publishDate", "access", "infoLink", "soundUrl"] as const;
const FLAGS = [
  ["downloadable", "Readers may download the original file"],
  ["commentsAllowed", "Comments allowed"],
  ["ratingsAllowed", "Ratings allowed"],
  ["explicit", "Explicit content"],
] as const;
type FormField = (typeof TEXT_FIELDS)[number] | (typeof FLAGS)[number][0];

/** The values the form shows for a document, as the API's parameters would carry them. */
export function formValues(doc: DocumentRecord): Record<FormField, string> {
  return {
    title: doc.title, description: doc.description, tags: doc.tags.join(", "), newName: doc.name,
    language: doc.language, category: doc.category, type: doc.type, publishDate: shortDate(doc.publishDate),
    access: doc.access, infoLink: doc.infoLink, soundUrl: doc.soundUrl,
    downloadable: String(doc.downloadable), commentsAllowed: String(doc.commentsAllowed),
    ratingsAllowed: String(doc.ratingsAllowed), explicit: String(doc.explicit),
  };
}

/** What the person sent, in the same shape (a checkbox left unticked is not sent: false). */
export function submittedValues(body: unknown): Record<FormField, string> {
  const out = {} as Record<FormField, string>;
  for (const name of TEXT_FIELDS) out[name] = field(body, name) ?? "";
  for (const [name] of FLAGS) out[name] = field(body, name) === "true" ? "true" : "false";
  return out;
}

/**
 * The parameters for `readDocumentUpdate`: only the fields the person changed, so that a value shown
 * the way people read it (a date without its time, tags joined) is not written back altered. A
 * field that can be empty and was emptied is named in `clear`, as an API client would; other
 * emptied fields (title, address name, date) are left as they are.
 */
export function changedParams(shown: Record<FormField, string>, sent: Record<FormField, string>, documentId: string): (name: string) => string | undefined {
  const cleared = CLEARABLE_FIELDS.filter((f) => sent[f].trim() === "" && shown[f] !== "");
  return (name) => {
    if (name === "name") return documentId;
    if (name === "clear") return cleared.length > 0 ? cleared.join(",") : undefined;
    if (!Object.hasOwn(sent, name)) return undefined;
    const key = name as FormField;
    if (sent[key] === shown[key] || sent[key].trim() === "") return undefined;
    return sent[key];
  };
}

interface FormState {
  values: Record<FormField, string>;
  error?: { text: string; field: string | undefined };
}

/** The field's hint and error, named for screen readers; the field marked invalid when it has an error. */
function describedBy(state: FormState, name: string, hint = false): Html | string {
  const invalid = state.error?.field === name;
  const ids = [hint ? `hint-${name}` : "", invalid ? `error-${name}` : ""].filter((id) => id !== "").join(" ");
  return html`${invalid ? html` aria-invalid="true"` : ""}${ids ? html` aria-describedby="${ids}"` : ""}`;
}
const fieldError = (state: FormState, name: string) =>
  state.error?.field === name ? html`<p class="field-error" id="error-${name}">${state.error.text}</p>` : "";

function textInput(state: FormState, name: FormField, label: string, attrs: Html, hint?: string): Html {
  return html`<label for="d-${name}">${label}</label>
${hint !== undefined && html`<p class="hint" id="hint-${name}">${hint}</p>`}
${fieldError(state, name)}
<input id="d-${name}" name="${name}" value="${state.values[name]}"${attrs}${describedBy(state, name, hint !== undefined)}>`;
}

function choice(state: FormState, name: FormField, label: string, options: Array<[string, string]>): Html {
  return html`<label for="d-${name}">${label}</label>
${fieldError(state, name)}
<select id="d-${name}" name="${name}"${describedBy(state, name)}>${options.map(([v, l]) => html`<option value="${v}"${v === state.values[name] ? html` selected` : ""}>${l}</option>`)}</select>`;
}

const LANGUAGE_OPTIONS: Array<[string, string]> = [...LANGUAGES].map((c) => [c, `${languageName(c)} (${c})`] as [string, string]).sort((a, b) => a[1].localeCompare(b[1]));

/** Every field of the record the API lets its owner change, under the API's names and rules. */
export function documentForm(action: string, csrf: string, state: FormState): Html {
  const v = state.values;
  return html`<form method="post" action="${action}" class="stack" novalidate>
${csrfField(csrf)}
${errorBox(state.error && state.error.field === undefined ? state.error.text : state.error ? "The document was not saved: see the field marked below." : undefined)}
${textInput(state, "title", "Title", html` maxlength="${MAX_TITLE_LENGTH}"`)}
<label for="d-description">Description</label>
${fieldError(state, "description")}
<textarea id="d-description" name="description" maxlength="${MAX_DESCRIPTION_LENGTH}"${describedBy(state, "description")}>${v.description}</textarea>
${textInput(state, "tags", "Tags", html``, "Separated by commas.")}
${textInput(state, "newName", "Address name", html` autocapitalize="none" spellcheck="false"`, "The last part of the reader's address: 3 to 50 characters among a–z, 0–9, _ . -. After a rename, links and embed codes with the old name still work: they lead here, unless another of your documents takes that name.")}
<fieldset>
<legend>Access</legend>
${fieldError(state, "access")}
<label class="check"><input type="radio" name="access" value="public"${v.access === "public" ? html` checked` : ""}> Public: listed on your profile</label>
<label class="check"><input type="radio" name="access" value="private"${v.access === "private" ? html` checked` : ""}> Private: only whoever has the address</label>
</fieldset>
<fieldset>
<legend>Readers</legend>
${FLAGS.map(([name, label]) => html`<label class="check"><input type="checkbox" name="${name}" value="true"${v[name] === "true" ? html` checked` : ""}> ${label}</label>`)}
</fieldset>
${choice(state, "language", "Language", [...(v.language === "" ? [["", "Not set"] as [string, string]] : []), ...LANGUAGE_OPTIONS])}
${choice(state, "category", "Category", Object.entries(CATEGORIES))}
${choice(state, "type", "Type", Object.entries(DOCUMENT_TYPES))}
${textInput(state, "publishDate", "Publish date", html` type="date"`)}
${textInput(state, "infoLink", "Info link", html` type="url" inputmode="url"`, "A web page about the document (http:// or https://).")}
${textInput(state, "soundUrl", "Sound", html` type="url" inputmode="url"`, "An .mp3 or .m3u address played beside the reader.")}
<p class="hint">An emptied description, tags, info link or sound is removed (the automatic description does not come back). An emptied title, address name or date keeps its value.</p>
<button type="submit" class="primary">Save changes</button>
</form>`;
}
