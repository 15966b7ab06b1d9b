/**
 * The SSRF rule lives in the domain (src/domain/address-policy.ts), so the API can refuse a literal
 * private address when a webhook is set and the fetch and webhook code check resolved ones by the
 * same rule. Re-exported here for the converters that import it from their own part.
 */
export { classifyAddress, describeCategory, isPublicAddress, type AddressCategory } from "../domain/address-policy.ts";
