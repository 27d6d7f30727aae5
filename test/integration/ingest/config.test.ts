// GET /api/game-sdk/v2/config over HTTP on real PostgreSQL and NATS (CONTRACT sections 2 and 8).
import { issueKeyValue } from '#runtime/credentials/keys.ts';
import { CONFIG_PATH, expectError, expectPublicConfig } from '../../support/ingest.ts';
import {
  createGame,
  createKey,
  createRule,
  type GameFixture,
  revokeKey,
  setGame,
} from '../../support/ledger-fixtures.ts';
import { admin, api, startTestSystem, type TestSystem } from '../../support/system.ts';

describe('GET /api/game-sdk/v2/config', () => {
  let system: TestSystem;
  let db: string;
  let game: GameFixture;
  let publicKey: string;

  beforeAll(async () => {
    system = await startTestSystem();
    db = system.databaseUrl!;
    game = await createGame(db, {
      name: 'Space Miners',
      platform: 'unity',
      budgetCredits: 5000,
      maxPayoutCredits: 90_000,
      dailyPlayerCapCredits: 250,
    });
    await createRule(db, game, 'level.complete', 20);
    await createRule(db, game, 'boss.defeated', 100);
    await createRule(db, game, 'daily.login', 5, false);
    publicKey = (await createKey(db, game, 'public')).value;
  });
  afterAll(async () => system?.stop());

  const read = (query: string) => api(system.url, 'GET', `${CONFIG_PATH}${query}`);

  it('answers the game, its active rules only, and its thresholds', async () => {
    const response = await read(`?publicKey=${publicKey}`);
    const config = expectPublicConfig(response);
    expect(config).toEqual({
      gameId: game.gameId,
      name: 'Space Miners',
      slug: game.slug,
      environment: 'sandbox',
      productionRewardsEnabled: false,
      platform: 'unity',
      status: 'active',
      rules: [
        { eventType: 'boss.defeated', rewardCredits: 100 },
        { eventType: 'level.complete', rewardCredits: 20 },
      ],
      thresholds: { maxPayoutCredits: 90_000, dailyPlayerCapCredits: 250 },
    });
    expect(config.slug).not.toBe(config.gameId);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('follows the game: paused status, a game without active rules', async () => {
    const quiet = await createGame(db, { platform: 'ios' });
    await createRule(db, quiet, 'off', 1, false);
    const key = (await createKey(db, quiet, 'public')).value;
    await setGame(db, quiet.gameId, { status: 'paused' });
    expect(expectPublicConfig(await read(`?publicKey=${key}`))).toMatchObject({
      status: 'paused',
      platform: 'ios',
      rules: [],
    });
  });

  it('ignores other query parameters (cache busters)', async () => {
    expect(expectPublicConfig(await read(`?_=12345&publicKey=${publicKey}&v=2`)).gameId).toBe(game.gameId);
  });

  it.each([
    ['missing', () => ''],
    ['empty', () => '?publicKey='],
    ['under another name', () => `?publickey=${publicKey}`],
    ['repeated with the same value', () => `?publicKey=${publicKey}&publicKey=${publicKey}`],
    ['repeated with another value', () => `?publicKey=${publicKey}&publicKey=${issueKeyValue('public').value}`],
    ['malformed', () => '?publicKey=cr_pk_sandbox_short'],
    ['one character too long', () => `?publicKey=${publicKey}A`],
    ['with spaces around', () => `?publicKey=%20${publicKey}`],
    ['unknown', () => `?publicKey=${issueKeyValue('public').value}`],
    ['a secret key', () => `?publicKey=${issueKeyValue('secret').value}`],
  ])('%s publicKey: 401 INVALID_PUBLIC_KEY', async (_what, query) => {
    expectError(await read(query()), 401, 'INVALID_PUBLIC_KEY');
  });

  it('a real secret key of the game: 401 INVALID_PUBLIC_KEY (and it is not echoed)', async () => {
    const secret = (await createKey(db, game, 'secret')).value;
    const response = await read(`?publicKey=${secret}`);
    expectError(response, 401, 'INVALID_PUBLIC_KEY');
    expect(JSON.stringify(response.body)).not.toContain(secret);
  });

  it('a revoked public key: 401 INVALID_PUBLIC_KEY, immediately', async () => {
    const key = await createKey(db, game, 'public');
    expectPublicConfig(await read(`?publicKey=${key.value}`));
    await revokeKey(db, key.id);
    expectError(await read(`?publicKey=${key.value}`), 401, 'INVALID_PUBLIC_KEY');
  });

  it('a bearer header does not stand in for the query parameter', async () => {
    const response = await api(system.url, 'GET', CONFIG_PATH, { token: publicKey });
    expectError(response, 401, 'INVALID_PUBLIC_KEY');
  });

  it('the platform switch comes first: 503 PLATFORM_DISABLED', async () => {
    expect((await admin(system, 'PUT', '/platform', { enabled: false })).status).toBe(200);
    try {
      expectError(await read(`?publicKey=${publicKey}`), 503, 'PLATFORM_DISABLED');
      expectError(await read(''), 503, 'PLATFORM_DISABLED');
    } finally {
      expect((await admin(system, 'PUT', '/platform', { enabled: true })).status).toBe(200);
    }
  });

  it('a wrong method: 405 with the envelope and Allow', async () => {
    const response = await api(system.url, 'POST', `${CONFIG_PATH}?publicKey=${publicKey}`, { body: {} });
    expectError(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD']);
  });
});
