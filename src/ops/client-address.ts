import ipaddr from "ipaddr.js";

/**
 * The unit one client is counted in: an IPv4 address, or an IPv6 /64 (what one subscriber is
 * usually given, so a client cannot multiply its share by changing its last 64 bits).
 */
export function addressGroup(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address); // an IPv4-mapped IPv6 address becomes IPv4
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(":")}::/64`;
}
