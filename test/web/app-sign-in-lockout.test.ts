import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AppClient, appAccount, givePassword, TEST_APP_ENV, TEST_PASSWORD } from "../helpers/app-client.ts";
import { sample } from "../helpers/metrics-text.ts";
import { startTestServer, type TestServer } from "../helpers/test-server.ts";
import { dbOf } from "../helpers/store-db.ts";

const WRONG = "wrong password!";
const HERE = /Too many sign-in attempts for this username from your network/;
const GUARDED = /for now it can be used only from a browser or network that has signed in with it before/;

/**
 * Issue 23 item 3: nobody can lock another person out. Each client has its own address on this
 * machine (127.0.0.x as the connection's local address), as distinct clients on the network would.
 */
describe("sign-in lockout cannot be turned against the account's owner", { timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      ...TEST_APP_ENV,
      QUIRE_SIGNIN_ATTEMPTS_PER_ACCOUNT: "3",
      QUIRE_SIGNIN_ATTEMPTS_PER_ADDRESS: "6",
      QUIRE_SIGNIN_FAILURES_PER_ACCOUNT: "5",
    });
    await givePassword(server, "tester");
    await appAccount(server, "victim");
  });
  after(() => server?.close());
  const metric = async (name: string, labels: Record<string, string> = {}) => sample(await (await fetch(`${server.url}/metrics`)).text(), name, labels) ?? 0;

  test("guesses from one address lock out that address only: the owner, elsewhere, signs in", async () => {
    const attacker = new AppClient(server.url, "127.0.0.10");
    for (let i = 0; i < 3; i++) assert.equal((await attacker.signIn("tester", WRONG)).status, 401);
    const hashes = await metric("quire_app_password_hashes_total");
    const locked = await attacker.signIn("tester", TEST_PASSWORD);
    assert.equal(locked.status, 429, "the guesser is stopped, even with the right password");
    assert.equal(await metric("quire_app_password_hashes_total"), hashes, "refused before any hashing");
    assert.match(locked.body, HERE);
    const owner = new AppClient(server.url, "127.0.0.2");
    assert.equal((await owner.signIn("tester")).status, 303, "the owner, from another address, is not locked out");
    assert.equal((await owner.get("/app/documents")).status, 200);
  });

  test("guesses spread over many addresses meet the per-username bound; a known browser or network still signs in", async () => {
    // The owner signed in once from home (127.0.0.3): that browser has a device cookie, that address is known.
    const home = new AppClient(server.url, "127.0.0.3");
    assert.equal((await home.signIn("victim")).status, 303);
    const device = home.cookies.get("quire_device");
    assert.ok(device);
    await home.post("/app/sign-out");

    // A botnet: one wrong guess from each of many addresses (never near a per-address bound).
    const hashesBefore = await metric("quire_app_password_hashes_total");
    const answers: number[] = [];
    for (let i = 20; i < 32; i++) {
      const bot = new AppClient(server.url, `127.0.0.${i}`);
      const r = await bot.signIn("victim", WRONG);
      answers.push(r.status);
      if (r.status === 429) assert.match(r.body, GUARDED);
    }
    assert.deepEqual(answers.slice(0, 5), [401, 401, 401, 401, 401]);
    assert.deepEqual(answers.slice(5), Array(7).fill(429), "past 5 failures from unknown places, the rest are refused");
    assert.equal(await metric("quire_app_password_hashes_total"), hashesBefore + 5, "the refused attempts hashed nothing");
    assert.equal(await metric("quire_app_sign_ins_total", { outcome: "username_guarded" }), 7);

    // The owner's browser, now on another network, still signs in with its device cookie.
    const travelling = new AppClient(server.url, "127.0.0.50");
    travelling.cookies.set("quire_device", device);
    assert.equal((await travelling.signIn("victim")).status, 303, "a browser that signed in before passes");
    // So does any browser at the address the owner signed in from before.
    const otherBrowserAtHome = new AppClient(server.url, "127.0.0.3");
    assert.equal((await otherBrowserAtHome.signIn("victim")).status, 303, "a known address passes");
    // A new place, even with the right password, waits (the price of the bound; the message says why).
    const newPlace = new AppClient(server.url, "127.0.0.51");
    const refused = await newPlace.signIn("victim", TEST_PASSWORD);
    assert.equal(refused.status, 429);
    assert.match(refused.body, GUARDED);
    // Another account's device cookie, or a forged one, is not this account's.
    const forged = new AppClient(server.url, "127.0.0.52");
    // (The MAC's first character changed: its last one carries two bits a decoder ignores.)
    const mac = device.lastIndexOf(".") + 1;
    forged.cookies.set("quire_device", device.slice(0, mac) + (device[mac] === "A" ? "B" : "A") + device.slice(mac + 1));
    assert.equal((await forged.signIn("victim", TEST_PASSWORD)).status, 429);
    // The owner's other account is untouched by all this.
    assert.equal((await new AppClient(server.url, "127.0.0.53").signIn("tester")).status, 303);
  });

  test("the per-address bound still stops one address trying many usernames", async () => {
    const c = new AppClient(server.url, "127.0.0.60");
    for (let i = 0; i < 6; i++) assert.equal((await c.signIn(`someone-${i}`, WRONG)).status, 401);
    const r = await c.signIn("tester", TEST_PASSWORD);
    assert.equal(r.status, 429);
    assert.match(r.body, /Too many sign-in attempts from your network/);
    // Another address is not affected.
    assert.equal((await new AppClient(server.url, "127.0.0.61").signIn("tester")).status, 303);
  });

  test("a client that keeps no cookies cannot fill the session table with pre-sessions", async () => {
    const rows = async () => Number((await dbOf(server.services.store).selectFrom("appSessions").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n);
    const before = await rows();
    // 6 attempts per address → 12 new pre-sessions per address in 15 minutes.
    for (let i = 0; i < 12; i++) {
      const r = await new AppClient(server.url, "127.0.0.70").get("/app/sign-in");
      assert.equal(r.status, 200);
      assert.ok(r.setCookies.some((c) => c.startsWith("quire_session=")));
    }
    const refused = await new AppClient(server.url, "127.0.0.70").get("/app/sign-in");
    assert.equal(refused.status, 429);
    assert.match(refused.body, /Too many sign-in attempts from your network/);
    assert.ok(!refused.setCookies.some((c) => c.startsWith("quire_session=")));
    assert.equal(await rows(), before + 12);
    // A browser that keeps its cookie reads the form again without a new row; another address is unaffected.
    const keeps = new AppClient(server.url, "127.0.0.71");
    for (let i = 0; i < 20; i++) assert.equal((await keeps.get("/app/sign-in")).status, 200);
    assert.equal(await rows(), before + 13);
  });
});
