// Edge batching over HTTP on real PostgreSQL and NATS: events that reach one ingest process
// while its RecordEvents requests are in flight travel to the ledger as one request, and each still gets exactly
// the answer it would have got alone. INGEST_EVENT_IN_FLIGHT_MAX=1 and a game row held by the test make the batch
// form deterministically (no timing in any assertion).
import { randomUUID } from 'node:crypto';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, expectError, postEvent, programMetric, until } from '../../support/ingest.ts';
import { createEventWorld, gameState, holdGameRow } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

describe('edge batching: concurrent events of one ingest process share one RecordEvents request', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem({
      env: { EVENT_RATE_LIMIT_PER_MINUTE: '100000', INGEST_EVENT_IN_FLIGHT_MAX: '1' },
    });
    db = system.databaseUrl!;
  });
  afterAll(async () => system?.stop());

  const metric = (name: string) => programMetric(system.url, name);

  it('the events queued behind a request in flight go as one request; each answer is its own', async () => {
    const world = await createEventWorld(db, { rewardCredits: 10, budgetCredits: 155 });
    const { release } = await holdGameRow(db, world.game.gameId);
    try {
      const sentBefore = await metric('ingest_event_batch_size_count');
      // The first event's request is the one in flight: it waits for the game row in PostgreSQL.
      const first = postEvent(system.url, world.key.value, eventBody(world));
      await until('the first event waits for the game row', async () => {
        const [row] = await sql<{ n: number }>(
          db,
          `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query like '%record_events%'`,
        );
        return row!.n >= 1;
      });
      // Then: 20 distinct events, 6 copies of one more, 2 conflicts of it, an unknown player.
      const copy = eventBody(world, { metadata: { copy: 1 } });
      const bodies = [
        ...Array.from({ length: 20 }, () => eventBody(world)),
        ...Array(6).fill(copy),
        { ...copy, metadata: { copy: 2 } },
        { ...copy, metadata: { copy: 3 } },
        eventBody(world, { playerId: randomUUID() }),
      ];
      const rest = bodies.map((body) => postEvent(system.url, world.key.value, body));
      await until('every later event waits at the edge', async () => (await metric('ingest_event_queue_depth')) >= 29);
      await release();

      expect(expectDecision(await first)).toMatchObject({ status: 'accepted', replayed: false });
      const answers = await Promise.all(rest);
      const distinct = answers.slice(0, 20).map(expectDecision);
      const copies = answers.slice(20, 26).map(expectDecision);
      expectError(answers[26]!, 409, 'event_conflict');
      expectError(answers[27]!, 409, 'event_conflict');
      expectError(answers[28]!, 404, 'invalid_player');
      // Budget 155 at 10 each: 15 acceptances in all, the first included; the decisions follow arrival order.
      const all = [...distinct, copies[0]!];
      expect(all.filter((d) => d.status === 'accepted')).toHaveLength(14);
      expect(all.filter((d) => d.reason === 'game_budget_exhausted')).toHaveLength(7);
      expect(new Set(copies.map((d) => d.id)).size).toBe(1);
      expect(copies.filter((d) => !d.replayed)).toHaveLength(1);
      expect(await gameState(db, world.game.gameId)).toEqual({
        spentCredits: 150,
        budgetCredits: 155,
        acceptedSum: 150,
        decisions: 22,
      });
      // Two requests carried the 30 events: the first alone, the 29 others together.
      expect((await metric('ingest_event_batch_size_count')) - sentBefore).toBe(2);
    } finally {
      await release();
    }
  });
});
