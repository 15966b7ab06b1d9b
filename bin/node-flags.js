// The flags Node.js runs Quire with, however it is started: the `quire` executable's first line,
// `npm start` and `npm run quire`, and the image's ENTRYPOINT (test/cli/node-flags.test.ts holds
// each of them to this list, and runs the executable to see V8 take them).
//
// --min-semi-space-size=16: V8 shrinks the young generation of a process that has been quiet to
// 1 MiB, and grows it back only by doubling, as objects survive its collections. A server taking
// traffic again after a quiet spell then collected garbage three to seven times as often for tens
// of seconds, and spent up to half as much processor time again on each request. 16 MiB is the
// size Node 20's V8 grows it to under load and never beyond (docs/scaling.md, "Operating notes").
export const NODE_FLAGS = ["--min-semi-space-size=16"];
