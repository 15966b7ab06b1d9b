import ipaddr from "ipaddr.js";

/**
 * Which network addresses a server-side fetch may connect to. This is the SSRF rule: a user-supplied
 * URL must never reach this machine, the private network, or a cloud metadata service.
 *
 * The rule is an allowlist: an address is public only when ipaddr.js calls it `unicast` (for IPv6 also
 * inside 2000::/3, the only global unicast space IANA allocates), and it is not a known metadata address.
 * Anything unparseable or new to the library's tables is therefore refused, not allowed.
 */
export type AddressCategory = "public" | "loopback" | "private" | "linkLocal" | "metadata" | "special" | "invalid";

const METADATA = new Set(
  // ipaddr.js already refuses these by range; listed so a change in its tables cannot open them.
  ["169.254.169.254", "100.100.100.200", "192.0.0.192", "fd00:ec2::254"].map((a) => ipaddr.parse(a).toString()),
);

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");
// NAT64 well-known prefix: DNS64 networks (IPv6-only hosts) synthesise these for every IPv4-only public
// site, so the embedded IPv4 decides rather than refusing the whole prefix.
const NAT64_WELL_KNOWN = ipaddr.parseCIDR("64:ff9b::/96");
// Prefixes that embed an IPv4 address but are refused whatever it is (deprecated or local-use); the
// embedded address only picks the wording of the refusal.
const IPV4_COMPATIBLE = ipaddr.parseCIDR("::/96");
const SIX_TO_FOUR = ipaddr.parseCIDR("2002::/16");

export function classifyAddress(ip: string): AddressCategory {
  const addr = parseCanonical(ip);
  return addr ? classifyParsed(addr) : "invalid";
}

export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === "public";
}

/** Completes "The address resolves to …, which is not allowed." */
export function describeCategory(category: AddressCategory): string {
  switch (category) {
    case "loopback":
      return "a loopback address (this machine)";
    case "private":
      return "a private network address";
    case "linkLocal":
      return "a link-local address";
    case "metadata":
      return "a cloud metadata service address";
    case "invalid":
      return "an address that cannot be read";
    default:
      return "a reserved or special-purpose address";
  }
}

function parseCanonical(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    if (!ip.includes(":")) return ipaddr.IPv4.isValidFourPartDecimal(ip) ? ipaddr.IPv4.parse(ip) : undefined;
    // Round-trip through the WHATWG URL parser first: ipaddr.js reads the dotted "::a.b.c.d" form as
    // IPv4-mapped, while the same address written in hex is IPv4-compatible, so the two would differ.
    // A zone index only scopes a link-local address; dropping it leaves the address to be refused.
    const bare = ip.replace(/%.*$/, "").replace(/^\[|\]$/g, "");
    const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
    return ipaddr.IPv6.parse(canonical);
  } catch {
    return undefined;
  }
}

function classifyParsed(addr: ipaddr.IPv4 | ipaddr.IPv6): AddressCategory {
  if (METADATA.has(addr.toString())) return "metadata";
  if (addr.kind() === "ipv4") return classifyV4(addr as ipaddr.IPv4);
  const v6 = addr as ipaddr.IPv6;
  const range = v6.range();
  if (range === "loopback" || range === "unspecified") return range === "loopback" ? "loopback" : "special";
  if (v6.isIPv4MappedAddress()) return classifyV4(v6.toIPv4Address());
  if (v6.match(NAT64_WELL_KNOWN)) return classifyV4(embeddedV4(v6, 6));
  if (v6.match(IPV4_COMPATIBLE) || v6.match(SIX_TO_FOUR)) {
    const inner = classifyV4(embeddedV4(v6, v6.match(SIX_TO_FOUR) ? 1 : 6));
    return inner === "public" || inner === "invalid" ? "special" : inner;
  }
  switch (range) {
    case "uniqueLocal":
      return "private";
    case "linkLocal":
      return "linkLocal";
    case "unicast":
      return v6.match(GLOBAL_UNICAST_V6) ? "public" : "special";
    default:
      return "special";
  }
}

function classifyV4(addr: ipaddr.IPv4): AddressCategory {
  if (METADATA.has(addr.toString())) return "metadata";
  switch (addr.range()) {
    case "unicast":
      return "public";
    case "loopback":
      return "loopback";
    case "private":
    case "carrierGradeNat":
      return "private";
    case "linkLocal":
      return "linkLocal";
    default:
      return "special";
  }
}

/** The IPv4 address held in the two 16-bit parts starting at `part`. */
function embeddedV4(v6: ipaddr.IPv6, part: number): ipaddr.IPv4 {
  const hi = v6.parts[part] ?? 0;
  const lo = v6.parts[part + 1] ?? 0;
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}
