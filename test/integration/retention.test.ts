// The ledger's retention clean-up on real PostgreSQL and NATS, with explicit times: the receipt and link clocks are
// set by the test and each run is given its `now` (the system's own periodic runs are off). Minute counters and daily
// totals past their horizons go and the decisions after them are the same; link intents past expiry + grace become
// tombstones and every answer for their tokens stays exactly what it was; each run removes at most its batch per
// table; two runs at once (two replicas) take disjoint rows.
import { pino } from 'pino';
import { Database } from '#runtime/db/database.ts';
import { RetentionRepository, RetentionScheduler } from '../../services/ledger/src/retention/index.ts';
import { sql } from '../support/database.ts';
import { eventBody, expectDecision, postEvent } from '../support/ingest.ts';
import { createEventWorld, type EventWorld } from '../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../support/system.ts';
import { APPROVE, type Game, gameWithKeys, INSPECT, intent, native, nativeSession } from './links/helpers.ts';

const logger = pino({ level: 'silent' });
const MINUTE_MS = 60_000;

describe('ledger retention', () => {
  let system: TestSystem;
  let db: string;
  let database: Database;

  beforeAll(async () => {
    system = await startTestSystem({
      env: { LEDGER_RETENTION_INTERVAL_SECONDS: '0', SUPPORTED_COUNTRIES: 'DE,FR', NATIVE_MIN_BUILD: '100' },
    });
    db = system.databaseUrl!;
    database = await Database.open({ url: db, poolMax: 4, logger });
  });
  afterAll(async () => {
    await database?.close();
    await system?.stop();
  });
  afterEach(() => {
    system?.clock.reset();
  });

  const retention = (batch = 1000) =>
    new RetentionScheduler(new RetentionRepository(database), { intervalSeconds: 0, batch }, logger);
  const receiveAt = (at: Date) => {
    system.clock.set(at);
  };
  const send = async (world: EventWorld, at: Date) =>
    expectDecision(await postEvent(system.url, world.key.value, eventBody(world, {}, at)));
  const counters = async (gameId: string) =>
    (
      await sql<{ minute: string; attempts: number }>(
        db,
        `select to_char(minute at time zone 'UTC', 'HH24:MI') as minute, attempts from ledger.game_minute_counters
          where game_id = $1 order by minute`,
        [gameId],
      )
    ).map((r) => `${r.minute}=${r.attempts}`);
  const totals = async (playerId: string) =>
    (
      await sql<{ day: string; credits: number }>(
        db,
        `select day::text, credits::int from ledger.player_daily_totals where player_id = $1 order by day`,
        [playerId],
      )
    ).map((r) => `${r.day}=${r.credits}`);

  it('removes minute counters more than 10 minutes old; the current minute keeps counting', async () => {
    const world = await createEventWorld(db);
    const t = (iso: string) => new Date(`2031-05-01T${iso}Z`);
    for (const at of ['10:00:10', '10:00:20', '10:04:00', '10:04:30', '10:04:40']) {
      receiveAt(t(at));
      await send(world, t(at));
    }
    expect(await counters(world.game.gameId)).toEqual(['10:00=2', '10:04=3']);

    // Minutes that began more than 10 minutes before now go; 10 minutes exactly is kept.
    expect((await retention().runOnce(t('10:10:00'))).game_minute_counters).toBe(0);
    expect(await counters(world.game.gameId)).toEqual(['10:00=2', '10:04=3']);
    expect((await retention().runOnce(t('10:10:01'))).game_minute_counters).toBe(1);
    expect(await counters(world.game.gameId)).toEqual(['10:04=3']);

    // A decision in a minute whose counter is kept counts on from it (no reader lost its row).
    receiveAt(t('10:04:50'));
    await send(world, t('10:04:50'));
    expect(await counters(world.game.gameId)).toEqual(['10:04=4']);
    expect((await retention().runOnce(t('10:14:00'))).game_minute_counters).toBe(0);
    expect((await retention().runOnce(new Date('2031-05-01T10:14:00.001Z'))).game_minute_counters).toBe(1);
    expect(await counters(world.game.gameId)).toEqual([]);
  });

  it('removes daily totals of days more than 2 days before today; the daily cap of today is unchanged', async () => {
    const world = await createEventWorld(db, { dailyPlayerCapCredits: 20, rewardCredits: 10 });
    const days = ['2031-06-01', '2031-06-02', '2031-06-03', '2031-06-04'];
    for (const day of days) {
      const at = new Date(`${day}T12:00:00.000Z`);
      receiveAt(at);
      await send(world, at);
    }
    expect(await totals(world.player.id)).toEqual(days.map((d) => `${d}=10`));

    // On 06-03 the day before yesterday (06-01) is kept; on 06-04 it goes.
    await retention().runOnce(new Date('2031-06-03T00:00:00.000Z'));
    expect(await totals(world.player.id)).toEqual(days.map((d) => `${d}=10`));
    const run = await retention().runOnce(new Date('2031-06-04T00:00:01.000Z'));
    expect(run.player_daily_totals).toBe(1);
    expect(await totals(world.player.id)).toEqual(days.slice(1).map((d) => `${d}=10`));

    // Today's decisions see today's total as before: one more reward fits the cap of 20, the next does not.
    const at = new Date('2031-06-04T13:00:00.000Z');
    receiveAt(at);
    expect(await send(world, at)).toMatchObject({ status: 'accepted', rewardCredits: 10 });
    expect(await send(world, at)).toMatchObject({ status: 'rejected', reason: 'daily_player_cap' });
    expect(await totals(world.player.id)).toEqual(['2031-06-02=10', '2031-06-03=10', '2031-06-04=20']);
  });

  describe('link intents', () => {
    let game: Game;
    beforeAll(async () => {
      game = await gameWithKeys(system);
    });

    it('become tombstones 60 minutes after expiry; inspect and approve answer exactly as before', async () => {
      const T = new Date('2032-02-01T08:00:00.000Z');
      const plus = (minutes: number) => new Date(T.getTime() + minutes * MINUTE_MS);
      system.clock.set(T);
      const used = await intent(system, game);
      const expired = await intent(system, game);
      const owner = await nativeSession(system);
      await native(system, APPROVE, owner, { linkToken: used.linkToken });
      system.clock.set(plus(65));
      const pending = await intent(system, game);
      const unknown = `cr_link_sandbox_${'A'.repeat(43)}`;

      const other = await nativeSession(system);
      const answers = async () => {
        const out: Record<string, unknown> = {};
        for (const [name, token] of Object.entries({ used: used.linkToken, expired: expired.linkToken, unknown })) {
          for (const [verb, path] of [
            ['inspect', INSPECT],
            ['approve', APPROVE],
          ] as const) {
            const response = await native(system, path, other, { linkToken: token });
            out[`${name} ${verb}`] = { status: response.status, body: response.body };
          }
        }
        const inspected = await native(system, INSPECT, other, { linkToken: pending.linkToken });
        out['pending inspect'] = { status: inspected.status, body: inspected.body };
        return out;
      };

      system.clock.set(plus(71));
      const before = await answers();
      expect(Object.fromEntries(Object.entries(before).map(([k, v]) => [k, (v as { status: number }).status]))).toEqual(
        {
          'used inspect': 409,
          'used approve': 409,
          'expired inspect': 409,
          'expired approve': 409,
          'unknown inspect': 404,
          'unknown approve': 404,
          'pending inspect': 200,
        },
      );

      // At T + 70 min both first intents (expired at T + 10) are past the grace of 60 minutes; the pending one is not.
      expect((await retention().runOnce(plus(70))).link_intents).toBe(0);
      expect((await retention().runOnce(plus(71))).link_intents).toBe(2);
      const left = await sql(db, 'select player_id from ledger.link_intents where game_id = $1', [game.gameId]);
      expect(left.map((r) => r.player_id)).toEqual([pending.playerId]);
      const stones = await sql<{ used: boolean }>(
        db,
        `select used from ledger.link_intent_tombstones where token_hash in (
           select sha256(convert_to(t, 'UTF8')) from unnest($1::text[]) t) order by used`,
        [[used.linkToken, expired.linkToken]],
      );
      expect(stones.map((r) => r.used)).toEqual([false, true]);

      expect(await answers()).toEqual(before);

      // The pending intent is untouched and still links; a tombstoned token hash cannot be issued again.
      const approved = await native(system, APPROVE, other, { linkToken: pending.linkToken });
      expect(approved.status).toBe(200);
      await expect(
        sql(
          db,
          `insert into ledger.link_intents (id, game_id, player_id, token_hash, expires_at)
           select gen_random_uuid(), game_id, player_id, sha256(convert_to($1, 'UTF8')), now() from ledger.link_intents
            where player_id = $2 limit 1`,
          [used.linkToken, pending.playerId],
        ),
      ).rejects.toThrow(/link token already used or expired/);
    });
  });

  it('removes at most the batch per table per run, and two runs at once (replicas) take disjoint rows', async () => {
    const world = await createEventWorld(db);
    // 60 stale minute counters written directly (a game idle for an hour in 2020), no decision involved.
    await sql(
      db,
      `insert into ledger.game_minute_counters (game_id, minute, attempts)
       select $1, timestamptz '2020-01-01 00:00Z' + make_interval(mins => m), 1 from generate_series(0, 59) m`,
      [world.game.gameId],
    );
    const now = new Date('2020-01-02T00:00:00.000Z');
    expect((await retention(7).runOnce(now)).game_minute_counters).toBe(7);
    expect(await counters(world.game.gameId)).toHaveLength(53);

    let removed = 0;
    for (let round = 0; round < 10 && removed < 53; round++) {
      const runs = await Promise.all([retention(5).runOnce(now), retention(5).runOnce(now)]);
      for (const run of runs) {
        expect(run.game_minute_counters).toBeLessThanOrEqual(5);
        removed += run.game_minute_counters;
      }
    }
    expect(removed).toBe(53);
    expect(await counters(world.game.gameId)).toEqual([]);
  });
});
