// Concurrency over HTTP on real PostgreSQL and NATS: copies of one event, many events racing for a budget or a daily
// cap. Afterwards the invariants are read from the database: one decision per (game, eventId), spent equal to the
// sum of accepted rewards, no cap exceeded.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, expectError, postEvent } from '../../support/ingest.ts';
import {
  createEventWorld,
  createPlayer,
  type EventWorld,
  gameState,
  revokeKey,
} from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

describe('concurrent events', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    // The rate limit is not what these tests are about.
    system = await startTestSystem({ env: { EVENT_RATE_LIMIT_PER_MINUTE: '100000' } });
    db = system.databaseUrl!;
  });
  afterAll(async () => system?.stop());

  const sendAll = (world: EventWorld, bodies: unknown[]) =>
    Promise.all(bodies.map(async (body) => expectDecision(await postEvent(system.url, world.key.value, body))));

  it('50 copies of one new event at once: one decision, one spend, exactly one replayed: false', async () => {
    const world = await createEventWorld(db, { rewardCredits: 7 });
    const body = eventBody(world, { metadata: { copy: true } });
    const decisions = await sendAll(world, Array(50).fill(body));
    expect(new Set(decisions.map((d) => d.id)).size).toBe(1);
    expect(decisions.filter((d) => !d.replayed)).toHaveLength(1);
    const { replayed: _ignored, ...first } = decisions[0]!;
    for (const d of decisions) expect({ ...d, replayed: undefined }).toEqual({ ...first, replayed: undefined });
    expect(decisions[0]).toMatchObject({ status: 'accepted', rewardCredits: 7 });
    expect(await gameState(db, world.game.gameId)).toEqual({
      spentCredits: 7,
      budgetCredits: 1_000_000,
      acceptedSum: 7,
      decisions: 1,
    });
    const [counter] = await sql(
      db,
      'select sum(attempts)::int as attempts from ledger.game_minute_counters where game_id = $1',
      [world.game.gameId],
    );
    expect(counter).toEqual({ attempts: 1 });
  });

  it('200 distinct events racing for a budget that covers 37: exactly 37 accepted, spent = sum of accepted', async () => {
    const world = await createEventWorld(db, { rewardCredits: 10, budgetCredits: 375 });
    const players = [
      world.player,
      ...(await Promise.all(Array.from({ length: 9 }, () => createPlayer(db, world.game)))),
    ];
    const bodies = Array.from({ length: 200 }, (_, i) =>
      eventBody(world, { playerId: players[i % players.length]!.id }),
    );
    const decisions = await sendAll(world, bodies);
    const accepted = decisions.filter((d) => d.status === 'accepted');
    expect(accepted).toHaveLength(37);
    expect(decisions.filter((d) => d.reason === 'game_budget_exhausted')).toHaveLength(163);
    expect(decisions.every((d) => !d.replayed)).toBe(true);
    const state = await gameState(db, world.game.gameId);
    expect(state).toEqual({ spentCredits: 370, budgetCredits: 375, acceptedSum: 370, decisions: 200 });
    expect(accepted.reduce((sum, d) => sum + d.rewardCredits, 0)).toBe(state.spentCredits);
  });

  it('200 distinct events of one player racing for a daily cap that covers 37: exactly 37 accepted', async () => {
    const world = await createEventWorld(db, { rewardCredits: 10, dailyPlayerCapCredits: 379 });
    const decisions = await sendAll(
      world,
      Array.from({ length: 200 }, () => eventBody(world)),
    );
    expect(decisions.filter((d) => d.status === 'accepted')).toHaveLength(37);
    expect(decisions.filter((d) => d.reason === 'daily_player_cap')).toHaveLength(163);
    expect(await gameState(db, world.game.gameId)).toMatchObject({
      spentCredits: 370,
      acceptedSum: 370,
      decisions: 200,
    });
    const totals = await sql(db, 'select credits::int from ledger.player_daily_totals where player_id = $1', [
      world.player.id,
    ]);
    expect(totals).toEqual([{ credits: 370 }]);
  });

  it('copies and distinct events mixed, across games of one project: one decision per (game, eventId)', async () => {
    const one = await createEventWorld(db, { rewardCredits: 3, budgetCredits: 30 });
    const two = await createEventWorld(db, {
      rewardCredits: 5,
      budgetCredits: 50,
      project: { organizationId: one.game.organizationId, projectId: one.game.projectId },
    });
    const work: Array<Promise<ReturnType<typeof expectDecision>>> = [];
    const ids = { one: [] as string[], two: [] as string[] };
    for (let i = 0; i < 20; i++) {
      for (const [world, list] of [
        [one, ids.one],
        [two, ids.two],
      ] as const) {
        const body = eventBody(world, { eventId: randomUUID() });
        list.push(body.eventId);
        for (let copy = 0; copy < 4; copy++) {
          work.push(postEvent(system.url, world.key.value, body).then(expectDecision));
        }
      }
    }
    const decisions = await Promise.all(work);
    for (const [world, list] of [
      [one, ids.one],
      [two, ids.two],
    ] as const) {
      const mine = decisions.filter((d) => d.gameId === world.game.gameId);
      expect(mine).toHaveLength(80);
      for (const eventId of list) {
        const copies = mine.filter((d) => d.eventId === eventId);
        expect(new Set(copies.map((d) => d.id)).size).toBe(1);
        expect(copies.filter((d) => !d.replayed)).toHaveLength(1);
      }
      const state = await gameState(db, world.game.gameId);
      expect(state).toEqual({
        spentCredits: state.budgetCredits,
        budgetCredits: state.budgetCredits,
        acceptedSum: state.budgetCredits,
        decisions: 20,
      });
    }
  });

  describe('the key revoked while the event waits for the game lock', () => {
    /** Holds the game row's lock in an open transaction until `release` is called. */
    async function holdGameLock(gameId: string) {
      const client = new pg.Client({ connectionString: db });
      await client.connect();
      await client.query('begin');
      await client.query('select 1 from ledger.games where id = $1 for update', [gameId]);
      let released = false;
      return {
        release: async () => {
          if (released) return;
          released = true;
          await client.query('commit');
          await client.end();
        },
      };
    }

    /** Resolves once `count` sessions wait for a row lock of this database (no sleeping on a guess). */
    async function waitersOnLock(count: number) {
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const [row] = await sql<{ n: number }>(
          db,
          `select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query like '%record_event%'`,
        );
        if (row!.n >= count) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`fewer than ${count} sessions ever waited for the game lock`);
    }

    it('answers 401 invalid_key and stores nothing: the revocation is rechecked under the lock', async () => {
      const world = await createEventWorld(db);
      const lock = await holdGameLock(world.game.gameId);
      try {
        const body = eventBody(world);
        const pending = postEvent(system.url, world.key.value, body);
        await waitersOnLock(1);
        await revokeKey(db, world.key.id);
        await lock.release();
        expectError(await pending, 401, 'invalid_key');
        expect(await gameState(db, world.game.gameId)).toMatchObject({ decisions: 0, spentCredits: 0 });
      } finally {
        await lock.release();
      }
    });

    /** The ledger's metrics: events waiting in its queues, and events sent to the database in batches so far. */
    async function ledgerQueue() {
      const text = await (await fetch(`${system.url}/metrics`)).text();
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? 0);
      return { queued: value('ledger_event_queue_depth'), batched: value('ledger_event_batch_size_sum') };
    }

    it('copies waiting behind the lock get the decision of the first one (re-read under the lock)', async () => {
      const world = await createEventWorld(db);
      const lock = await holdGameLock(world.game.gameId);
      try {
        const body = eventBody(world);
        const before = await ledgerQueue();
        const pending = Array.from({ length: 3 }, () => postEvent(system.url, world.key.value, body));
        // A batch with the first copy waits for the game row in PostgreSQL. The other copies are either in that
        // batch (they reached the ledger together: replays of the first copy inside the batch) or queue behind it in
        // the ledger (one batch of a key in the database at a time) and go together as the next batch.
        await waitersOnLock(1);
        const deadline = Date.now() + 20_000;
        for (;;) {
          const now = await ledgerQueue();
          if (now.queued + now.batched - before.batched >= 3) break;
          if (Date.now() > deadline) throw new Error('the three copies never all reached the ledger');
          await new Promise((r) => setTimeout(r, 20));
        }
        await lock.release();
        const decisions = (await Promise.all(pending)).map(expectDecision);
        expect(new Set(decisions.map((d) => d.id)).size).toBe(1);
        expect(decisions.filter((d) => !d.replayed)).toHaveLength(1);
        expect(await gameState(db, world.game.gameId)).toMatchObject({ decisions: 1, spentCredits: 10 });
      } finally {
        await lock.release();
      }
    });
  });
});
