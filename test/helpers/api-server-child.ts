import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { openServices } from "../../src/services.ts";

/**
 * The API of `quire serve --no-worker` (buildApp over the configured services, without the demo
 * account, logging and metrics), for the crash test that starts and SIGKILLs twenty servers.
 * Prints the same "Quire listening on <url> " line as `quire serve`.
 */
const config = loadConfig();
const { store, blobs } = await openServices(config);
const app = await buildApp({ deps: { config, store, blobs }, spool: blobs });
const address = await app.listen({ host: config.host, port: config.port });
process.stdout.write(`Quire listening on ${address} (API child)\n`);
