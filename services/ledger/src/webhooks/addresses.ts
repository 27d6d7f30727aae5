// Where a webhook may be sent (CONTRACT section 11.1): `https://` to public addresses only, unless private addresses
// are allowed (the development default, or WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true). The URL is checked when an endpoint
// is created or changed (scheme, credentials, a host that names a loopback or private address); every address the
// host resolves to is checked again before each attempt connects (worker.ts), so a name that later resolves to a
// private address is refused too.
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
  ['::', 128],
  ['::1', 128],
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

const refuse = (rule: string) => new AppError('INVALID_REQUEST', `url: ${rule}`);

/**
 * Checks an endpoint URL before it is stored; answers it normalized (WHATWG URL). Refusals are 400 INVALID_REQUEST
 * naming the rule.
 */
export function checkWebhookUrl(text: string, allowPrivateAddresses: boolean): string {
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
  if (!allowPrivateAddresses) {
    const rule =
      'must be https:// to a public address (loopback, private and http:// URLs only on the development default or ' +
      'with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true)';
    if (url.protocol !== 'https:') throw refuse(rule);
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (host === 'localhost' || host.endsWith('.localhost')) throw refuse(rule);
    if (isIP(host) !== 0 && !isPublicAddress(host)) throw refuse(rule);
  }
  return url.href;
}
