import { loadConfig, ConfigError } from "../config.ts";
import { openStore } from "../store/open-store.ts";
import { accountsCommand } from "./accounts-command.ts";
import { serveCommand } from "./serve-command.ts";
import { uploadCommand } from "./upload-command.ts";

const USAGE = `usage: quire <command>
  serve [--no-worker]       run the API and, unless --no-worker, a conversion worker (npm start)
  worker                    run conversion workers only, against the same store and blobs
  accounts create <user>    create an account and print its apiKey and apiSecret
  accounts add-key <user>   add another key to an account
  accounts list             list accounts and their active keys
  accounts revoke-key <key> revoke a key
  accounts reseal           seal every apiSecret with the first QUIRE_SECRET_KEY (after a rotation)
  upload <file|url> [...]   upload a document (see quire upload --help)`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // The upload command is a client: it needs no server configuration.
  if (command === "upload") return uploadCommand(rest, process.env);
  const config = loadConfig();
  switch (command) {
    case "serve":
      await serveCommand(config, { worker: !rest.includes("--no-worker") });
      return -1; // keeps running
    case "worker": {
      const { workerCommand } = await import("./worker-command.ts");
      await workerCommand(config);
      return -1;
    }
    case "accounts": {
      const store = await openStore(config.databaseUrl, { secretKeys: config.secretKeys });
      try {
        return await accountsCommand(store, rest);
      } finally {
        await store.close();
      }
    }
    default:
      process.stderr.write(`${USAGE}\n`);
      return command === undefined || command === "help" || command === "--help" ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`quire: ${err instanceof ConfigError ? err.message : (err as Error).message}\n`);
    process.exitCode = 1;
  },
);
