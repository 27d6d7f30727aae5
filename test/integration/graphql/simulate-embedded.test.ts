// The rule dry-run on the embedded default (PGlite and the in-process transport, as `npm start`): the same
// functions, the READ ONLY transaction on PGlite's one session, and the answer a fresh game under the proposal gives.
import { randomUUID } from 'node:crypto';
import { developer, ok } from '../../support/console.ts';
import { EMBEDDED_START_TIMEOUT_MS, startTestSystem, type TestSystem } from '../../support/system.ts';
import { figuresOf, postStream, type StreamEvent, simulate, simulationGame } from './simulate-helpers.ts';

let system: TestSystem;

beforeAll(async () => {
  system = await startTestSystem({ mode: 'embedded' });
}, EMBEDDED_START_TIMEOUT_MS);

afterAll(async () => {
  await system?.stop();
});

test('simulateRule answers what a fresh game with the proposed rule decides', async () => {
  const db = system.running.databaseUrl;
  const dev = await developer(system);
  const organizationId = (await ok(system, dev.token, { type: 'createOrganization', name: 'Org' })).id;
  await ok(system, dev.token, { type: 'fundOrganization', organizationId, amountCredits: 1_000 });
  const projectId = (
    await ok(system, dev.token, { type: 'createProject', organizationId, name: 'P', maxPayoutCredits: 1_000 })
  ).id;
  await ok(system, dev.token, { type: 'allocateProject', projectId, amountCredits: 1_000 });
  const project = { organizationId, projectId };
  const config = { budgetCredits: 60, maxPayoutCredits: 100 };
  const rule = { eventType: 'level.complete', active: true };
  // Two players, eight events a second apart: a daily cap of 25 holds two rewards of 10, one of 20.
  const start = Date.parse('2031-05-01T12:00:00.000Z');
  const events: StreamEvent[] = Array.from({ length: 8 }, (_, i) => ({
    eventId: randomUUID(),
    player: i % 2,
    eventType: 'level.complete',
    receivedAt: new Date(start + i * 1_000),
    occurredAt: new Date(start + i * 1_000),
  }));
  const a = await simulationGame(
    system,
    dev.token,
    project,
    { ...config, dailyPlayerCapCredits: 25, rules: [{ ...rule, rewardCredits: 10 }] },
    [{}, {}],
    db,
  );
  const stored = await postStream(system, a, events);
  const b = await simulationGame(
    system,
    dev.token,
    project,
    { ...config, dailyPlayerCapCredits: 25, rules: [{ ...rule, rewardCredits: 20 }] },
    [{}, {}],
    db,
  );
  const proposed = await postStream(system, b, events);
  const result = await simulate(system, dev.token, {
    gameId: a.gameId,
    ...rule,
    rewardCredits: 20,
    dailyPlayerCapCredits: 25,
    from: new Date(start - 60_000).toISOString(),
    to: new Date(start + 60_000).toISOString(),
  });
  expect(result.body.errors).toBeUndefined();
  const answer = result.body.data.simulateRule;
  expect(answer).toMatchObject({
    considered: 8,
    stored: figuresOf(stored),
    proposed: figuresOf(proposed),
    flipCount: stored.filter(
      (d, i) => d.rewardCredits !== proposed[i]!.rewardCredits || d.reason !== proposed[i]!.reason,
    ).length,
  });
  expect(answer.proposed.reasons).toEqual([{ reason: 'daily_player_cap', count: 6 }]);
});
