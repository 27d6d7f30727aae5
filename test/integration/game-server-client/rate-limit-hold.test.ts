// The game-server client and the rate limit (CONTRACT section 11, quota fields), on real PostgreSQL and NATS with
// EVENT_RATE_LIMIT_PER_MINUTE=5 and the ledger's receipt clock set by the test: at RateLimit r=0 the client holds the
// game's events until the minute ends (t) and sends them then, so none is stored as rate_limited; the same stream
// without the hold earns three stored rate_limited rejections.
import {
  type EventOutcome,
  GameServerClient,
  type HoldNotice,
  type Quota,
} from '../../../clients/game-server/src/index.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { storedDecisions } from './support.ts';

const LIMIT = 5;

describe('game-server client: RateLimit holds events instead of earning rate_limited', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem({ env: { EVENT_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    db = system.databaseUrl!;
  });
  afterAll(async () => system?.stop());
  afterEach(() => system?.clock.reset());

  /** The ledger's clock 5 s before the end of the current real minute (t=5), and the next minute's start. */
  const pinNearMinuteEnd = () => {
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    system.clock.set(new Date(minute + 55_000));
    return new Date(minute + 60_000);
  };
  const stream = async (world: EventWorld, client: GameServerClient) => {
    const event = { playerId: world.player.id, eventType: world.eventType };
    // One event first: its answer tells the client r=4.
    const first = await client.send(event);
    const rest = await Promise.all(Array.from({ length: 7 }, () => client.record(event)));
    await client.flush();
    return [first, ...(await Promise.all(rest.map((r) => r.outcome)))];
  };
  const reasons = (outcomes: EventOutcome[]) =>
    outcomes.map((o) => (o.kind === 'decided' ? (o.decision.reason ?? o.decision.status) : o.kind));

  it('holds at r=0 for t seconds: every event accepted, none stored rate_limited', async () => {
    const world = await createEventWorld(db);
    const nextMinute = pinNearMinuteEnd();
    const holds: HoldNotice[] = [];
    const client = new GameServerClient({
      baseUrl: system.url,
      secretKey: world.key.value,
      lingerMs: 50,
      onHold: (hold) => holds.push(hold),
      // The minute ends for the ledger once the client has used it up (its real time goes on; the test's does not).
      onQuota: (quota: Quota) => {
        if (quota.remaining === 0) system.clock.set(nextMinute);
      },
    });
    const outcomes = await stream(world, client);
    await client.close();
    expect(reasons(outcomes)).toEqual(Array(8).fill('accepted'));
    expect(holds.length).toBeGreaterThanOrEqual(1);
    // Held from the moment the four the minute had room for had left (the first hold may see one event waiting).
    for (const hold of holds) expect(hold.quota.limit).toBe(LIMIT);
    expect(Math.max(...holds.map((hold) => hold.eventsWaiting))).toBeGreaterThanOrEqual(1);
    expect(holds.some((hold) => hold.quota.remaining === 0 && hold.quota.resetSeconds === 5)).toBe(true);
    expect(client.stats.holds).toBe(holds.length);
    const stored = await storedDecisions(db, world.game.gameId);
    expect(stored.size).toBe(8);
  }, 60_000);

  it('without the hold, the same stream earns three stored rate_limited rejections', async () => {
    const world = await createEventWorld(db);
    pinNearMinuteEnd();
    const client = new GameServerClient({
      baseUrl: system.url,
      secretKey: world.key.value,
      lingerMs: 50,
      holdOnRateLimit: false,
    });
    const outcomes = await stream(world, client);
    await client.close();
    expect(reasons(outcomes)).toEqual([...Array(LIMIT).fill('accepted'), ...Array(3).fill('rate_limited')]);
    expect(client.stats.holds).toBe(0);
  });
});
