// A short NATS outage (nats-server killed and restarted on the same port) costs no more than the outage: while the
// edge is disconnected it answers 503 at once and /readyz says not ready; a request lost with the connection (here one
// that a subscriber received and never answered) is failed when the connection drops, so nothing waits for it; soon
// after nats-server is back, requests succeed.
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { type Composed, compose } from '../../support/compose.ts';
import { createTestDatabase } from '../../support/database.ts';
import { eventBody, expectError, postEvent } from '../../support/ingest.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { freePort, startNats, waitFor } from '../../support/servers.ts';
import { api } from '../../support/system.ts';

const logger = pino({ level: 'silent' });
// The edges' request timeout of a deployment; every bound asserted below is well inside it.
const REQUEST_TIMEOUT_MS = 5000;

type Nats = Awaited<ReturnType<typeof startNats>>;

async function kill(nats: Nats): Promise<void> {
  if (nats.process.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    nats.process.once('exit', () => resolve());
    nats.process.kill('SIGKILL');
  });
}

/** Posts fresh events until one is decided; the time that took. */
async function untilDecided(url: string, key: string, world: EventWorld, limitMs = 15_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const response = await postEvent(url, key, eventBody(world));
    if (response.status === 200) return Date.now() - started;
    expect(response.status).toBe(503);
    if (Date.now() - started > limitMs) throw new Error(`no decision within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function setup() {
  const port = await freePort();
  const nats = await startNats(port);
  const db = await createTestDatabase();
  await migrate(db, [identityMigrations, ledgerMigrations], logger);
  const world = await createEventWorld(db);
  return { port, nats, db, world };
}

describe('nats-server killed and restarted', () => {
  let port: number;
  let nats: Nats;
  let db: string;
  let world: EventWorld;
  let system: Composed;

  beforeAll(async () => {
    ({ port, nats, db, world } = await setup());
    system = await compose({
      natsUrl: nats.url,
      identityDatabaseUrl: db,
      ledgerDatabaseUrl: db,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
  });
  afterAll(async () => {
    await system?.stop();
    await nats?.stop();
  });

  it('while it is down: 503 at once and not ready; once it is back: decisions again', async () => {
    await untilDecided(system.url, world.key.value, world);
    await kill(nats);
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const response = await postEvent(system.url, world.key.value, eventBody(world));
      expectError(response, 503, 'retry_later');
      expect(response.headers.get('retry-after')).toBe('1');
      // Within the edge's wait for the connection to come back (NATS_UNDELIVERED_WAIT_MS, 1 s) and a little more.
      expect(Date.now() - started).toBeLessThan(2000);
      // Not sent at all: known not stored; or refused at the platform switch, which claims nothing.
      expect(response.body.error.message).toMatch(
        /Nothing was stored|^A dependency is temporarily unavailable; retry later\.$/,
      );
    }
    expect((await api(system.url, 'GET', '/readyz')).status).toBe(503);
    nats = await startNats(port);
    // The clients retry every half second; well inside the request timeout.
    expect(await untilDecided(system.url, world.key.value, world)).toBeLessThan(3000);
    expect((await api(system.url, 'GET', '/readyz')).status).toBe(200);
  }, 120_000);
});

describe('a shared platform-state request lost with the connection', () => {
  let port: number;
  let nats: Nats;
  let db: string;
  let world: EventWorld;
  let edge: Composed;
  let owners: Composed | undefined;

  beforeAll(async () => {
    ({ port, nats, db, world } = await setup());
    // The edge alone: the only one to receive its GetPlatformState is a subscriber that never answers.
    edge = await compose({ natsUrl: nats.url, requestTimeoutMs: REQUEST_TIMEOUT_MS });
  });
  afterAll(async () => {
    await owners?.stop();
    await edge?.stop();
    await nats?.stop();
  });

  it('fails the requests waiting for it when the connection drops; later requests do not wait for it', async () => {
    const blackhole = await connect({ servers: nats.url, reconnect: false });
    let asked = 0;
    blackhole.subscribe('rewards.v1.identity.GetPlatformState', {
      callback: () => {
        asked++;
      },
    });
    await blackhole.flush();
    const waiting = [1, 2, 3].map(() =>
      postEvent(edge.url, world.key.value, eventBody(world)).then((response) => ({ response, at: Date.now() })),
    );
    // The edge's question is out (concurrent requests share it): the requests are waiting for its answer.
    await waitFor(() => asked > 0, 'the edge asking GetPlatformState');
    const killedAt = Date.now();
    await kill(nats);
    nats = await startNats(port);
    // The state owners come back on the new server.
    owners = await compose({ natsUrl: nats.url, identityDatabaseUrl: db, ledgerDatabaseUrl: db });
    for (const { response, at } of await Promise.all(waiting)) {
      expectError(response, 503, 'retry_later');
      // Failed when the connection dropped, not when the lost request's timeout ran out.
      expect(at - killedAt).toBeLessThan(REQUEST_TIMEOUT_MS - 2000);
    }
    // Nothing left to wait for: with everything back, the next requests are decided at once.
    expect(await untilDecided(edge.url, world.key.value, world)).toBeLessThan(REQUEST_TIMEOUT_MS - 2000);
  }, 120_000);
});
