// Who may use the console's development sign-in (POST /console/dev-session): a browser or tool on this machine,
// talking to the server directly. It signs a session for any e-mail without a credential, so anything that could
// come from elsewhere is refused (docs/identity.md, "The development identity provider"):
// - the TCP peer is not a loopback address (127.0.0.0/8, ::1, or either mapped into IPv6);
// - a proxy sits in between (Forwarded, X-Forwarded-*, X-Real-IP): the browser may be anywhere;
// - the Host is not a loopback name or address (a DNS-rebinding page names its own host);
// - an Origin other than the request's own (another site's page in a browser on this machine).
import { isIP } from 'node:net';
import type Koa from 'koa';
import { AppError } from '#runtime/errors.ts';

const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip'];

/** A loopback IPv4 or IPv6 address, as a socket reports it (IPv4-mapped IPv6 included). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.toLowerCase().replace(/^::ffff:/, '');
  if (isIP(plain) === 4) return plain.startsWith('127.');
  return plain === '::1' || plain === '0:0:0:0:0:0:0:1';
}

/** The hostname of a Host header (port and IPv6 brackets removed), lowercased. */
function hostnameOf(host: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  if (bracketed) return (bracketed[1] as string).toLowerCase();
  return host.replace(/:\d+$/, '').toLowerCase();
}

/** A Host header that names this machine's loopback: localhost (and *.localhost, RFC 6761), 127.x.y.z or ::1. */
export function isLoopbackHost(host: string): boolean {
  const name = hostnameOf(host);
  return name === 'localhost' || name.endsWith('.localhost') || isLoopbackAddress(name);
}

/** Why a request is not a direct request from this machine, or undefined when it is one. */
export function notLocalReason(request: {
  remoteAddress: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}): string | undefined {
  if (!isLoopbackAddress(request.remoteAddress)) return 'the client is not on this machine';
  if (PROXY_HEADERS.some((name) => request.headers[name] !== undefined)) return 'the request came through a proxy';
  const host = request.headers.host;
  if (typeof host !== 'string' || !isLoopbackHost(host)) return 'the Host is not a loopback name';
  const origin = request.headers.origin;
  if (origin !== undefined && String(origin).toLowerCase() !== `http://${host.toLowerCase()}`) {
    return 'the Origin is another site';
  }
  return undefined;
}

/** Route middleware: 403 DEV_SESSION_LOCAL_ONLY unless the request comes straight from this machine. */
export const localOnly: Koa.Middleware = async (ctx, next) => {
  const reason = notLocalReason({ remoteAddress: ctx.req.socket.remoteAddress, headers: ctx.req.headers });
  if (reason) {
    ctx.state.log?.warn({ remoteAddress: ctx.req.socket.remoteAddress, reason }, 'development sign-in refused');
    throw new AppError(
      'DEV_SESSION_LOCAL_ONLY',
      `The development sign-in answers only a browser on the server's own machine (${reason}).`,
    );
  }
  await next();
};
