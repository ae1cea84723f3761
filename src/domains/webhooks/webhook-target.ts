// Where deliveries may go: http(s) URLs without credentials, and (unless WEBHOOK_ALLOW_PRIVATE_TARGETS) only public
// addresses. Checked at creation and again at delivery, on the addresses the connection actually uses.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const PRIVATE_RANGES: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.88.99.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['2002::', 16, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

const privateAddresses = new BlockList();
for (const [network, prefix, type] of PRIVATE_RANGES) privateAddresses.addSubnet(network, prefix, type);

/** Loopback, private, link-local, shared, documentation, multicast and reserved ranges (IPv4-mapped IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return privateAddresses.check(address, family === 4 ? 'ipv4' : 'ipv6');
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
