// Linked players in the developer console (CONTRACT section 8): the snapshot lists linked players only, with
// creditsUserId, username and linkedAt; records of kind players list linked and unlinked ones. And in event
// decisions (section 7): an unlinked player's event is rejected with player_not_linked, a linked one's accepted.
import { randomUUID } from 'node:crypto';
import { expectData as expectConsole, RECORDS, snapshot } from '../../support/console.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';
import { APPROVE, expectData, gameWithKeys, intent, native, nativeSession, PLAYERS } from './helpers.ts';

describe('linked players in the console', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await startTestSystem({ env: { SUPPORTED_COUNTRIES: 'DE' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('the snapshot shows linked players with creditsUserId, username and linkedAt; records show both kinds', async () => {
    const game = await gameWithKeys(system);
    const linked = await intent(system, game, 'linked-one');
    const unlinked = await intent(system, game, 'unlinked-one');
    const session = await nativeSession(system, { username: 'Lin' });
    expectData(await native(system, APPROVE, session, { linkToken: linked.linkToken }), 'LinkApproval');
    const read = expectData(
      await api(system.url, 'GET', `${PLAYERS}/${linked.playerId}`, { token: game.secretKey }),
      'GamePlayer',
    );

    const snap = await snapshot(system, game.token);
    expect(snap.players).toEqual([
      {
        id: linked.playerId,
        gameId: game.gameId,
        organizationId: game.organizationId,
        externalPlayerId: 'linked-one',
        creditsUserId: session.sub,
        username: 'Lin',
        linkedAt: read.linkedAt,
        createdAt: expect.any(String),
      },
    ]);

    const page = expectConsole(
      await api(system.url, 'GET', `${RECORDS}?kind=players&gameId=${game.gameId}`, { token: game.token }),
      'DeveloperRecordPage',
    );
    const byId = Object.fromEntries(page.records.map((r: any) => [r.id, r]));
    expect(byId[linked.playerId]).toEqual(snap.players[0]);
    expect(byId[unlinked.playerId]).toMatchObject({
      externalPlayerId: 'unlinked-one',
      creditsUserId: null,
      username: null,
      linkedAt: null,
    });
  });

  it('events: rejected player_not_linked before the approval, accepted after it, the spend in the snapshot', async () => {
    const game = await gameWithKeys(system);
    const created = await intent(system, game, 'earner');
    const event = () =>
      api(system.url, 'POST', '/api/game-sdk/v2/events', {
        token: game.secretKey,
        body: {
          eventId: randomUUID(),
          playerId: created.playerId,
          eventType: 'level.up',
          occurredAt: new Date().toISOString(),
        },
      });
    const before = await event();
    expect(before.status).toBe(200);
    expect(before.body.data).toMatchObject({ status: 'rejected', reason: 'player_not_linked', rewardCredits: 0 });

    const session = await nativeSession(system);
    expectData(await native(system, APPROVE, session, { linkToken: created.linkToken }), 'LinkApproval');
    const after = await event();
    expect(after.status).toBe(200);
    expect(after.body.data).toMatchObject({ status: 'accepted', reason: null, rewardCredits: 5 });

    const snap = await snapshot(system, game.token);
    expect(snap.games.find((g: any) => g.id === game.gameId)).toMatchObject({ spentCredits: 5 });
    expect(
      snap.events
        .filter((e: any) => e.gameId === game.gameId)
        .map((e: any) => e.status)
        .sort(),
    ).toEqual(['accepted', 'rejected']);
  });
});
