// Concurrent approvals of one link token (CONTRACT section 6: exactly one succeeds), over HTTP on real PostgreSQL
// and NATS: 20 accounts approve at once; one 200, 19 conflicts, and the player is linked to the winner.
import { sql } from '../../support/database.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';
import {
  APPROVE,
  expectData,
  expectError,
  type Game,
  gameWithKeys,
  intent,
  intentRows,
  native,
  nativeSession,
  PLAYERS,
  playerRow,
} from './helpers.ts';

const APPROVERS = 20;

describe('concurrent approvals', () => {
  let system: TestSystem;
  let game: Game;

  beforeAll(async () => {
    system = await startTestSystem({ env: { SUPPORTED_COUNTRIES: 'DE' } });
    game = await gameWithKeys(system);
  });
  afterAll(async () => {
    await system?.stop();
  });

  it(`${APPROVERS} parallel approvals of one token by different accounts: one 200, ${APPROVERS - 1} conflicts, linked to the winner`, async () => {
    const created = await intent(system, game, 'raced');
    const sessions = await Promise.all(
      Array.from({ length: APPROVERS }, (_, i) => nativeSession(system, { username: `racer-${i}` })),
    );
    const answers = await Promise.all(
      sessions.map((s) => native(system, APPROVE, s, { linkToken: created.linkToken })),
    );

    const winners = answers.flatMap((answer, i) => (answer.status === 200 ? [i] : []));
    expect(winners).toHaveLength(1);
    const winner = sessions[winners[0]!]!;
    expect(expectData(answers[winners[0]!]!, 'LinkApproval')).toEqual({
      playerId: created.playerId,
      gameId: game.gameId,
      linked: true,
      mode: 'sandbox',
    });
    const losers = answers.filter((answer) => answer.status !== 200);
    expect(losers).toHaveLength(APPROVERS - 1);
    for (const loser of losers) expectError(loser, 409, 'invalid_link');

    expect(await playerRow(system, created.playerId)).toEqual({
      external_player_id: 'raced',
      credits_user_id: winner.sub,
      username: `racer-${winners[0]}`,
      linked_at: expect.any(Date),
    });
    const [stored] = await intentRows(system, created.playerId);
    expect(stored.consumed_by).toBe(winner.sub);
    const read = expectData(
      await api(system.url, 'GET', `${PLAYERS}/${created.playerId}`, { token: game.secretKey }),
      'GamePlayer',
    );
    expect(read.linked).toBe(true);
  });

  it('parallel link intents for one new externalPlayerId create one player; one approval links it', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        api(system.url, 'POST', '/api/game-sdk/v2/link-intents', {
          token: game.secretKey,
          body: { externalPlayerId: 'born-once' },
        }),
      ),
    );
    const results = answers.map((a) => expectData(a, 'LinkIntentResult'));
    expect(new Set(results.map((r) => r.playerId)).size).toBe(1);
    expect(new Set(results.map((r) => r.linkToken)).size).toBe(10);
    const players = await sql(
      system.databaseUrl!,
      `select count(*)::int as n from ledger.players where game_id = $1 and external_player_id = 'born-once'`,
      [game.gameId],
    );
    expect(players[0]!.n).toBe(1);

    // Different tokens of one player approved at once by different accounts: one links, the others already_linked.
    const sessions = await Promise.all(results.map(() => nativeSession(system)));
    const approvals = await Promise.all(
      results.map((r, i) => native(system, APPROVE, sessions[i]!, { linkToken: r.linkToken })),
    );
    expect(approvals.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of approvals.filter((x) => x.status !== 200)) expectError(a, 409, 'already_linked');
  });
});
