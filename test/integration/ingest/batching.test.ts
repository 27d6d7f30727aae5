// Batched decisions change nothing: the same randomized event streams (fast-check) decided by
//   - the single-event function ledger.record_event (load/lib/single-event.ts), one event after the other (the
//     reference),
//   - the ledger's DecisionBatcher with batches of 1 (ledger.record_events, one event per call),
//   - the DecisionBatcher with batches of N (every event submitted at once, so the queues form real batches),
//   - the same with one connection and groups of keys (several keys' batches in one transaction),
// each on its own copy of the same world, must give identical decisions (outcome, status, reason, reward, times,
// which decision a replay answers) and identical final balances (game spend, daily totals, minute counters).
// The streams mix fresh events, duplicates (replays, also inside one batch), conflicts, unknown players, unknown and
// revoked keys, caps, budgets, inactive and unknown rules, unlinked and disabled players, a paused game, timestamps
// outside the window, and receipt times crossing minute boundaries and a UTC day boundary, over several games.
// Real PostgreSQL; no timing in any assertion.
import { createHash, randomUUID } from 'node:crypto';
import type { PostgreSqlConnection } from '@mikro-orm/postgresql';
import fc from 'fast-check';
import pg from 'pg';
import { pino } from 'pino';
import { Rejected } from '#runtime/batching/keyed-batcher.ts';
import { Database, migrate } from '#runtime/db/database.ts';
import { DeadlinePassedError } from '#runtime/transport/deadline.ts';
import { installSingleEventFunction, recordEvent } from '../../../load/lib/single-event.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { DecisionBatcher, DecisionPolicy } from '../../../services/ledger/src/events/batcher.ts';
import {
  EventRepository,
  RECORD_EVENTS_SQL,
  type RecordEventParams,
  type RecordResult,
  recordEventsValues,
} from '../../../services/ledger/src/events/repository.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { createTestDatabase, sql } from '../../support/database.ts';
import {
  createGame,
  createKey,
  createPlayer,
  createProject,
  createRule,
  type GameFixture,
  type KeyFixture,
  revokeKey,
} from '../../support/ledger-fixtures.ts';

const logger = pino({ level: 'silent' });
const RATE_LIMIT = 6;
const GAMES = 3;
/** Player slots of each game: linked, linked, unlinked, disabled account, no account. */
const PLAYER_SLOTS = 5;
const EVENT_TYPES = ['a.win', 'b.win', 'c.off', 'd.none'];
const START_MS = Date.parse('2031-07-01T23:57:10.000Z');

const sha256 = (text: string) => createHash('sha256').update(text).digest();

interface World {
  games: GameFixture[];
  keys: KeyFixture[];
  revokedKey: KeyFixture;
  players: string[][];
}

/** One copy of the world: every copy is configured identically; only the ids differ. */
async function createWorld(db: string): Promise<World> {
  const project = await createProject(db, { budgetCredits: 10_000 });
  const games: GameFixture[] = [];
  const keys: KeyFixture[] = [];
  const players: string[][] = [];
  for (let g = 0; g < GAMES; g++) {
    const game = await createGame(db, {
      project,
      budgetCredits: [120, 400, 90][g],
      dailyPlayerCapCredits: [40, 1000, 35][g],
      status: g === 2 ? 'paused' : 'active',
    });
    await createRule(db, game, 'a.win', 7);
    await createRule(db, game, 'b.win', 11);
    await createRule(db, game, 'c.off', 5, false);
    keys.push(await createKey(db, game, 'secret'));
    const slots = [
      await createPlayer(db, game),
      await createPlayer(db, game),
      await createPlayer(db, game, { linked: false }),
      await createPlayer(db, game, { account: 'disabled' }),
      await createPlayer(db, game, { account: 'missing' }),
    ];
    players.push(slots.map((p) => p.id));
    games.push(game);
  }
  const revokedKey = await createKey(db, games[0]!, 'secret');
  await revokeKey(db, revokedKey.id);
  return { games, keys, revokedKey, players };
}

/** A symbolic event: instantiated per world. */
interface StreamEvent {
  game: number;
  key: 'own' | 'revoked' | 'unknown';
  /** Player slot; PLAYER_SLOTS means a player of the next game, PLAYER_SLOTS + 1 an unknown id. */
  player: number;
  type: number;
  eventId: string;
  /** The payload's identity: same label, same hash. */
  payload: string;
  occurredOffsetMs: number;
  receivedAtMs: number;
}

const UNKNOWN_PLAYER = '7f0c2a4e-59a1-4c7b-9a0e-3f5d8c2b1a60';
const UNKNOWN_KEY_HASH = sha256('no such key');

function instantiate(world: World, e: StreamEvent): RecordEventParams {
  const keyHash =
    e.key === 'unknown'
      ? UNKNOWN_KEY_HASH
      : sha256(e.key === 'revoked' ? world.revokedKey.value : world.keys[e.game]!.value);
  const playerId =
    e.player < PLAYER_SLOTS
      ? world.players[e.game]![e.player]!
      : e.player === PLAYER_SLOTS
        ? world.players[(e.game + 1) % GAMES]![0]!
        : UNKNOWN_PLAYER;
  return {
    keyHash,
    eventId: e.eventId,
    playerId,
    eventType: EVENT_TYPES[e.type]!,
    occurredAtMs: BigInt(e.receivedAtMs + e.occurredOffsetMs),
    payloadHash: sha256(e.payload),
    receivedAt: new Date(e.receivedAtMs),
    rateLimitPerMinute: RATE_LIMIT,
  };
}

const stepArb = fc.record({
  kind: fc.constantFrom('fresh', 'fresh', 'fresh', 'fresh', 'copy', 'copy', 'conflict'),
  game: fc.integer({ min: 0, max: GAMES - 1 }),
  key: fc.constantFrom('own', 'own', 'own', 'own', 'own', 'own', 'own', 'own', 'revoked', 'unknown'),
  player: fc.oneof(
    { weight: 12, arbitrary: fc.integer({ min: 0, max: 1 }) },
    { weight: 4, arbitrary: fc.integer({ min: 2, max: PLAYER_SLOTS + 1 }) },
  ),
  type: fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 1 }) }, fc.integer({ min: 2, max: 3 })),
  occurredOffsetMs: fc.oneof(
    { weight: 10, arbitrary: fc.integer({ min: -60_000, max: 60_000 }) },
    fc.constantFrom(-300_000, 300_000, -300_001, 300_001, -900_000),
  ),
  /** How far the receipt clock moves before this event. */
  advanceMs: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 40_000 })),
  pick: fc.nat(),
});

/** A stream: the receipt clock never goes back (as the database's clock). */
const streamArb = fc.array(stepArb, { minLength: 20, maxLength: 140 }).map((steps) => {
  const events: StreamEvent[] = [];
  let now = START_MS;
  steps.forEach((step, i) => {
    now += step.advanceMs;
    const earlier = events.length > 0 ? events[step.pick % events.length] : undefined;
    if (step.kind === 'copy' && earlier) {
      events.push({ ...earlier, receivedAtMs: now });
    } else if (step.kind === 'conflict' && earlier) {
      events.push({ ...earlier, payload: `${earlier.payload}+changed${i}`, type: step.type, receivedAtMs: now });
    } else {
      events.push({
        game: step.game,
        key: step.key as StreamEvent['key'],
        player: step.player,
        type: step.type,
        eventId: randomUUID(),
        payload: `payload-${i}`,
        occurredOffsetMs: step.occurredOffsetMs,
        receivedAtMs: now,
      });
    }
  });
  return events;
});

/** A decision with the world's ids replaced by symbols, and the decision id by the index of the event that made it. */
function normalize(world: World, results: Array<RecordResult | { error: string }>) {
  const firstIndex = new Map<string, number>();
  const playerSymbol = new Map<string, string>();
  world.players.forEach((slots, g) => {
    slots.forEach((id, p) => {
      playerSymbol.set(id, `g${g}p${p}`);
    });
  });
  const gameSymbol = new Map(world.games.map((game, g) => [game.gameId, `g${g}`]));
  return results.map((r, i) => {
    if ('error' in r) return { error: r.error };
    if (r.outcome !== 'decided' && r.outcome !== 'replayed') return { outcome: r.outcome };
    const d = r.decision;
    if (!firstIndex.has(d.id)) firstIndex.set(d.id, i);
    return {
      outcome: r.outcome,
      decision: firstIndex.get(d.id),
      game: gameSymbol.get(d.gameId),
      organization: d.organizationId === world.games[0]!.organizationId,
      player: playerSymbol.get(d.playerId),
      eventType: d.eventType,
      occurredAtMs: d.occurredAtMs,
      status: d.status,
      reason: d.reason,
      rewardCredits: d.rewardCredits.toString(),
      createdAtMs: d.createdAtMs,
    };
  });
}

/** The balances a stream leaves: game spend and decisions, daily totals, minute counters (ids as symbols). */
async function balances(db: string, world: World) {
  const out: Record<string, unknown> = {};
  for (let g = 0; g < GAMES; g++) {
    const id = world.games[g]!.gameId;
    const [game] = await sql(
      db,
      `select spent_credits::text as spent,
         (select count(*)::int from ledger.events e where e.game_id = g.id) as decisions,
         (select coalesce(sum(reward_credits), 0)::text from ledger.events e where e.game_id = g.id) as rewarded
       from ledger.games g where g.id = $1`,
      [id],
    );
    const minutes = await sql(
      db,
      `select to_char(minute at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as minute, attempts
         from ledger.game_minute_counters where game_id = $1 order by minute`,
      [id],
    );
    const days = await sql<{ player_id: string; day: string; credits: string }>(
      db,
      `select player_id, day::text as day, credits::text as credits from ledger.player_daily_totals
         where player_id = any($1::uuid[]) order by day, player_id`,
      [world.players[g]],
    );
    out[`g${g}`] = {
      game,
      minutes,
      days: days
        .map((d) => ({ player: world.players[g]!.indexOf(d.player_id), day: d.day, credits: d.credits }))
        .sort((a, b) => a.day.localeCompare(b.day) || a.player - b.player),
    };
  }
  return out;
}

const settle = (promise: Promise<RecordResult>) =>
  promise.then(
    (r): RecordResult | { error: string } => r,
    (e: unknown) => ({ error: e instanceof Error ? e.name : String(e) }),
  );

/** A world whose first game has a second secret key, and a fresh event of that game's first player. */
async function gameWithTwoKeys(db: string) {
  const world = await createWorld(db);
  const secondKey = await createKey(db, world.games[0]!, 'secret');
  const event: StreamEvent = {
    game: 0,
    key: 'own',
    player: 0,
    type: 0,
    eventId: randomUUID(),
    payload: 'the one',
    occurredOffsetMs: 0,
    receivedAtMs: Date.now(),
  };
  return { world, secondKey, event };
}

/** Waits until two calls of record_events wait for a lock (a row the test holds); throws `failure` after 20 s. */
async function twoCallsWaitForLocks(db: string, failure: string): Promise<void> {
  for (const deadline = Date.now() + 20_000; ; ) {
    if (Date.now() > deadline) throw new Error(failure);
    const [waiting] = await sql<{ n: number }>(
      db,
      `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query like '%record_events%'`,
    );
    if (waiting!.n >= 2) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A fresh event of game 2's own key for player `player` of the world (the statement tests' events). */
function freshOfOwnKey(world: Parameters<typeof instantiate>[0], player: number, payload: string) {
  return instantiate(world, {
    game: 2,
    key: 'own',
    player,
    type: 0,
    eventId: randomUUID(),
    payload,
    occurredOffsetMs: 0,
    receivedAtMs: Date.now(),
  });
}

describe('batched decisions: batch size 1 and N decide exactly as one event at a time', () => {
  let db: string;
  let database: Database;
  let repository: EventRepository;
  let referencePool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db, [identityMigrations, ledgerMigrations], logger);
    await installSingleEventFunction(db);
    database = await Database.open({ url: db, poolMax: 4, logger });
    repository = new EventRepository(database);
    referencePool = new pg.Pool({ connectionString: db, max: 1 });
  });
  afterAll(async () => {
    await referencePool?.end();
    await database?.close();
  });

  const batcher = (batchMax: number, batches?: number[], grouped?: number[]) => {
    // The ledger's own policy (calls of ledger.record_events, the recovery of a failed batch), as production builds it.
    // Its invariants are asserted as it goes (they throw under jest), and in full whenever its queue depth changes.
    const made: DecisionBatcher = new DecisionBatcher(
      new DecisionPolicy(repository),
      // Grouped: one call at a time, so every key ready meanwhile joins the next call's transaction.
      grouped
        ? { batchMax, concurrencyMax: 1, queuedMax: 10_000, groupKeysMax: 8 }
        : { batchMax, concurrencyMax: 4, queuedMax: 10_000 },
      {
        batch: (size) => batches?.push(size),
        group: (keys) => grouped?.push(keys),
        queued: () => made.assertConsistent(),
      },
    );
    return made;
  };

  it('randomized streams: identical decisions and balances for the reference, batches of 1 and batches of N', async () => {
    const sizesSeen: number[] = [];
    const groupsSeen: number[] = [];
    await fc.assert(
      fc.asyncProperty(streamArb, fc.integer({ min: 2, max: 64 }), async (stream, batchMax) => {
        const [reference, single, batched, grouped] = [
          await createWorld(db),
          await createWorld(db),
          await createWorld(db),
          await createWorld(db),
        ];

        const referenceResults: Array<RecordResult | { error: string }> = [];
        for (const e of stream)
          referenceResults.push(await settle(recordEvent(referencePool, instantiate(reference, e))));

        const one = batcher(1);
        const singleResults = await Promise.all(stream.map((e) => settle(one.submit(instantiate(single, e)))));

        const many = batcher(batchMax, sizesSeen);
        const batchedResults = await Promise.all(stream.map((e) => settle(many.submit(instantiate(batched, e)))));

        const inGroups = batcher(batchMax, undefined, groupsSeen);
        const groupedResults = await Promise.all(stream.map((e) => settle(inGroups.submit(instantiate(grouped, e)))));

        const expected = normalize(reference, referenceResults);
        expect(normalize(single, singleResults)).toEqual(expected);
        expect(normalize(batched, batchedResults)).toEqual(expected);
        expect(normalize(grouped, groupedResults)).toEqual(expected);
        const expectedBalances = await balances(db, reference);
        expect(await balances(db, single)).toEqual(expectedBalances);
        expect(await balances(db, batched)).toEqual(expectedBalances);
        expect(await balances(db, grouped)).toEqual(expectedBalances);
      }),
      { numRuns: 8 },
    );
    // The streams did form real batches.
    expect(Math.max(...sizesSeen)).toBeGreaterThan(8);
    // ... and transactions of several keys.
    expect(Math.max(...groupsSeen)).toBeGreaterThan(1);
    // A generous limit for a shared, loaded machine: this is not a speed check.
  }, 600_000);

  it('a copy decided by another batch while this one waited for the game lock is a replay (re-read under the lock)', async () => {
    const { world, secondKey, event } = await gameWithTwoKeys(db);
    const params = instantiate(world, event);
    const viaSecondKey = { ...params, keyHash: sha256(secondKey.value) };
    // Two keys of one game: two queues, two batches in the database at once, serialized by the game row.
    const others = Array.from({ length: 5 }, (_, i) =>
      instantiate(world, { ...event, eventId: randomUUID(), payload: `other ${i}` }),
    );
    // Both batches wait for the game row, held here, so that the second one to get it finds the copy decided by
    // the first only when it reads again under the lock.
    const holder = new pg.Client({ connectionString: db });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select 1 from ledger.games where id = $1 for update', [world.games[0]!.gameId]);
    const b = batcher(16);
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await holder.query('commit');
      await holder.end();
    };
    try {
      const pending = Promise.all([
        b.submit(params),
        ...others.map((o) => b.submit(o)),
        b.submit(viaSecondKey),
        b.submit({ ...viaSecondKey, eventId: randomUUID() }),
      ]);
      await twoCallsWaitForLocks(db, 'the two batches never both waited for the game row');
      await release();
      const results = await pending;
      const mine = [results[0]!, results[6]!];
      expect(mine.map((r) => r.outcome).sort()).toEqual(['decided', 'replayed']);
      const ids = mine.map((r) => ('decision' in r ? r.decision.id : undefined));
      expect(ids[0]).toBeDefined();
      expect(ids[0]).toBe(ids[1]);
      const [row] = await sql(db, 'select count(*)::int as n from ledger.events where game_id = $1', [
        world.games[0]!.gameId,
      ]);
      // Key one: its 6 events in one batch; key two: the copy (a replay of key one's decision, or the decision that
      // key one's copy then replays) and one new event.
      expect(row).toEqual({ n: 7 });
    } finally {
      await release();
    }
  });

  it('two calls that share games lock them in the order of their ids: no deadlock, whatever the order of their keys', async () => {
    const world = await createWorld(db);
    const fresh = (game: number): RecordEventParams =>
      instantiate(world, {
        game,
        key: 'own',
        player: 0,
        type: 0,
        eventId: randomUUID(),
        payload: `fresh ${game}`,
        occurredOffsetMs: 0,
        receivedAtMs: Date.now(),
      });
    const gameIds = [world.games[0]!.gameId, world.games[1]!.gameId];
    const clients = [0, 1, 2].map(() => new pg.Client({ connectionString: db }));
    await Promise.all(clients.map((c) => c.connect()));
    const [holder, first, second] = clients as [pg.Client, pg.Client, pg.Client];
    try {
      // Both calls wait for the two game rows, held here; released, each takes them in the order of the ids. Called
      // directly (no retry on a deadlock, which the repository's query would hide).
      await holder.query('begin');
      await holder.query('select 1 from ledger.games where id = any($1) for update', [gameIds]);
      const calls = [
        first.query<{ d: string }>(RECORD_EVENTS_SQL, recordEventsValues([fresh(0), fresh(1)])),
        second.query<{ d: string }>(RECORD_EVENTS_SQL, recordEventsValues([fresh(1), fresh(0)])),
      ];
      await twoCallsWaitForLocks(db, 'the two calls never both waited for the game rows');
      await holder.query('commit');
      const answers = await Promise.all(calls);
      for (const answer of answers) {
        const tuples = JSON.parse(answer.rows[0]!.d) as Array<[string]>;
        expect(tuples.map((t) => t[0])).toEqual(['decided', 'decided']);
      }
      const rows = await sql<{ game_id: string; n: number }>(
        db,
        'select game_id, count(*)::int as n from ledger.events where game_id = any($1) group by game_id order by 1',
        [gameIds],
      );
      expect(rows.map((r) => r.n)).toEqual([2, 2]);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });

  it('an event whose deadline passed while its call waited for a connection is left out of the call: not stored', async () => {
    const { world, event } = await gameWithTwoKeys(db);
    const pool = await (database.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    // Every connection of the pool (4) is taken: the calls below wait for one.
    const taken = await Promise.all(Array.from({ length: 4 }, () => pool.connect()));
    const deadline = performance.now() + 100;
    const late = { ...instantiate(world, event), deadline };
    const live = { ...instantiate(world, { ...event, eventId: randomUUID() }), deadline: performance.now() + 60_000 };
    const lateAlone = { ...instantiate(world, { ...event, eventId: randomUUID() }), deadline };
    const call = repository.recordEventGroups([[late, live]]);
    const alone = repository.recordEvents([lateAlone]).catch((error: unknown) => error);
    while (performance.now() <= deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    for (const client of taken) client.release();
    const [results] = await call;
    expect(results![0]).toBeInstanceOf(Rejected);
    expect((results![0] as Rejected).error).toBeInstanceOf(DeadlinePassedError);
    expect(results![1]).toMatchObject({ outcome: 'decided' });
    // Every event of the call late: no call at all.
    expect(await alone).toBeInstanceOf(DeadlinePassedError);
    const stored = async (eventId: string) =>
      (await sql(db, 'select 1 from ledger.events where event_id = $1', [eventId])).length;
    expect(await stored(late.eventId)).toBe(0);
    expect(await stored(lateAlone.eventId)).toBe(0);
    expect(await stored(live.eventId)).toBe(1);
  });

  it('one call holding two keys of one game: an event id decided under the first key is a replay or a conflict under the second', async () => {
    const { world, secondKey, event } = await gameWithTwoKeys(db);
    const viaFirst = instantiate(world, event);
    const viaSecond = { ...viaFirst, keyHash: sha256(secondKey.value) };
    const conflicting = { ...viaSecond, payloadHash: sha256('another payload') };
    // Another game's event with the same event id is its own decision (idempotency is per game).
    const otherGame = instantiate(world, { ...event, game: 1 });
    // No deadlines: every event is decided (none is Rejected).
    const [first, second, other] = (await repository.recordEventGroups([
      [viaFirst],
      [viaSecond, conflicting],
      [otherGame],
    ])) as RecordResult[][];
    expect(first!.map((r) => r.outcome)).toEqual(['decided']);
    expect(second!.map((r) => r.outcome)).toEqual(['replayed', 'event_conflict']);
    expect(other!.map((r) => r.outcome)).toEqual(['decided']);
    const id = (r: RecordResult | undefined) => (r && 'decision' in r ? r.decision.id : undefined);
    expect(id(second![0])).toBe(id(first![0]));
    expect(id(other![0])).not.toBe(id(first![0]));
    const [row] = await sql(db, 'select count(*)::int as n from ledger.events where event_id = $1', [event.eventId]);
    expect(row).toEqual({ n: 2 });
  });

  it.each([
    ['no proposed decision ids', 9, false],
    ['no metadata', 8, false],
    ['one key hash for the batch', 8, true],
  ])('a signature of the releases before the previous one (%s) is gone', async (_, args, oneKey) => {
    const world = await createWorld(db);
    const events = [0, 1].map((i) => ({ ...freshOfOwnKey(world, i, `old ${i}`), metadataJson: `{"old":${i}}` }));
    // Such a release's statement: nine arguments (no proposed ids), or eight (no metadata either). The previous
    // release calls the current signature (ten arguments) and names the columns it reads, so it needs none of them.
    const values = recordEventsValues(events).slice(0, args);
    let statement = RECORD_EVENTS_SQL.replace(/,\s*\$10::uuid\[\]\)/, ')');
    if (args === 8) statement = statement.replace(/,\s*\$9::text\[\]\)/, ')');
    if (oneKey) {
      values[0] = Buffer.from(events[0]!.keyHash);
      statement = statement.replace('$1::bytea[]', '$1::bytea');
    }
    expect(statement).not.toContain(`$${args + 1}`);
    await expect(sql(db, statement, values)).rejects.toMatchObject({ code: '42883' });
    const stored = await sql(db, 'select count(*)::int as n from ledger.events where event_id = any($1::uuid[])', [
      events.map((e) => e.eventId),
    ]);
    expect(stored).toEqual([{ n: 0 }]);
  });

  it('a fresh decision takes the id the ledger proposed for it; a replay answers the stored one', async () => {
    const world = await createWorld(db);
    const events = [0, 1].map((i) => ({
      ...freshOfOwnKey(world, i, `proposed ${i}`),
      decisionId: randomUUID(),
    }));
    const results = await repository.recordEvents(events);
    expect(results.map((r) => r.outcome)).toEqual(['decided', 'decided']);
    expect(results.map((r) => ('decision' in r ? r.decision.id : undefined))).toEqual(events.map((e) => e.decisionId));
    // Another request of the same events proposes other ids: they are replays of the stored decisions.
    const again = await repository.recordEvents(events.map((e) => ({ ...e, decisionId: randomUUID() })));
    expect(again).toEqual(
      events.map((e) =>
        expect.objectContaining({ outcome: 'replayed', decision: expect.objectContaining({ id: e.decisionId }) }),
      ),
    );
    const stored = await sql(db, 'select count(*)::int as n from ledger.events where id = any($1::uuid[])', [
      events.map((e) => e.decisionId),
    ]);
    expect(stored).toEqual([{ n: 2 }]);
  });

  it('the current signature stores the metadata of each fresh decision, and none for an event without', async () => {
    const world = await createWorld(db);
    const events = [0, 1].map((i) => ({
      ...freshOfOwnKey(world, i, `new ${i}`),
      metadataJson: i === 0 ? '{"a":"\\"quoted\\" \\\\ {x}","n":1}' : undefined,
    }));
    const results = await repository.recordEvents(events);
    const ids = results.map((r) => ('decision' in r ? r.decision.id : undefined));
    const stored = await sql(db, 'select id, metadata from ledger.events where id = any($1::uuid[])', [ids]);
    expect(new Map(stored.map((r) => [r.id, r.metadata]))).toEqual(
      new Map([
        [ids[0], events[0]!.metadataJson],
        [ids[1], null],
      ]),
    );
  });

  it('a batch that fails is decided again event by event: one bad event fails alone', async () => {
    const world = await createWorld(db);
    const base: StreamEvent = {
      game: 1,
      key: 'own',
      player: 0,
      type: 0,
      eventId: '',
      payload: '',
      occurredOffsetMs: 0,
      receivedAtMs: Date.now(),
    };
    const events = Array.from({ length: 5 }, (_, i) =>
      instantiate(world, { ...base, eventId: randomUUID(), payload: `p${i}` }),
    );
    // An instant PostgreSQL cannot represent (the ledger's endpoint refuses it before; here it reaches SQL).
    events[2] = { ...events[2]!, occurredAtMs: 9_000_000_000_000_000_000n };
    const sizes: number[] = [];
    const b = batcher(16, sizes);
    const results = await Promise.all(events.map((e) => settle(b.submit(e))));
    expect(results.map((r) => ('error' in r ? 'error' : r.outcome))).toEqual([
      'decided',
      'decided',
      'error',
      'decided',
      'decided',
    ]);
    // Submitted in one synchronous run: one batch of five; it failed, and its events were decided one by one.
    expect(sizes).toEqual([5]);
    const [row] = await sql(db, 'select spent_credits::int as spent from ledger.games where id = $1', [
      world.games[1]!.gameId,
    ]);
    expect(row).toEqual({ spent: 28 });
  });
});
