/**
 * The web app's sign-in as the person waiting sees it (issue 26 item 9: 3.2 s, 5.3 s for a wrong
 * password). Server time of `POST /app/sign-in` through real HTTP, median of a few runs each: a
 * right and a wrong password for an account whose hash has the settings of earlier versions
 * (scrypt N = 2^17, r = 8, p = 1: the baseline), the same for today's (N = 2^14, r = 8, p = 5,
 * OWASP's equally strong setting, src/domain/passwords.ts), and an unknown username.
 *
 * `npm run bench -- sign-in`. The old hash is made again before every run of it, since a right
 * password rehashes it with today's settings after answering.
 */
import { setPassword, createAccount } from "../src/accounts/account-admin.ts";
import { AppClient, TEST_PASSWORD } from "../test/helpers/app-client.ts";
import { startTestServer } from "../test/helpers/test-server.ts";

const RUNS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchSignIn(): Promise<void> {
  // Today's settings are the default: no QUIRE_PASSWORD_HASH_COST here.
  const server = await startTestServer({ QUIRE_SIGNIN_ATTEMPTS_PER_ACCOUNT: "10000", QUIRE_SIGNIN_ATTEMPTS_PER_ADDRESS: "10000", QUIRE_SIGNIN_FAILURES_PER_ACCOUNT: "10000" });
  try {
    const store = server.services.store;
    await createAccount(store, "today");
    await setPassword(store, "today", TEST_PASSWORD);
    const once = async (username: string, password: string) => {
      const c = new AppClient(server.url);
      await c.get("/app/sign-in");
      const t = performance.now();
      const answer = await c.post("/app/sign-in", { username, password });
      const ms = performance.now() - t;
      if (answer.status !== (password === TEST_PASSWORD && username !== "nobody" ? 303 : 401)) throw new Error(`unexpected ${answer.status} for ${username}`);
      return ms;
    };
    const cases: Array<{ label: string; username: string; password: string; old?: boolean }> = [
      { label: "earlier settings (2^17, p 1), right password", username: "tester", password: TEST_PASSWORD, old: true },
      { label: "earlier settings (2^17, p 1), wrong password", username: "tester", password: "not the password", old: true },
      { label: "today's settings (2^14, p 5), right password", username: "today", password: TEST_PASSWORD },
      { label: "today's settings (2^14, p 5), wrong password", username: "today", password: "not the password" },
      { label: "unknown username", username: "nobody", password: "not the password" },
    ];
    const times = cases.map(() => [] as number[]);
    // Interleaved, each after the same pause (a right password's rehash, the old hash made again,
    // have finished by then): every case sees the machine alike.
    for (let i = 0; i < RUNS; i++) {
      for (const [k, c] of cases.entries()) {
        if (c.old) await setPassword(store, "tester", TEST_PASSWORD, 17);
        await new Promise((r) => setTimeout(r, 1500));
        times[k]!.push(await once(c.username, c.password));
      }
    }
    const rows: Array<[string, number]> = cases.map((c, k) => [c.label, median(times[k]!)]);
    process.stdout.write(`POST /app/sign-in, median of ${RUNS}, server in this process (a busy machine makes every figure larger)\n`);
    for (const [label, ms] of rows) process.stdout.write(`${label.padEnd(48)} ${ms.toFixed(0).padStart(6)} ms\n`);
    const base = rows[0]![1];
    process.stdout.write(`ratio today/earlier, right password: ${(rows[2]![1] / base).toFixed(2)}x; wrong/right today: ${(rows[3]![1] / rows[2]![1]).toFixed(2)}x; unknown/right today: ${(rows[4]![1] / rows[2]![1]).toFixed(2)}x\n`);
  } finally {
    await server.close();
  }
}
