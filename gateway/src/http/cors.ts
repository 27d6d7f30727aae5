// Browsers on an origin in ALLOWED_ORIGINS may call the developer endpoints (CONTRACT sections 1 and 4): such
// responses carry Access-Control-Allow-Origin, errors included (a console must be able to read a 401 or 403), and
// preflight requests are answered. Other origins get no CORS headers, and their preflight requests 403
// INVALID_SESSION_ORIGIN; identity-admission refuses their sessions with the same code anyway. No cookies are
// involved (bearer tokens), so no Allow-Credentials.
import type Router from '@koa/router';
import { AppError } from '#runtime/errors.ts';
import { isAllowedOrigin } from '#runtime/http/origins.ts';

/** The developer endpoints (CONTRACT section 2). */
export const DEVELOPER_PATHS = [
  '/api/developer/v1/access',
  '/api/developer/v1/console',
  '/api/developer/v1/records',
  '/api/developer/v1/audit',
  '/graphql',
] as const;
const isDeveloperPath = (path: string) => (DEVELOPER_PATHS as readonly string[]).includes(path);
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** Call before any developer route is added to the router, so that the headers are set ahead of the handlers. */
export function addDeveloperCors(router: Router, allowedOrigins: string[]): void {
  router.use(async (ctx, next) => {
    const origin = ctx.get('Origin');
    if (origin !== '' && isDeveloperPath(ctx.path)) {
      ctx.vary('Origin');
      if (isAllowedOrigin(origin, allowedOrigins)) {
        ctx.set('Access-Control-Allow-Origin', origin);
        ctx.set('Access-Control-Expose-Headers', 'X-Request-Id, Retry-After');
      }
    }
    await next();
  });
  // One OPTIONS route per known path: unknown paths keep answering 404. CORS rules apply only to requests that carry
  // Origin (CONTRACT section 10): a plain OPTIONS goes on to the router's own answer (200 with Allow).
  router.options([...DEVELOPER_PATHS], (ctx, next) => {
    const origin = ctx.get('Origin');
    if (origin === '') return next();
    if (!isAllowedOrigin(origin, allowedOrigins)) {
      throw new AppError('INVALID_SESSION_ORIGIN', 'This origin may not call the developer API.');
    }
    ctx.set('Access-Control-Allow-Methods', 'GET, POST');
    ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Request-Id, traceparent');
    ctx.set('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    ctx.status = 204;
  });
}
