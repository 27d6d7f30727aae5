// The router's work per request, without the router for the routes of a static path (docs/benchmarks.md, "Static
// routes without the router's per-request work"). For every request, @koa/router tests the path against each route's regular expression,
// builds the chain of the matched routes' middleware and composes it anew. A route whose path has no parameter (the
// events route, the probes, most of the API) matches one path only, so its chain is known once every route is
// registered: here it is built and composed once, and found per request by one Map lookup on method and path.
// Everything else (a path that differs in case or by a trailing slash, a parametrized path, OPTIONS, 404, 405 with
// Allow, 501) goes to the router, which still holds every route.
import type Router from '@koa/router';
import type Koa from 'koa';
import compose from 'koa-compose';

type Layer = Router['stack'][number];

/**
 * A middleware that dispatches the requests of static routes itself and every other request to `router.routes()`.
 * Call it once every route is registered: a route added to the router later is served by the router alone, and a
 * later one that also matches a static path would be skipped on that path.
 */
export function routesWithStaticPaths(router: Router): Koa.Middleware {
  const routes = router.routes() as unknown as Koa.Middleware;
  const statics = staticChains(router);
  return (ctx, next) => {
    const chain = statics.get(ctx.method)?.get(ctx.path);
    return chain === undefined ? routes(ctx, next) : chain(ctx, next);
  };
}

/** A path the router matches literally: no parameter, wildcard, optional group or pattern character. */
const LITERAL_PATH = /^\/[A-Za-z0-9._~/-]*$/;

/**
 * Method -> path -> the composed chain the router would run for that request: the middleware of every layer the
 * router matches (router.use() layers included, in order), each preceded, as in the router, by setting
 * `_matchedRoute` (the metrics' route label). Only where exactly one route matches and its path is literal; OPTIONS
 * stays with the router (its answer with Allow needs `ctx.matched`).
 */
export function staticChains(router: Router): Map<string, Map<string, Koa.Middleware>> {
  const chains = new Map<string, Map<string, Koa.Middleware>>();
  for (const layer of router.stack) {
    if (typeof layer.path !== 'string' || !LITERAL_PATH.test(layer.path) || layer.paramNames.length > 0) continue;
    for (const method of layer.methods) {
      if (method === 'OPTIONS' || chains.get(method)?.has(layer.path)) continue;
      const matched = router.match(layer.path, method).pathAndMethod;
      const routes = matched.filter((l) => l.methods.length > 0);
      if (routes.length !== 1 || routes[0] !== layer) continue;
      const byPath = chains.get(method) ?? new Map<string, Koa.Middleware>();
      chains.set(method, byPath);
      byPath.set(layer.path, compose(matched.flatMap((l) => [entered(l), ...(l.stack as Koa.Middleware[])])));
    }
  }
  return chains;
}

/** What the router does as it enters a layer of the chain (ctx.params stays unset: a literal path has none). */
function entered(layer: Layer): Koa.Middleware {
  const { path, name } = layer;
  return (ctx, next) => {
    const routed = ctx as { _matchedRoute?: string | RegExp; _matchedRouteName?: string };
    routed._matchedRoute = path;
    if (name) routed._matchedRouteName = name;
    return next();
  };
}
