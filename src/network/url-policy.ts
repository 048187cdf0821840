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

/** Ends every refusal of a private address: the setting that lifts the rule, so the message names its own fix. */
const ALLOW_PRIVATE_NETWORK_HINT = 'set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata endpoints)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 32], // Teredo (the IPv4 it reaches is obfuscated)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of a valid IPv6 address, in any notation (`::`, dotted IPv4 tail). */
function ipv6Groups(address: string): number[] {
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const text = tail
    ? `${address.slice(0, tail.index)}${((Number(tail[1]) << 8) | Number(tail[2])).toString(16)}:${((Number(tail[3]) << 8) | Number(tail[4])).toString(16)}`
    : address;
  const [head, rest] = text.split('::');
  const front = head ? head.split(':') : [];
  const back = rest ? rest.split(':') : [];
  const zeros = rest === undefined ? [] : Array<string>(8 - front.length - back.length).fill('0');
  return [...front, ...zeros, ...back].map((group) => parseInt(group, 16));
}

/**
 * The IPv4 address an IPv6 address carries, if any: IPv4-mapped (::ffff:0:0/96),
 * IPv4-compatible (::/96), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96)
 * and 6to4 (2002::/16), in any notation; these can all reach the IPv4 host.
 */
function embeddedIpv4(address: string): string | null {
  const groups = ipv6Groups(address);
  const zero = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  const ipv4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  if (zero(0, 5) && (groups[5] === 0 || groups[5] === 0xffff)) return ipv4(groups[6], groups[7]);
  if (zero(0, 4) && groups[4] === 0xffff && groups[5] === 0) return ipv4(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return ipv4(groups[6], groups[7]);
  if (groups[0] === 0x2002) return ipv4(groups[1], groups[2]);
  return null;
}

/**
 * Cloud instance-metadata endpoints (AWS, GCP, Azure, ECS task metadata): they
 * hand out credentials, so they stay refused even when
 * AGENTRT_ALLOW_PRIVATE_NETWORK lets tools reach private networks.
 */
const METADATA_ENDPOINTS = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', 'metadata.google.internal', 'metadata']);

/** True for a cloud metadata endpoint, by name or address (IPv4-in-IPv6 forms included). */
export function isMetadataEndpoint(hostOrAddress: string): boolean {
  const bare = hostOrAddress.replace(/^\[|\]$/g, '').replace(/%.*$/, '').replace(/\.$/, '').toLowerCase();
  if (METADATA_ENDPOINTS.has(bare)) return true;
  if (isIP(bare) !== 6) return false;
  const embedded = embeddedIpv4(bare);
  return (embedded !== null && METADATA_ENDPOINTS.has(embedded)) || ipv6Groups(bare).join(':') === ipv6Groups('fd00:ec2::254').join(':');
}

/** True for private, loopback, link-local, multicast and reserved addresses. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, 'ipv4');
  if (family !== 6) return false;
  const inner = embeddedIpv4(bare);
  return (inner !== null && blocked.check(inner, 'ipv4')) || blocked.check(bare, 'ipv6');
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
export function checkOutboundUrl(field: string, raw: string, options: UrlPolicyOptions, credentialsHint = 'use headers with {{secrets.NAME}}'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw InvalidArgumentError.forField(field, 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw InvalidArgumentError.forField(field, 'must be an absolute http or https URL');
  if (url.username || url.password) throw InvalidArgumentError.forField(field, `must not carry credentials; ${credentialsHint}`);
  if (isMetadataEndpoint(url.hostname)) throw InvalidArgumentError.forField(field, `${url.hostname} is a cloud metadata endpoint, which is never allowed`);
  if (!options.allowPrivateNetwork && (isPrivateAddress(url.hostname) || isLocalHostname(url.hostname))) {
    throw InvalidArgumentError.forField(field, `${url.hostname} is a private, loopback or link-local address; ${ALLOW_PRIVATE_NETWORK_HINT}`);
  }
  return url;
}

/**
 * Checks an address the service is about to connect to.
 * @throws PermissionDeniedError for a refused address
 */
export function assertAddressAllowed(host: string, address: string, options: UrlPolicyOptions): void {
  if (isMetadataEndpoint(host) || isMetadataEndpoint(address)) {
    throw new PermissionDeniedError(`refused to connect to ${host} (${address}): cloud metadata endpoints are never allowed`);
  }
  if (options.allowPrivateNetwork) return;
  if (isPrivateAddress(address) || isLocalHostname(host)) {
    throw new PermissionDeniedError(`refused to connect to ${host} (${address}), a private, loopback or link-local address; ${ALLOW_PRIVATE_NETWORK_HINT}`);
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
