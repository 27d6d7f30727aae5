// Webhooks on the embedded default (PGlite and the in-process transport, as `npm start`): private addresses allowed
// without any variable, the decision's message written by record_events and delivered by the worker's claim
// (FOR UPDATE SKIP LOCKED on PGlite), signed so that the `standardwebhooks` package verifies it.
import { developer, ok } from '../../support/console.ts';
import { eventBody, expectDecision, postEvent, until } from '../../support/ingest.ts';
import { createEventWorld } from '../../support/ledger-fixtures.ts';
import { EMBEDDED_START_TIMEOUT_MS, startTestSystem, type TestSystem } from '../../support/system.ts';
import { addOwner, WebhookReceiver } from '../../support/webhook-receiver.ts';

let system: TestSystem;
const receiver = new WebhookReceiver();
let url: string;

beforeAll(async () => {
  system = await startTestSystem({ mode: 'embedded', env: { WEBHOOK_POLL_INTERVAL_MS: '50' } });
  url = await receiver.start();
}, EMBEDDED_START_TIMEOUT_MS);

afterAll(async () => {
  await system?.stop();
  await receiver.stop();
});

test('a decision is delivered to a local receiver on npm start', async () => {
  const db = system.running.databaseUrl;
  const dev = await developer(system);
  const world = await createEventWorld(db, { rewardCredits: 5, budgetCredits: 100 });
  await addOwner(db, world.game.organizationId, dev.sub);
  const created = await ok(system, dev.token, {
    type: 'createWebhookEndpoint',
    gameId: world.game.gameId,
    url,
    eventTypes: ['decision.accepted'],
  });
  receiver.secret = created.secret!;
  const decision = expectDecision(await postEvent(system.url, world.key.value, eventBody(world)));
  await until('delivered', async () => receiver.received.length === 1);
  const { replayed: _replayed, ...data } = decision as Record<string, unknown>;
  // gameTime: the game's clock when decided (CONTRACT section 11.2), its createdAt for a game never advanced.
  expect(receiver.received[0]!.verified).toEqual({
    type: 'decision.accepted',
    timestamp: expect.any(String),
    data: { ...data, gameTime: decision.createdAt },
  });
});
