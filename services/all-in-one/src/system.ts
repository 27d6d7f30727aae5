// The whole service in one process: the five programs on one HTTP port, composed by the launcher's in-process mode
// (services/launcher/src/in-process.ts). This file decides what that process runs on: PostgreSQL is DATABASE_URL or,
// unset, PGlite under DATA_DIR; the transport is NATS_URL or, unset, the in-process transport with the same subjects
// and bytes; the operator token and the development identity provider follow from those. Used by `npm start` and by
// the end-to-end tests (test/support/system.ts).
import type { Server } from 'node:http';
import { resolve } from 'node:path';
import { loadOrCreateAdminToken } from '#runtime/cli/local-service.ts';
import type { Clock } from '#runtime/clock.ts';
import { EnvReader, readCommonConfig, readDatabaseTimeouts } from '#runtime/config.ts';
import { Database, migrate } from '#runtime/db/database.ts';
import { startEmbeddedPostgres } from '#runtime/db/embedded.ts';
import { readDatabaseUrl, redactDatabaseUrl } from '#runtime/db/url.ts';
import { metricsServer } from '#runtime/http/app.ts';
import { reportInvariantsTo } from '#runtime/invariant.ts';
import { Lifecycle, SHUTDOWN_DEADLINE_MS } from '#runtime/lifecycle.ts';
import { createLogger, type Logger } from '#runtime/logger.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { closeServer, listen } from '#runtime/program.ts';
import { InProcessTransport } from '#runtime/transport/in-process.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import { migrationsOf, readProgramConfigs, startInProcess } from '../../launcher/src/in-process.ts';

export interface SystemOptions {
  env?: Record<string, string | undefined>;
  /** Overrides PORT; 0 picks a free port. */
  port?: number;
  host?: string;
  logger?: Logger;
  /** The state owners' clock (tests set it); the database's `now()` when not given. */
  clock?: Clock;
}

export interface RunningSystem {
  url: string;
  port: number;
  databaseDescription: string;
  /** The PostgreSQL URL in use (the embedded server's loopback URL without DATABASE_URL), for tests and tools. */
  databaseUrl: string;
  transportKind: Transport['kind'];
  /** The transport the programs share (tests call operations through it). */
  transport: Transport;
  dataDir: string;
  /**
   * How developer sessions are verified: `dev` the local development identity provider (the embedded default, or
   * UNSAFE_DEV_IDENTITY_PROVIDER=true), `jwks` a configured provider, `none` neither (every developer sign-in is
   * refused).
   */
  developerIdentity: 'dev' | 'jwks' | 'none';
  /**
   * Where the operator token comes from: `env` (ADMIN_TOKEN), `generated` now or `stored` earlier under DATA_DIR (the
   * embedded default without ADMIN_TOKEN), or `none` (operator API hidden).
   */
  adminToken: { source: 'env' | 'generated' | 'stored' | 'none'; token?: string; file?: string };
  server: Server;
  /** Where GET /metrics answers: the public port's /metrics, or METRICS_PORT's when it is set. */
  metricsUrl: string;
  /** SHUTDOWN_DRAIN_MS: how long stop() goes on serving, /readyz 503, before it closes anything. */
  drainMs: number;
  logger: Logger;
  /** The process's steps and undos (main.ts stops it on a signal, after the drain). */
  lifecycle: Lifecycle;
  /**
   * Graceful stop: the drain, then the lifecycle: HTTP first, then services (in-flight finish), programs, transport,
   * database.
   */
  stop(): Promise<void>;
  isShuttingDown: () => boolean;
  markShuttingDown(): void;
}

export async function startSystem(options: SystemOptions = {}): Promise<RunningSystem> {
  const env = { ...(options.env ?? process.env) };
  let adminToken: RunningSystem['adminToken'] = { source: env.ADMIN_TOKEN ? 'env' : 'none' };
  if (!env.ADMIN_TOKEN && !env.DATABASE_URL) {
    // The embedded default: an operator token is generated once and kept under DATA_DIR (owner-only), where
    // `npm run admin` and `npm run demo` find it. With DATABASE_URL (a real deployment) an unset token hides the API.
    const stored = loadOrCreateAdminToken(resolve(env.DATA_DIR || './.data'));
    env.ADMIN_TOKEN = stored.token;
    adminToken = { source: stored.created ? 'generated' : 'stored', token: stored.token, file: stored.file };
  }
  if (!env.DATABASE_URL && env.GRAPHQL_INTROSPECTION === undefined) {
    // Apollo's convention (CONTRACT section 9): introspection on for the development default, off on a deployment;
    // GRAPHQL_INTROSPECTION overrides both. GraphQL tools (GraphiQL, codegen, gql's schema fetch) work on `npm start`.
    env.GRAPHQL_INTROSPECTION = 'true';
  }
  if (!env.DATABASE_URL && env.WEBHOOK_ALLOW_PRIVATE_ADDRESSES === undefined) {
    // The development default sends webhooks to a receiver on this machine (CONTRACT section 11.1).
    env.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = 'true';
  }
  const reader = new EnvReader(env);
  const common = readCommonConfig(reader);
  const port = options.port ?? reader.int('PORT', 8080, { min: 0, max: 65535 });
  const dataDir = resolve(reader.string('DATA_DIR', './.data'));
  // libpq's multi-host form is allowed (db/url.ts): reader.url would split its host list at the commas.
  const databaseUrl = readDatabaseUrl(reader);
  const databaseNamedStatements = reader.bool('DATABASE_NAMED_STATEMENTS', false);
  const databaseTimeouts = readDatabaseTimeouts(reader);
  // The local development default: no DATABASE_URL, so PGlite under DATA_DIR. Only there is the development identity
  // provider trusted (and its sign-in route served), and only there does the server listen on loopback by default;
  // anywhere else it takes a variable that says it is unsafe (docs/identity.md).
  const localDevelopment = !databaseUrl;
  const unsafeDevIdentity = reader.bool('UNSAFE_DEV_IDENTITY_PROVIDER', false);
  const devIdentityAllowed = localDevelopment || unsafeDevIdentity;
  const developerJwks = Boolean(reader.string('DEVELOPER_JWKS') || reader.string('DEVELOPER_JWKS_URL'));
  const host = options.host ?? common.host ?? (localDevelopment ? '127.0.0.1' : undefined);
  // SHUTDOWN_DRAIN_MS (runStandalone): none by default here, where a person stopping `npm start` waits for it.
  const drainMs = reader.int('SHUTDOWN_DRAIN_MS', 0, { min: 0, max: 120_000 });
  // METRICS_PORT (the image sets it): /metrics on a port of its own, not on the API's (docs/decisions.md).
  const metricsPort =
    reader.string('METRICS_PORT') === undefined ? undefined : reader.int('METRICS_PORT', 9464, { min: 0, max: 65535 });
  const configs = readProgramConfigs(reader);
  reader.done();

  const logger = options.logger ?? createLogger({ process: 'all-in-one' }, common.logLevel);
  if (unsafeDevIdentity && !localDevelopment) {
    logger.warn(
      'UNSAFE_DEV_IDENTITY_PROVIDER=true: the local development identity provider is trusted on a real database; ' +
        'anyone on this machine can sign in as any developer',
    );
  }
  const metrics = createMetrics();
  reportInvariantsTo(logger, metrics.invariantViolations);
  // One lifecycle for the process: the embedded server, the database and the transport are undone after the programs
  // (startInProcess adds their steps), in reverse order, under SHUTDOWN_DEADLINE_MS.
  const lifecycle = new Lifecycle(logger);
  return lifecycle.start(async () => {
    const embedded = databaseUrl
      ? undefined
      : await lifecycle.step(
          'embedded postgres',
          () => startEmbeddedPostgres(dataDir),
          (started) => started.stop(),
        );
    const url = embedded?.url ?? (databaseUrl as string);
    await migrate(url, migrationsOf(), logger);
    const database = await lifecycle.step(
      'database',
      () =>
        Database.open({
          url,
          poolMax: embedded ? 1 : 10,
          // PGlite's connections share one session: a statement named by a closed connection would collide.
          namedStatements: !embedded && databaseNamedStatements,
          ...databaseTimeouts,
          logger,
          metrics,
        }),
      (opened) => opened.close(),
    );
    const transport: Transport = await lifecycle.step(
      'transport',
      async () =>
        common.natsUrl
          ? await NatsTransport.connect({
              url: common.natsUrl,
              connectionName: 'all-in-one',
              requestTimeoutMs: common.natsRequestTimeoutMs,
              eventRequestTimeoutMs: common.natsEventRequestTimeoutMs,
              undeliveredWaitMs: common.natsUndeliveredWaitMs,
              tryTimeoutPercent: common.natsTryTimeoutPercent,
              security: common.natsSecurity,
              logger,
              metrics,
            })
          : new InProcessTransport(logger, metrics, {
              requestTimeoutMs: common.natsRequestTimeoutMs,
              eventRequestTimeoutMs: common.natsEventRequestTimeoutMs,
            }),
      (connected) => connected.close(),
    );
    const programs = await startInProcess({
      configs,
      transport,
      database,
      // PGlite in this process: nothing between the programs and it to fail, and one session that a probe would take.
      probeDatabases: !embedded,
      logger,
      metrics,
      clock: options.clock,
      lifecycle,
      ...(devIdentityAllowed ? { devIdentityDataDir: dataDir } : {}),
      http: {
        name: 'all-in-one',
        port,
        host,
        trustProxy: common.trustProxy,
        metricsRoute: metricsPort === undefined,
        readiness: async () => ({ transport: transport.isReady(), database: await database.ping() }),
      },
    });
    // The URL shown and handed to tests: the host asked for, or localhost for loopback and every interface.
    const asked = options.host ?? common.host;
    const shownHost = asked === undefined || asked === '0.0.0.0' || asked === '::' ? 'localhost' : asked;
    const urlHost = shownHost.includes(':') ? `[${shownHost}]` : shownHost;
    // METRICS_PORT: /metrics on a listener of its own (closed before the programs at stop: steps undo in reverse).
    const metricsUrl =
      metricsPort === undefined
        ? `http://${urlHost}:${programs.port}/metrics`
        : `http://${urlHost}:${
            (
              await lifecycle.step(
                'metrics listener',
                async () => {
                  const listener = metricsServer(metrics);
                  return { listener, port: await listen(listener, metricsPort, host) };
                },
                ({ listener }) => closeServer(listener),
              )
            ).port
          }/metrics`;
    return {
      url: `http://${urlHost}:${programs.port}`,
      metricsUrl,
      port: programs.port,
      databaseDescription: embedded ? `embedded PostgreSQL (PGlite) in ${embedded.dataDir}` : redactUrl(url),
      databaseUrl: url,
      transportKind: transport.kind,
      transport,
      dataDir,
      developerIdentity: developerJwks ? 'jwks' : devIdentityAllowed ? 'dev' : 'none',
      adminToken,
      server: programs.server,
      drainMs,
      logger,
      lifecycle,
      isShuttingDown: programs.isShuttingDown,
      markShuttingDown: programs.markShuttingDown,
      async stop() {
        programs.markShuttingDown();
        if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
        await lifecycle.stop(SHUTDOWN_DEADLINE_MS);
      },
    } satisfies RunningSystem;
  });
}

function redactUrl(url: string): string {
  // A libpq host list is not a WHATWG URL (db/url.ts reads both forms).
  return redactDatabaseUrl(url);
}
