// `node --import ./test/helpers/record-loads.mjs …` appends the URL of every module the process
// loads to the file named by QUIRE_TEST_LOADED_MODULES, so a test can see what a role loaded.
import { register } from "node:module";

register("./record-loads-hooks.mjs", import.meta.url, { data: { file: process.env.QUIRE_TEST_LOADED_MODULES } });
