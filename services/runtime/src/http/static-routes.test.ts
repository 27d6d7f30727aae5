import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { pino } from 'pino';
import { AppError } from '../errors.ts';
import { createMetrics } from '../metrics.ts';
import { createHttpApp } from './app.ts';
import { routesWithStaticPaths, staticChains } from './static-routes.ts';

const EVENTS = '/api/game-sdk/v2/events';

/** The error envelope's code. */
async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}

/**
 * The routes of the tests, on a fresh router: a router.use() layer first (as the gateway's CORS), a static POST with
 * two middleware (as the events route with its platform gate), static GETs, a parametrized route registered before
 * a static path it also matches, a CORS-like OPTIONS route that passes on, and a handler that calls next().
 */
function addRoutes(router: Router, trail: string[]): void {
  router.use(async (ctx, next) => {
    trail.push(`use ${String((ctx as { _matchedRoute?: unknown })._matchedRoute)}`);
    ctx.set('X-Used', '1');
    await next();
  });
  router.post(
    EVENTS,
    async (ctx, next) => {
      trail.push(`gate ${String((ctx as { _matchedRoute?: unknown })._matchedRoute)}`);
      if (ctx.get('X-Gate') === 'closed') throw new AppError('retry_later', 'closed');
      await next();
    },
    (ctx) => {
      trail.push(`handler ${JSON.stringify(ctx.params)}`);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { data: { ok: true } };
    },
  );
  router.get('/items/:id', (ctx) => {
    ctx.body = { item: ctx.params.id };
  });
  router.get('/items/special', (ctx) => {
    ctx.body = { special: true };
  });
  router.get('/plain', (ctx) => {
    ctx.body = { plain: true };
  });
  router.get('/passes-on', async (_ctx, next) => {
    await next();
  });
  router.options('/plain', (ctx, next) => (ctx.get('Origin') === '' ? next() : undefined));
}

async function serve(app: Koa): Promise<{ url: string; server: Server }> {
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A Koa app with the routes behind `dispatch` and the router's allowedMethods, recording the route label. */
function appWith(dispatch: 'router' | 'static', trail: string[]): Koa {
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      ctx.status = (error as AppError).status ?? 500;
      ctx.body = { error: (error as AppError).code };
    }
    ctx.set('X-Route', String((ctx as { _matchedRoute?: unknown })._matchedRoute ?? 'unmatched'));
  });
  const router = new Router();
  addRoutes(router, trail);
  app.use(dispatch === 'router' ? router.routes() : routesWithStaticPaths(router));
  app.use(router.allowedMethods());
  return app;
}

const REQUESTS: Array<{ method: string; path: string; headers?: Record<string, string>; body?: string }> = [
  { method: 'POST', path: EVENTS, body: '{}' },
  { method: 'POST', path: EVENTS, headers: { 'X-Gate': 'closed' } },
  { method: 'POST', path: `${EVENTS}/` },
  { method: 'POST', path: EVENTS.toUpperCase() },
  { method: 'POST', path: `${EVENTS}?a=1` },
  { method: 'GET', path: EVENTS },
  { method: 'PUT', path: EVENTS },
  { method: 'OPTIONS', path: EVENTS },
  { method: 'PROPFIND', path: EVENTS },
  { method: 'GET', path: '/plain' },
  { method: 'HEAD', path: '/plain' },
  { method: 'OPTIONS', path: '/plain' },
  { method: 'OPTIONS', path: '/plain', headers: { Origin: 'https://example.com' } },
  { method: 'DELETE', path: '/plain' },
  { method: 'GET', path: '/items/special' },
  { method: 'GET', path: '/items/7' },
  { method: 'GET', path: '/passes-on' },
  { method: 'GET', path: '/nowhere' },
];

async function answers(dispatch: 'router' | 'static') {
  const trail: string[] = [];
  const { url, server } = await serve(appWith(dispatch, trail));
  try {
    const seen = [];
    for (const r of REQUESTS) {
      trail.length = 0;
      const res = await fetch(`${url}${r.path}`, { method: r.method, headers: r.headers, body: r.body });
      const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date'));
      seen.push({
        request: `${r.method} ${r.path}`,
        status: res.status,
        headers,
        body: await res.text(),
        trail: [...trail],
      });
    }
    return seen;
  } finally {
    server.close();
  }
}

describe('routesWithStaticPaths', () => {
  test('answers every request as the router does: status, headers, body, route label, middleware order', async () => {
    const viaRouter = await answers('router');
    const viaStatic = await answers('static');
    // ctx.params: {} from the router, unset on a static path (no handler of a static route reads it).
    const withoutParams = (seen: typeof viaRouter) =>
      seen.map((s) => ({ ...s, trail: s.trail.map((t) => t.replace(/^handler .*/, 'handler')) }));
    expect(withoutParams(viaStatic)).toEqual(withoutParams(viaRouter));
    const events = viaStatic[0]!;
    expect(events).toMatchObject({ status: 200, headers: { 'x-route': EVENTS, 'x-used': '1' } });
    expect(events.trail.map((t) => t.split(' ')[0])).toEqual(['use', 'gate', 'handler']);
    expect(events.trail[1]).toBe(`gate ${EVENTS}`);
  });

  test('takes only literal paths that one route alone matches, GET with its HEAD, never OPTIONS', () => {
    const router = new Router();
    addRoutes(router, []);
    const chains = staticChains(router);
    expect([...(chains.get('POST')?.keys() ?? [])]).toEqual([EVENTS]);
    expect([...(chains.get('GET')?.keys() ?? [])].sort()).toEqual(['/passes-on', '/plain']);
    expect([...(chains.get('HEAD')?.keys() ?? [])].sort()).toEqual(['/passes-on', '/plain']);
    expect(chains.has('OPTIONS')).toBe(false);
  });
});

describe('createHttpApp on static routes', () => {
  test('keeps the route label, the probes, HEAD, 404 and 405 with Allow', async () => {
    const metrics = createMetrics();
    const app = createHttpApp({
      program: 'test',
      logger: pino({ level: 'silent' }),
      metrics,
      readiness: async () => ({}),
      routes: [
        (router) =>
          router.post(
            EVENTS,
            async (_ctx, next) => next(),
            (ctx) => {
              ctx.body = { data: { ok: true } };
            },
          ),
      ],
    });
    const { url, server } = await serve(app);
    try {
      const post = await fetch(`${url}${EVENTS}`, { method: 'POST', headers: { 'X-Request-Id': 'req-1' } });
      expect(post.status).toBe(200);
      expect(post.headers.get('x-request-id')).toBe('req-1');
      expect(post.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await post.json()).toEqual({ data: { ok: true } });

      const health = await fetch(`${url}/healthz`);
      expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
      const head = await fetch(`${url}/healthz`, { method: 'HEAD' });
      expect([head.status, await head.text(), head.headers.get('content-type')]).toEqual([
        200,
        '',
        'application/json; charset=utf-8',
      ]);

      const get = await fetch(`${url}${EVENTS}`);
      expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
      expect(await errorCode(get)).toBe('method_not_allowed');
      const options = await fetch(`${url}${EVENTS}`, { method: 'OPTIONS' });
      expect([options.status, options.headers.get('allow')]).toEqual([200, 'POST']);
      const missing = await fetch(`${url}/nowhere`);
      expect([missing.status, await errorCode(missing)]).toEqual([404, 'not_found']);

      const counted = await metrics.registry.getSingleMetricAsString('http_requests_total');
      for (const line of [
        `method="POST",route="${EVENTS}",status="200"} 1`,
        'method="GET",route="/healthz",status="200"} 1',
        'method="HEAD",route="/healthz",status="200"} 1',
        'method="GET",route="unmatched",status="405"} 1',
        `method="OPTIONS",route="unmatched",status="200"} 1`,
        'method="GET",route="unmatched",status="404"} 1',
      ]) {
        expect(counted).toContain(`http_requests_total{program="test",${line}`);
      }
    } finally {
      server.close();
    }
  });
});
