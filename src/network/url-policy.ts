// The one rule for outbound URLs (tools, MCP servers, webhooks): absolute
// http(s), and never a private, loopback or link-local address unless the
// configuration allows the private network (DESIGN.md "Security").
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { InvalidArgumentError, PermissionDeniedError } from '../errors';

export interface UrlPolicyOptions {
  /** AGENTRT_ALLOW_PRIVATE_NETWORK: when true every address is allowed. */
  allowPrivateNetwork: boolean;
}

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata endpoints)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv4-mapped or NAT64 IPv6 address carries, if any. */
function embeddedIpv4(address: string): string | null {
  const match = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (match) return match[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** True for private, loopback, link-local, multicast and reserved addresses. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, 'ipv4');
  if (family !== 6) return false;
  const inner = embeddedIpv4(bare);
  return inner ? blocked.check(inner, 'ipv4') : blocked.check(bare, 'ipv6');
}

function isLocalHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Parses an outbound URL at write time: absolute http(s), no credentials, and
 * (unless allowed) no literal private address or `localhost`. Names that
 * resolve to private addresses are refused when connecting (guardedLookup).
 * @throws InvalidArgumentError naming `field`
 */
export function checkOutboundUrl(field: string, raw: string, options: UrlPolicyOptions): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw InvalidArgumentError.forField(field, 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw InvalidArgumentError.forField(field, 'must be an absolute http or https URL');
  if (url.username || url.password) throw InvalidArgumentError.forField(field, 'must not carry credentials; use headers with {{secrets.NAME}}');
  if (!options.allowPrivateNetwork && (isPrivateAddress(url.hostname) || isLocalHostname(url.hostname))) {
    throw InvalidArgumentError.forField(field, `${url.hostname} is a private, loopback or link-local address, which is not allowed`);
  }
  return url;
}

/**
 * Checks an address the service is about to connect to.
 * @throws PermissionDeniedError for a refused address
 */
export function assertAddressAllowed(host: string, address: string, options: UrlPolicyOptions): void {
  if (options.allowPrivateNetwork) return;
  if (isPrivateAddress(address) || isLocalHostname(host)) {
    throw new PermissionDeniedError(`refused to connect to ${host} (${address}): private, loopback and link-local addresses are not allowed`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` replacement for outbound sockets that refuses private
 * addresses after resolution, so a public name pointing inside is caught at
 * connect time (DNS rebinding included: the checked address is the one used).
 */
export function guardedLookup(options: UrlPolicyOptions) {
  return function guardedDnsLookup(hostname: string, lookupOptions: object, callback: LookupCallback): void {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      try {
        for (const entry of addresses) assertAddressAllowed(hostname, entry.address, options);
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, []);
      }
      if ((lookupOptions as { all?: boolean }).all) return callback(null, addresses);
      const first = addresses[0];
      return first ? callback(null, first.address, first.family) : callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
    });
  };
}
