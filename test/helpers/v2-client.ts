import { createToken } from "../../src/accounts/account-admin.ts";
import { rawHttp } from "./api-client.ts";
import type { TestServer } from "./test-server.ts";

/** A raw HTTP answer of the v2 API: status, content type, text and parsed JSON (undefined when not JSON). */
export interface V2Answer {
  status: number;
  type: string;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Record<string, string>;
}

/**
 * Sends one request to `${server.url}/v2/<path>` with exactly the headers and body given (as a
 * client would: a string body goes as written, even on GET, with its Content-Length; a FormData
 * body is encoded as fetch encodes it, with its multipart boundary).
 */
export async function v2Request(server: Pick<TestServer, "url">, method: string, path: string, init: { headers?: Record<string, string>; body?: string | Buffer | FormData } = {}): Promise<V2Answer> {
  let body: Buffer | undefined;
  const headers: Array<[string, string]> = Object.entries(init.headers ?? {});
  if (init.body instanceof FormData) {
    const encoded = new Request("http://x/", { method: "POST", body: init.body });
    body = Buffer.from(await encoded.arrayBuffer());
    headers.push(["Content-Type", encoded.headers.get("content-type")!]);
  } else if (init.body !== undefined) {
    body = Buffer.from(init.body);
  }
  if (body !== undefined) headers.push(["Content-Length", String(body.length)]);
  const res = await rawHttp(server.url, { method, path: `/v2/${path}`, headers, ...(body !== undefined ? { body } : {}) });
  const text = res.body;
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, type: res.headers["content-type"] ?? "", text, json, headers: res.headers };
}

/** A token for the test server's account, made as `quire accounts create-token` makes it. */
export function tokenFor(server: Pick<TestServer, "services" | "account">, username = server.account.username): Promise<string> {
  return createToken(server.services.store, username);
}

/** The TS SDK's way (research §2.7 item 11): only `Authorization`, plus a JSON body when there is one. */
export function sdk(server: Pick<TestServer, "url">, token: string) {
  const call = (method: string, path: string, body?: unknown) =>
    v2Request(server, method, path, {
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  return {
    get: (path: string) => call("GET", path),
    post: (path: string, body?: unknown) => call("POST", path, body),
    patch: (path: string, body?: unknown) => call("PATCH", path, body),
    delete: (path: string) => call("DELETE", path),
  };
}
