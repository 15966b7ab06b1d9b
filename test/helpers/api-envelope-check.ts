import { XMLParser, XMLValidator } from "fast-xml-parser";
import { ERROR_MESSAGES } from "../../src/domain/errors.ts";

/** What any API answer must be: a well-formed envelope, stat ok or fail, a fail with a catalogued code and its exact message. */
export interface AnswerSeen {
  status: number;
  contentType: string;
  text: string;
}

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" });
const JSONP_RE = /^([A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*)\(([\s\S]*)\)$/;

/** Answers a description of what is wrong with the answer, or undefined when it is a well-formed envelope. */
export function envelopeProblem(a: AnswerSeen): string | undefined {
  if (a.status !== 200) return `HTTP ${a.status}`;
  const type = a.contentType.split(";")[0]!.trim();
  let rsp: { stat?: unknown; error?: { code?: unknown; message?: unknown } };
  if (type === "text/xml") {
    if (XMLValidator.validate(a.text) !== true) return "XML not well-formed";
    const parsed = xml.parse(a.text) as { rsp?: typeof rsp };
    if (typeof parsed.rsp !== "object") return "no <rsp>";
    rsp = parsed.rsp;
  } else if (type === "application/json" || type === "application/javascript") {
    let json = a.text;
    if (type === "application/javascript") {
      const m = JSONP_RE.exec(a.text);
      if (!m) return "JSONP not of the form callback(json)";
      json = m[2]!;
    }
    try {
      const parsed = JSON.parse(json) as { rsp?: { stat?: unknown; _content?: { error?: typeof rsp.error } } };
      if (typeof parsed.rsp !== "object") return "no rsp";
      rsp = { stat: parsed.rsp.stat, error: parsed.rsp._content?.error };
    } catch {
      return "JSON does not parse";
    }
  } else if (type === "text/html") {
    // get_html_code answers HTML whatever the format; nothing else may.
    return /^<iframe [^<>]*><\/iframe>$/.test(a.text) ? undefined : "HTML that is not one iframe";
  } else {
    return `content type ${a.contentType}`;
  }
  if (rsp.stat === "ok") return rsp.error === undefined ? undefined : "ok with an error";
  if (rsp.stat !== "fail") return `stat ${String(rsp.stat)}`;
  const code = String(rsp.error?.code) as keyof typeof ERROR_MESSAGES;
  if (!(code in ERROR_MESSAGES)) return `code ${code} not in the catalogue`;
  if (code === "500") return "code 500";
  if (rsp.error?.message !== ERROR_MESSAGES[code]) return `message ${String(rsp.error?.message)} for ${code}`;
  return undefined;
}
