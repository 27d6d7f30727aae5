// Concurrency over HTTP on real PostgreSQL and NATS: copies of one event, many events racing for a budget or a daily
// cap. Afterwards the invariants are read from the database: one decision per (game, eventId), spent equal to the
// sum of accepted rewards, no cap exceeded.
import { randomUUID } from 'node:crypto';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, postEvent } from '../../support/ingest.ts';
import { createEventWorld, createPlayer, type EventWorld, gameState } from '../../support/ledger-fixtures.ts';
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
});
