import { createHash, type Hash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import busboy from "busboy";
import { QuireError, invalid } from "../domain/errors.ts";
import { isXmlSafe } from "../domain/values.ts";
import { decodeUtf8 } from "./utf8.ts";

/** A file upload spooled to local disk, not yet in the blob store. */
export interface SpooledFile {
  path: string;
  size: number;
  fileName: string;
  /** The content's SHA-256 (hex), when the reader was asked for it (`digest`). */
  sha256?: string;
}

/** Where the form's fields go as they come; `add` throws (201) on a name sent twice. */
export interface FieldSink {
  add(name: string, value: string): void;
}

export interface UploadReaderOptions {
  maxBytes: number;
  tempPath: () => Promise<string>;
  /** Runs when the file part begins, with the fields sent before it; throwing refuses the upload unread. */
  beforeFile: () => Promise<void>;
  /** Decides what to answer once the file passes the limit (a malformed earlier field wins over 205). */
  onLimit: () => Promise<QuireError>;
  /**
   * Asked once beforeFile has run (throwing refuses the upload unread): a function each chunk of
   * the file is shown to before it is written, which answers the error that stops the upload
   * there (or undefined to go on); or undefined when the file need not be metered.
   */
  spoolMeter?: () => Promise<SpoolMeter | undefined>;
  /** Hash the file as it streams (the web app tells a file uploaded twice by it); no second read of the spool. */
  digest?: "sha256";
}

export type SpoolMeter = (bytes: number) => QuireError | undefined | Promise<QuireError | undefined>;

/** Shows each chunk to the meter before passing it on; a refusal fails the stream with the meter's error. */
function metered(meter: SpoolMeter): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      void Promise.resolve(meter(chunk.length)).then(
        (refusal) => (refusal ? done(refusal) : done(null, chunk)),
        (err: unknown) => done(err as Error),
      );
    },
  });
}

/** Passes every chunk on unchanged, hashing it on the way. */
function hashing(hash: Hash): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
}

/**
 * Bounds on everything but the file, so a hostile form cannot grow memory. busboy reports a limit
 * when a count reaches it, so it is given one more than what is allowed.
 */
const FIELD_LIMITS = { fieldNameSize: 200, fieldSize: 64 * 1024, fields: 500, files: 20, parts: 600, headerPairs: 20 };

/**
 * Streams a multipart upload (the API's upload endpoint and the web app's upload page alike):
 * fields go into `params` as they come, the one `file` part is
 * spooled to a temp file while counted, and reading stops at the first error. Resolves when
 * the body is fully read. On failure the temp file is gone and the request is left unread.
 */
export function readUpload(req: IncomingMessage, params: FieldSink, opts: UploadReaderOptions): Promise<SpooledFile | undefined> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      // latin1 hands us the raw bytes, so UTF-8 validity can be judged exactly (decisions §1).
      bb = busboy({ headers: req.headers, defCharset: "latin1", defParamCharset: "latin1", limits: { ...FIELD_LIMITS, fileSize: opts.maxBytes + 1, fieldSize: FIELD_LIMITS.fieldSize + 1 } });
    } catch {
      reject(new QuireError("200"));
      return;
    }
    let settled = false;
    let limitHit = false;
    let spoolPath: string | undefined;
    let spooled: Promise<SpooledFile> | undefined;
    // Ends the spool's pipeline on failure: destroying a file stream busboy already ended would
    // leave Node 20's pipeline() waiting for an 'end' that never comes.
    const aborted = new AbortController();

    const stopReading = (): void => {
      req.unpipe(bb);
      req.pause();
    };
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      stopReading();
      bb.removeAllListeners();
      bb.on("error", () => {});
      aborted.abort(err);
      void (spooled ?? Promise.resolve())
        .catch(() => {})
        .then(() => (spoolPath ? rm(spoolPath, { force: true }) : undefined))
        .then(() => reject(err), () => reject(err));
    };
    const guard = (fn: () => void) => {
      try {
        fn();
      } catch (err) {
        fail(err);
      }
    };

    bb.on("field", (rawName, rawValue, info) =>
      guard(() => {
        // busboy reports a part named "" as having no name; a form-encoded body keeps "" as a name too.
        const name = decodeUtf8(Buffer.from(rawName ?? "", "latin1"), rawName ?? "");
        if (info.nameTruncated || info.valueTruncated) throw invalid(name);
        params.add(name, decodeUtf8(Buffer.from(rawValue, "latin1"), name));
      }),
    );

    bb.on("file", (rawName, stream, info) => {
      const name = Buffer.from(rawName ?? "", "latin1").toString("utf8");
      if (name !== "file" || spooled !== undefined || settled) {
        stream.resume();
        fail(invalid(name));
        return;
      }
      let fileName: string;
      try {
        fileName = decodeUtf8(Buffer.from(info.filename ?? "", "latin1"), "file");
        // The name is answered as orgDocName and title; one XML cannot carry (`filename*=UTF-8''a%01b`)
        // would be dropped from the XML answer but kept in JSON, so it is refused like such a title.
        if (!isXmlSafe(fileName)) throw invalid("file");
      } catch (err) {
        stream.resume();
        fail(err);
        return;
      }
      // Listened to at once: a body that ends inside the file part makes busboy fail this stream
      // before pipeline() below is attached, and an 'error' event with no listener ends the process.
      // Once piped, pipeline() reports every error itself (a full disk's, the meter's refusal) with its cause.
      let piped = false;
      stream.on("error", () => {
        if (!piped) fail(new QuireError("201"));
      });
      stream.on("limit", () => {
        // Stop at once: not one more byte of an oversized file is read (decisions §2 step 7).
        limitHit = true;
        stopReading();
        void opts.onLimit().then(fail, fail);
      });
      spooled = (async () => {
        await opts.beforeFile();
        aborted.signal.throwIfAborted();
        const meter = await opts.spoolMeter?.();
        aborted.signal.throwIfAborted();
        spoolPath = await opts.tempPath();
        aborted.signal.throwIfAborted();
        // Counted by the writer: a listener on the file stream would start it flowing before we are ready.
        const out = createWriteStream(spoolPath, { flags: "wx" });
        // A failed pipeline does not wait for the file's open: removed before that ends, the spool
        // file would be created after its removal (a refusal of the first chunk while the disk is slow).
        const closed = new Promise<void>((resolve) => out.once("close", () => resolve()));
        piped = true;
        const hash = opts.digest ? createHash(opts.digest) : undefined;
        const stages: Transform[] = [...(meter ? [metered(meter)] : []), ...(hash ? [hashing(hash)] : [])];
        try {
          if (stages.length === 0) await pipeline(stream, out, { signal: aborted.signal });
          else await pipeline([stream, ...stages, out], { signal: aborted.signal });
        } catch (err) {
          out.destroy();
          await closed;
          throw err;
        }
        return { path: spoolPath, size: out.bytesWritten, fileName, ...(hash ? { sha256: hash.digest("hex") } : {}) };
      })();
      spooled.catch(fail);
    });

    for (const event of ["fieldsLimit", "filesLimit", "partsLimit"] as const) bb.on(event, () => fail(new QuireError("201")));
    bb.on("error", () => fail(new QuireError("201")));
    req.on("aborted", () => fail(new Error("upload aborted by the client")));
    req.on("error", (err) => fail(err));

    bb.on("close", () => {
      if (settled || limitHit) return;
      void (async () => {
        try {
          const file = spooled ? await spooled : undefined;
          if (settled || limitHit) return;
          settled = true;
          // A form with no file chosen sends an empty part without a name: that is no file at all.
          if (file && file.size === 0 && file.fileName === "") {
            await rm(file.path, { force: true });
            resolve(undefined);
          } else {
            resolve(file);
          }
        } catch (err) {
          fail(err);
        }
      })();
    });
    req.pipe(bb);
  });
}
