// Smoke test of the console on the embedded default (PGlite and the in-process transport, as `npm start`).

import { CONSOLE, developer, expectData, expectError, ok, RECORDS, snapshot, world } from '../../support/console.ts';
import { api, EMBEDDED_START_TIMEOUT_MS, startTestSystem, type TestSystem } from '../../support/system.ts';

let system: TestSystem;

beforeAll(async () => {
  system = await startTestSystem({ mode: 'embedded' });
}, EMBEDDED_START_TIMEOUT_MS);

afterAll(async () => {
  await system?.stop();
});

describe('console on the embedded default', () => {
  it('runs actions, the snapshot and the records', async () => {
    const dev = await developer(system);
    const w = await world(system, dev.token, { fund: 1000, projectBudget: 800, gameBudget: 300 });
    const issued = await ok(system, dev.token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'server' });
    expect(issued.issuedKey).toMatch(/^cr_sk_sandbox_/);
    expectError(
      await api(system.url, 'POST', CONSOLE, {
        token: dev.token,
        body: { type: 'allocateProject', projectId: w.projectId, amountCredits: 201 },
      }),
      400,
      'insufficient_funds',
    );
    // Concurrent actions share PGlite's single connection without waiting on each other forever.
    await Promise.all(
      Array.from({ length: 10 }, () =>
        ok(system, dev.token, { type: 'allocateGame', gameId: w.gameId, amountCredits: 10 }),
      ),
    );
    const snap = await snapshot(system, dev.token);
    expect(snap.organizations[0].balanceCredits).toBe(200);
    expect(snap.games[0].budgetCredits).toBe(400);
    expect(snap.keys).toHaveLength(1);
    const records = expectData(
      await api(system.url, 'GET', `${RECORDS}?kind=players`, { token: dev.token }),
      'DeveloperRecordPage',
    );
    expect(records).toEqual({ kind: 'players', records: [], nextCursor: null });
  });
});
