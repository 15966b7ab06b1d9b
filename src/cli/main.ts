import { loadConfig, ConfigError } from "../config.ts";

// Each command's code is loaded only when it runs: `quire worker` never loads the HTTP stack, and
// `quire --help` loads nothing but this file and the configuration.

const USAGE = `usage: quire <command>
  serve [--no-worker]       run the API and, unless --no-worker, a conversion worker (npm start)
  worker                    run conversion workers only, against the same store and blobs
  accounts create <user> [--password]
                            create an account and print its apiKey and apiSecret
                            (--password: also the web app's password, read from stdin)
  accounts set-password <user>
                            set the web app's password (read from stdin)
  accounts add-key <user>   add another key to an account
  accounts list             list accounts and their active keys
  accounts revoke-key <key> revoke a key
  accounts reseal           seal every apiSecret with the first QUIRE_SECRET_KEY (after a rotation)
  pages reencode [--document <id>] [--force]
                            make every page's reading variants (WebP widths) of published
                            documents in the background (a worker's jobs); --force makes the
                            stored ones again too (today's encoding replaces the old)
  upload <file|url>...      upload documents; --wait follows their conversion (quire upload --help)`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // The upload command is a client: it needs no server configuration.
  if (command === "upload") {
    const { uploadCommand } = await import("./upload-command.ts");
    return uploadCommand(rest, process.env);
  }
  if (command === undefined || command === "help" || command === "--help") {
    process.stderr.write(`${USAGE}\n`);
    return 0;
  }
  const config = loadConfig();
  switch (command) {
    case "serve": {
      const { serveCommand } = await import("./serve-command.ts");
      await serveCommand(config, { worker: !rest.includes("--no-worker") });
      return -1; // keeps running
    }
    case "worker": {
      const { workerCommand } = await import("./worker-command.ts");
      await workerCommand(config);
      return -1;
    }
    case "accounts": {
      const [{ openStore }, { accountsCommand }] = await Promise.all([import("../store/open-store.ts"), import("./accounts-command.ts")]);
      const store = await openStore(config.databaseUrl, { secretKeys: config.secretKeys });
      try {
        return await accountsCommand(store, rest, { passwordHashCost: config.passwordHashCost });
      } finally {
        await store.close();
      }
    }
    case "pages": {
      const [{ openStore }, { pagesCommand }] = await Promise.all([import("../store/open-store.ts"), import("./pages-command.ts")]);
      const store = await openStore(config.databaseUrl, { secretKeys: config.secretKeys });
      try {
        return await pagesCommand(store, rest);
      } finally {
        await store.close();
      }
    }
    default:
      process.stderr.write(`${USAGE}\n`);
      return 2;
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
