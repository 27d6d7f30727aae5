// An endpoint's outbox is bounded: past WEBHOOK_PENDING_PER_ENDPOINT_MAX messages pending, the delivery worker
// disables the endpoint with the reason `backlog` (services/ledger/src/webhooks/worker.ts), and the decisions made
// after it write it no more messages (a disabled endpoint is subscribed to nothing). Another game's endpoint below
// its bound stays enabled; the developer enables the endpoint again with updateWebhookEndpoint. Real PostgreSQL and
// NATS; the receivers refuse connections, so every message stays pending.
import { developer, ok } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, postEvent, until } from '../../support/ingest.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { freePort } from '../../support/servers.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { addOwner } from '../../support/webhook-receiver.ts';

const PENDING_MAX = 5;

describe("a webhook endpoint's backlog past its bound", () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await startTestSystem({
      env: {
        WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
        WEBHOOK_POLL_INTERVAL_MS: '100',
        // A failed attempt is tried again only after a minute: the messages stay pending while the test looks.
        WEBHOOK_RETRY_BASE_MS: '60000',
        WEBHOOK_PENDING_PER_ENDPOINT_MAX: String(PENDING_MAX),
        WEBHOOK_BACKLOG_CHECK_INTERVAL_MS: '200',
      },
    });
  });
  afterAll(async () => system?.stop());

  it('disables the endpoint (reason backlog), writes it nothing more, and leaves another below its bound', async () => {
    const db = system.databaseUrl!;
    const dev = await developer(system);
    const endpointOf = async (world: EventWorld) => {
      await addOwner(db, world.game.organizationId, dev.sub);
      const created = await ok(system, dev.token, {
        type: 'createWebhookEndpoint',
        gameId: world.game.gameId,
        url: `http://127.0.0.1:${await freePort()}/hooks`,
        eventTypes: ['decision.accepted', 'decision.rejected'],
      });
      return created.id as string;
    };
    const a = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const b = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const aEndpoint = await endpointOf(a);
    const bEndpoint = await endpointOf(b);
    const post = async (world: EventWorld, n: number) => {
      for (let i = 0; i < n; i++) expectDecision(await postEvent(system.url, world.key.value, eventBody(world)));
    };
    /** The endpoint's messages, made or still pairs written by ledger.record_events. */
    const written = async (endpointId: string) => {
      const [row] = await sql<{ n: number }>(
        db,
        `select (select count(*) from ledger.webhook_messages where endpoint_id = $1)
              + (select count(*) from ledger.webhook_decision_batches b, unnest(b.endpoint_ids) e where e = $1) as n`,
        [endpointId],
      );
      return Number(row!.n);
    };
    const endpoint = async (id: string) => {
      const [row] = await sql<{ enabled: boolean; disabled_reason: string | null }>(
        db,
        `select enabled, disabled_reason from ledger.webhook_endpoints where id = $1`,
        [id],
      );
      return row!;
    };

    await post(a, PENDING_MAX + 3);
    await post(b, 2);
    await until('A disabled for its backlog', async () => (await endpoint(aEndpoint)).disabled_reason === 'backlog');
    expect(await endpoint(aEndpoint)).toEqual({ enabled: false, disabled_reason: 'backlog' });
    expect(await endpoint(bEndpoint)).toEqual({ enabled: true, disabled_reason: null });

    // Disabled: the decisions made now write A's endpoint nothing (in their own transaction: counted at once).
    // Past the bound when it was checked; the last of the first decisions may have come after (nothing written then).
    const before = await written(aEndpoint);
    expect(before).toBeGreaterThan(PENDING_MAX);
    expect(before).toBeLessThanOrEqual(PENDING_MAX + 3);
    await post(a, 4);
    expect(await written(aEndpoint)).toBe(before);
    const bBefore = await written(bEndpoint);
    await post(b, 1);
    expect(await written(bEndpoint)).toBe(bBefore + 1);

    // The console shows why; the developer enables it again, and new decisions make its messages again.
    const graphql = await fetch(`${system.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query($g: UUID!) { webhookEndpoints(gameId: $g) { id enabled disabledReason } }',
        variables: { g: a.game.gameId },
      }),
    }).then((response) => response.json() as Promise<{ data?: { webhookEndpoints: unknown[] }; errors?: unknown }>);
    expect(graphql.errors).toBeUndefined();
    expect(graphql.data?.webhookEndpoints).toEqual([{ id: aEndpoint, enabled: false, disabledReason: 'backlog' }]);
    await ok(system, dev.token, { type: 'updateWebhookEndpoint', webhookEndpointId: aEndpoint, enabled: true });
    expect(await endpoint(aEndpoint)).toEqual({ enabled: true, disabled_reason: null });
    // Its old backlog (past the bound) does not count again: a few checks later it is still enabled.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await endpoint(aEndpoint)).toEqual({ enabled: true, disabled_reason: null });
    await post(a, 1);
    expect(await written(aEndpoint)).toBe(before + 1);
  });
});
