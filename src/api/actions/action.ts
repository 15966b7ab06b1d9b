import type { OriginRequest } from "../../ops/request-origin.ts";
import type { FastifyBaseLogger } from "fastify";
import type { DiskSpace } from "../../blobs/disk-space.ts";
import type { BlobStore } from "../../blobs/blob-store.ts";
import type { Config } from "../../config.ts";
import type { Store } from "../../store/open-store.ts";
import type { Caller } from "../authenticate.ts";
import type { RequestParams } from "../params.ts";
import type { Payload } from "../payload.ts";
import type { SpooledFile } from "../../uploads/upload-reader.ts";

export type { SpooledFile };

export interface ApiDeps {
  config: Readonly<Config>;
  store: Store;
  blobs: BlobStore;
  /** The data disk's free space: uploads are refused (012) while it is short (src/uploads/disk-guard.ts). */
  diskSpace?: Pick<DiskSpace, "shortage">;
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
  /** Where the request was sent (through a trusted proxy's X-Forwarded-*): the origin of the links it answers. */
  origin: OriginRequest;
}

export type ActionHandler = (ctx: ActionContext) => Promise<Payload>;
