// Game clocks and test players (CONTRACT section 11.2) on real PostgreSQL and NATS: advanceGameClock's limits; the
// daily cap's UTC day and the occurredAt window on the game's clock, single events and batches alike; the rate
// limit's minute and createdAt in real time; a replay unchanged after an advance; gameTime and Game.clock in GraphQL
// and the export; createTestPlayer's player decided as any linked player's.
import { randomUUID } from 'node:crypto';
import { act, developer, expectError, ok } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, postEvent } from '../../support/ingest.ts';
import { createEventWorld, createPlayer, type EventWorld } from '../../support/ledger-fixtures.ts';
import { DECISIONS, liveClient, liveSubscriptions, subscribeDecisions, until } from '../../support/live.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';
import { addOwner } from '../../support/webhook-receiver.ts';
import { gql } from '../graphql/helpers.ts';

const BATCH_PATH = '/api/game-sdk/v2/events/batch';
const DAY_S = 86_400;
const at = (iso: string, seconds = 0) => new Date(Date.parse(iso) + seconds * 1000).toISOString();

describe('game clocks', () => {
  let system: TestSystem;
  let db: string;
  let token: string;
  let sub: string;

  beforeAll(async () => {
    system = await startTestSystem(
      process.env.CLOCKS_DEBUG ? { logger: (await import('pino')).pino({ level: 'error' }) } : {},
    );
    db = system.databaseUrl as string;
    ({ token, sub } = await developer(system));
  });
  afterAll(async () => system?.stop());
  afterEach(() => system?.clock.reset());

  async function ownedWorld(options: Parameters<typeof createEventWorld>[1] = {}): Promise<EventWorld> {
    const world = await createEventWorld(db, { rewardCredits: 10, dailyPlayerCapCredits: 20, ...options });
    await addOwner(db, world.game.organizationId, sub);
    return world;
  }

  async function advance(world: EventWorld, seconds: number) {
    return ok(system, token, { type: 'advanceGameClock', gameId: world.game.gameId, seconds });
  }

  async function post(world: EventWorld, receivedIso: string, occurredIso: string, eventId = randomUUID()) {
    system.clock.set(new Date(receivedIso));
    return expectDecision(
      await postEvent(system.url, world.key.value, eventBody(world, { eventId, occurredAt: occurredIso })),
    );
  }

  async function postBatch(world: EventWorld, receivedIso: string, occurredIso: string, count: number) {
    system.clock.set(new Date(receivedIso));
    const response = await api(system.url, 'POST', BATCH_PATH, {
      token: world.key.value,
      body: { events: Array.from({ length: count }, () => eventBody(world, { occurredAt: occurredIso })) },
    });
    expect(response.status).toBe(200);
    return (response.body as { data: { results: Array<{ status: number; data: any }> } }).data.results.map((r) => {
      expect(r.status).toBe(200);
      return r.data;
    });
  }

  it('advanceGameClock: seconds 1..31,536,000, at most 315,360,000 s ahead, answers {id, mode}', async () => {
    const world = await ownedWorld();
    for (const seconds of [0, -1, 31_536_001, 1.5]) {
      expectError(
        await act(system, token, { type: 'advanceGameClock', gameId: world.game.gameId, seconds }),
        400,
        'invalid_action',
      );
    }
    expect(await advance(world, 31_536_000)).toEqual({ id: world.game.gameId, mode: 'sandbox' });
    for (let i = 1; i < 10; i++) await advance(world, 31_536_000);
    // 315,360,000 reached: one more second is refused, naming the limit.
    const refused = await act(system, token, { type: 'advanceGameClock', gameId: world.game.gameId, seconds: 1 });
    expectError(refused, 400, 'invalid_action');
    expect(JSON.stringify(refused.body)).toMatch(/315,360,000/);
    const [row] = await sql<{ offset: string }>(
      db,
      'select clock_offset_seconds::text as offset from ledger.games where id = $1',
      [world.game.gameId],
    );
    expect(row?.offset).toBe('315360000');
    // A viewer may not: 403 forbidden, for both actions.
    const viewer = await developer(system);
    await sql(
      db,
      `insert into ledger.members (id, organization_id, identity_user_id, role, joined_at)
       values (gen_random_uuid(), $1, $2, 'viewer', now())`,
      [world.game.organizationId, viewer.sub],
    );
    expectError(
      await act(system, viewer.token, { type: 'advanceGameClock', gameId: world.game.gameId, seconds: 1 }),
      403,
      'forbidden',
    );
    expectError(
      await act(system, viewer.token, { type: 'createTestPlayer', gameId: world.game.gameId, externalPlayerId: 'v' }),
      403,
      'forbidden',
    );
    // Another organization's game: not found.
    const other = await createEventWorld(db);
    expectError(
      await act(system, token, { type: 'advanceGameClock', gameId: other.game.gameId, seconds: 1 }),
      404,
      'not_found',
    );
  });

  it('a cap reached, the clock advanced a day, the cap free again (single events)', async () => {
    const world = await ownedWorld();
    const t0 = '2031-08-01T10:00:00.000Z';
    expect((await post(world, t0, t0)).status).toBe('accepted');
    expect((await post(world, at(t0, 1), at(t0, 1))).status).toBe('accepted');
    const capped = await post(world, at(t0, 2), at(t0, 2));
    expect(capped).toMatchObject({ status: 'rejected', reason: 'daily_player_cap' });

    await advance(world, DAY_S);
    // The same real day; the game's day is the next one: the cap is free, occurredAt on the game's clock.
    const fresh = await post(world, at(t0, 3), at(t0, DAY_S + 3));
    expect(fresh).toMatchObject({ status: 'accepted', rewardCredits: 10 });
    // createdAt stays real time.
    expect(fresh.createdAt).toBe(at(t0, 3));
    // The window follows the clock: an occurredAt of real time is now a day off.
    const stale = await post(world, at(t0, 4), at(t0, 4));
    expect(stale).toMatchObject({ status: 'rejected', reason: 'timestamp_out_of_window' });
    // Within 5 minutes of the game's clock either way is inside.
    expect((await post(world, at(t0, 5), at(t0, DAY_S + 5 - 300))).status).toBe('accepted');
    expect(await post(world, at(t0, 6), at(t0, DAY_S + 6 + 301))).toMatchObject({
      reason: 'timestamp_out_of_window',
    });

    // The stored decisions carry their game time (GraphQL): createdAt + the offset then.
    const read = await gql(
      system,
      token,
      `query($g: UUID!) { decisions(gameId: $g, first: 10) { edges { node { id createdAt gameTime } } } }`,
      { g: world.game.gameId },
    );
    expect(read.body.errors).toBeUndefined();
    const nodes = (read.body.data as any).decisions.edges.map((e: any) => e.node);
    const byId = new Map(nodes.map((n: any) => [n.id, n]));
    expect(byId.get(capped.id)).toMatchObject({ createdAt: capped.createdAt, gameTime: capped.createdAt });
    expect(byId.get(fresh.id)).toMatchObject({ createdAt: at(t0, 3), gameTime: at(t0, DAY_S + 3) });
  });

  it('batches decide on the game clock as single events do', async () => {
    const world = await ownedWorld();
    const untouched = await ownedWorld();
    const t0 = '2031-09-01T23:59:00.000Z';
    await advance(world, DAY_S);
    // Three events of one batch: two fill the player's cap of the game's day, the third is capped.
    const first = await postBatch(world, t0, at(t0, DAY_S), 3);
    expect(first.map((d) => d.reason)).toEqual([null, null, 'daily_player_cap']);
    // An occurredAt of real time in a batch: out of the game's window; the other game keeps real time.
    const stale = await postBatch(world, at(t0, 1), at(t0, 1), 1);
    expect(stale[0]).toMatchObject({ status: 'rejected', reason: 'timestamp_out_of_window' });
    const real = await postBatch(untouched, at(t0, 1), at(t0, 1), 1);
    expect(real[0]).toMatchObject({ status: 'accepted' });
    // Another day later on the game's clock: free again.
    await advance(world, DAY_S);
    const again = await postBatch(world, at(t0, 2), at(t0, 2 * DAY_S + 2), 2);
    expect(again.map((d) => d.status)).toEqual(['accepted', 'accepted']);
    // The rate limit's minute stays real time: every attempt above counted in the real minutes of receipt.
    const [minutes] = await sql<{ n: string }>(
      db,
      `select count(*)::text as n from ledger.game_minute_counters where game_id = $1
         and minute >= $2::timestamptz - interval '1 minute' and minute < $2::timestamptz + interval '2 minutes'`,
      [world.game.gameId, t0],
    );
    expect(Number(minutes?.n)).toBeGreaterThan(0);
  });

  it('a replay answers the stored decision after an advance', async () => {
    const world = await ownedWorld();
    const t0 = '2031-10-01T08:00:00.000Z';
    const eventId = randomUUID();
    const original = await post(world, t0, t0, eventId);
    expect(original.status).toBe('accepted');
    await advance(world, 3 * DAY_S);
    const replay = await post(world, at(t0, 10), t0, eventId);
    expect(replay).toEqual({ ...original, replayed: true });
  });

  it('GraphQL Game.clock and the export carry the clock', async () => {
    const world = await ownedWorld();
    await advance(world, 3600);
    const t0 = new Date().toISOString();
    const decision = await post(world, t0, at(t0, 3600));
    expect(decision.status).toBe('accepted');
    system.clock.reset();
    const read = await gql(system, token, `{ snapshot { games { id clock { now advancedSeconds } } } }`);
    expect(read.body.errors).toBeUndefined();
    const game = (read.body.data as any).snapshot.games.find((g: any) => g.id === world.game.gameId);
    expect(game.clock.advancedSeconds).toBe(3600);
    expect(Math.abs(Date.parse(game.clock.now) - (Date.now() + 3_600_000))).toBeLessThan(60_000);

    const from = at(t0, -60);
    const to = at(t0, 60);
    const exported = await api(
      system.url,
      'GET',
      `/api/developer/v1/decisions/export?gameId=${world.game.gameId}&from=${from}&to=${to}`,
      { token },
    );
    expect(exported.status).toBe(200);
    const text = typeof exported.body === 'string' ? exported.body : JSON.stringify(exported.body);
    const line = JSON.parse(text.trim().split('\n')[0] as string);
    expect(line).toMatchObject({ id: decision.id, createdAt: t0, gameTime: at(t0, 3600) });
    expect(Object.keys(line).slice(-2)).toEqual(['gameTime', 'externalPlayerId']);

    // The REST snapshot's game keeps the document's fields.
    const rest = await api(system.url, 'GET', '/api/developer/v1/console', { token });
    const restGame = (rest.body as any).data.games.find((g: any) => g.id === world.game.gameId);
    expect(restGame.clock).toBeUndefined();
  });

  it('the live subscription carries gameTime', async () => {
    const world = await ownedWorld();
    await advance(world, 7200);
    const before = await liveSubscriptions(system.url);
    const live = liveClient(system.url, { token });
    try {
      const recorded = subscribeDecisions(
        live,
        world.game.gameId,
        DECISIONS.replace('createdAt }', 'createdAt gameTime }'),
      );
      await until(
        async () => recorded.errors.length > 0 || (await liveSubscriptions(system.url)) > before,
        'the subscription',
      );
      expect(recorded.errors).toEqual([]);
      const t0 = new Date().toISOString();
      const decision = await post(world, t0, at(t0, 7200));
      expect(decision.status).toBe('accepted');
      await until(() => recorded.events.length === 1, 'the decision', 5000);
      expect(recorded.events[0]).toMatchObject({ id: decision.id, createdAt: t0, gameTime: at(t0, 7200) });
    } finally {
      await live.dispose();
    }
  });

  it('the rule dry-run replays each decision at its stored game time', async () => {
    const world = await ownedWorld();
    const t0 = '2031-11-01T12:00:00.000Z';
    await post(world, t0, t0);
    await advance(world, DAY_S);
    await post(world, at(t0, 1), at(t0, DAY_S + 1));
    system.clock.reset();
    const read = await gql(
      system,
      token,
      `query($i: SimulateRuleInput!) { simulateRule(input: $i) { considered flipCount } }`,
      {
        i: {
          gameId: world.game.gameId,
          eventType: world.eventType,
          rewardCredits: 10,
          dailyPlayerCapCredits: 20,
          active: true,
          from: at(t0, -60),
          to: at(t0, 60),
        },
      },
    );
    expect(read.body.errors).toBeUndefined();
    // Replayed at its game time, the second decision is inside its window as stored: nothing flips.
    expect((read.body.data as any).simulateRule).toEqual({ considered: 2, flipCount: 0 });
  });
});

describe('test players', () => {
  let system: TestSystem;
  let db: string;
  let token: string;
  let sub: string;

  beforeAll(async () => {
    system = await startTestSystem();
    db = system.databaseUrl as string;
    ({ token, sub } = await developer(system));
  });
  afterAll(async () => system?.stop());

  it('creates a linked test player whose events are accepted; a taken external id is 409 conflict', async () => {
    const world = await createEventWorld(db, { rewardCredits: 10 });
    await addOwner(db, world.game.organizationId, sub);
    const created = await ok(system, token, {
      type: 'createTestPlayer',
      gameId: world.game.gameId,
      externalPlayerId: 'tester-1',
    });
    expect(Object.keys(created).sort()).toEqual(['id', 'mode']);
    expectError(
      await act(system, token, { type: 'createTestPlayer', gameId: world.game.gameId, externalPlayerId: 'tester-1' }),
      409,
      'conflict',
    );
    expectError(
      await act(system, token, { type: 'createTestPlayer', gameId: world.game.gameId, externalPlayerId: '' }),
      400,
      'invalid_action',
    );
    const taken = await createPlayer(db, world.game);
    expectError(
      await act(system, token, {
        type: 'createTestPlayer',
        gameId: world.game.gameId,
        externalPlayerId: taken.externalPlayerId,
      }),
      409,
      'conflict',
    );
    // No device permit was made for it.
    const [permits] = await sql<{ n: string }>(
      db,
      `select count(*)::text as n from identity.device_permits d join ledger.players p on p.credits_user_id = d.credits_user_id
        where p.id = $1`,
      [created.id],
    );
    expect(permits?.n).toBe('0');

    const decision = expectDecision(
      await postEvent(system.url, world.key.value, eventBody(world, { playerId: created.id })),
    );
    expect(decision).toMatchObject({ status: 'accepted', rewardCredits: 10, playerId: created.id });

    const read = await gql(
      system,
      token,
      `query($g: UUID!) { records(kind: players, gameId: $g, first: 10) { edges { node { ... on DeveloperPlayer { id test linkedAt } } } } }`,
      { g: world.game.gameId },
    );
    expect(read.body.errors).toBeUndefined();
    const players = (read.body.data as any).records.edges.map((e: any) => e.node);
    expect(players.find((p: any) => p.id === created.id)).toMatchObject({ test: true, linkedAt: expect.any(String) });
    expect(players.find((p: any) => p.id === world.player.id)).toMatchObject({ test: false });
  });
});
