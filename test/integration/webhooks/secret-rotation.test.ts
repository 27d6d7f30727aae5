// Webhook secret rotation with an overlap (CONTRACT section 11.2) on real PostgreSQL and NATS: during the overlap
// every delivery carries `v1,<new> v1,<old>` and the `standardwebhooks` package verifies it with either secret; with
// overlapSeconds 0 only the new secret signs; overlapSeconds outside 0..604,800 is 400 invalid_action. A decision's
// payload carries its gameTime.
import { Webhook } from 'standardwebhooks';
import { act, developer, expectError, ok } from '../../support/console.ts';
import { eventBody, expectDecision, postEvent, until } from '../../support/ingest.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { addOwner, WebhookReceiver } from '../../support/webhook-receiver.ts';
import { gql } from '../graphql/helpers.ts';

describe('webhook secret rotation with an overlap', () => {
  let system: TestSystem;
  let receiver: WebhookReceiver;
  let url: string;
  let token: string;
  let world: EventWorld;

  beforeAll(async () => {
    system = await startTestSystem({
      env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_BASE_MS: '200' },
    });
    receiver = new WebhookReceiver();
    url = await receiver.start();
    const dev = await developer(system);
    token = dev.token;
    world = await createEventWorld(system.databaseUrl!, { rewardCredits: 10, budgetCredits: 1000 });
    await addOwner(system.databaseUrl!, world.game.organizationId, dev.sub);
  });
  afterAll(async () => {
    await system?.stop();
    await receiver?.stop();
  });

  /** Posts an accepted event and waits for its delivery; answers the request the receiver got. */
  async function delivered() {
    const decision = expectDecision(await postEvent(system.url, world.key.value, eventBody(world)));
    await until('the decision delivered', async () =>
      receiver.received.some((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id === decision.id),
    );
    const request = receiver.received.find(
      (r) => (JSON.parse(r.body) as { data: { id: string } }).data.id === decision.id,
    )!;
    return { decision, request };
  }

  const verifies = (secret: string, request: { id: string; timestamp: string; signature: string; body: string }) => {
    try {
      new Webhook(secret).verify(request.body, {
        'webhook-id': request.id,
        'webhook-timestamp': request.timestamp,
        'webhook-signature': request.signature,
      });
      return true;
    } catch {
      return false;
    }
  };

  it('signs with both secrets during the overlap, with the new one only after a rotation with 0', async () => {
    const created = await ok(system, token, {
      type: 'createWebhookEndpoint',
      gameId: world.game.gameId,
      url,
      eventTypes: ['decision.accepted'],
    });
    const first = created.secret!;
    receiver.secret = first;
    const before = await delivered();
    expect(before.request.signature.split(' ')).toHaveLength(1);
    // The payload carries the decision's game time (the game's clock was never advanced: its createdAt).
    expect(JSON.parse(before.request.body).data).toMatchObject({
      id: before.decision.id,
      createdAt: before.decision.createdAt,
      gameTime: before.decision.createdAt,
    });

    for (const overlapSeconds of [-1, 604_801, 1.5]) {
      expectError(
        await act(system, token, { type: 'rotateWebhookSecret', webhookEndpointId: created.id, overlapSeconds }),
        400,
        'invalid_action',
      );
    }

    // Default overlap (86,400 s): two signatures, `v1,<new> v1,<old>`, each verified by standardwebhooks.
    const rotated = await ok(system, token, { type: 'rotateWebhookSecret', webhookEndpointId: created.id });
    const second = rotated.secret!;
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    receiver.secret = second;
    const during = await delivered();
    const signatures = during.request.signature.split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures.every((s) => s.startsWith('v1,'))).toBe(true);
    expect(verifies(second, during.request)).toBe(true);
    expect(verifies(first, during.request)).toBe(true);
    expect(verifies(second, { ...during.request, signature: signatures[0]! })).toBe(true);
    expect(verifies(first, { ...during.request, signature: signatures[1]! })).toBe(true);

    // GraphQL, an explicit overlap of 0: only the new secret signs.
    const result = await gql(
      system,
      token,
      `mutation($input: WebhookEndpointInput!) { rotateWebhookSecret(input: $input) { id secret } }`,
      { input: { webhookEndpointId: created.id, overlapSeconds: 0 } },
    );
    expect(result.body.errors).toBeUndefined();
    const third = (result.body.data as any).rotateWebhookSecret.secret as string;
    receiver.secret = third;
    const after = await delivered();
    expect(after.request.signature.split(' ')).toHaveLength(1);
    expect(verifies(third, after.request)).toBe(true);
    expect(verifies(second, after.request)).toBe(false);
    expect(verifies(first, after.request)).toBe(false);
    expect(receiver.rejectedSignatures).toBe(0);

    // overlapSeconds is rotateWebhookSecret's alone, though GraphQL's WebhookEndpointInput carries it.
    const refused = await gql(
      system,
      token,
      `mutation($input: WebhookEndpointInput!) { sendTestWebhook(input: $input) { id } }`,
      { input: { webhookEndpointId: created.id, overlapSeconds: 10 } },
    );
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_action', status: 400 });
  });
});
