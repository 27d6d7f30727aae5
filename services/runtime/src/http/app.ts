// The HTTP side every program shares: request ids, structured access logs, metrics, the error envelope for every
// failure (404 and 405 included), and the probes /healthz, /readyz and /metrics.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import Router from '@koa/router';
import { trace } from '@opentelemetry/api';
import Koa from 'koa';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { tracingRunning } from '../tracing/settings.ts';
import type { CallContext } from '../transport/operation.ts';
import { arrivedAt } from './admission.ts';
import { routesWithStaticPaths } from './static-routes.ts';

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    log: Logger;
    call: CallContext;
  }
}

export type Readiness = () => Promise<Record<string, boolean>>;

export interface HttpAppOptions {
  /** Label for metrics and logs: the program, or `all-in-one`. */
  program: string;
  logger: Logger;
  metrics: Metrics;
  readiness: Readiness;
  /** Why the program is not ready when a check fails, if it knows better than the failing checks' names. */
  readinessReason?: () => string | undefined;
  /** Each program adds its routes to the shared router. */
  routes: Array<(router: Router) => void>;
  /** Set once shutdown begins: /readyz answers 503 so that load balancers stop sending traffic. */
  isShuttingDown?: () => boolean;
  /** TRUST_PROXY (config.ts): believe X-Forwarded-* headers. Off unless the program runs behind a proxy. */
  trustProxy?: boolean;
  /** GET /metrics on this app (default true); false where it has a port of its own (metricsServer). */
  metricsRoute?: boolean;
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export function createHttpApp(options: HttpAppOptions): Koa {
  const app = new Koa();
  // Koa reads X-Forwarded-Host/-Proto/-For (ctx.host, ctx.protocol, ctx.ip) only when told a proxy sets them.
  app.proxy = options.trustProxy ?? false;
  const { metrics, program } = options;

  app.use(async (ctx, next) => {
    // A request held in front of the app (key-admission.ts) counts from its arrival: its duration is the client's.
    const started = arrivedAt(ctx.req) ?? performance.now();
    const incoming = ctx.get('X-Request-Id');
    // Tracing on (docs/deploy.md): a request id the edge makes up is the request's trace id, so that the id a client
    // reports with an error finds the trace; the log lines carry `trace_id` either way.
    const requestId = REQUEST_ID_PATTERN.test(incoming) ? incoming : (activeTraceId() ?? randomUUID());
    ctx.state = new RequestState(options.logger, requestId);
    ctx.state.call = { requestId, traceparent: ctx.get('traceparent') || undefined };
    // Node's setHeader, not Koa's ctx.set: Koa 3's set() makes two arrays per call, and this runs for every request
    // (no header is sent yet here).
    ctx.res.setHeader('X-Request-Id', requestId);
    // No response of this service is to be content-sniffed: JSON stays JSON, whatever a browser guesses.
    ctx.res.setHeader('X-Content-Type-Options', 'nosniff');
    // Shutting down (draining): every answer closes its connection, so that a client's next request opens a new one,
    // which the balancer sends to another replica; none is left idle to be cut under a client.
    if (options.isShuttingDown?.()) ctx.res.setHeader('Connection', 'close');
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) refuseUnrouted(ctx);
    } catch (error) {
      writeError(ctx, error);
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const labels = { program, method: ctx.method, route: String(route), status: String(ctx.status) };
      const seconds = (performance.now() - started) / 1000;
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, seconds);
      const level = ctx.status >= 500 ? 'warn' : 'info';
      if (options.logger.isLevelEnabled(level)) {
        ctx.state.log[level](
          {
            method: ctx.method,
            path: ctx.path,
            route: labels.route,
            status: ctx.status,
            ms: Math.round(seconds * 1000),
          },
          'request',
        );
      }
    }
  });

  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const checks = await options.readiness();
    const shuttingDown = options.isShuttingDown?.() ?? false;
    const ready = !shuttingDown && Object.values(checks).every(Boolean);
    ctx.status = ready ? 200 : 503;
    // Every 503 carries Retry-After (CONTRACT section 11), the probe's too.
    if (!ready) ctx.set('Retry-After', '1');
    const failing = Object.keys(checks).filter((name) => !checks[name]);
    const reason = shuttingDown
      ? 'shutting down'
      : (options.readinessReason?.() ?? (failing.length > 0 ? `failing: ${failing.join(', ')}` : undefined));
    ctx.body = {
      status: ready ? 'ready' : shuttingDown ? 'shutting-down' : 'not-ready',
      checks,
      ...(ready ? {} : { reason }),
    };
  });
  if (options.metricsRoute ?? true) router.get('/metrics', metricsHandler(metrics));
  for (const addRoutes of options.routes) addRoutes(router);
  // The router's routes, those of a static path (the events route among them) found by one Map lookup and their
  // middleware composed once, instead of the router's matching and composition per request (static-routes.ts).
  app.use(routesWithStaticPaths(router));
  // Not `throw: true`: the router's thrown errors carry no Allow. It answers 405 (another method on a known path)
  // and 501 (a method the router does not know) with Allow set, and OPTIONS with 200 and Allow; refuseUnrouted
  // turns the first two into the error envelope and keeps Allow (RFC 9110 section 15.5.6).
  app.use(router.allowedMethods());
  return app;
}

function metricsHandler(metrics: Metrics): Koa.Middleware {
  return async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  };
}

/** An HTTP server answering only GET /metrics (Prometheus), for a port of its own (the all-in-one's METRICS_PORT). */
export function metricsServer(metrics: Metrics): Server {
  const app = new Koa();
  const router = new Router();
  router.get('/metrics', metricsHandler(metrics));
  app.use(router.routes());
  return createServer(app.callback());
}

/**
 * A request's state (Koa's ctx.state): its id, the call context it passes to the transport, and its logger, made
 * when a line is written: most requests write none, and pino's child() serializes its bindings every time.
 */
class RequestState {
  readonly requestId: string;
  call!: CallContext;
  private readonly logger: Logger;
  private child: Logger | undefined;

  constructor(logger: Logger, requestId: string) {
    this.logger = logger;
    this.requestId = requestId;
  }

  get log(): Logger {
    this.child ??= this.logger.child({ requestId: this.requestId });
    return this.child;
  }
}

/** Nothing answered the request: the envelope for 404 (unknown path) or 405 (another method on a known path). */
function refuseUnrouted(ctx: Koa.Context): void {
  const allow = String(ctx.response.get('Allow') ?? '');
  if ((ctx.status === 405 || ctx.status === 501) && allow !== '') {
    throw new AppError('method_not_allowed', `Method ${ctx.method} is not allowed on ${ctx.path}; use ${allow}.`);
  }
  if (ctx.status === 404 || ctx.status === 405 || ctx.status === 501) {
    ctx.remove('Allow');
    throw new AppError('not_found', `No route for ${ctx.method} ${ctx.path}.`);
  }
}

/** The trace id of the request's span when tracing is on (services/runtime/src/tracing): the generated request id. */
function activeTraceId(): string | undefined {
  if (!tracingRunning()) return undefined;
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && trace.isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

function writeError(ctx: Koa.Context, error: unknown): void {
  let appError: AppError;
  if (error instanceof AppError) {
    appError = error;
  } else {
    ctx.state.log?.error({ err: error }, 'unhandled error');
    appError = new AppError('internal_error', 'The service failed to handle the request.');
  }
  if (appError.status === 503 && !ctx.response.get('Retry-After')) ctx.set('Retry-After', '1');
  ctx.status = appError.status;
  ctx.body = appError.toEnvelope();
}
