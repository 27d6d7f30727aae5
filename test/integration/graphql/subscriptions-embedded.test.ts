// The live decisions subscription on the embedded default (`npm start`: PGlite and the in-process transport, whose
// publish-subscribe carries the same notices): delivery within 2 s, no replay, a non-member refused, the end on
// removal, with a real graphql-ws client.

import { addMember, developer, ok } from '../../support/console.ts';
import {
  eventGame,
  gameEvent,
  liveClient,
  liveSubscription,
  postGameEvent,
  subscribeDecisions,
  until,
} from '../../support/live.ts';
import { EMBEDDED_START_TIMEOUT_MS, startTestSystem, type TestSystem } from '../../support/system.ts';

let system: TestSystem;

beforeAll(async () => {
  system = await startTestSystem({ mode: 'embedded' });
  expect(system.running.transportKind).toBe('in-process');
}, EMBEDDED_START_TIMEOUT_MS);

afterAll(async () => {
  await system?.stop();
});

describe('GraphQL live decisions on the embedded default', () => {
  it('delivers a posted decision within 2 s and never a replay; refuses a non-member; ends on removal', async () => {
    const owner = await developer(system);
    const member = await developer(system);
    const stranger = await developer(system);
    const game = await eventGame(system, owner.token);
    const memberId = await addMember(system, owner.token, game.organizationId, member, 'viewer');
    const { live, recorded } = await liveSubscription(system.url, member.token, game.gameId);
    const strangerLive = liveClient(system.url, { token: stranger.token });
    try {
      const body = gameEvent(game);
      const { replayed, mode, ...decision } = await postGameEvent(system.url, game, body);
      await until(() => recorded.events.length === 1, 'the decision', 2000);
      expect(recorded.events[0]).toEqual(decision);
      expect([replayed, mode]).toEqual([false, 'sandbox']);
      expect((await postGameEvent(system.url, game, body)).replayed).toBe(true);
      const next = await postGameEvent(system.url, game, gameEvent(game));
      await until(() => recorded.events.length >= 2, 'the next decision', 2000);
      expect(recorded.events.map((e) => e.eventId)).toEqual([body.eventId, next.eventId]);

      const refused = subscribeDecisions(strangerLive, game.gameId);
      await until(() => refused.errors.length > 0, 'the refusal');
      expect(refused.errors).toEqual([expect.objectContaining({ extensions: { code: 'not_found', status: 404 } })]);

      await ok(system, owner.token, { type: 'removeMember', memberId });
      await until(() => recorded.errors.length > 0, 'the end of the subscription');
      expect(recorded.errors).toEqual([expect.objectContaining({ extensions: { code: 'not_found', status: 404 } })]);
    } finally {
      await live.dispose();
      await strangerLive.dispose();
    }
  });
});
