// The same endpoints on the embedded default of `npm start` (PGlite and the in-process transport): the SQL function
// of the hot path runs on PGlite too.
import { sql } from '../../support/database.ts';
import {
  CONFIG_PATH,
  eventBody,
  expectDecision,
  expectError,
  expectPublicConfig,
  postEvent,
} from '../../support/ingest.ts';
import { createEventWorld, createKey, gameState } from '../../support/ledger-fixtures.ts';
import { api, EMBEDDED_START_TIMEOUT_MS, startTestSystem, type TestSystem } from '../../support/system.ts';

describe('events and configuration on the embedded default', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem({ mode: 'embedded' });
    expect(system.running.databaseDescription).toMatch(/PGlite/);
    // The embedded server is reachable on loopback like any PostgreSQL (one session: fixtures run between requests).
    db = system.running.databaseUrl;
  }, EMBEDDED_START_TIMEOUT_MS);
  afterAll(async () => system?.stop());

  it('decides, spends, replays and refuses a conflicting payload', async () => {
    const world = await createEventWorld(db, { rewardCredits: 12, budgetCredits: 20 });
    const body = eventBody(world);
    const fresh = await postEvent(system.url, world.key.value, body);
    const first = expectDecision(fresh);
    expect(first).toMatchObject({ status: 'accepted', rewardCredits: 12, replayed: false });
    // The quota headers travel through the in-process transport too (CONTRACT section 11); replays carry none.
    expect(fresh.headers.get('Rewards-Budget-Remaining')).toBe('8');
    expect(fresh.headers.get('RateLimit-Policy')).toMatch(/^"minute";q=\d+;w=60$/);
    const replay = await postEvent(system.url, world.key.value, body);
    expect(expectDecision(replay)).toEqual({ ...first, replayed: true });
    expect(replay.headers.get('RateLimit')).toBeNull();
    expectError(await postEvent(system.url, world.key.value, { ...body, metadata: {} }), 409, 'event_conflict');
    const second = expectDecision(await postEvent(system.url, world.key.value, eventBody(world)));
    expect(second).toMatchObject({ status: 'rejected', reason: 'game_budget_exhausted' });
    expect(await gameState(db, world.game.gameId)).toMatchObject({ spentCredits: 12, decisions: 2 });
    const [{ n }] = (await sql(db, 'select count(*)::int as n from ledger.player_daily_totals')) as [{ n: number }];
    expect(n).toBe(1);
  });

  it('serves the public configuration', async () => {
    const world = await createEventWorld(db);
    const key = await createKey(db, world.game, 'public');
    const config = expectPublicConfig(await api(system.url, 'GET', `${CONFIG_PATH}?publicKey=${key.value}`));
    expect(config.rules).toEqual([{ eventType: world.eventType, rewardCredits: world.rewardCredits }]);
  });
});
