// CONTRACT section 7: a 503 never claims that nothing was stored unless that is known; a retry with the same eventId
// answers the stored decision. Here the ledger's database connection is cut at chosen moments (a TCP proxy between
// the ledger and PostgreSQL), and the ledger is made to receive an event without ever answering.
import { fromBinary } from '@bufbuild/protobuf';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { EVENT_ANSWER_LOST } from '#runtime/contracts/event-answer-lost.ts';
import { DecisionCommittedSchema } from '#runtime/contracts/gen/rewards/v1/notices_pb.ts';
import { decisionsSubject } from '#runtime/contracts/subjects.ts';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { type Composed, compose } from '../../support/compose.ts';
import { createTestDatabase, sql } from '../../support/database.ts';
import { eventBody, expectDecision, expectError, postEvent } from '../../support/ingest.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startNats } from '../../support/servers.ts';
import { api } from '../../support/system.ts';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.ts';

const EVENTS_BATCH_PATH = '/api/game-sdk/v2/events/batch';

const logger = pino({ level: 'silent' });

async function migratedDatabase(): Promise<string> {
  const url = await createTestDatabase();
  await migrate(url, [identityMigrations, ledgerMigrations], logger);
  return url;
}

const decisionsOf = (url: string, eventId: string) =>
  sql<{ status: string; id: string }>(url, 'select id, status from ledger.events where event_id = $1', [eventId]);

describe("the ledger's database connection breaks during a decision", () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let db: string;
  let world: EventWorld;
  let proxy: TcpProxy;
  let system: Composed;

  beforeAll(async () => {
    nats = await startNats();
    db = await migratedDatabase();
    world = await createEventWorld(db);
    const target = new URL(db);
    proxy = await startTcpProxy(target.hostname, Number(target.port));
    const proxied = new URL(db);
    proxied.port = String(proxy.port);
    system = await compose({
      natsUrl: nats.url,
      identityDatabaseUrl: db,
      ledgerDatabaseUrl: proxied.toString(),
    });
    // Warm: the ledger's connections exist and its statement is prepared.
    expectDecision(await postEvent(system.url, world.key.value, eventBody(world)));
  });
  afterAll(async () => {
    await system?.stop();
    await proxy?.close();
    await nats?.stop();
  });

  it('after the commit: 503 saying the event was decided (its own decision is no replay); the retry answers it', async () => {
    const body = eventBody(world);
    // The live decisions of the game, as the gateway's subscription hears them.
    const watcher = await connect({ servers: nats.url });
    const notices = watcher.subscribe(decisionsSubject(world.game.gameId), { max: 1 });
    await watcher.flush();
    // The server's answer to record_events carries the outcome "decided"; it is sent after the commit.
    const cut = proxy.cutWhen('toClient', Buffer.from('"decided"'));
    const response = await postEvent(system.url, world.key.value, body);
    await cut;
    // The decision is fresh and committed: its live notice is published although its answer was lost.
    let noticed: string | undefined;
    for await (const message of notices) noticed = fromBinary(DecisionCommittedSchema, message.data).decision?.eventId;
    await watcher.close();
    expect(noticed).toBe(body.eventId.toLowerCase());
    // The request decided the event itself: a replay would say an earlier request did, and the fresh decision's
    // quota figures were in the lost answer (CONTRACT sections 7 and 11).
    expectError(response, 503, 'retry_later');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.body.error.message).toBe(EVENT_ANSWER_LOST);
    const stored = await decisionsOf(db, body.eventId);
    expect(stored).toEqual([{ id: expect.any(String), status: 'accepted' }]);
    // A retry answers the stored decision, as a replay.
    expect(expectDecision(await postEvent(system.url, world.key.value, body))).toMatchObject({
      id: stored[0]!.id,
      replayed: true,
    });
  });

  it('after the commit, in a batch: that event answers the 503, the batch is no whole-request 503', async () => {
    const decided = eventBody(world);
    const cut = proxy.cutWhen('toClient', Buffer.from('"decided"'));
    const response = await api(system.url, 'POST', EVENTS_BATCH_PATH, {
      token: world.key.value,
      body: { events: [decided] },
    });
    await cut;
    expect(response.status).toBe(200);
    expect(response.body.data.results).toEqual([
      { status: 503, error: { code: 'retry_later', message: EVENT_ANSWER_LOST } },
    ]);
    expect(await decisionsOf(db, decided.eventId)).toHaveLength(1);
  });

  it('before the statement reached the database: 503 that does not claim nothing was stored; the retry decides once', async () => {
    const body = eventBody(world);
    const cut = proxy.cutWhen('toServer', Buffer.from(body.eventId));
    const response = await postEvent(system.url, world.key.value, body);
    await cut;
    expectError(response, 503, 'retry_later');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.body.error.message).not.toMatch(/nothing was (stored|changed)/i);
    expect(response.body.error.message).toMatch(/same eventId/);
    expect(await decisionsOf(db, body.eventId)).toEqual([]);
    const decision = expectDecision(await postEvent(system.url, world.key.value, body));
    expect(decision).toMatchObject({ status: 'accepted', replayed: false });
    expect(await decisionsOf(db, body.eventId)).toHaveLength(1);
  });
});

describe('the ledger receives an event and never answers (killed after its commit)', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let db: string;
  let world: EventWorld;
  let system: Composed;

  beforeAll(async () => {
    nats = await startNats();
    db = await migratedDatabase();
    world = await createEventWorld(db);
    // identity-admission (the platform switch) only; the "ledger" is a subscriber that swallows RecordEvent.
    system = await compose({ natsUrl: nats.url, identityDatabaseUrl: db, requestTimeoutMs: 1000 });
  });
  afterAll(async () => {
    await system?.stop();
    await nats?.stop();
  });

  it('503 retry_later says the outcome is unknown and to retry with the same eventId', async () => {
    const blackhole = await connect({ servers: nats.url });
    try {
      // Every event operation: the edge sends RecordEventsWithProposedIds (edge batching) unless its batch size is 1,
      // and RecordEvent(s) while no ledger serves the proposed-id subjects.
      for (const subject of [
        'rewards.v1.ledger.RecordEvent',
        'rewards.v1.ledger.RecordEvents',
        'rewards.v1.ledger.RecordEventWithProposedId',
        'rewards.v1.ledger.RecordEventsWithProposedIds',
      ]) {
        blackhole.subscribe(subject, { queue: 'ledger', callback: () => undefined });
      }
      await blackhole.flush();
      const response = await postEvent(system.url, world.key.value, eventBody(world));
      expectError(response, 503, 'retry_later');
      expect(response.headers.get('retry-after')).toBe('1');
      expect(response.body.error.message).not.toMatch(/nothing was (stored|changed)/i);
      expect(response.body.error.message).toMatch(/unknown/);
      expect(response.body.error.message).toMatch(/same eventId/);
    } finally {
      await blackhole.close();
    }
  });

  it('no ledger at all (no responders): nothing was stored, and the 503 says so', async () => {
    const response = await postEvent(system.url, world.key.value, eventBody(world));
    expectError(response, 503, 'retry_later');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.body.error.message).toMatch(/Nothing was stored/);
  });
});
