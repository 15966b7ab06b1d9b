#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so `quire` works straight from a checkout.
import { register } from "tsx/esm/api";
register();
await import("../src/cli/main.ts");
