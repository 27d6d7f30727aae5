// The whole service through a transaction pooler: PgBouncer 1.18 in `pool_mode = transaction` (no prepared statement
// support: the strict case) with default_pool_size = 2 in front of a private PostgreSQL cluster, and the all-in-one
// process's pool of 10 connections on it. Every transaction may land on either server connection, so anything that
// outlives a transaction on the server (a named prepared statement, a session SET, a session advisory lock) would fail
// here ("prepared statement ... does not exist" / "already exists") or leak into another client's transactions.
// Migrations, console actions and concurrent events (copies, budget and cap races) must all work, with the right
// decisions and never a 500 or a 503.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { developer, ok, RECORDS, snapshot, world } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, expectError, postEvent } from '../../support/ingest.ts';
import { createEventWorld, createPlayer, type EventWorld, gameState } from '../../support/ledger-fixtures.ts';
import {
  pgBouncerInstalled,
  type StartedPgBouncer,
  type StartedPostgres,
  startPgBouncer,
  startPostgres,
} from '../../support/servers.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';

/** The same URL on another path (database). */
function withDatabase(url: string, database: string): string {
  const next = new URL(url);
  next.pathname = `/${database}`;
  return next.toString();
}

const installed = pgBouncerInstalled();
const describeIfInstalled = installed ? describe : describe.skip;

describeIfInstalled(
  installed
    ? 'through PgBouncer in transaction mode (2 server connections, 10 client connections)'
    : 'through PgBouncer (SKIPPED: pgbouncer is not installed; apt-get install pgbouncer)',
  () => {
    let postgres: StartedPostgres;
    let bouncer: StartedPgBouncer;
    let system: TestSystem;
    /** The database itself, for fixtures and checks (not through the pooler). */
    let direct: string;

    beforeAll(async () => {
      postgres = await startPostgres();
      await sql(postgres.url, 'create database rewards');
      direct = withDatabase(postgres.url, 'rewards');
      bouncer = await startPgBouncer({ postgresPort: postgres.port, poolSize: 2 });
      // Migrations run through the pooler too (startSystem migrates before it opens the pool of 10).
      system = await startTestSystem({
        env: { DATABASE_URL: withDatabase(bouncer.url, 'rewards'), EVENT_RATE_LIMIT_PER_MINUTE: '100000' },
      });
    }, 120_000);

    afterAll(async () => {
      await system?.stop();
      await bouncer?.stop();
      await postgres?.stop();
    });

    /** Every status of the responses, counted (a 500 or a 503 anywhere fails the test with the body). */
    const decided = (responses: Array<Awaited<ReturnType<typeof postEvent>>>) =>
      responses.map((response) => expectDecision(response));

    it('concurrent events of three games (copies, a budget race, a cap race): every one decided, correctly', async () => {
      const copies = await createEventWorld(direct, { rewardCredits: 7 });
      const budget = await createEventWorld(direct, { rewardCredits: 10, budgetCredits: 375 });
      const cap = await createEventWorld(direct, { rewardCredits: 10, dailyPlayerCapCredits: 379 });
      const budgetPlayers = [
        budget.player,
        ...(await Promise.all(Array.from({ length: 9 }, () => createPlayer(direct, budget.game)))),
      ];
      const copy = eventBody(copies);
      const requests: Array<{ world: EventWorld; body: unknown }> = [
        ...Array.from({ length: 60 }, () => ({ world: copies, body: copy })),
        ...Array.from({ length: 200 }, (_, i) => ({
          world: budget,
          body: eventBody(budget, { playerId: budgetPlayers[i % budgetPlayers.length]!.id }),
        })),
        ...Array.from({ length: 120 }, () => ({ world: cap, body: eventBody(cap) })),
      ];
      // Interleaved, all at once: the three games' batches go to the database together.
      requests.sort(() => Math.random() - 0.5);
      const decisions = decided(
        await Promise.all(requests.map(({ world: w, body }) => postEvent(system.url, w.key.value, body))),
      );

      const of = (w: EventWorld) => decisions.filter((d) => d.gameId === w.game.gameId);
      // 60 copies of one event: one decision, one of them fresh.
      expect(new Set(of(copies).map((d) => d.id)).size).toBe(1);
      expect(of(copies).filter((d) => !d.replayed)).toHaveLength(1);
      expect(await gameState(direct, copies.game.gameId)).toEqual({
        spentCredits: 7,
        budgetCredits: 1_000_000,
        acceptedSum: 7,
        decisions: 1,
      });
      // 200 events for a budget of 37 rewards.
      expect(of(budget).filter((d) => d.status === 'accepted')).toHaveLength(37);
      expect(of(budget).filter((d) => d.reason === 'game_budget_exhausted')).toHaveLength(163);
      expect(await gameState(direct, budget.game.gameId)).toEqual({
        spentCredits: 370,
        budgetCredits: 375,
        acceptedSum: 370,
        decisions: 200,
      });
      // 120 events of one player for a daily cap of 37 rewards.
      expect(of(cap).filter((d) => d.status === 'accepted')).toHaveLength(37);
      expect(of(cap).filter((d) => d.reason === 'daily_player_cap')).toHaveLength(83);
      expect(await gameState(direct, cap.game.gameId)).toMatchObject({ spentCredits: 370, decisions: 120 });
    });

    it('console actions and the developer records work through the pooler; the events decide on what they made', async () => {
      const dev = await developer(system);
      const made = await world(system, dev.token, { fund: 1000, projectBudget: 500, gameBudget: 30, ceiling: 1000 });
      const ruleId = (
        await ok(system, dev.token, {
          type: 'createRule',
          gameId: made.gameId,
          eventType: 'quest.done',
          rewardCredits: 10,
        })
      ).id;
      const secret = await ok(system, dev.token, { type: 'issueKey', gameId: made.gameId, kind: 'secret', name: 's' });
      const game = { ...made, slug: '', name: 'Game' };
      const eventWorld: EventWorld = {
        game,
        ruleId,
        eventType: 'quest.done',
        rewardCredits: 10,
        key: { id: secret.id, kind: 'secret', value: secret.issuedKey! },
        player: await createPlayer(direct, game),
      };
      const decisions = decided(
        await Promise.all(
          Array.from({ length: 8 }, () => postEvent(system.url, secret.issuedKey, eventBody(eventWorld))),
        ),
      );
      expect(decisions.filter((d) => d.status === 'accepted')).toHaveLength(3);
      expect(decisions.filter((d) => d.reason === 'game_budget_exhausted')).toHaveLength(5);

      const snap = await snapshot(system, dev.token);
      expect(snap.games.find((g: { id: string }) => g.id === made.gameId)).toMatchObject({
        spentCredits: 30,
        budgetCredits: 30,
      });
      const records = await api(system.url, 'GET', `${RECORDS}?kind=events&gameId=${made.gameId}`, {
        token: dev.token,
      });
      expect(records.status).toBe(200);
      expect(records.body.data.records).toHaveLength(8);
    });

    it('left nothing on the server that outlives a transaction: no prepared statement error in its log', async () => {
      // A client connection never holds a server session here; an event id seen twice proves the pooler served it.
      const w = await createEventWorld(direct);
      const body = eventBody(w, { eventId: randomUUID() });
      const [first, second] = decided([
        await postEvent(system.url, w.key.value, body),
        await postEvent(system.url, w.key.value, body),
      ]);
      expect([first!.replayed, second!.replayed]).toEqual([false, true]);
      const log = readFileSync(postgres.logPath, 'utf8');
      expect(log).not.toMatch(/prepared statement .* (does not exist|already exists)/);
    });

    describe('with DATABASE_NAMED_STATEMENTS=true (for direct connections only)', () => {
      let named: TestSystem;
      const logs: Array<Record<string, unknown>> = [];

      beforeAll(async () => {
        const stream = new Writable({
          write(chunk, _encoding, done) {
            for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
            done();
          },
        });
        named = await startTestSystem({
          env: {
            DATABASE_URL: withDatabase(bouncer.url, 'rewards'),
            EVENT_RATE_LIMIT_PER_MINUTE: '100000',
            DATABASE_NAMED_STATEMENTS: 'true',
            // No copies of slow event writes: a copy out makes a refusal's outcome unknown (nats.ts), and this test
            // reads the pooler's own refusal, "nothing stored", whatever the machine's load.
            NATS_TRY_TIMEOUT_PERCENT: '0',
            // One game per call of record_events: as many calls in the database at once as games waiting, so that
            // the pool's connections interleave on the pooler's two server sessions.
            EVENT_GROUP_KEYS_MAX: '1',
          },
          logger: pino({ level: 'warn' }, stream),
        });
      }, 60_000);
      afterAll(async () => named?.stop());

      it('the pooler loses the prepared statements: 503 retry_later (nothing stored), logged with the SQLSTATE, no 500', async () => {
        // Several games at once, so that several connections of the pool are in the database together: each prepares
        // on whichever server session its transaction gets, and a later call lands on another one ("does not exist")
        // or prepares where another client already did ("already exists"). Rounds until that has happened (bounded).
        const worlds = await Promise.all(Array.from({ length: 12 }, () => createEventWorld(direct)));
        const sent: Array<{ world: EventWorld; eventId: string; response: Awaited<ReturnType<typeof postEvent>> }> = [];
        for (let round = 0; round < 20 && !sent.some((s) => s.response.status !== 200); round++) {
          const bodies = worlds.flatMap((world) =>
            Array.from({ length: 20 }, () => ({ world, body: eventBody(world) })),
          );
          const responses = await Promise.all(
            bodies.map(({ world, body }) => postEvent(named.url, world.key.value, body)),
          );
          responses.forEach((response, i) => {
            sent.push({ world: bodies[i]!.world, eventId: bodies[i]!.body.eventId, response });
          });
        }
        const refused = sent.filter((s) => s.response.status !== 200);
        expect(refused.length).toBeGreaterThan(0);
        for (const { response } of refused) {
          expectError(response, 503, 'retry_later');
          expect(response.body.error.message).toMatch(/Nothing was stored/);
          expect(response.headers.get('retry-after')).toBe('1');
        }
        const sqlstates = new Set(logs.filter((l) => l.level === 50 && l.sqlstate).map((l) => l.sqlstate));
        expect(sqlstates.size).toBeGreaterThan(0);
        expect([...sqlstates].every((code) => code === '26000' || code === '42P05')).toBe(true);
        // What was answered 503 was not stored; what was decided was, once.
        const stored = await sql<{ event_id: string }>(
          direct,
          'select event_id::text from ledger.events where game_id = any($1::uuid[])',
          [worlds.map((w) => w.game.gameId)],
        );
        expect(stored.map((r) => r.event_id).sort()).toEqual(
          sent
            .filter((s) => s.response.status === 200)
            .map((s) => s.eventId.toLowerCase())
            .sort(),
        );
      });
    });
  },
);
