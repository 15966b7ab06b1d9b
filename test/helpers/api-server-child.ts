import { startApiRole } from "../../src/api-role.ts";
import { loadConfig } from "../../src/config.ts";
import { openServices } from "../../src/services.ts";

/**
 * The API role of `quire serve --no-worker` (src/api-role.ts over the configured services, without
 * the demo account or the access log), for the crash test that starts and SIGKILLs twenty servers.
 * Prints the same "Quire listening on <url> " line as `quire serve`.
 */
const config = loadConfig();
const { address } = await startApiRole({ config, services: await openServices(config), logger: false });
process.stdout.write(`Quire listening on ${address} (API child)\n`);
