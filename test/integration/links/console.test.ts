// Linked players in the developer console (CONTRACT section 8): the snapshot lists linked players only, with
// creditsUserId, username and linkedAt; records of kind players list linked and unlinked ones.
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';
import { expectData as expectConsole, RECORDS, snapshot } from '../console/helpers.ts';
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
});
