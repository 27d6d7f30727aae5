// The game SDK endpoints over a world built through the developer console (REST), as a developer would: rules, keys,
// budgets and the game's status come from console actions; decisions show up in the console's records and snapshot.
// The player is written with SQL (linking is another program's flow).

import { developer, expectData, ok, RECORDS, snapshot, world } from '../../support/console.ts';
import {
  CONFIG_PATH,
  eventBody,
  expectDecision,
  expectError,
  expectPublicConfig,
  postEvent,
} from '../../support/ingest.ts';
import { createPlayer, type EventWorld, type GameFixture } from '../../support/ledger-fixtures.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';

describe('events over a console-made game', () => {
  let system: TestSystem;
  let token: string;
  let game: GameFixture;
  let ruleId: string;
  let secretKey: { id: string; value: string };
  let publicKey: string;
  let eventWorld: EventWorld;

  beforeAll(async () => {
    system = await startTestSystem();
    const dev = await developer(system);
    token = dev.token;
    const w = await world(system, token, { fund: 1000, projectBudget: 500, gameBudget: 30, ceiling: 1000 });
    ruleId = (
      await ok(system, token, { type: 'createRule', gameId: w.gameId, eventType: 'quest.done', rewardCredits: 10 })
    ).id;
    const secret = await ok(system, token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'server' });
    secretKey = { id: secret.id, value: secret.issuedKey! };
    publicKey = (await ok(system, token, { type: 'issueKey', gameId: w.gameId, kind: 'public', name: 'client' }))
      .issuedKey!;
    game = { ...w, slug: '', name: 'Game' };
    const player = await createPlayer(system.databaseUrl!, game);
    eventWorld = {
      game,
      ruleId,
      eventType: 'quest.done',
      rewardCredits: 10,
      key: { id: secretKey.id, kind: 'secret', value: secretKey.value },
      player,
    };
  });
  afterAll(async () => system?.stop());

  it('decides with the console rule, spends the game budget, and the records list the same decision', async () => {
    const decisions = [];
    for (let i = 0; i < 4; i++)
      decisions.push(expectDecision(await postEvent(system.url, secretKey.value, eventBody(eventWorld))));
    expect(decisions.map((d) => d.reason)).toEqual([null, null, null, 'game_budget_exhausted']);
    const page = expectData(
      await api(system.url, 'GET', `${RECORDS}?kind=events&gameId=${game.gameId}`, { token }),
      'DeveloperRecordPage',
    );
    const listed = [...page.records].reverse();
    expect(listed).toEqual(decisions.map(({ replayed: _r, mode: _m, ...record }) => record));
    const snap = await snapshot(system, token);
    expect(snap.games.find((g: any) => g.id === game.gameId)).toMatchObject({ spentCredits: 30, budgetCredits: 30 });
    expect(snap.projects.find((p: any) => p.id === game.projectId)).toMatchObject({
      spentCredits: 30,
      budgetCredits: 500,
    });
  });

  it('serves the public configuration of the issued public key, following rule and game updates', async () => {
    const before = expectPublicConfig(await api(system.url, 'GET', `${CONFIG_PATH}?publicKey=${publicKey}`));
    expect(before).toMatchObject({
      gameId: game.gameId,
      status: 'active',
      rules: [{ eventType: 'quest.done', rewardCredits: 10 }],
    });
    expect(before.slug).not.toBe(game.gameId);
    await ok(system, token, { type: 'updateRule', ruleId, active: false });
    await ok(system, token, { type: 'updateGame', gameId: game.gameId, status: 'paused' });
    const after = expectPublicConfig(await api(system.url, 'GET', `${CONFIG_PATH}?publicKey=${publicKey}`));
    expect(after).toMatchObject({ status: 'paused', rules: [] });
    const decision = expectDecision(await postEvent(system.url, secretKey.value, eventBody(eventWorld)));
    expect(decision.reason).toBe('unknown_or_inactive_rule');
    await ok(system, token, { type: 'updateRule', ruleId, active: true });
    expect(expectDecision(await postEvent(system.url, secretKey.value, eventBody(eventWorld))).reason).toBe(
      'game_paused',
    );
    await ok(system, token, { type: 'updateGame', gameId: game.gameId, status: 'active' });
  });

  it('a public key issued by the console is refused on events (403), a revoked secret at once (401)', async () => {
    expectError(await postEvent(system.url, publicKey, eventBody(eventWorld)), 403, 'secret_key_required');
    const body = eventBody(eventWorld);
    await ok(system, token, { type: 'allocateGame', gameId: game.gameId, amountCredits: 10 });
    expect(expectDecision(await postEvent(system.url, secretKey.value, body)).status).toBe('accepted');
    await ok(system, token, { type: 'revokeKey', keyId: secretKey.id });
    expectError(await postEvent(system.url, secretKey.value, body), 401, 'invalid_key');
    expectError(await postEvent(system.url, secretKey.value, eventBody(eventWorld)), 401, 'invalid_key');
  });
});
