// Programs composed in the test process the way a deployment runs them, through the launcher's in-process mode
// (services/launcher/src/in-process.ts): state owners on one NATS connection, the edge on another (as separate
// programs would be), each state owner on a database of its own, the edge's routes and readiness on one HTTP server.
// Used by the fault tests, which restart nats-server, cut database connections or leave a state owner out.
import { type Logger, pino } from 'pino';
import { EnvReader } from '#runtime/config.ts';
import { Database } from '#runtime/db/database.ts';
import { Lifecycle } from '#runtime/lifecycle.ts';
import { createMetrics, type Metrics } from '#runtime/metrics.ts';
import type { ProgramName } from '#runtime/program.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import { readProgramConfigs, startInProcess } from '../../services/launcher/src/in-process.ts';
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
  // One lifecycle, as a process of its own would have: the connections and databases are undone after the programs.
  const lifecycle = new Lifecycle(logger);
  const connect = (name: string) =>
    lifecycle.step(
      `${name} transport`,
      () =>
        NatsTransport.connect({
          url: options.natsUrl,
          connectionName: name,
          requestTimeoutMs: options.requestTimeoutMs ?? 5000,
          logger,
          metrics,
        }),
      (transport) => transport.close(),
    );
  return lifecycle.start(async () => {
    const ownerTransport = await connect('owners');
    const edgeTransport = await connect('edge');
    const databaseUrls: Array<[ProgramName, string | undefined]> = [
      ['identity-admission', options.identityDatabaseUrl],
      ['ledger', options.ledgerDatabaseUrl],
    ];
    const databases = new Map<ProgramName, Database>();
    for (const [name, url] of databaseUrls) {
      if (!url) continue;
      const database = await lifecycle.step(
        `${name} database`,
        () => Database.open({ url, poolMax: 4, logger, metrics }),
        (opened) => opened.close(),
      );
      databases.set(name, database);
    }
    const owners = [...databases.keys()];
    const edge = options.edge ?? 'ingest';
    const programs: ProgramName[] = [...owners, edge];
    const clock = new SettableClock();
    const started = await startInProcess({
      programs,
      configs: readProgramConfigs(new EnvReader(options.env ?? {}), programs),
      transport: (name) => (name === edge ? edgeTransport : ownerTransport),
      database: (name) => databases.get(name),
      logger,
      metrics,
      clock,
      lifecycle,
      http: { name: 'test', port: 0, host: '127.0.0.1', readiness: async () => ({ nats: edgeTransport.isReady() }) },
    });
    return {
      url: `http://127.0.0.1:${started.port}`,
      edgeTransport,
      ownerTransport,
      clock,
      metrics,
      async stop() {
        await lifecycle.stop();
      },
    };
  });
}
