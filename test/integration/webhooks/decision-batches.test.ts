// The decisions' outbox rows (migration 0015) on real PostgreSQL: ledger.record_events writes one row of (endpoint,
// decision) pairs per call, in the decisions' transaction, for exactly the enabled endpoints subscribed to each fresh
// decision's status; two ledger replicas making messages of them at once make each message exactly once; an
// endpoint deleted before its pairs were made into messages gets none; a row made into messages again (after a
// restore of the database to before it was) gives each message the id it had.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { Database, migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { EventRepository, type RecordEventParams } from '../../../services/ledger/src/events/repository.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { WebhookRepository } from '../../../services/ledger/src/webhooks/repository.ts';
import { createTestDatabase, sql } from '../../support/database.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';

const logger = pino({ level: 'silent' });
const sha256 = (text: string) => createHash('sha256').update(text).digest();

describe('the decisions webhook outbox rows', () => {
  let url: string;
  let replicas: Database[];
  let events: EventRepository;
  let worlds: EventWorld[];
  /** Endpoint ids: A both statuses, A accepted only, A disabled, B rejected only. */
  let endpoints: { aBoth: string; aAccepted: string; aDisabled: string; bRejected: string };

  const insertEndpoint = async (world: EventWorld, types: string[], enabled = true) => {
    const [row] = await sql<{ id: string }>(
      url,
      `insert into ledger.webhook_endpoints (id, game_id, organization_id, url, event_types, secret_ciphertext,
         enabled, disabled_reason)
       values (gen_random_uuid(), $1, $2, 'https://hooks.example.com/in', $3, $4, $5,
               case when $5 then null else 'developer' end) returning id`,
      [world.game.gameId, world.game.organizationId, types, randomBytes(60), enabled],
    );
    return row!.id;
  };
  /** An event of the world's player: its rule's type (accepted), or a type without a rule (rejected). */
  const event = (world: EventWorld, accepted: boolean, eventId = randomUUID()): RecordEventParams => ({
    keyHash: sha256(world.key.value),
    eventId,
    playerId: world.player.id,
    eventType: accepted ? world.eventType : 'no.rule',
    occurredAtMs: BigInt(Date.now()),
    payloadHash: sha256(eventId),
    receivedAt: null,
    rateLimitPerMinute: 1000,
  });
  const batches = () =>
    sql<{ pairs: number; created_at: Date }>(
      url,
      `select cardinality(endpoint_ids) as pairs, created_at from ledger.webhook_decision_batches order by id`,
    );
  const decisionMessages = () =>
    sql<{ endpoint_id: string; decision_id: string; event_type: string; same_time: boolean; due: boolean }>(
      url,
      `select m.endpoint_id, m.decision_id, m.event_type, m.created_at = d.created_at as same_time,
              m.state = 'pending' and m.next_attempt_at = m.created_at as due
         from ledger.webhook_messages m join ledger.events d on d.id = m.decision_id and d.game_id = m.game_id
        order by m.endpoint_id, m.decision_id`,
    );

  beforeAll(async () => {
    url = await createTestDatabase();
    await migrate(url, [identityMigrations, ledgerMigrations], logger);
    replicas = [await Database.open({ url, poolMax: 2, logger }), await Database.open({ url, poolMax: 2, logger })];
    events = new EventRepository(replicas[0]!);
    worlds = [
      await createEventWorld(url, { rewardCredits: 10, budgetCredits: 10_000 }),
      await createEventWorld(url, { rewardCredits: 10, budgetCredits: 10_000 }),
    ];
    const [a, b] = worlds as [EventWorld, EventWorld];
    endpoints = {
      aBoth: await insertEndpoint(a, ['decision.accepted', 'decision.rejected']),
      aAccepted: await insertEndpoint(a, ['decision.accepted', 'game.paused']),
      aDisabled: await insertEndpoint(a, ['decision.accepted', 'decision.rejected'], false),
      bRejected: await insertEndpoint(b, ['decision.rejected']),
    };
  });
  afterAll(async () => {
    await Promise.all((replicas ?? []).map((r) => r.close()));
  });

  it('writes one row of pairs per call, in its transaction, and each message exactly once from two replicas', async () => {
    const [a, b] = worlds as [EventWorld, EventWorld];
    const replayed = event(a, true);
    await events.recordEvents([replayed]);
    const call = [event(a, true), event(a, false), replayed, event(b, true), event(b, false), event(a, true)];
    const results = await events.recordEvents(call);
    expect(results.map((r) => r.outcome)).toEqual(['decided', 'decided', 'replayed', 'decided', 'decided', 'decided']);

    // The first call: A's accepted decision for two endpoints. The second: A's two accepted ones for two endpoints
    // each, A's rejected one for one, B's rejected one for one; the replay and B's accepted one for none.
    expect((await batches()).map((row) => row.pairs)).toEqual([2, 6]);
    expect(await decisionMessages()).toEqual([]);

    const repositories = replicas.map((replica) => new WebhookRepository(replica));
    const made = await Promise.all([
      repositories[0]!.expandDecisionBatches(1),
      repositories[1]!.expandDecisionBatches(1),
    ]);
    expect(made.sort()).toEqual([1, 1]);
    expect(await repositories[0]!.expandDecisionBatches(10)).toBe(0);
    expect(await batches()).toEqual([]);

    const id = (i: number) => (results[i] as { decision: { id: string } }).decision.id;
    const [first] = await sql<{ id: string }>(url, `select id from ledger.events where event_id = $1`, [
      replayed.eventId,
    ]);
    const pairs: Array<[string, string, string]> = [
      [endpoints.aBoth, first!.id, 'decision.accepted'],
      [endpoints.aAccepted, first!.id, 'decision.accepted'],
      [endpoints.aBoth, id(0), 'decision.accepted'],
      [endpoints.aAccepted, id(0), 'decision.accepted'],
      [endpoints.aBoth, id(1), 'decision.rejected'],
      [endpoints.aBoth, id(5), 'decision.accepted'],
      [endpoints.aAccepted, id(5), 'decision.accepted'],
      [endpoints.bRejected, id(4), 'decision.rejected'],
    ];
    const key = (x: { endpoint_id: string; decision_id: string }) => `${x.endpoint_id}/${x.decision_id}`;
    const expected = pairs
      .map(([endpoint_id, decision_id, event_type]) => ({
        endpoint_id,
        decision_id,
        event_type,
        same_time: true,
        due: true,
      }))
      .sort((x, y) => (key(x) < key(y) ? -1 : 1));
    expect(await decisionMessages()).toEqual(expected);
  });

  it('writes nothing for a call no endpoint listens to, and no message for an endpoint deleted meanwhile', async () => {
    const [a, b] = worlds as [EventWorld, EventWorld];
    await events.recordEvents([event(b, true)]);
    expect(await batches()).toEqual([]);

    const before = (await decisionMessages()).length;
    const [accepted] = await events.recordEvents([event(a, true)]);
    expect((await batches()).map((row) => row.pairs)).toEqual([2]);
    await sql(url, `delete from ledger.webhook_endpoints where id = $1`, [endpoints.aAccepted]);
    expect(await new WebhookRepository(replicas[1]!).expandDecisionBatches(10)).toBe(1);
    const after = await decisionMessages();
    expect(after).toHaveLength(before - 3 + 1);
    expect(after.filter((m) => m.decision_id === (accepted as { decision: { id: string } }).decision.id)).toEqual([
      {
        endpoint_id: endpoints.aBoth,
        decision_id: expect.any(String),
        event_type: 'decision.accepted',
        same_time: true,
        due: true,
      },
    ]);
  });

  it('gives a message the same id when its row is made into messages again (a restore to before it was made)', async () => {
    const [a] = worlds as [EventWorld, EventWorld];
    const [decided] = await events.recordEvents([event(a, true)]);
    const decisionId = (decided as { decision: { id: string } }).decision.id;
    const [row] = await sql<{ created_at: Date; endpoint_ids: string[]; decision_ids: string[] }>(
      url,
      `select created_at, endpoint_ids, decision_ids from ledger.webhook_decision_batches`,
    );
    const repository = new WebhookRepository(replicas[0]!);
    const ids = () =>
      sql<{ id: string; endpoint_id: string }>(
        url,
        `select id, endpoint_id from ledger.webhook_messages where decision_id = $1 order by endpoint_id`,
        [decisionId],
      );
    expect(await repository.expandDecisionBatches(10)).toBe(1);
    const first = await ids();
    expect(first).toHaveLength(1);
    // A version 8 UUID (RFC 9562), variant 10xx: a function of the endpoint and the decision, not a random one.
    expect(first[0]!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // The database as it was before the row was made into messages: the message gone, the row back.
    await sql(url, `delete from ledger.webhook_messages where decision_id = $1`, [decisionId]);
    await sql(
      url,
      `insert into ledger.webhook_decision_batches (created_at, endpoint_ids, decision_ids) values ($1, $2, $3)`,
      [row!.created_at, row!.endpoint_ids, row!.decision_ids],
    );
    expect(await repository.expandDecisionBatches(10)).toBe(1);
    expect(await ids()).toEqual(first);

    // The row back beside the message made of it (a restore between the two): the row goes, the message stays as it
    // is, and the rows after it are made into messages too (the expansion does not stop at the conflict).
    await sql(url, `update ledger.webhook_messages set attempts = 2 where decision_id = $1`, [decisionId]);
    await sql(
      url,
      `insert into ledger.webhook_decision_batches (created_at, endpoint_ids, decision_ids) values ($1, $2, $3)`,
      [row!.created_at, row!.endpoint_ids, row!.decision_ids],
    );
    const [later] = await events.recordEvents([event(a, true)]);
    const laterId = (later as { decision: { id: string } }).decision.id;
    expect(await repository.expandDecisionBatches(10)).toBe(2);
    expect(await ids()).toEqual(first);
    const [kept] = await sql<{ attempts: number }>(
      url,
      `select attempts from ledger.webhook_messages where decision_id = $1`,
      [decisionId],
    );
    expect(kept!.attempts).toBe(2);
    const [made] = await sql<{ n: number }>(
      url,
      `select count(*)::int as n from ledger.webhook_messages where decision_id = $1`,
      [laterId],
    );
    expect(made!.n).toBe(1);
  });
});
