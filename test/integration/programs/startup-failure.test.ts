// A program that fails start-up must not take requests it will never answer: a second ledger started on a taken HTTP
// port exits without ever having joined the ledger's queue group, while requests keep flowing to the first one.
import * as net from 'node:net';
import { pino } from 'pino';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { sha256 } from '#runtime/credentials/keys.ts';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { type Composed, compose } from '../../support/compose.ts';
import { createTestDatabase } from '../../support/database.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startProgram } from '../../support/processes.ts';
import { startNats } from '../../support/servers.ts';

describe('a second ledger whose HTTP port is taken', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let db: string;
  let world: EventWorld;
  let system: Composed;
  let blocker: net.Server;

  beforeAll(async () => {
    nats = await startNats();
    db = await createTestDatabase();
    await migrate(db, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
    world = await createEventWorld(db);
    system = await compose({ natsUrl: nats.url, ledgerDatabaseUrl: db, requestTimeoutMs: 3000 });
    blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => blocker?.close(resolve));
    await system?.stop();
    await nats?.stop();
  });

  it('exits with an error and loses no request sent while it started and failed', async () => {
    const keyHash = sha256(world.key.value);
    const ask = () =>
      system.edgeTransport
        .call(ledgerOps.authenticateGameKey, { keyHash }, { requestId: 'startup-failure' })
        .then((reply) => (reply.valid ? 'ok' : 'invalid'))
        .catch((error: Error) => `failed: ${error.message} ${String(error.cause)}`);
    const takenPort = (blocker.address() as net.AddressInfo).port;
    const second = await startProgram(
      'ledger',
      { NATS_URL: nats.url, DATABASE_URL: db, LOG_LEVEL: 'info' },
      undefined,
      'started',
      takenPort,
    );
    let exited = false;
    const exitCode = second.exited.then((code) => {
      exited = true;
      return code;
    });
    // A steady stream of requests from before the second ledger connects until after it has gone.
    const answers: Array<Promise<string>> = [];
    let exitedAt: number | undefined;
    while (exitedAt === undefined || Date.now() - exitedAt < 300) {
      for (let i = 0; i < 4; i++) answers.push(ask());
      await new Promise((r) => setTimeout(r, 10));
      if (exited && exitedAt === undefined) exitedAt = Date.now();
    }
    expect(await exitCode).toBe(1);
    expect(second.output()).toMatch(/EADDRINUSE/);
    const results = await Promise.all(answers);
    expect(results.length).toBeGreaterThan(100);
    expect(results.filter((r) => r !== 'ok')).toEqual([]);
  });
});
