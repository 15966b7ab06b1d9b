import type { FastifyBaseLogger } from "fastify";
import type { BlobStore } from "../../blobs/blob-store.ts";
import type { Config } from "../../config.ts";
import type { Store } from "../../store/open-store.ts";
import type { Caller } from "../authenticate.ts";
import type { RequestParams } from "../params.ts";
import type { Payload } from "../payload.ts";

/** A file upload spooled to local disk, not yet in the blob store. */
export interface SpooledFile {
  path: string;
  size: number;
  fileName: string;
}

export interface ApiDeps {
  config: Readonly<Config>;
  store: Store;
  blobs: BlobStore;
}

export interface ActionContext {
  params: RequestParams;
  caller: Caller;
  deps: ApiDeps;
  log: FastifyBaseLogger;
  upload: SpooledFile | undefined;
  now: number;
  /** The request's id (X-Request-Id or generated), recorded with the jobs it enqueues. */
  requestId?: string;
}

export type ActionHandler = (ctx: ActionContext) => Promise<Payload>;
