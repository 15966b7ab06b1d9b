import { fileURLToPath } from "node:url";

/** The shared fixtures, used in place (never copied into the project). */
export const FIXTURES = fileURLToPath(new URL("../../../shared/fixtures/", import.meta.url));
export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
