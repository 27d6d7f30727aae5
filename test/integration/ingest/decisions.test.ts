// The decision of a fresh event over HTTP on real PostgreSQL and NATS: every reason in the contract's order, the
// spend on acceptance, the timestamp window and the daily cap at the UTC day boundary (with the ledger's receipt
// clock set by the test), and the replay semantics.
import { randomUUID } from 'node:crypto';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, expectError, postEvent, postRaw } from '../../support/ingest.ts';
import {
  createEventWorld,
  createKey,
  createPlayer,
  createRule,
  type EventWorld,
  gameState,
  revokeKey,
  setAccountStatus,
  setGame,
  setRule,
} from '../../support/ledger-fixtures.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';

const MINUTE_MS = 60_000;

describe('event decisions', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem();
    db = system.databaseUrl!;
  });
  afterAll(async () => system?.stop());
  afterEach(() => system?.clock.reset());

  /** Fixes the ledger's receipt time. */
  const receiveAt = (iso: string) => {
    const at = new Date(iso);
    system.clock.set(at);
    return at;
  };
  const send = async (world: EventWorld, body: unknown) =>
    expectDecision(await postEvent(system.url, world.key.value, body));

  describe('acceptance', () => {
    it('accepts with the rule reward, spends it, and answers the whole event record', async () => {
      const world = await createEventWorld(db, { rewardCredits: 25, budgetCredits: 1000 });
      const received = receiveAt('2031-05-06T07:08:09.123Z');
      const body = eventBody(world, { occurredAt: '2031-05-06T09:07:08.5+02:00', metadata: { level: 3 } });
      const decision = await send(world, body);
      expect(decision).toEqual({
        id: expect.any(String),
        eventId: body.eventId,
        gameId: world.game.gameId,
        organizationId: world.game.organizationId,
        playerId: world.player.id,
        eventType: world.eventType,
        occurredAt: '2031-05-06T07:07:08.500Z',
        status: 'accepted',
        reason: null,
        rewardCredits: 25,
        createdAt: received.toISOString(),
        replayed: false,
        mode: 'sandbox',
      });
      expect(decision.id).not.toBe(body.eventId);
      expect(await gameState(db, world.game.gameId)).toMatchObject({ spentCredits: 25, acceptedSum: 25, decisions: 1 });
      const [daily] = await sql(
        db,
        'select day::text, credits::int from ledger.player_daily_totals where player_id = $1',
        [world.player.id],
      );
      expect(daily).toEqual({ day: '2031-05-06', credits: 25 });
    });

    it('uses the reward of the rule at decision time', async () => {
      const world = await createEventWorld(db, { rewardCredits: 10 });
      await setRule(db, world.ruleId, { rewardCredits: 15 });
      expect((await send(world, eventBody(world))).rewardCredits).toBe(15);
    });
  });

  describe('reasons, each with rewardCredits 0 and nothing spent', () => {
    const expectRejected = async (world: EventWorld, body: unknown, reason: string) => {
      const before = await gameState(db, world.game.gameId);
      const decision = await send(world, body);
      expect(decision).toMatchObject({ status: 'rejected', reason, rewardCredits: 0, replayed: false });
      const after = await gameState(db, world.game.gameId);
      expect(after.spentCredits).toBe(before.spentCredits);
      expect(after.decisions).toBe(before.decisions + 1);
      return decision;
    };

    it('timestamp_out_of_window: more than 5 minutes from receipt, either way; exactly 5 minutes is inside', async () => {
      const world = await createEventWorld(db);
      const received = receiveAt('2031-01-01T12:00:00.000Z');
      const at = (ms: number) => new Date(received.getTime() + ms).toISOString();
      for (const offset of [-5 * MINUTE_MS, 5 * MINUTE_MS, 0]) {
        expect((await send(world, eventBody(world, { occurredAt: at(offset) }))).status).toBe('accepted');
      }
      for (const offset of [-5 * MINUTE_MS - 1, 5 * MINUTE_MS + 1, -24 * 60 * MINUTE_MS]) {
        await expectRejected(world, eventBody(world, { occurredAt: at(offset) }), 'timestamp_out_of_window');
      }
      // Offsets are applied before the comparison: 13:05+01:00 is 12:05Z, inside; 13:05:00.001+01:00 is not.
      expect((await send(world, eventBody(world, { occurredAt: '2031-01-01T13:05+01:00' }))).status).toBe('accepted');
      await expectRejected(
        world,
        eventBody(world, { occurredAt: '2031-01-01T13:05:00.001+01:00' }),
        'timestamp_out_of_window',
      );
    });

    it('unknown_or_inactive_rule: no rule for the type, or an inactive one', async () => {
      const world = await createEventWorld(db);
      await expectRejected(world, eventBody(world, { eventType: 'no.such.rule' }), 'unknown_or_inactive_rule');
      await setRule(db, world.ruleId, { active: false });
      await expectRejected(world, eventBody(world), 'unknown_or_inactive_rule');
      await setRule(db, world.ruleId, { active: true });
      expect((await send(world, eventBody(world))).status).toBe('accepted');
    });

    it("unknown_or_inactive_rule: another game's rule does not count", async () => {
      const world = await createEventWorld(db);
      const other = await createEventWorld(db, { eventType: 'only.elsewhere' });
      expect(other.eventType).toBe('only.elsewhere');
      await expectRejected(world, eventBody(world, { eventType: 'only.elsewhere' }), 'unknown_or_inactive_rule');
    });

    it('game_paused', async () => {
      const world = await createEventWorld(db);
      await setGame(db, world.game.gameId, { status: 'paused' });
      await expectRejected(world, eventBody(world), 'game_paused');
      await setGame(db, world.game.gameId, { status: 'active' });
      expect((await send(world, eventBody(world))).status).toBe('accepted');
    });

    it('player_not_linked', async () => {
      const world = await createEventWorld(db);
      const unlinked = await createPlayer(db, world.game, { linked: false });
      await expectRejected(world, eventBody(world, { playerId: unlinked.id }), 'player_not_linked');
    });

    it('user_unavailable: the linked account is disabled (or unknown to the platform)', async () => {
      const world = await createEventWorld(db);
      await setAccountStatus(db, world.player.creditsUserId!, 'disabled');
      await expectRejected(world, eventBody(world), 'user_unavailable');
      await setAccountStatus(db, world.player.creditsUserId!, 'active');
      expect((await send(world, eventBody(world))).status).toBe('accepted');
      const missing = await createPlayer(db, world.game, { account: 'missing' });
      await expectRejected(world, eventBody(world, { playerId: missing.id }), 'user_unavailable');
    });

    it('daily_player_cap: the day total plus this reward above the cap; exactly the cap is accepted', async () => {
      const world = await createEventWorld(db, { rewardCredits: 10, dailyPlayerCapCredits: 30 });
      receiveAt('2031-03-04T10:00:00.000Z');
      const occurredAt = '2031-03-04T10:00Z';
      for (let i = 0; i < 3; i++) expect((await send(world, eventBody(world, { occurredAt }))).status).toBe('accepted');
      await expectRejected(world, eventBody(world, { occurredAt }), 'daily_player_cap');
      // Per player: another player of the game still earns.
      const other = await createPlayer(db, world.game);
      expect((await send(world, eventBody(world, { occurredAt, playerId: other.id }))).status).toBe('accepted');
      // A smaller reward that still fits is accepted: the cap is on credits, not on events.
      await createRule(db, world.game, 'small', 5);
      await setGame(db, world.game.gameId, { dailyPlayerCapCredits: 35 });
      expect((await send(world, eventBody(world, { occurredAt, eventType: 'small' }))).rewardCredits).toBe(5);
      await expectRejected(world, eventBody(world, { occurredAt, eventType: 'small' }), 'daily_player_cap');
    });

    it('daily_player_cap: a cap of 0 refuses every reward', async () => {
      const world = await createEventWorld(db, { dailyPlayerCapCredits: 0 });
      await expectRejected(world, eventBody(world), 'daily_player_cap');
    });

    it('daily_player_cap resets at the UTC day boundary of receipt', async () => {
      const world = await createEventWorld(db, { rewardCredits: 10, dailyPlayerCapCredits: 20 });
      receiveAt('2031-12-31T23:59:59.999Z');
      const late = '2031-12-31T23:59:30Z';
      expect((await send(world, eventBody(world, { occurredAt: late }))).status).toBe('accepted');
      expect((await send(world, eventBody(world, { occurredAt: late }))).status).toBe('accepted');
      await expectRejected(world, eventBody(world, { occurredAt: late }), 'daily_player_cap');
      // One millisecond later it is another UTC day: the day of receipt counts, not the day of occurrence.
      receiveAt('2032-01-01T00:00:00.000Z');
      expect((await send(world, eventBody(world, { occurredAt: late }))).status).toBe('accepted');
      // The day is the UTC one whatever the offset of occurredAt: 23:01-01:00 on 31 December is 00:01Z on 1 January.
      expect((await send(world, eventBody(world, { occurredAt: '2031-12-31T23:01-01:00' }))).status).toBe('accepted');
      await expectRejected(world, eventBody(world, { occurredAt: late }), 'daily_player_cap');
      const totals = await sql(
        db,
        'select day::text, credits::int from ledger.player_daily_totals where player_id = $1 order by day',
        [world.player.id],
      );
      expect(totals).toEqual([
        { day: '2031-12-31', credits: 20 },
        { day: '2032-01-01', credits: 20 },
      ]);
    });

    it('game_budget_exhausted: budget minus spent below the reward; the last credit can be spent', async () => {
      const world = await createEventWorld(db, { rewardCredits: 10, budgetCredits: 25 });
      await createRule(db, world.game, 'five', 5);
      expect((await send(world, eventBody(world))).status).toBe('accepted');
      expect((await send(world, eventBody(world))).status).toBe('accepted');
      await expectRejected(world, eventBody(world), 'game_budget_exhausted');
      expect((await send(world, eventBody(world, { eventType: 'five' }))).status).toBe('accepted');
      await expectRejected(world, eventBody(world, { eventType: 'five' }), 'game_budget_exhausted');
      expect(await gameState(db, world.game.gameId)).toMatchObject({ spentCredits: 25, budgetCredits: 25 });
    });

    it('game_budget_exhausted: a game without budget', async () => {
      const world = await createEventWorld(db, { budgetCredits: 0 });
      await expectRejected(world, eventBody(world), 'game_budget_exhausted');
    });

    it('the ceiling and project reasons cannot follow a passed budget check: the database refuses the states', async () => {
      // game_payout_ceiling would need spent + reward <= budget but > maxPayout, i.e. budget above the ceiling.
      const world = await createEventWorld(db, { budgetCredits: 100, maxPayoutCredits: 100 });
      await expect(
        sql(db, 'update ledger.games set max_payout_credits = 99 where id = $1', [world.game.gameId]),
      ).rejects.toThrow(/game_budget_within_ceiling/);
      // The project reasons would need a project whose remaining budget or ceiling is below a game's remaining
      // budget; a game's budget is carved out of the project's (allocated <= budget <= ceiling).
      await expect(
        sql(db, 'update ledger.projects set budget_credits = allocated_credits - 1 where id = $1', [
          world.game.projectId,
        ]),
      ).rejects.toThrow(/project_allocation_within_budget/);
    });

    it('checks in the contract order: the first failing check names the reason', async () => {
      // Everything wrong at once, then fixed one by one: each step reveals the next reason.
      const world = await createEventWorld(db, { rewardCredits: 10, budgetCredits: 5, dailyPlayerCapCredits: 5 });
      const player = await createPlayer(db, world.game, { linked: false });
      receiveAt('2031-06-01T00:00:00.000Z');
      await setGame(db, world.game.gameId, { status: 'paused' });
      await setRule(db, world.ruleId, { active: false });
      const body = (occurredAt = '2031-06-01T00:00Z') => eventBody(world, { playerId: player.id, occurredAt });
      await expectRejected(world, body('2031-06-01T00:05:00.001Z'), 'timestamp_out_of_window');
      await expectRejected(world, body(), 'unknown_or_inactive_rule');
      await setRule(db, world.ruleId, { active: true });
      await expectRejected(world, body(), 'game_paused');
      await setGame(db, world.game.gameId, { status: 'active' });
      await expectRejected(world, body(), 'player_not_linked');
      const creditsUserId = randomUUID();
      await sql(db, 'update ledger.players set credits_user_id = $2, linked_at = now() where id = $1', [
        player.id,
        creditsUserId,
      ]);
      await setAccountStatus(db, creditsUserId, 'disabled');
      await expectRejected(world, body(), 'user_unavailable');
      await setAccountStatus(db, creditsUserId, 'active');
      await expectRejected(world, body(), 'daily_player_cap');
      await setGame(db, world.game.gameId, { dailyPlayerCapCredits: 100 });
      await expectRejected(world, body(), 'game_budget_exhausted');
    });
  });

  describe('replays', () => {
    it('the same payload answers the stored decision with replayed: true, even after rules, budgets and keys changed', async () => {
      const world = await createEventWorld(db, { rewardCredits: 10, budgetCredits: 10 });
      const body = eventBody(world, { metadata: { a: 1 } });
      const first = await send(world, body);
      expect(first).toMatchObject({ status: 'accepted', replayed: false });
      await setRule(db, world.ruleId, { active: false, rewardCredits: 99 });
      await setGame(db, world.game.gameId, { status: 'paused', dailyPlayerCapCredits: 0 });
      // Another (new) key of the game replays the same decision: the key is not part of the payload.
      const newKey = await createKey(db, world.game, 'secret');
      await revokeKey(db, world.key.id);
      const again = expectDecision(await postEvent(system.url, newKey.value, body));
      expect(again).toEqual({ ...first, replayed: true });
      expect(await gameState(db, world.game.gameId)).toMatchObject({ spentCredits: 10, decisions: 1 });
    });

    it('a revoked key is refused even for a replay', async () => {
      const world = await createEventWorld(db);
      const body = eventBody(world);
      await send(world, body);
      await revokeKey(db, world.key.id);
      expectError(await postEvent(system.url, world.key.value, body), 401, 'invalid_key');
    });

    it('property order does not matter, in the body and in metadata', async () => {
      const world = await createEventWorld(db);
      const eventId = randomUUID();
      const occurredAt = new Date().toISOString();
      const a = `{"eventId":"${eventId}","playerId":"${world.player.id}","eventType":"${world.eventType}","occurredAt":"${occurredAt}","metadata":{"x":1,"y":{"b":2,"a":[1,2]}}}`;
      const b = `{"metadata":{"y":{"a":[1,2],"b":2},"x":1},"occurredAt":"${occurredAt}","eventType":"${world.eventType}","playerId":"${world.player.id}","eventId":"${eventId}"}`;
      const first = expectDecision(await postRaw(system.url, world.key.value, a, 'application/json'));
      const second = expectDecision(await postRaw(system.url, world.key.value, b, 'application/json'));
      expect(second).toEqual({ ...first, replayed: true });
      // Whitespace and number spelling do not matter either (RFC 8785 form of the parsed body).
      const c = b.replace('"x":1', '"x" : 1.0e0').replace(/,/g, ' ,\n ');
      expect(expectDecision(await postRaw(system.url, world.key.value, c, 'application/json'))).toEqual(second);
    });

    it.each([
      ['Z versus +00:00', { occurredAt: '2031-01-01T12:00:00Z' }, { occurredAt: '2031-01-01T12:00:00+00:00' }],
      ['seconds omitted versus given', { occurredAt: '2031-01-01T12:00Z' }, { occurredAt: '2031-01-01T12:00:00Z' }],
      ['absent versus empty metadata', {}, { metadata: {} }],
      ['a metadata value', { metadata: { a: 1 } }, { metadata: { a: 2 } }],
      ['a metadata array order', { metadata: { a: [1, 2] } }, { metadata: { a: [2, 1] } }],
      ['the event type', {}, { eventType: 'other.type' }],
    ])('another payload under the same eventId: 409 event_conflict (%s)', async (_what, one, two) => {
      const world = await createEventWorld(db);
      receiveAt('2031-01-01T12:00:00.000Z');
      const body = eventBody(world, { occurredAt: '2031-01-01T12:00:00.000Z' });
      const first = await send(world, { ...body, ...one });
      expectError(await postEvent(system.url, world.key.value, { ...body, ...two }), 409, 'event_conflict');
      // The stored decision is untouched and still replays.
      expect(await send(world, { ...body, ...one })).toEqual({ ...first, replayed: true });
      expect((await gameState(db, world.game.gameId)).decisions).toBe(1);
    });

    it('another player under the same eventId: 409 event_conflict', async () => {
      const world = await createEventWorld(db);
      const other = await createPlayer(db, world.game);
      const body = eventBody(world);
      await send(world, body);
      expectError(await postEvent(system.url, world.key.value, { ...body, playerId: other.id }), 409, 'event_conflict');
    });

    it('the same eventId spelled in upper case is another payload', async () => {
      const world = await createEventWorld(db);
      const body = eventBody(world);
      const first = await send(world, body);
      expect(first.eventId).toBe(body.eventId);
      expectError(
        await postEvent(system.url, world.key.value, { ...body, eventId: body.eventId.toUpperCase() }),
        409,
        'event_conflict',
      );
    });

    it('a rejection never becomes an acceptance', async () => {
      const world = await createEventWorld(db, { budgetCredits: 0 });
      const body = eventBody(world);
      const first = await send(world, body);
      expect(first).toMatchObject({ status: 'rejected', reason: 'game_budget_exhausted' });
      // Everything that made it fail is fixed; the replay still answers the rejection.
      await sql(
        db,
        'update ledger.projects set budget_credits = budget_credits + 100, allocated_credits = allocated_credits + 100 where id = $1',
        [world.game.projectId],
      );
      await sql(db, 'update ledger.games set budget_credits = 100 where id = $1', [world.game.gameId]);
      expect(await send(world, body)).toEqual({ ...first, replayed: true });
      expect((await send(world, eventBody(world))).status).toBe('accepted');
      expect(await gameState(db, world.game.gameId)).toMatchObject({ spentCredits: 10, decisions: 2 });
    });

    it('a replay outside the timestamp window still answers the stored decision', async () => {
      const world = await createEventWorld(db);
      receiveAt('2031-02-01T00:00:00.000Z');
      const body = eventBody(world, { occurredAt: '2031-02-01T00:00Z' });
      const first = await send(world, body);
      receiveAt('2031-02-02T00:00:00.000Z');
      expect(await send(world, body)).toEqual({ ...first, replayed: true });
    });

    it('counts answered decisions in /metrics by status, reason and replayed', async () => {
      const world = await createEventWorld(db);
      const body = eventBody(world);
      await send(world, body);
      await send(world, body);
      await setGame(db, world.game.gameId, { status: 'paused' });
      await send(world, eventBody(world));
      const metrics = (await api(system.url, 'GET', '/metrics')).body as string;
      const count = (labels: string) =>
        Number(new RegExp(`^event_decisions_total\\{${labels}\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
      expect(count('status="accepted",reason="none",replayed="false"')).toBeGreaterThan(0);
      expect(count('status="accepted",reason="none",replayed="true"')).toBeGreaterThan(0);
      expect(count('status="rejected",reason="game_paused",replayed="false"')).toBeGreaterThan(0);
    });

    it('the identity is (game, eventId): the same eventId in another game is another event', async () => {
      const one = await createEventWorld(db);
      const two = await createEventWorld(db);
      const eventId = randomUUID();
      const a = await send(one, eventBody(one, { eventId }));
      const b = await send(two, eventBody(two, { eventId }));
      expect(a.replayed || b.replayed).toBe(false);
      expect(a.id).not.toBe(b.id);
    });
  });
});
