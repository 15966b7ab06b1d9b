import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { type Readable, Transform } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { assertValidKey } from "./blob-keys.ts";
import { deleteListed, type BlobStore } from "./blob-store.ts";
import { removeStaleEntries } from "./stale-entries.ts";

/** S3's own minimum for every part but the last; objects up to one part go up in a single PUT. */
export const DEFAULT_PART_SIZE = 8 * 1024 * 1024;

export interface S3BlobStoreOptions {
  client: S3Client;
  bucket: string;
  /** Key prefix inside the bucket ("" or "a/b/"), so several installations can share a bucket. */
  prefix: string;
  /** Local directory for upload spool files; S3 has no rename, so the spool cannot live in the bucket. */
  spoolDir: string;
  partSize?: number;
  /** Keys per ListObjectsV2 page (S3's maximum, 1000, unless a test wants several pages). */
  listPageSize?: number;
}

/** Where `s3://bucket/some/prefix` points. */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!m) throw new Error(`${url}: expected s3://bucket[/prefix]`);
  const prefix = (m[2] ?? "").replace(/^\/+|\/+$/g, "");
  if (prefix !== "") assertValidKey(prefix);
  return { bucket: m[1]!, prefix: prefix === "" ? "" : `${prefix}/` };
}

/**
 * A client for AWS, or for an S3-compatible server at `endpoint`. Such servers (MinIO, s3rver,
 * Ceph…) only reliably understand path-style addressing and plain payloads: the SDK's default
 * streaming checksums (aws-chunked bodies with trailers) are stored verbatim by some of them.
 */
export function createS3Client(opts: { endpoint: string | undefined; region: string; credentials?: S3ClientConfig["credentials"] }): S3Client {
  const compatible = opts.endpoint !== undefined;
  return new S3Client({
    region: opts.region,
    endpoint: opts.endpoint,
    credentials: opts.credentials,
    forcePathStyle: compatible,
    ...(compatible ? { requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED" } : {}),
  });
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === "NoSuchKey" || e.name === "NotFound" || e.$metadata?.httpStatusCode === 404;
}

/**
 * Blobs in an S3-compatible bucket. Objects appear whole or not at all (a PUT or a completed
 * multipart upload), so the atomic-write promise of BlobStore holds without temp objects.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly spoolDir: string;
  private readonly partSize: number;
  private readonly listPageSize: number;

  constructor(opts: S3BlobStoreOptions) {
    this.client = opts.client;
    this.bucket = opts.bucket;
    this.prefix = opts.prefix;
    this.spoolDir = opts.spoolDir;
    this.partSize = opts.partSize ?? DEFAULT_PART_SIZE;
    this.listPageSize = opts.listPageSize ?? 1000;
  }

  /** A fresh local path for an upload spool file, taken over later by putFile. */
  async tempPath(): Promise<string> {
    await mkdir(this.spoolDir, { recursive: true });
    return join(this.spoolDir, randomBytes(12).toString("hex"));
  }

  private objectKey(key: string): string {
    assertValidKey(key);
    return this.prefix + key;
  }

  async put(key: string, body: Readable): Promise<number> {
    let bytes = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    });
    body.once("error", (err) => counted.destroy(err));
    body.pipe(counted);
    try {
      await this.upload(this.objectKey(key), counted);
    } catch (err) {
      // S3 refused or went away: the source (often a file) must not stay open, paused by backpressure.
      body.destroy();
      counted.destroy();
      throw err;
    }
    return bytes;
  }

  /** Streams of unknown length go up in parts; lib-storage aborts the multipart upload on failure. */
  private async upload(objectKey: string, body: Readable): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: objectKey, Body: body },
      partSize: this.partSize,
      queueSize: 4,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  async putFile(key: string, path: string): Promise<void> {
    const objectKey = this.objectKey(key);
    const { size } = await stat(path);
    if (size <= this.partSize) {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: objectKey, Body: createReadStream(path), ContentLength: size }),
      );
    } else {
      await this.upload(objectKey, createReadStream(path));
    }
    await rm(path, { force: true });
  }

  async get(key: string): Promise<Readable> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return out.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) throw Object.assign(new Error(`no blob ${key}`), { code: "ENOENT" });
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  deletePrefix(prefix: string, keep?: readonly string[]): Promise<number> {
    return deleteListed(this, prefix, keep);
  }

  async list(prefix: string): Promise<string[]> {
    return (await this.listWithTimes(prefix)).map((o) => o.key);
  }

  /**
   * Pages with ListObjects (v1) and the last key as marker: every S3-compatible server has it,
   * while v2 continuation tokens are opaque per server (s3rver's need DES, gone from OpenSSL 3).
   */
  async listWithTimes(prefix: string): Promise<Array<{ key: string; modifiedAt: number }>> {
    const out: Array<{ key: string; modifiedAt: number }> = [];
    let marker: string | undefined;
    for (;;) {
      const page = await this.client.send(
        new ListObjectsCommand({ Bucket: this.bucket, Prefix: this.prefix + prefix, Marker: marker, MaxKeys: this.listPageSize }),
      );
      const contents = page.Contents ?? [];
      for (const o of contents) {
        if (o.Key) out.push({ key: o.Key.slice(this.prefix.length), modifiedAt: o.LastModified?.getTime() ?? 0 });
      }
      if (!page.IsTruncated || contents.length === 0) break;
      marker = contents[contents.length - 1]!.Key;
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Upload spool files a crashed API process left in this machine's spool folder. */
  async removeStaleTemp(before: number): Promise<number> {
    return removeStaleEntries(this.spoolDir, before);
  }


  /** For /readyz: the bucket answers and these credentials may use it. */
  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }
}
