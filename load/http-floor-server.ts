// One server of `node load/http-floor.ts` (the HTTP floor, docs/benchmarks.md): started as a child process with the
// programs' node flags, it answers POST /api/game-sdk/v2/events with the work every HTTP framework must do for an
// event and no more: read the body, JSON.parse it, answer a JSON of the edge's size (~400 bytes) with the edge's
// headers. `GET /__count` (outside the measured server's stack) answers how many events it answered so far.
//
//   node load/http-floor-server.ts bare|koa|router|app     prints `listening <port>` once it listens
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import { pino } from 'pino';
import { createHttpApp } from '#runtime/http/app.ts';
import type { Logger } from '#runtime/logger.ts';
import { createMetrics } from '#runtime/metrics.ts';

const EVENTS_PATH = '/api/game-sdk/v2/events';

/** The request body as text: plain listeners, as services/runtime/src/http/body.ts reads it. */
function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** An answer of the events route's shape and size: the decision, `replayed` and `mode`. */
function decision(body: { eventId?: string; playerId?: string; eventType?: string; occurredAt?: string }) {
  return {
    data: {
      id: '3f0e6a9c-1b2d-4c5e-8f70-9a1b2c3d4e5f',
      eventId: body.eventId,
      gameId: '0b9a4c1e-6d0f-4c53-9f57-0d2f3f1b8c11',
      organizationId: '6f1c2b9e-3a5d-4e7f-8a9b-0c1d2e3f4a5b',
      playerId: body.playerId,
      eventType: body.eventType,
      occurredAt: body.occurredAt,
      status: 'accepted',
      reason: null,
      rewardCredits: 1,
      createdAt: new Date().toISOString(),
      replayed: false,
      mode: 'sandbox',
    },
  };
}

/** The headers the edge sets on a fresh decision (request id, nosniff, no-store, the quota fields). */
function edgeHeaders(): Record<string, string> {
  return {
    'X-Request-Id': randomUUID(),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
    'RateLimit-Policy': '"minute";q=1000000;w=60',
    RateLimit: '"minute";r=999000;t=42',
    'Rewards-Daily-Remaining': '999',
    'Rewards-Budget-Remaining': '999999000',
  };
}

let answered = 0;

function bare(): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    if (request.method !== 'POST' || request.url !== EVENTS_PATH) {
      response.writeHead(404).end();
      return;
    }
    readBody(request).then((text) => {
      const payload = JSON.stringify(decision(JSON.parse(text)));
      response.writeHead(200, {
        ...edgeHeaders(),
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(payload),
      });
      response.end(payload);
      answered += 1;
    });
  };
}

async function koaHandler(ctx: Koa.Context): Promise<void> {
  const body = JSON.parse(await readBody(ctx.req));
  ctx.set(edgeHeaders());
  ctx.body = decision(body);
  answered += 1;
}

function koa(): (request: IncomingMessage, response: ServerResponse) => void {
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method === 'POST' && ctx.path === EVENTS_PATH) await koaHandler(ctx);
  });
  return app.callback();
}

function router(): (request: IncomingMessage, response: ServerResponse) => void {
  const app = new Koa();
  const routes = new Router();
  routes.post(EVENTS_PATH, koaHandler);
  app.use(routes.routes());
  app.use(routes.allowedMethods());
  return app.callback();
}

/** The shared HTTP app of every program (services/runtime/src/http/app.ts) with the same handler on its route. */
function sharedApp(): (request: IncomingMessage, response: ServerResponse) => void {
  return createHttpApp({
    program: 'floor',
    logger: pino({ level: 'warn' }) as unknown as Logger,
    metrics: createMetrics(),
    readiness: async () => ({}),
    routes: [(r) => r.post(EVENTS_PATH, koaHandler)],
  }).callback();
}

const handlers = { bare, koa, router, app: sharedApp };
const kind = process.argv[2] as keyof typeof handlers;
if (!Object.hasOwn(handlers, kind)) {
  process.stderr.write(`usage: node load/http-floor-server.ts ${Object.keys(handlers).join('|')}\n`);
  process.exit(2);
}
const handle = handlers[kind]();
const server = createServer((request, response) => {
  if (request.url === '/__count') response.end(String(answered));
  else handle(request, response);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
