// A receiver down and then back: decisions keep being made while it is down (no decision waits for
// a delivery), every message is delivered once it is back, and the only duplicates carry the same webhook-id. Real
// PostgreSQL and NATS, a real local HTTP receiver verifying every signature with `standardwebhooks`. Down for 20 s
// here; the fault suite's `webhook-receiver-down` keeps its receivers down for 60 s under the suite's event load.
import { developer, ok } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, postEvent, until } from '../../support/ingest.ts';
import { createEventWorld } from '../../support/ledger-fixtures.ts';
import { freePort } from '../../support/servers.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { addOwner, WebhookReceiver } from '../../support/webhook-receiver.ts';

const DOWN_MS = 20_000;
const EVENTS = 30;

describe('a webhook receiver down for 20 s', () => {
  let system: TestSystem;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    system = await startTestSystem({
      env: {
        WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
        WEBHOOK_POLL_INTERVAL_MS: '100',
        WEBHOOK_RETRY_BASE_MS: '500',
        WEBHOOK_RETRY_DELAY_MAX_MS: '5000',
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await receiver.stop();
  });

  it('gets every message once it is back, duplicates only with the same webhook-id', async () => {
    const db = system.databaseUrl!;
    const dev = await developer(system);
    const world = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    await addOwner(db, world.game.organizationId, dev.sub);
    // A port that nothing listens on while the receiver is down: connection refused.
    const port = await freePort();
    const created = await ok(system, dev.token, {
      type: 'createWebhookEndpoint',
      gameId: world.game.gameId,
      url: `http://127.0.0.1:${port}/hooks`,
      eventTypes: ['decision.accepted', 'decision.rejected'],
    });
    receiver.secret = created.secret!;

    const downSince = Date.now();
    const eventIds: string[] = [];
    for (let i = 0; i < EVENTS; i += 1) {
      const body = eventBody(world);
      expectDecision(await postEvent(system.url, world.key.value, body));
      eventIds.push(body.eventId);
    }
    const [failed] = await sql<{ n: number }>(db, `select count(*)::int as n from ledger.webhook_attempts`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, DOWN_MS - (Date.now() - downSince))));
    await receiver.start(port);
    const eventIdOf = (r: { verified: unknown }) => (r.verified as { data: { eventId: string } }).data.eventId;
    const delivery = async () => {
      const [row] = await sql<{ delivered: number; attempts: number }>(
        db,
        `select count(*) filter (where state = 'delivered')::int as delivered,
                (select count(*)::int from ledger.webhook_attempts) as attempts
           from ledger.webhook_messages`,
      );
      return row!;
    };
    // The receiver answers before the worker writes `delivered`: wait for both.
    await until(
      'every decision delivered',
      async () => new Set(receiver.received.map(eventIdOf)).size === EVENTS && (await delivery()).delivered === EVENTS,
      90_000,
    );
    const states = await delivery();
    expect(states.delivered).toBe(EVENTS);
    expect(states.attempts).toBeGreaterThan(failed!.n);
    expect(new Set(receiver.received.map(eventIdOf))).toEqual(new Set(eventIds));
    expect(receiver.rejectedSignatures).toBe(0);
    // A duplicate (if any) is the same message: the same webhook-id for the same decision.
    const idOf = new Map<string, string>();
    for (const r of receiver.received) {
      expect(idOf.get(eventIdOf(r)) ?? r.id).toBe(r.id);
      idOf.set(eventIdOf(r), r.id);
    }
  }, 150_000);
});
