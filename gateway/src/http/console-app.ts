// The developer web console (docs/console-ui.md): the single-page app built from console/ into console/dist
// (committed; `npm run check` verifies it is up to date), served at GET /console/. The app only calls POST /graphql.
//
// GET /console/config.json tells the app how to sign in:
// - `dev`: the local development identity provider is trusted (the embedded development default, or
//   UNSAFE_DEV_IDENTITY_PROVIDER=true, and no DEVELOPER_JWKS / DEVELOPER_JWKS_URL): POST /console/dev-session signs a
//   developer session for a typed e-mail, after the platform switch, for a browser on this machine only
//   (local-only.ts: 403 DEV_SESSION_LOCAL_ONLY otherwise). That route does not exist otherwise.
// - `oidc`: the OpenID Connect authorization-code flow with PKCE against DEVELOPER_JWT_ISSUER, with the client id
//   CONSOLE_OIDC_CLIENT_ID and the scopes CONSOLE_OIDC_SCOPE (default "openid email").
// - `none`: neither is configured; the console explains how to configure it.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type Koa from 'koa';
import { AppError } from '#runtime/errors.ts';
import { readJsonBody } from '#runtime/http/body.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import { localOnly } from './local-only.ts';

export const CONSOLE_DIST = fileURLToPath(new URL('../../../console/dist/', import.meta.url));
const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** The encodings the build writes beside each text file (console/vite.config.ts), in order of preference. */
const PRECOMPRESSED = [
  { name: 'br', suffix: '.br' },
  { name: 'gzip', suffix: '.gz' },
] as const;
const FAVICON = 'favicon.svg';

export type ConsoleSignIn =
  | { kind: 'dev' }
  | { kind: 'oidc'; authority: string; clientId: string; scope: string }
  | { kind: 'none' };

export interface ConsoleAppOptions {
  signIn: ConsoleSignIn;
  /** The platform switch: the development sign-in is refused while the platform is disabled. */
  platform: PlatformSwitch;
  /** Present only in dev mode: signs a developer session for an e-mail (the local identity provider). */
  signDevSession?: (email: string) => Promise<string>;
  /** The built app's folder (tests may point elsewhere). */
  distDir?: string;
}

/** Resolves a request path under /console/ to a file of the build, or undefined (no traversal outside it). */
function fileFor(distDir: string, relative: string): string | undefined {
  if (relative === '' || relative.includes('\0')) return undefined;
  const file = normalize(distDir + relative);
  if (!file.startsWith(distDir.endsWith(sep) ? distDir : distDir + sep)) return undefined;
  try {
    return statSync(file).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The index page's Content-Security-Policy. `connect-src` admits the gateway itself (GraphQL over HTTP and its
 * same-origin WebSocket) and, with OIDC, only the issuer's origin (DEVELOPER_JWT_ISSUER, whatever its scheme: a local
 * provider on plain http in development or tests), where the page reads the discovery document and redeems the
 * code: a token taken by injected script has nowhere else to go. A provider whose token endpoint sits on another
 * origin than its issuer needs that origin as well (not supported: docs/console-ui.md).
 */
export function consoleContentSecurityPolicy(signIn: ConsoleSignIn): string {
  const connect = ["'self'"];
  if (signIn.kind === 'oidc') {
    const origin = URL.parse(signIn.authority)?.origin;
    if (origin && origin !== 'null') connect.push(origin);
  }
  return `default-src 'self'; connect-src ${connect.join(' ')}; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'`;
}

export function addConsoleApp(router: Router, options: ConsoleAppOptions): void {
  const distDir = options.distDir ?? CONSOLE_DIST;
  const contentSecurityPolicy = consoleContentSecurityPolicy(options.signIn);
  router.get('/console/config.json', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { signIn: options.signIn };
  });
  if (options.signDevSession) {
    const sign = options.signDevSession;
    const noStore = async (ctx: Koa.Context, next: Koa.Next) => {
      // Set before any check, so that refusals are not cached either.
      ctx.set('Cache-Control', 'no-store');
      await next();
    };
    router.post(
      '/console/dev-session',
      noStore,
      platformGate(options.platform, 'AUTH_UNAVAILABLE'),
      localOnly,
      async (ctx) => {
        const body = (await readJsonBody(ctx)) as { email?: unknown } | null;
        const email = typeof body === 'object' && body !== null ? body.email : undefined;
        if (typeof email !== 'string' || email.length > 320 || !EMAIL_PATTERN.test(email)) {
          throw new AppError('INVALID_REQUEST', 'email must be an e-mail address.');
        }
        ctx.body = { data: { token: await sign(email), email } };
      },
    );
  }
  // '/console' also matches '/console/' (the router ignores a trailing slash).
  router.get(['/console', '/console/{*path}'], (ctx) => {
    if (ctx.path === '/console') {
      ctx.status = 308;
      ctx.redirect('/console/');
      return;
    }
    let relative: string;
    try {
      relative = decodeURIComponent(ctx.path.slice('/console/'.length));
    } catch {
      throw new AppError('NOT_FOUND', 'No such file.');
    }
    const index = `${distDir}index.html`;
    if (!existsSync(index)) {
      throw new AppError('CONSOLE_NOT_BUILT', 'The console is not built: run npm run console:build.');
    }
    // Hashed assets never change; index.html and anything else is revalidated.
    const found = fileFor(distDir, relative);
    if (!found && relative.startsWith('assets/')) throw new AppError('NOT_FOUND', 'No such file.');
    const file = found ?? index;
    ctx.set(
      'Cache-Control',
      relative.startsWith('assets/') && file !== index ? 'public, max-age=31536000, immutable' : 'no-cache',
    );
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    if (file === index) {
      ctx.set('Content-Security-Policy', contentSecurityPolicy);
    }
    sendFile(ctx, file);
  });
  // The browser asks for the site's icon at the root whatever the page links: the console's own (an SVG).
  router.get('/favicon.ico', (ctx) => {
    const file = fileFor(distDir, FAVICON);
    if (!file) throw new AppError('NOT_FOUND', 'No such file.');
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('X-Content-Type-Options', 'nosniff');
    sendFile(ctx, file);
  });
}

/**
 * Sends a file of the build, its pre-compressed copy (written beside it at build time: name.br, name.gz) when the
 * request accepts that encoding, Brotli first. `Vary: Accept-Encoding` for any file that has a compressed copy, so
 * that a cache keeps the encodings apart.
 */
function sendFile(ctx: Koa.Context, file: string): void {
  ctx.type = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
  const copies = PRECOMPRESSED.filter((encoding) => existsSync(`${file}${encoding.suffix}`));
  if (copies.length > 0) ctx.vary('Accept-Encoding');
  // Brotli when the request accepts it at all (q > 0), whatever order the header lists them in: it is the smaller.
  const copy = copies.find((c) => ctx.acceptsEncodings(c.name) === c.name);
  if (copy) {
    ctx.set('Content-Encoding', copy.name);
    ctx.body = readFileSync(`${file}${copy.suffix}`);
    return;
  }
  ctx.body = readFileSync(file);
}
