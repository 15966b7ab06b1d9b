import { createHash } from "node:crypto";

/**
 * The signature of decisions §3, written again here from the spec text so that API tests do not
 * trust the server's own function: md5(secret + name1 + value1 + …), names in byte order,
 * `signature` and `file` left out.
 */
/** The published test vector of decisions §3. */
export const SIGNING_VECTOR = {
  secret: "13e3an36eaxjy8nenuepab05yc7j7w5g",
  apiKey: "qyy6ls1qv15uh9xwwlvk853u2uvpfka7",
  params: {
    action: "issuu.documents.list",
    apiKey: "qyy6ls1qv15uh9xwwlvk853u2uvpfka7",
    access: "public",
    responseParams: "title,description",
    format: "json",
  },
  signature: "7431d31140cf412ab5caa73586d6324a",
} as const;

export function independentSignature(secret: string, params: Record<string, string>): string {
  const names = Object.keys(params)
    .filter((n) => n !== "signature" && n !== "file")
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  let text = secret;
  for (const n of names) text += n + params[n];
  return createHash("md5").update(Buffer.from(text, "utf8")).digest("hex");
}

export function signParams(secret: string, params: Record<string, string>): Record<string, string> {
  return { ...params, signature: independentSignature(secret, params) };
}
