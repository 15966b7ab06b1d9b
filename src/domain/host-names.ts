/** A host name (letters, digits, dots, hyphens) or a bracketed IPv6 address, with an optional port: what a Host header may say. */
export const HOST_RE = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/;
