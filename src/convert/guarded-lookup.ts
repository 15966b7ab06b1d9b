import { lookup as dnsLookup } from "node:dns";
import type { LookupFunction } from "node:net";

/**
 * The socket `lookup` of every server-side request to an address a user gave (URL uploads,
 * webhook deliveries): it resolves the name and refuses it when any of its addresses fails
 * `allowed` (every one is checked, since the socket may try any of them). The check runs inside
 * the connection's own lookup, so the addresses checked are the ones connected to and a DNS answer
 * cannot change between check and use. Literal IPs never reach a lookup: callers check those first.
 */
export function guardedLookup(allowed: (ip: string) => boolean, refuse: (ip: string) => Error): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "");
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`No address for ${hostname}`), { code: "ENOTFOUND" }), "");
      const denied = addresses.find((a) => !allowed(a.address));
      // The caller's error travels through net and http unchanged.
      if (denied) return callback(refuse(denied.address) as unknown as NodeJS.ErrnoException, "");
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}
