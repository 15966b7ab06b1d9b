import { randomInt } from "node:crypto";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** 32 characters of [a-z0-9] (decisions §3), from the CSPRNG without modulo bias. */
export function newApiToken(): string {
  let s = "";
  for (let i = 0; i < 32; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return s;
}
