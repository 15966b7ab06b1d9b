import assert from "node:assert/strict";
import { test } from "node:test";
import { SignInLimit } from "../../src/web/app/sign-in-limit.ts";

/** The limiter's rules with a clock of the test's own (no waiting): what drains when, what is kept for whom. */
test("sign-in limits: each bound drains on its own clock; known addresses are per account, IPv6 by /64", () => {
  let now = 1_000_000;
  const limit = new SignInLimit({ perAccountAddress: 2, perAddress: 100, failuresPerAccount: 3 }, () => now);
  const from = (clientAddress: string, username = "victim", device?: string) => ({ username, clientAddress, device });

  // The owner signs in once from 2001:db8:1:2::5; any address of that /64 is known afterwards.
  assert.equal(limit.attempt(from("2001:db8:1:2::5")), "ok");
  limit.succeeded(from("2001:db8:1:2::5"));
  assert.ok(limit.knows(from("2001:db8:1:2:ffff::1")));
  assert.ok(!limit.knows(from("2001:db8:1:3::1")));
  assert.ok(!limit.knows(from("2001:db8:1:2::5", "someone-else")), "known to this account only");

  // Three failures from unknown addresses fill the per-username bound.
  for (const a of ["10.0.0.1", "10.0.0.2", "10.0.0.3"]) {
    assert.equal(limit.attempt(from(a)), "ok");
    limit.failed(from(a));
  }
  assert.equal(limit.attempt(from("10.0.0.4")), "username-guarded");
  assert.equal(limit.attempt(from("2001:db8:1:2::9")), "ok", "the known network passes");
  assert.equal(limit.attempt(from("10.0.0.5", "victim", "device-id")), "ok", "a device cookie passes");
  assert.equal(limit.attempt(from("10.0.0.4", "VICTIM ")), "username-guarded", "the username as typed, trimmed and lower-cased");
  // A known client's failures do not fill it.
  limit.failed(from("2001:db8:1:2::9"));
  // The per-username bound drains over an hour: one failure's worth after 20 minutes.
  now += 20 * 60_000 + 1;
  assert.equal(limit.attempt(from("10.0.0.4")), "ok");
  limit.failed(from("10.0.0.4"));
  assert.equal(limit.attempt(from("10.0.0.6")), "username-guarded");
  now += 60 * 60_000;
  assert.equal(limit.attempt(from("10.0.0.6")), "ok");

  // The per-(username, address) bound: 2 here, then one more every 7.5 minutes.
  assert.equal(limit.attempt(from("10.0.0.9", "other")), "ok");
  assert.equal(limit.attempt(from("10.0.0.9", "other")), "ok");
  assert.equal(limit.attempt(from("10.0.0.9", "other")), "username-here");
  assert.equal(limit.attempt(from("10.0.0.10", "other")), "ok", "another address is not affected");
  now += 7.5 * 60_000 + 1;
  assert.equal(limit.attempt(from("10.0.0.9", "other")), "ok");

  // A known address is forgotten after 90 days.
  now += 91 * 24 * 3600_000;
  assert.ok(!limit.knows(from("2001:db8:1:2::5")));
});
