// Where a webhook may be sent (CONTRACT section 11.1): `https://` to public addresses on an allowed port only (443, 80
// and WEBHOOK_ALLOWED_PORTS), unless private addresses are allowed (the development default, or
// WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true: any scheme of the two, address and port). The URL is checked when an endpoint
// is created or changed (scheme, credentials, port, a host that names a loopback or private address, `localhost` with
// or without its trailing dot); the port and every address the host resolves to are checked again before each attempt
// connects (sender.ts), so a name that later resolves to a private address, or a URL stored under other settings, is
// refused too.
import { BlockList, isIP } from 'node:net';
import { AppError } from '#runtime/errors.ts';

export const WEBHOOK_URL_LENGTH_MAX = 2048;

// Special-purpose ranges (IANA IPv4 and IPv6 special-purpose address registries) that are not the public internet.
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
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
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // The unspecified and loopback addresses, and the deprecated IPv4-compatible form (::127.0.0.1 is ::7f00:1).
  ['::', 96],
  // IPv4-translated addresses (SIIT: ::ffff:0:127.0.0.1). IPv4-mapped ones (::ffff:127.0.0.1) are checked as their
  // IPv4 address by BlockList itself.
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address (v4 or v6, IPv4-mapped v6 as its v4) is a public internet address. */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped ? mapped[1]! : address;
  const family = isIP(ip);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** Ports a webhook may be sent to when private addresses are not allowed, besides WEBHOOK_ALLOWED_PORTS. */
export const WEBHOOK_DEFAULT_PORTS: readonly number[] = [443, 80];

/** Where webhooks may go: private addresses (and then any port), or the ports allowed for public ones. */
export interface WebhookAddressPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_ADDRESSES (the development default): http://, loopback and private addresses, any port. */
  allowPrivateAddresses: boolean;
  /** 443, 80 and WEBHOOK_ALLOWED_PORTS. */
  allowedPorts: readonly number[];
}

/** WEBHOOK_ALLOWED_PORTS (comma-separated ports, 1..65535) added to the default 443 and 80. */
export function parseAllowedPorts(text: string | undefined): number[] {
  const ports = new Set(WEBHOOK_DEFAULT_PORTS);
  for (const item of (text ?? '').split(',')) {
    const trimmed = item.trim();
    if (trimmed === '') continue;
    const port = /^[0-9]{1,5}$/.test(trimmed) ? Number(trimmed) : Number.NaN;
    if (!(port >= 1 && port <= 65_535)) {
      throw new Error(`WEBHOOK_ALLOWED_PORTS must be comma-separated ports 1..65535, not ${JSON.stringify(trimmed)}`);
    }
    ports.add(port);
  }
  return [...ports];
}

/** The port a URL connects to: its own, or its scheme's default. */
export function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'http:' ? 80 : 443;
}

/** The rule a URL's port breaks, if it does (only when private addresses are not allowed). */
export function portProblem(url: URL, policy: WebhookAddressPolicy): string | undefined {
  if (policy.allowPrivateAddresses || policy.allowedPorts.includes(portOf(url))) return undefined;
  return `port ${portOf(url)} is not allowed (443, 80 and WEBHOOK_ALLOWED_PORTS: ${policy.allowedPorts.join(', ')})`;
}

/** A host name that means this machine: `localhost` and its subdomains, with or without the trailing dot. */
function isLocalhostName(host: string): boolean {
  const name = host.replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

const refuse = (rule: string) => new AppError('INVALID_REQUEST', `url: ${rule}`);

/**
 * Checks an endpoint URL before it is stored; answers it normalized (WHATWG URL). Refusals are 400 INVALID_REQUEST
 * naming the rule.
 */
export function checkWebhookUrl(text: string, policy: WebhookAddressPolicy): string {
  if (text.length > WEBHOOK_URL_LENGTH_MAX) throw refuse(`must be at most ${WEBHOOK_URL_LENGTH_MAX} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must be an absolute http(s) URL');
  if (url.username || url.password) throw refuse('must not carry credentials');
  if (url.hash) throw refuse('must not have a fragment');
  if (!policy.allowPrivateAddresses) {
    const rule =
      'must be https:// to a public address (loopback, private and http:// URLs only on the development default or ' +
      'with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true)';
    if (url.protocol !== 'https:') throw refuse(rule);
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (isLocalhostName(host)) throw refuse(rule);
    if (isIP(host) !== 0 && !isPublicAddress(host)) throw refuse(rule);
    const port = portProblem(url, policy);
    if (port) throw refuse(port);
  }
  return url.href;
}
