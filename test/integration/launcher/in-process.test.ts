// The launcher's in-process mode (services/launcher/src/in-process.ts) on real NATS and PostgreSQL: the programs it
// composes answer over their transports and HTTP; a start that cannot listen joins no queue group and leaves nothing
// running; a state owner is never started without its database.
import * as net from 'node:net';
import { pino } from 'pino';
import { EnvReader } from '#runtime/config.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { sha256 } from '#runtime/credentials/keys.ts';
import { Database, migrate } from '#runtime/db/database.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import {
  migrationsOf,
  readProgramConfigs,
  STATE_OWNERS,
  startInProcess,
} from '../../../services/launcher/src/in-process.ts';
import { createTestDatabase } from '../../support/database.ts';
import { eventBody, expectDecision, postEvent } from '../../support/ingest.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startNats } from '../../support/servers.ts';

const logger = pino({ level: 'silent' });

describe('the launcher in one process', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let db: string;
  let database: Database;
  let world: EventWorld;
  let transport: NatsTransport;
  let client: NatsTransport;
  const metrics = createMetrics();

  beforeAll(async () => {
    nats = await startNats();
    db = await createTestDatabase();
    await migrate(db, migrationsOf(), logger);
    world = await createEventWorld(db);
    database = await Database.open({ url: db, poolMax: 2, logger, metrics });
    const connect = (name: string) =>
      NatsTransport.connect({
        url: nats.url,
        connectionName: name,
        requestTimeoutMs: 3000,
        undeliveredWaitMs: 200,
        logger,
        metrics,
      });
    transport = await connect('composed');
    client = await connect('client');
  });
  afterAll(async () => {
    await client?.close();
    await transport?.close();
    await database?.close();
    await nats?.stop();
  });

  const authenticate = () =>
    client
      .call(ledgerOps.authenticateGameKey, { keyHash: sha256(world.key.value) }, { requestId: 'launcher-test' })
      .then((reply) => (reply.valid ? 'valid' : 'invalid'))
      .catch((error: Error) => `failed: ${error.message}`);

  it('names the state owners and their migrations', () => {
    expect(STATE_OWNERS).toEqual(['identity-admission', 'ledger']);
    expect(migrationsOf()).toHaveLength(2);
  });

  it('serves the composed programs over the transport and HTTP, and stops serving on stop()', async () => {
    const programs = ['identity-admission', 'ledger', 'ingest'] as const;
    const started = await startInProcess({
      programs,
      configs: readProgramConfigs(new EnvReader({}), programs),
      transport,
      database,
      logger,
      metrics: createMetrics(),
      http: { name: 'test', port: 0, host: '127.0.0.1', readiness: async () => ({ nats: transport.isReady() }) },
    });
    try {
      expect([...started.programs.keys()]).toEqual(['identity-admission', 'ledger', 'ingest']);
      expect(await authenticate()).toBe('valid');
      const ready = await fetch(`http://127.0.0.1:${started.port}/readyz`);
      expect(ready.status).toBe(200);
      // The edge's route is served, and it reaches the state owners: a game posts an event and gets a decision.
      const decision = expectDecision(
        await postEvent(`http://127.0.0.1:${started.port}`, world.key.value, eventBody(world)),
      );
      expect(decision.status).toBe('accepted');
    } finally {
      await started.stop();
    }
    expect(started.server.listening).toBe(false);
    expect(await authenticate()).toMatch(/^failed: /);
  }, 120_000);

  it('joins no queue group and leaves nothing listening when the HTTP port is taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await expect(
        startInProcess({
          programs: ['ledger'],
          configs: new Map(),
          transport,
          database,
          logger,
          metrics: createMetrics(),
          http: { name: 'test', port, host: '127.0.0.1', readiness: async () => ({}) },
        }),
      ).rejects.toThrow(/EADDRINUSE/);
      expect(await authenticate()).toMatch(/^failed: /);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  }, 120_000);

  it('refuses to start a state owner without a database', async () => {
    await expect(
      startInProcess({
        programs: ['ledger'],
        configs: new Map(),
        transport,
        logger,
        metrics: createMetrics(),
        http: { name: 'test', port: 0, host: '127.0.0.1', readiness: async () => ({}) },
      }),
    ).rejects.toThrow('ledger owns a schema and was given no database');
  }, 120_000);
});
