// POST /graphql (CONTRACT sections 2 and 9): Apollo Server 5 through its Koa integration, on the gateway's router.
// Checks in REST's order: platform switch, developer admission within the developer's limits (429; one admission
// per request; mutations after the first are admitted again), content type (415), size on the raw bytes (413), JSON
// (400); then GraphQL parses, validates within the limits (limits.ts), charges the operation's cost to the developer
// (developer-cost.ts: 429) and runs the resolvers, which make the REST adapters' NATS calls.
//
// Failures before GraphQL runs answer a GraphQL response `{ "errors": [...] }` with REST's HTTP status, code and
// status in `extensions`; a request that ran answers 200 with `data` and its field errors (errors.ts).
import { readFileSync } from 'node:fs';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { koaMiddleware } from '@as-integrations/koa';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type Router from '@koa/router';
import type Koa from 'koa';
import { AppError } from '#runtime/errors.ts';
import { readJsonBody } from '#runtime/http/body.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import { DEVELOPER_COSTS, type DeveloperLimits } from '../auth/developer-limits.ts';
import { admittedWithinLimits, developerOf } from '../auth/developer-session.ts';
import { GraphQLContext } from './context.ts';
import { developerCostPlugin } from './developer-cost.ts';
import { errorFormatter, errorStatusPlugin, requestErrorBody } from './errors.ts';
import { armor, GRAPHQL_LIMITS } from './limits.ts';
import { createLiveDecisions } from './live.ts';
import { resolvers } from './resolvers.ts';

export const GRAPHQL_PATH = '/graphql';

/** The schema's SDL, also printed in docs/graphql.md. */
export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

export function createSchema() {
  return makeExecutableSchema({ typeDefs, resolvers });
}

export interface GraphQLConsoleOptions {
  transport: Transport;
  platform: PlatformSwitch;
  logger: Logger;
  /** GRAPHQL_INTROSPECTION (program.ts): off on a deployment, on for the embedded development default. */
  introspection: boolean;
  /** NODE_ENV=development: stack traces and bug messages in error responses. */
  development: boolean;
  metrics?: Metrics | undefined;
  /** The developer limits shared with the REST routes (auth/developer-limits.ts). */
  limits: DeveloperLimits;
  /** The live decisions subscription's settings (live.ts). */
  live: { connectionsPerDeveloperMax: number; trustProxy: boolean };
}

export interface GraphQLConsole {
  addRoutes(router: Router): void;
  /** The live decisions subscription (live.ts): WebSocket upgrades at GRAPHQL_PATH of the HTTP server. */
  upgrades: { attach(server: import('node:http').Server): void; close(): Promise<void> };
  stop(): Promise<void>;
}

/** POST /graphql runs queries and mutations; a subscription sent there is refused (400), it runs over WebSocket. */
const subscriptionsOverWebSocket: ApolloServerPlugin<GraphQLContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation }) {
        if (operation?.operation === 'subscription') {
          throw new AppError(
            'INVALID_REQUEST',
            `Subscriptions run over WebSocket (graphql-transport-ws) at ${GRAPHQL_PATH}, not over HTTP POST.`,
          );
        }
      },
    };
  },
};

const contexts = new WeakMap<Koa.Context, GraphQLContext>();

/** Answers an AppError raised before GraphQL ran as a GraphQL response with REST's status. */
const graphqlErrors: Koa.Middleware = async (ctx, next) => {
  try {
    await next();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    ctx.status = error.status;
    if (error.status === 503) ctx.set('Retry-After', '1');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = requestErrorBody(error);
  }
};

export async function createGraphQLConsole(options: GraphQLConsoleOptions): Promise<GraphQLConsole> {
  const { transport, logger } = options;
  const limits = armor();
  const schema = createSchema();
  const live = await createLiveDecisions({
    schema,
    transport,
    platform: options.platform,
    logger,
    metrics: options.metrics,
    path: GRAPHQL_PATH,
    validationRules: limits.validationRules,
    maxTokens: GRAPHQL_LIMITS.tokens,
    development: options.development,
    hideSuggestions: !options.introspection,
    limits: options.limits,
    connectionsPerDeveloperMax: options.live.connectionsPerDeveloperMax,
    trustProxy: options.live.trustProxy,
  });
  const server = new ApolloServer<GraphQLContext>({
    schema,
    introspection: options.introspection,
    includeStacktraceInErrorResponses: options.development,
    hideSchemaDetailsFromClientErrors: !options.introspection,
    formatError: errorFormatter(logger, options.development, !options.introspection),
    validationRules: limits.validationRules,
    parseOptions: { maxTokens: GRAPHQL_LIMITS.tokens },
    // One operation per HTTP request, sent as a document: no batches, no persisted-query registry.
    allowBatchedHttpRequests: false,
    persistedQueries: false,
    csrfPrevention: true,
    // The program handles SIGTERM (drain, then close); Apollo must not install its own handlers.
    stopOnTerminationSignals: false,
    logger: logger as unknown as ConstructorParameters<typeof ApolloServer>[0]['logger'],
    plugins: [
      // Armor ships CommonJS typings of Apollo's plugin type; the objects are the same at run time.
      ...(limits.plugins as unknown as ApolloServerPlugin<GraphQLContext>[]),
      errorStatusPlugin<GraphQLContext>(),
      subscriptionsOverWebSocket,
      developerCostPlugin,
      // Apollo's subscriptions recipe: stopping the server first closes the WebSocket server (graphql-ws dispose:
      // every socket closed with 1001). The program closes it earlier still, before HTTP (upgrades.close).
      {
        async serverWillStart() {
          return {
            async drainServer() {
              await live.dispose();
            },
          };
        },
      },
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
    ],
  });
  await server.start();
  const apollo = koaMiddleware(server, {
    context: async ({ ctx }) => {
      const context = contexts.get(ctx as unknown as Koa.Context);
      if (!context) throw new Error('GraphQL context was not prepared for this request');
      return context;
    },
  });
  const gate = platformGate(options.platform, 'AUTH_UNAVAILABLE');

  return {
    addRoutes(router: Router) {
      const admitted = admittedWithinLimits(transport, options.limits, DEVELOPER_COSTS.request);
      router.post(GRAPHQL_PATH, graphqlErrors, gate, admitted, async (ctx) => {
        const { principal, lease } = developerOf(ctx);
        const body = await readJsonBody(ctx);
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          throw new AppError(
            'INVALID_REQUEST',
            'The body must be one GraphQL request: { query, variables?, operationName? }.',
          );
        }
        // The Koa integration reads the parsed body here (what @koa/bodyparser would have set).
        (ctx.request as { body?: unknown }).body = body;
        contexts.set(ctx, new GraphQLContext(transport, ctx, principal, lease));
        await apollo(ctx as Parameters<typeof apollo>[0], async () => {});
        ctx.set('Cache-Control', 'no-store');
      });
    },
    upgrades: { attach: (httpServer) => live.attach(httpServer), close: () => live.dispose() },
    async stop() {
      await server.stop();
    },
  };
}
