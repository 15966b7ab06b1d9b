import { buildApp } from "../../src/app.ts";
import { LocalBlobStore } from "../../src/blobs/local-blob-store.ts";
import { loadConfig } from "../../src/config.ts";
import { openStore } from "../../src/store/open-store.ts";

/**
 * The API of `quire serve --no-worker` (buildApp over the configured store and local blob folder),
 * for the crash test that starts and SIGKILLs twenty servers: openServices would also load the S3
 * client, which a local-only server does not need and which costs each start-up most of a second.
 * Prints the same "Quire listening on <url> " line as `quire serve`.
 */
const config = loadConfig();
const store = await openStore(config.databaseUrl, { secretKeys: config.secretKeys });
const blobs = new LocalBlobStore(config.blobDir);
const app = await buildApp({ deps: { config, store, blobs }, spool: blobs });
const address = await app.listen({ host: config.host, port: config.port });
process.stdout.write(`Quire listening on ${address} (API child)\n`);
