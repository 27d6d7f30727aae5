// Webhooks end to end on real PostgreSQL and NATS (CONTRACT section 11.1): endpoints through the console actions,
// messages written with what they report, delivered by the ledger's worker to a real local HTTP receiver that
// verifies every signature with the `standardwebhooks` package; retries keep their webhook-id; the reads show each
// delivery and attempt; the URL rule on a system that does not allow private addresses.
import { act, developer, expectError, ok } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, postEvent, until } from '../../support/ingest.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { addOwner, WebhookReceiver } from '../../support/webhook-receiver.ts';
import { gql } from '../graphql/helpers.ts';

const DELIVERIES = `query($id: UUID!) { webhookDeliveries(webhookEndpointId: $id, first: 50) {
  deliveries { id eventType state payload attempts { attempt statusCode error latencyMs responseExcerpt } }
  nextCursor } }`;

describe('webhooks', () => {
  let system: TestSystem;
  let db: string;
  let receiver: WebhookReceiver;
  let url: string;
  let token: string;
  let world: EventWorld;

  beforeAll(async () => {
    system = await startTestSystem({
      env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_BASE_MS: '200' },
    });
    db = system.databaseUrl!;
    receiver = new WebhookReceiver();
    url = await receiver.start();
    const dev = await developer(system);
    token = dev.token;
    world = await createEventWorld(db, { rewardCredits: 100, budgetCredits: 1000 });
    await addOwner(db, world.game.organizationId, dev.sub);
  });
  afterAll(async () => {
    await system?.stop();
    await receiver?.stop();
  });

  let endpointId: string;

  it('creates an endpoint whose secret is shown once and never read back', async () => {
    const created = (await ok(system, token, {
      type: 'createWebhookEndpoint',
      gameId: world.game.gameId,
      url,
      eventTypes: [
        'decision.accepted',
        'decision.rejected',
        'game.budget_low',
        'game.budget_exhausted',
        'game.paused',
        'game.resumed',
      ],
    })) as { id: string; secret: string; mode: string };
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    expect(created.mode).toBe('sandbox');
    receiver.secret = created.secret;
    endpointId = created.id;
    const read = await gql(
      system,
      token,
      `query($g: UUID!) { webhookEndpoints(gameId: $g) { id url eventTypes enabled disabledReason } }`,
      { g: world.game.gameId },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data?.webhookEndpoints).toEqual([
      {
        id: endpointId,
        url,
        eventTypes: expect.arrayContaining(['decision.accepted']),
        enabled: true,
        disabledReason: null,
      },
    ]);
    const [stored] = await sql<{ secret: Buffer }>(
      db,
      `select secret_ciphertext as secret from ledger.webhook_endpoints where id = $1`,
      [endpointId],
    );
    expect(stored!.secret.toString('base64')).not.toContain(created.secret.slice(6));
  });

  it('answers the same action as a GraphQL mutation, the secret shown once there too', async () => {
    const created = await gql(
      system,
      token,
      `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id mode secret } }`,
      { input: { gameId: world.game.gameId, url, eventTypes: ['game.paused'] } },
    );
    expect(created.body.errors).toBeUndefined();
    expect(created.body.data?.createWebhookEndpoint).toEqual({
      id: expect.any(String),
      mode: 'sandbox',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const refused = await gql(
      system,
      token,
      `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id } }`,
      { input: { gameId: world.game.gameId, url: 'ftp://hooks.example.com/', eventTypes: ['game.paused'] } },
    );
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_action', status: 400 });
    const deleted = await gql(
      system,
      token,
      `mutation($input: WebhookEndpointInput!) { deleteWebhookEndpoint(input: $input) { id secret } }`,
      { input: { webhookEndpointId: created.body.data.createWebhookEndpoint.id } },
    );
    expect(deleted.body.data?.deleteWebhookEndpoint).toEqual({
      id: created.body.data.createWebhookEndpoint.id,
      secret: null,
    });
  });

  it('delivers a decision signed per Standard Webhooks, with the decision as data', async () => {
    const body = eventBody(world);
    const decision = expectDecision(await postEvent(system.url, world.key.value, body));
    await until('the decision delivered', async () => receiver.ofType('decision.accepted').length === 1);
    const [message] = receiver.ofType('decision.accepted');
    const { replayed: _replayed, ...withoutReplayed } = decision as Record<string, unknown>;
    expect(JSON.parse(message!.body)).toEqual({
      type: 'decision.accepted',
      timestamp: expect.any(String),
      // The game's clock when decided (CONTRACT section 11.2): never advanced here, so its createdAt.
      data: { ...withoutReplayed, gameTime: decision.createdAt },
    });
    expect(message!.verified).toEqual(JSON.parse(message!.body));
    await until('the delivery recorded', async () => {
      const read = await gql(system, token, DELIVERIES, { id: endpointId });
      const delivery = read.body.data?.webhookDeliveries.deliveries.find((d: { id: string }) => d.id === message!.id);
      return delivery?.state === 'delivered';
    });
    const read = await gql(system, token, DELIVERIES, { id: endpointId });
    const delivery = read.body.data?.webhookDeliveries.deliveries.find((d: { id: string }) => d.id === message!.id);
    expect(delivery).toEqual({
      id: message!.id,
      eventType: 'decision.accepted',
      state: 'delivered',
      payload: message!.body,
      attempts: [
        { attempt: 1, statusCode: 200, error: null, latencyMs: expect.any(Number), responseExcerpt: 'answered 200' },
      ],
    });
  });

  it('retries a failed delivery with the same webhook-id until a 2xx', async () => {
    receiver.answers = [500, 503];
    receiver.received = [];
    await postEvent(system.url, world.key.value, eventBody(world, { eventType: 'no.rule' }));
    await until(
      'the rejection delivered after two failures',
      async () => receiver.ofType('decision.rejected').length === 3,
      60_000,
    );
    const ids = new Set(receiver.ofType('decision.rejected').map((r) => r.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    await until('the third attempt recorded', async () => {
      const [row] = await sql<{ state: string }>(db, `select state from ledger.webhook_messages where id = $1`, [id]);
      return row?.state === 'delivered';
    });
    const read = await gql(system, token, DELIVERIES, { id: endpointId });
    const delivery = read.body.data?.webhookDeliveries.deliveries.find((d: { id: string }) => d.id === id);
    expect(delivery.attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 503, 200]);
  });

  it('reports a pause and a resume from the action that made them', async () => {
    receiver.received = [];
    await ok(system, token, { type: 'updateGame', gameId: world.game.gameId, status: 'paused' });
    await ok(system, token, { type: 'updateGame', gameId: world.game.gameId, status: 'paused' });
    await ok(system, token, { type: 'updateGame', gameId: world.game.gameId, status: 'active' });
    // An endpoint has several deliveries in flight at once, so the two may arrive in either order: wait for both.
    await until(
      'paused and resumed delivered',
      async () => receiver.ofType('game.resumed').length === 1 && receiver.ofType('game.paused').length >= 1,
    );
    expect(receiver.ofType('game.paused').map((r) => JSON.parse(r.body).data)).toEqual([
      { gameId: world.game.gameId, organizationId: world.game.organizationId, status: 'paused' },
    ]);
  });

  it('reports budget_low when the budget left falls below 10 %, and budget_exhausted once per budget', async () => {
    receiver.received = [];
    // 1000 budget, 100 per event, 100 spent: 8 more leave 100 (10 %), the ninth leaves 0, the tenth is refused.
    for (let i = 0; i < 11; i += 1) await postEvent(system.url, world.key.value, eventBody(world));
    await until(
      'budget notices delivered',
      async () =>
        receiver.ofType('game.budget_exhausted').length === 1 && receiver.ofType('game.budget_low').length === 1,
    );
    expect(JSON.parse(receiver.ofType('game.budget_low')[0]!.body).data).toEqual({
      gameId: world.game.gameId,
      organizationId: world.game.organizationId,
      budgetCredits: 1000,
      spentCredits: 1000,
      remainingCredits: 0,
    });
    const [count] = await sql<{ n: number }>(
      db,
      `select count(*)::int as n from ledger.webhook_messages where event_type = 'game.budget_exhausted'`,
    );
    expect(count!.n).toBe(1);
  });

  it('rotates the secret, sends a test message and redelivers with the same id', async () => {
    const rotated = (await ok(system, token, { type: 'rotateWebhookSecret', webhookEndpointId: endpointId })) as {
      secret: string;
    };
    expect(rotated.secret).not.toBe(receiver.secret);
    receiver.secret = rotated.secret;
    receiver.received = [];
    const test = await ok(system, token, { type: 'sendTestWebhook', webhookEndpointId: endpointId });
    await until('the test delivered', async () => receiver.ofType('webhook.test').length === 1);
    expect(receiver.ofType('webhook.test')[0]!.id).toBe(test.id);
    // The payload docs/webhooks.md documents.
    expect(receiver.ofType('webhook.test')[0]!.verified).toEqual({
      type: 'webhook.test',
      timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      data: { webhookEndpointId: endpointId, gameId: world.game.gameId, organizationId: world.game.organizationId },
    });
    await until('the test recorded', async () => {
      const [row] = await sql<{ state: string }>(db, `select state from ledger.webhook_messages where id = $1`, [
        test.id,
      ]);
      return row?.state === 'delivered';
    });
    await ok(system, token, { type: 'redeliverWebhook', webhookDeliveryId: test.id });
    await until('the test delivered again', async () => receiver.ofType('webhook.test').length === 2);
    expect(receiver.ofType('webhook.test').map((r) => r.id)).toEqual([test.id, test.id]);
    expect(receiver.rejectedSignatures).toBe(0);
  });

  it("filters the deliveries by state, type, window and webhook-id; shows the rotated secret's overlap", async () => {
    const FILTERED = `query($id: UUID!, $filter: WebhookDeliveryFilter) {
      webhookDeliveries(webhookEndpointId: $id, first: 100, filter: $filter) { deliveries { id eventType state createdAt } }
    }`;
    const all = (await gql(system, token, FILTERED, { id: endpointId })).body.data?.webhookDeliveries
      .deliveries as Array<{
      id: string;
      eventType: string;
      state: string;
      createdAt: string;
    }>;
    expect(new Set(all.map((d) => d.eventType)).size).toBeGreaterThan(2);
    const read = async (filter: Record<string, unknown>) => {
      const result = await gql(system, token, FILTERED, { id: endpointId, filter });
      expect(result.body.errors).toBeUndefined();
      return result.body.data?.webhookDeliveries.deliveries as typeof all;
    };
    expect(await read({ eventType: 'webhook.test' })).toEqual(all.filter((d) => d.eventType === 'webhook.test'));
    expect(await read({ state: 'delivered', eventType: 'decision.rejected' })).toEqual(
      all.filter((d) => d.state === 'delivered' && d.eventType === 'decision.rejected'),
    );
    const target = all[Math.floor(all.length / 2)]!;
    expect(await read({ webhookId: target.id.toUpperCase() })).toEqual([target]);
    expect(await read({ from: target.createdAt })).toEqual(all.filter((d) => d.createdAt >= target.createdAt));
    expect(await read({ to: target.createdAt })).toEqual(all.filter((d) => d.createdAt < target.createdAt));
    expect(await read({ from: new Date(Date.now() + 3_600_000).toISOString() })).toEqual([]);
    for (const [filter, named] of [
      [{ state: 'lost' }, 'filter.state'],
      [{ eventType: 'decision.maybe' }, 'filter.eventType'],
      [{ from: target.createdAt, to: target.createdAt }, 'filter.to'],
    ] as const) {
      const refused = await gql(system, token, FILTERED, { id: endpointId, filter });
      expect(refused.body.errors?.[0]?.extensions?.code).toBe('INVALID_RECORD_QUERY');
      expect(refused.body.errors?.[0]?.message).toContain(named);
    }
    // The rotation above took the default overlap, 86,400 s: the previous secret's end is a day after it.
    const endpoints = await gql(
      system,
      token,
      `query($g: UUID!) { webhookEndpoints(gameId: $g) { id previousSecretExpiresAt } }`,
      {
        g: world.game.gameId,
      },
    );
    const expires = Date.parse(endpoints.body.data?.webhookEndpoints[0].previousSecretExpiresAt);
    expect(expires).toBeGreaterThan(Date.now() + 86_400_000 - 600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 86_400_000);
  });

  it('recovers the failed deliveries written since a time, each again with its own webhook-id', async () => {
    await until('no message pending', async () => {
      const [row] = await sql<{ n: number }>(
        db,
        `select count(*)::int as n from ledger.webhook_messages where endpoint_id = $1 and state = 'pending'`,
        [endpointId],
      );
      return row!.n === 0;
    });
    // Every message so far failed, as if the receiver had been down through its retries.
    const failed = await sql<{ id: string; at: string }>(
      db,
      `update ledger.webhook_messages set state = 'failed' where endpoint_id = $1 and state = 'delivered'
       returning id::text, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at`,
      [endpointId],
    );
    expect(failed.length).toBeGreaterThan(3);
    const since = [...failed].sort((a, b) => a.at.localeCompare(b.at))[Math.floor(failed.length / 2)]!.at;
    const expected = failed.filter((m) => m.at >= since).map((m) => m.id);
    receiver.received = [];
    const result = await gql(
      system,
      token,
      `mutation($input: RecoverWebhookDeliveriesInput!) { recoverWebhookDeliveries(input: $input) { id } }`,
      { input: { webhookEndpointId: endpointId, since } },
    );
    expect(result.body.errors).toBeUndefined();
    expect(result.body.data?.recoverWebhookDeliveries.id).toBe(endpointId);
    await until('the recovered messages delivered', async () =>
      expected.every((id) => receiver.received.some((r) => r.id === id)),
    );
    expect(new Set(receiver.received.map((r) => r.id))).toEqual(new Set(expected));
    const [older] = await sql<{ n: number }>(
      db,
      `select count(*)::int as n from ledger.webhook_messages where endpoint_id = $1 and state = 'failed'`,
      [endpointId],
    );
    expect(older!.n).toBe(failed.length - expected.length);
    expect(receiver.rejectedSignatures).toBe(0);
  });

  it('disables an endpoint failing for long, says so in the reads, and sends nothing more to it', async () => {
    // The earlier tests' messages all delivered first: one still in flight would take the 500 meant for the test
    // webhook, and its success after would clear the failure.
    await until('no message pending', async () => {
      const [row] = await sql<{ n: number }>(
        db,
        `select count(*)::int as n from ledger.webhook_messages where endpoint_id = $1 and state = 'pending'`,
        [endpointId],
      );
      return row!.n === 0;
    });
    await sql(db, `update ledger.webhook_endpoints set failing_since = now() - interval '6 days' where id = $1`, [
      endpointId,
    ]);
    receiver.answers = [500];
    await ok(system, token, { type: 'sendTestWebhook', webhookEndpointId: endpointId });
    await until('disabled', async () => {
      const read = await gql(
        system,
        token,
        `query($g: UUID!) { webhookEndpoints(gameId: $g) { enabled disabledReason failingSince } }`,
        { g: world.game.gameId },
      );
      return read.body.data?.webhookEndpoints[0]?.disabledReason === 'failing';
    });
    const [count] = await sql<{ n: number }>(
      db,
      `select count(*)::int as n from ledger.webhook_endpoints where id = $1 and not enabled`,
      [endpointId],
    );
    expect(count!.n).toBe(1);
  });

  it('refuses viewers, outsiders and malformed event types', async () => {
    const outsider = await developer(system);
    const viewer = await developer(system);
    await ok(system, token, {
      type: 'addMember',
      organizationId: world.game.organizationId,
      identityUserId: viewer.sub,
      role: 'viewer',
    });
    expectError(
      await act(system, viewer.token, { type: 'sendTestWebhook', webhookEndpointId: endpointId }),
      403,
      'forbidden',
    );
    // Viewers read: the endpoints and their deliveries.
    const seen = await gql(system, viewer.token, `query($g: UUID!) { webhookEndpoints(gameId: $g) { id } }`, {
      g: world.game.gameId,
    });
    expect(seen.body.data?.webhookEndpoints).toEqual([{ id: endpointId }]);
    expectError(
      await act(system, outsider.token, { type: 'deleteWebhookEndpoint', webhookEndpointId: endpointId }),
      404,
      'not_found',
    );
    expectError(
      await act(system, token, {
        type: 'createWebhookEndpoint',
        gameId: world.game.gameId,
        url,
        eventTypes: ['decision.maybe'],
      }),
      400,
      'invalid_action',
    );
    await ok(system, token, { type: 'deleteWebhookEndpoint', webhookEndpointId: endpointId });
    const read = await gql(system, token, `query($g: UUID!) { webhookEndpoints(gameId: $g) { id } }`, {
      g: world.game.gameId,
    });
    expect(read.body.data?.webhookEndpoints).toEqual([]);
  });

  it('refuses a 21st endpoint of a game with 400 invalid_action naming the limit', async () => {
    const game = (await createEventWorld(db, { rewardCredits: 1, budgetCredits: 10 })).game;
    const owner = await developer(system);
    await addOwner(db, game.organizationId, owner.sub);
    const create = () =>
      act(system, owner.token, {
        type: 'createWebhookEndpoint',
        gameId: game.gameId,
        url,
        eventTypes: ['game.paused'],
      });
    const made = await Promise.all(Array.from({ length: 20 }, () => create()));
    expect(made.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const refused = await create();
    expectError(refused, 400, 'invalid_action');
    expect(refused.body.error.message).toContain('20');
  });
});

describe('the URL rule without private addresses', () => {
  let system: TestSystem;
  let token: string;
  let gameId: string;

  beforeAll(async () => {
    system = await startTestSystem({
      env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'false', WEBHOOK_ALLOWED_PORTS: '8443' },
    });
    const dev = await developer(system);
    token = dev.token;
    const world = await createEventWorld(system.databaseUrl!);
    gameId = world.game.gameId;
    await addOwner(system.databaseUrl!, world.game.organizationId, dev.sub);
  });
  afterAll(async () => system?.stop());

  it.each([
    'http://hooks.example.com/in',
    'https://127.0.0.1/in',
    'https://10.1.2.3/in',
    'https://[::1]/in',
    'https://localhost/in',
    'https://localhost./in',
    'https://[::127.0.0.1]/in',
    'https://[::ffff:0:7f00:1]/in',
    'https://[::ffff:127.0.0.1]/in',
    'https://user:pw@hooks.example.com/in',
    'https://hooks.example.com:22/in',
    'https://hooks.example.com:6379/in',
    'https://8.8.8.8:8080/in',
  ])('refuses %s with 400 INVALID_REQUEST naming the rule', async (target) => {
    const response = await act(system, token, {
      type: 'createWebhookEndpoint',
      gameId,
      url: target,
      eventTypes: ['game.paused'],
    });
    expectError(response, 400, 'INVALID_REQUEST');
    expect(response.body.error.message).toMatch(/^url: /);
  });

  it('accepts https:// to a public name, on 443, 80 or a port of WEBHOOK_ALLOWED_PORTS', async () => {
    for (const url of ['https://hooks.example.com/in', 'https://hooks.example.com:80/in', 'https://8.8.8.8:8443/in']) {
      const created = await ok(system, token, {
        type: 'createWebhookEndpoint',
        gameId,
        url,
        eventTypes: ['game.paused'],
      });
      expect(created.id).toEqual(expect.any(String));
    }
  });

  it('refuses a port not allowed when the URL changes too', async () => {
    const { id } = await ok(system, token, {
      type: 'createWebhookEndpoint',
      gameId,
      url: 'https://hooks.example.com/other',
      eventTypes: ['game.paused'],
    });
    const response = await act(system, token, {
      type: 'updateWebhookEndpoint',
      webhookEndpointId: id,
      url: 'https://hooks.example.com:2375/in',
    });
    expectError(response, 400, 'INVALID_REQUEST');
    expect(response.body.error.message).toMatch(/^url: port 2375 is not allowed/);
  });
});
