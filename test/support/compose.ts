// Programs composed in the test process the way a deployment runs them: state owners on one NATS connection, the
// edges on another (as separate programs would be), each with the program's own readiness. Used by the fault tests,
// which restart nats-server, cut database connections or leave a state owner out.
import { createServer, type Server } from 'node:http';
import { type Logger, pino } from 'pino';
import { EnvReader } from '#runtime/config.ts';
import { Database } from '#runtime/db/database.ts';
import { createHttpApp } from '#runtime/http/app.ts';
import { createMetrics, type Metrics } from '#runtime/metrics.ts';
import { PlatformSwitch } from '#runtime/platform-switch.ts';
import { closeServer, listen, type ProgramModule } from '#runtime/program.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import type { ServedService } from '#runtime/transport/operation.ts';
import { identityAdmission } from '../../services/identity-admission/src/program.ts';
import { ingest } from '../../services/ingest/src/program.ts';
import { ledger } from '../../services/ledger/src/program.ts';
import { links } from '../../services/links/src/program.ts';
import { SettableClock } from './clock.ts';

export interface ComposeOptions {
  natsUrl: string;
  requestTimeoutMs?: number;
  /** Database URLs of the state owners to run; a missing one is not run (its subjects have no responders). */
  identityDatabaseUrl?: string;
  ledgerDatabaseUrl?: string;
  /** The edge whose routes the HTTP server serves. */
  edge?: 'ingest' | 'links';
  env?: Record<string, string>;
  logger?: Logger;
}

export interface Composed {
  /** The edge's HTTP server (its routes and probes). */
  url: string;
  edgeTransport: NatsTransport;
  ownerTransport: NatsTransport;
  /** The state owners' clock (see startTestSystem). */
  clock: SettableClock;
  /** The one metrics registry of every program and database here. */
  metrics: Metrics;
  stop(): Promise<void>;
}

export async function compose(options: ComposeOptions): Promise<Composed> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const metrics = createMetrics();
  const connect = (name: string) =>
    NatsTransport.connect({
      url: options.natsUrl,
      connectionName: name,
      requestTimeoutMs: options.requestTimeoutMs ?? 5000,
      logger,
      metrics,
    });
  const ownerTransport = await connect('owners');
  const edgeTransport = await connect('edge');
  const databases: Database[] = [];
  const served: ServedService[] = [];
  const env = new EnvReader(options.env ?? {});
  const clock = new SettableClock();
  const start = async <C>(module: ProgramModule<C>, transport: NatsTransport, databaseUrl?: string) => {
    const database = databaseUrl ? await Database.open({ url: databaseUrl, poolMax: 4, logger, metrics }) : undefined;
    if (database) databases.push(database);
    const program = await module.create(
      { logger, metrics, transport, platform: new PlatformSwitch(transport), database, clock },
      module.readConfig(env),
    );
    for (const definition of program.services ?? []) served.push(await transport.serve(definition));
    return program;
  };
  if (options.identityDatabaseUrl) await start(identityAdmission, ownerTransport, options.identityDatabaseUrl);
  if (options.ledgerDatabaseUrl) await start(ledger, ownerTransport, options.ledgerDatabaseUrl);
  const edge = options.edge === 'links' ? await start(links, edgeTransport) : await start(ingest, edgeTransport);
  const app = createHttpApp({
    program: 'test',
    logger,
    metrics,
    routes: [edge.routes!],
    readiness: async () => ({ nats: edgeTransport.isReady() }),
  });
  const server: Server = createServer(app.callback());
  const port = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    edgeTransport,
    ownerTransport,
    clock,
    metrics,
    async stop() {
      await closeServer(server);
      for (const s of served) await s.stop().catch(() => undefined);
      await edgeTransport.close().catch(() => undefined);
      await ownerTransport.close().catch(() => undefined);
      for (const d of databases) await d.close();
    },
  };
}
