// Where deliveries may go: http(s) URLs without credentials, and (unless WEBHOOK_ALLOW_PRIVATE_TARGETS) only public
// addresses. Checked at creation and again at delivery, on the addresses the connection actually uses.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

// Not public: private, shared, loopback, link-local, documentation, benchmarking, multicast and reserved (IANA
// special-purpose registry).
const PRIVATE_IPV4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

// Inside global unicast (2000::/3), the ranges that are not public: IETF protocol assignments (Teredo, benchmarking,
// ORCHID) and documentation. Everything outside 2000::/3 is refused (unspecified, loopback, IPv4-compatible,
// IPv4-translated, local-use NAT64, discard, unique-local, link-local, site-local, multicast), except the two
// forms that carry an IPv4 address, judged by that address (IPv4-mapped and well-known NAT64); 6to4 is judged so too.
const RESERVED_IPV6: Array<[string, number]> = [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['3fff::', 20],
];

const privateIpv4 = new BlockList();
for (const [network, prefix] of PRIVATE_IPV4) privateIpv4.addSubnet(network, prefix, 'ipv4');
const reservedIpv6 = new BlockList();
for (const [network, prefix] of RESERVED_IPV6) reservedIpv6.addSubnet(network, prefix, 'ipv6');

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function groupsOf(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const gap = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...gap, ...right].map((group) => parseInt(group, 16));
}

/** The IPv4 address an IPv6 address stands for: IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16). */
function embeddedIpv4(groups: readonly number[]): string | undefined {
  const ipv4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 5) && groups[5] === 0xffff) return ipv4(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return ipv4(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return ipv4(groups[1]!, groups[2]!);
  return undefined;
}

/** Anything but a public unicast address (IPv4 inside IPv6 judged by its IPv4), and anything that is no address. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return privateIpv4.check(bare, 'ipv4');
  if (family !== 6) return true;
  const groups = groupsOf(bare);
  const ipv4 = embeddedIpv4(groups);
  if (ipv4 !== undefined) return privateIpv4.check(ipv4, 'ipv4');
  if ((groups[0]! & 0xe000) !== 0x2000) return true;
  return reservedIpv6.check(bare, 'ipv6');
}

export class TargetRefusedError extends Error {}

const RESOLVE_TIMEOUT_MS = 5_000;

function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new TargetRefusedError(`${hostname} did not resolve in time`)), RESOLVE_TIMEOUT_MS);
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      clearTimeout(timer);
      if (error) reject(new TargetRefusedError(`${hostname} does not resolve`));
      else resolve(addresses);
    });
  });
}

/** The refusal reason for a target, or undefined when deliveries may go there. */
export async function refuseTarget(rawUrl: string, allowPrivateTargets: boolean): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry credentials; receivers verify the signature instead';
  if (allowPrivateTargets) return undefined;
  const host = hostOf(url);
  if (isIP(host)) return isPrivateAddress(host) ? 'points to a private, loopback or link-local address' : undefined;
  try {
    const addresses = await resolveAll(host);
    if (addresses.length === 0) return 'does not resolve';
    if (addresses.some((a) => isPrivateAddress(a.address))) return 'resolves to a private, loopback or link-local address';
  } catch (error) {
    return error instanceof TargetRefusedError ? error.message.replace(`${host} `, '') : 'does not resolve';
  }
  return undefined;
}

/**
 * A DNS lookup for the delivery's socket that refuses private answers, so the check and the connection see the same
 * addresses (no window for a rebinding answer between them).
 */
export function guardedLookup(allowPrivateTargets: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 4);
      const list = addresses as LookupAddress[];
      if (!allowPrivateTargets && list.some((a) => isPrivateAddress(a.address))) {
        return callback(new TargetRefusedError(`${hostname} resolves to a private, loopback or link-local address`), '', 4);
      }
      if (list.length === 0) return callback(new TargetRefusedError(`${hostname} does not resolve`), '', 4);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** For IP-literal hosts, which skip the lookup: the refusal reason, if any. */
export function refuseLiteralTarget(url: URL, allowPrivateTargets: boolean): string | undefined {
  const host = hostOf(url);
  if (allowPrivateTargets || !isIP(host)) return undefined;
  return isPrivateAddress(host) ? `${host} is a private, loopback or link-local address` : undefined;
}
