// gateway: the developer console's edge. REST console, records and access adapters, the GraphQL console and the
// operator API; every rule lives in a state owner, reached over the transport.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { EnvReader } from '#runtime/config.ts';
import { DECISION_EXPORT_PAGE_DEFAULT, DECISION_EXPORT_PAGE_MAX } from '#runtime/contracts/decision-search.ts';
import { readAllowedOrigins } from '#runtime/http/origins.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import { developerSubject, loadDevProvider } from '#runtime/identity/dev-identity-provider.ts';
import type { ProgramDeps, ProgramModule } from '#runtime/program.ts';
import {
  DEVELOPER_COSTS,
  DEVELOPER_LIMIT_DEFAULTS,
  type DeveloperLimitSettings,
  DeveloperLimits,
} from './auth/developer-limits.ts';
import { admittedWithinLimits, developerOf } from './auth/developer-session.ts';
import { FAIR_READ_DEFAULTS, type FairReadSettings, fairReadsTransport } from './auth/fair-reads.ts';
import { graphqlOpenApi } from './graphql/openapi.ts';
import { createGraphQLConsole } from './graphql/server.ts';
import { addConsoleApp, type ConsoleSignIn } from './http/console-app.ts';
import { addDeveloperCors } from './http/cors.ts';
import { addOpenApiRoute, type OpenApiFragment } from './openapi.ts';
import { addAdminRoutes } from './rest/admin.ts';
import { addConsoleRoutes } from './rest/console.ts';
import { adminOpenApi } from './schemas/admin.ts';
import { consoleOpenApi } from './schemas/console.ts';
import { ingestOpenApi } from './schemas/ingest.ts';
import { linksOpenApi } from './schemas/links.ts';

/** The REST endpoints /openapi.json describes; each module contributes its fragment. */
export const openApiFragments: OpenApiFragment[] = [
  consoleOpenApi,
  adminOpenApi,
  graphqlOpenApi,
  ingestOpenApi,
  linksOpenApi,
];

export interface GatewayConfig {
  adminToken: string | undefined;
  allowedOrigins: string[];
  /** GRAPHQL_INTROSPECTION: introspection allowed (off by default; the all-in-one's embedded default turns it on). */
  graphqlIntrospection: boolean;
  /** NODE_ENV=development: stack traces in GraphQL error responses. */
  development: boolean;
  /** DEVELOPER_JWKS or DEVELOPER_JWKS_URL is set: no local development sign-in for the web console. */
  developerJwksConfigured: boolean;
  /** LIVE_CONNECTIONS_PER_DEVELOPER_MAX: decisions-subscription WebSockets one developer may hold on this gateway. */
  liveConnectionsPerDeveloperMax: number;
  /** DEVELOPER_RATE_PER_SECOND, DEVELOPER_BURST, DEVELOPER_IN_FLIGHT_MAX, SIMULATE_RULE_*: auth/developer-limits.ts. */
  developerLimits: DeveloperLimitSettings;
  fairReads: FairReadSettings;
  /** DECISION_EXPORT_PAGE_SIZE: decisions per ledger request of a decision export (rest/decision-export.ts). */
  decisionExportPageSize: number;
  /** TRUST_PROXY (services/runtime/src/config.ts): forwarded scheme and host believed. */
  trustProxy: boolean;
  /** The web console's OpenID Connect sign-in: DEVELOPER_JWT_ISSUER and CONSOLE_OIDC_CLIENT_ID. */
  consoleOidc: { authority: string; clientId: string; scope: string } | undefined;
}

export const gateway: ProgramModule<GatewayConfig> = {
  name: 'gateway',
  readConfig(reader: EnvReader): GatewayConfig {
    const adminToken = reader.string('ADMIN_TOKEN');
    reader.check(adminToken === undefined || adminToken.length >= 32, 'ADMIN_TOKEN must be at least 32 characters');
    return {
      adminToken,
      allowedOrigins: readAllowedOrigins(reader),
      graphqlIntrospection: reader.bool('GRAPHQL_INTROSPECTION', false),
      development: reader.string('NODE_ENV') === 'development',
      developerJwksConfigured: Boolean(reader.string('DEVELOPER_JWKS') || reader.string('DEVELOPER_JWKS_URL')),
      consoleOidc: readConsoleOidc(reader),
      liveConnectionsPerDeveloperMax: reader.int('LIVE_CONNECTIONS_PER_DEVELOPER_MAX', 20, { min: 1, max: 10_000 }),
      developerLimits: readDeveloperLimits(reader),
      fairReads: {
        inFlightMax: reader.int('CONSOLE_READS_IN_FLIGHT_MAX', FAIR_READ_DEFAULTS.inFlightMax, { min: 1, max: 10_000 }),
        perDeveloperMax: reader.int('CONSOLE_READS_PER_DEVELOPER_MAX', FAIR_READ_DEFAULTS.perDeveloperMax, {
          min: 1,
          max: 10_000,
        }),
      },
      decisionExportPageSize: reader.int('DECISION_EXPORT_PAGE_SIZE', DECISION_EXPORT_PAGE_DEFAULT, {
        min: 1,
        max: DECISION_EXPORT_PAGE_MAX,
      }),
      trustProxy: reader.bool('TRUST_PROXY', false),
    };
  },
  async create(deps: ProgramDeps, config: GatewayConfig) {
    const { platform } = deps;
    // The developers' console reads take turns for the ledger (auth/fair-reads.ts); every other call goes straight.
    const transport = fairReadsTransport(deps.transport, config.fairReads, deps.metrics);
    const adminToken = config.adminToken;
    // One set of limits per developer for every developer route of this process: REST, GraphQL, WebSocket.
    const limits = new DeveloperLimits(config.developerLimits, deps.metrics);
    deps.metrics.collections.track('gateway', {
      developer_limit_subjects: () => limits.size,
      developer_limit_tokens: () => limits.tokensRemembered,
    });
    const graphql = await createGraphQLConsole({
      transport,
      platform,
      logger: deps.logger,
      introspection: config.graphqlIntrospection,
      development: config.development,
      metrics: deps.metrics,
      limits,
      live: { connectionsPerDeveloperMax: config.liveConnectionsPerDeveloperMax, trustProxy: config.trustProxy },
    });
    // The local development identity provider is trusted only where the composer allowed it (the embedded development
    // default, or UNSAFE_DEV_IDENTITY_PROVIDER=true) and no JWKS is configured: exactly when identity-admission trusts
    // it. The console's development sign-in follows it, and answers only a browser on this machine.
    const devProvider =
      !config.developerJwksConfigured && deps.devIdentityDataDir
        ? await loadDevProvider(deps.devIdentityDataDir, 'developer')
        : undefined;
    const signIn: ConsoleSignIn = devProvider
      ? { kind: 'dev' }
      : config.consoleOidc
        ? { kind: 'oidc', ...config.consoleOidc }
        : { kind: 'none' };
    return {
      name: 'gateway',
      routes(router: Router) {
        addDeveloperCors(router, config.allowedOrigins);
        const noStore: Koa.Middleware = async (ctx, next) => {
          // Set before any check, so that denials are not cached either.
          ctx.set('Cache-Control', 'no-store');
          await next();
        };
        const developerGate = platformGate(platform, 'AUTH_UNAVAILABLE');
        const admitted = admittedWithinLimits(transport, limits, DEVELOPER_COSTS.request);
        router.get('/api/developer/v1/access', noStore, developerGate, admitted, async (ctx) => {
          const { principal } = developerOf(ctx);
          ctx.body = { data: { authorized: true, email: principal.email, mode: 'sandbox' } };
        });
        addConsoleRoutes(router, {
          transport,
          platform,
          limits,
          decisionExportPageSize: config.decisionExportPageSize,
        });
        addAdminRoutes(router, { transport, platform, adminToken });
        graphql.addRoutes(router);
        addOpenApiRoute(router, openApiFragments);
        addConsoleApp(router, {
          signIn,
          platform,
          ...(devProvider && {
            signDevSession: (email: string) =>
              devProvider.sign({ email, email_verified: true }, { subject: developerSubject(email) }),
          }),
        });
      },
      upgrades: graphql.upgrades,
      close: () => graphql.stop(),
    };
  },
};

function readDeveloperLimits(reader: EnvReader): DeveloperLimitSettings {
  const defaults = DEVELOPER_LIMIT_DEFAULTS;
  return {
    ratePerSecond: reader.int('DEVELOPER_RATE_PER_SECOND', defaults.ratePerSecond, { min: 1, max: 1_000_000 }),
    burst: reader.int('DEVELOPER_BURST', defaults.burst, { min: 1, max: 1_000_000 }),
    inFlightMax: reader.int('DEVELOPER_IN_FLIGHT_MAX', defaults.inFlightMax, { min: 1, max: 10_000 }),
    simulationsPerDeveloperMax: reader.int('SIMULATE_RULE_PER_DEVELOPER_MAX', defaults.simulationsPerDeveloperMax, {
      min: 1,
      max: 1_000,
    }),
    simulationsMax: reader.int('SIMULATE_RULE_IN_FLIGHT_MAX', defaults.simulationsMax, { min: 1, max: 1_000 }),
  };
}

function readConsoleOidc(reader: EnvReader): GatewayConfig['consoleOidc'] {
  const authority = reader.string('DEVELOPER_JWT_ISSUER');
  const clientId = reader.string('CONSOLE_OIDC_CLIENT_ID');
  if (!authority || !clientId) return undefined;
  return { authority, clientId, scope: reader.string('CONSOLE_OIDC_SCOPE', 'openid email') };
}
