// The quota fields of a fresh decision (CONTRACT section 11) over HTTP on real PostgreSQL and NATS, against figures
// computed by hand: EVENT_RATE_LIMIT_PER_MINUTE=3, a rule of 10 credits, a daily player cap of 25 and a game budget
// of 45, with the ledger's receipt clock set by the test (minute and day boundaries without waiting).
import { eventBody, expectDecision, postEvent } from '../../support/ingest.ts';
import { createEventWorld, createPlayer, type EventWorld, gameState } from '../../support/ledger-fixtures.ts';
import { type ApiResponse, startTestSystem, type TestSystem } from '../../support/system.ts';

const LIMIT = 3;
const QUOTA_HEADERS = ['ratelimit-policy', 'ratelimit', 'rewards-daily-remaining', 'rewards-budget-remaining'];

/** The four quota headers of a response (absent ones as undefined). */
function quota(response: ApiResponse) {
  return {
    policy: response.headers.get('RateLimit-Policy') ?? undefined,
    rateLimit: response.headers.get('RateLimit') ?? undefined,
    daily: response.headers.get('Rewards-Daily-Remaining') ?? undefined,
    budget: response.headers.get('Rewards-Budget-Remaining') ?? undefined,
  };
}

describe('quota headers on fresh decisions', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem({ env: { EVENT_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    db = system.databaseUrl as string;
  });
  afterAll(async () => system?.stop());
  afterEach(() => system?.clock.reset());

  const receiveAt = (iso: string) => {
    const at = new Date(iso);
    system.clock.set(at);
  };

  /** Posts a fresh event of `playerId` occurring at the receipt time; returns the decision and its quota headers. */
  async function post(world: EventWorld, iso: string, playerId = world.player.id, body = eventBody(world)) {
    receiveAt(iso);
    const response = await postEvent(system.url, world.key.value, { ...body, playerId, occurredAt: iso });
    return { decision: expectDecision(response), quota: quota(response), body: { ...body, playerId, occurredAt: iso } };
  }

  it('count down the minute, the daily cap and the budget, across a minute and a day boundary', async () => {
    const world = await createEventWorld(db, {
      rewardCredits: 10,
      dailyPlayerCapCredits: 25,
      budgetCredits: 45,
      maxPayoutCredits: 100,
    });
    const second = await createPlayer(db, world.game);
    const third = await createPlayer(db, world.game);
    const policy = `"minute";q=${LIMIT};w=60`;

    // 10:00:45: 15 s left in the minute; 10 of the player's 25 and 10 of the game's 45 used.
    const first = await post(world, '2031-08-01T10:00:45.000Z');
    expect(first.decision).toMatchObject({ status: 'accepted', rewardCredits: 10, replayed: false });
    expect(first.quota).toEqual({ policy, rateLimit: '"minute";r=2;t=15', daily: '15', budget: '35' });

    // 10:00:59.001: 0.999 s left rounds up to 1.
    const again = await post(world, '2031-08-01T10:00:59.001Z');
    expect(again.decision.status).toBe('accepted');
    expect(again.quota).toEqual({ policy, rateLimit: '"minute";r=1;t=1', daily: '5', budget: '25' });

    // The daily cap: 20 + 10 > 25. Rejected, still an attempt of the minute; nothing of the player's day or the
    // budget used.
    const capped = await post(world, '2031-08-01T10:00:59.500Z');
    expect(capped.decision).toMatchObject({ status: 'rejected', reason: 'daily_player_cap' });
    expect(capped.quota).toEqual({ policy, rateLimit: '"minute";r=0;t=1', daily: '5', budget: '25' });

    // A new minute at 10:01:00.000: the full minute ahead, the attempts start over.
    const newMinute = await post(world, '2031-08-01T10:01:00.000Z', second.id);
    expect(newMinute.decision.status).toBe('accepted');
    expect(newMinute.quota).toEqual({ policy, rateLimit: '"minute";r=2;t=60', daily: '15', budget: '15' });

    const last = await post(world, '2031-08-01T10:01:10.000Z', second.id);
    expect(last.decision.status).toBe('accepted');
    expect(last.quota).toEqual({ policy, rateLimit: '"minute";r=1;t=50', daily: '5', budget: '5' });

    // The budget: 40 + 10 > 45. The third player has used nothing today.
    const exhausted = await post(world, '2031-08-01T10:01:10.000Z', third.id);
    expect(exhausted.decision).toMatchObject({ status: 'rejected', reason: 'game_budget_exhausted' });
    expect(exhausted.quota).toEqual({ policy, rateLimit: '"minute";r=0;t=50', daily: '25', budget: '5' });

    // The fourth attempt of the minute: rate_limited; r stays at 0.
    const limited = await post(world, '2031-08-01T10:01:20.000Z', third.id);
    expect(limited.decision).toMatchObject({ status: 'rejected', reason: 'rate_limited' });
    expect(limited.quota).toEqual({ policy, rateLimit: '"minute";r=0;t=40', daily: '25', budget: '5' });

    // The next UTC day: the first player's cap starts over; the budget does not.
    const nextDay = await post(world, '2031-08-02T00:00:00.000Z');
    expect(nextDay.decision).toMatchObject({ status: 'rejected', reason: 'game_budget_exhausted' });
    expect(nextDay.quota).toEqual({ policy, rateLimit: '"minute";r=2;t=60', daily: '25', budget: '5' });

    expect(await gameState(db, world.game.gameId)).toMatchObject({ spentCredits: 40, budgetCredits: 45 });
  });

  it('are absent from replays, whatever the time of the replay', async () => {
    const world = await createEventWorld(db, { rewardCredits: 10, dailyPlayerCapCredits: 100, budgetCredits: 100 });
    const fresh = await post(world, '2031-08-03T09:00:00.000Z');
    expect(fresh.quota.rateLimit).toBe('"minute";r=2;t=60');
    for (const iso of ['2031-08-03T09:00:00.000Z', '2031-08-03T09:05:00.000Z']) {
      receiveAt(iso);
      const response = await postEvent(system.url, world.key.value, fresh.body);
      expect(expectDecision(response)).toEqual({ ...fresh.decision, replayed: true });
      for (const name of QUOTA_HEADERS) expect(response.headers.get(name)).toBeNull();
    }
  });

  it('give each of concurrent decisions its own figures, as if decided one after the other', async () => {
    const world = await createEventWorld(db, { rewardCredits: 10, dailyPlayerCapCredits: 1000, budgetCredits: 1000 });
    const players = await Promise.all(Array.from({ length: 8 }, () => createPlayer(db, world.game)));
    receiveAt('2031-08-04T08:30:00.000Z');
    const responses = await Promise.all(
      players.map((player) =>
        postEvent(
          system.url,
          world.key.value,
          eventBody(world, { playerId: player.id }, new Date('2031-08-04T08:30Z')),
        ),
      ),
    );
    const decisions = responses.map((response) => ({ decision: expectDecision(response), quota: quota(response) }));
    const accepted = decisions.filter((d) => d.decision.status === 'accepted');
    const limited = decisions.filter((d) => d.decision.reason === 'rate_limited');
    expect([accepted.length, limited.length]).toEqual([LIMIT, 8 - LIMIT]);
    // The accepted ones used the budget in some order: 990, 980, 970 left, one figure each.
    expect(accepted.map((d) => Number(d.quota.budget)).sort((a, b) => b - a)).toEqual([990, 980, 970]);
    expect(accepted.map((d) => d.quota.rateLimit).sort()).toEqual(
      ['"minute";r=0;t=60', '"minute";r=1;t=60', '"minute";r=2;t=60'].sort(),
    );
    for (const d of limited) expect(d.quota).toMatchObject({ rateLimit: '"minute";r=0;t=60', daily: '1000' });
    for (const d of accepted) expect(d.quota.daily).toBe('990');
  });
});
