// A receiver down for 60 s and then back (issue 43 item 6): decisions keep being made while it is down (no decision
// waits for a delivery), every message is delivered once it is back, and the only duplicates carry the same
// webhook-id. Real PostgreSQL and NATS, a real local HTTP receiver verifying every signature with `standardwebhooks`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { developer, ok } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, postEvent, until } from '../../support/ingest.ts';
import { createEventWorld } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

const DOWN_MS = 60_000;
const EVENTS = 30;

function receiver(secret: () => string, seen: Array<{ id: string; eventId: string }>): Server {
  return createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const message = new Webhook(secret()).verify(body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      }) as { data: { eventId: string } };
      seen.push({ id: String(request.headers['webhook-id']), eventId: message.data.eventId });
      response.writeHead(204).end();
    });
  });
}

describe('a webhook receiver down for 60 s', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await startTestSystem({
      env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', WEBHOOK_POLL_INTERVAL_MS: '100', WEBHOOK_RETRY_BASE_MS: '500' },
    });
  });
  afterAll(async () => system?.stop());

  it('gets every message once it is back, duplicates only with the same webhook-id', async () => {
    const db = system.databaseUrl!;
    const dev = await developer(system);
    const world = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    await sql(
      db,
      `insert into ledger.members (id, organization_id, identity_user_id, role, joined_at)
       values (gen_random_uuid(), $1, $2, 'owner', now())`,
      [world.game.organizationId, dev.sub],
    );
    // A port that nothing listens on while the receiver is down: connection refused.
    const seen: Array<{ id: string; eventId: string }> = [];
    let secret = '';
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const created = await ok(system, dev.token, {
      type: 'createWebhookEndpoint',
      gameId: world.game.gameId,
      url: `http://127.0.0.1:${port}/hooks`,
      eventTypes: ['decision.accepted', 'decision.rejected'],
    });
    secret = created.secret!;

    const downSince = Date.now();
    const eventIds: string[] = [];
    for (let i = 0; i < EVENTS; i += 1) {
      const body = eventBody(world);
      expectDecision(await postEvent(system.url, world.key.value, body));
      eventIds.push(body.eventId);
    }
    const [failed] = await sql<{ n: number }>(db, `select count(*)::int as n from ledger.webhook_attempts`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, DOWN_MS - (Date.now() - downSince))));
    const server = receiver(() => secret, seen);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      await until('every decision delivered', async () => new Set(seen.map((s) => s.eventId)).size === EVENTS, 150_000);
      const [states] = await sql<{ delivered: number; attempts: number }>(
        db,
        `select count(*) filter (where state = 'delivered')::int as delivered,
                (select count(*)::int from ledger.webhook_attempts) as attempts
           from ledger.webhook_messages`,
      );
      expect(states!.delivered).toBe(EVENTS);
      expect(states!.attempts).toBeGreaterThan(failed!.n);
      expect(new Set(seen.map((s) => s.eventId))).toEqual(new Set(eventIds));
      // A duplicate (if any) is the same message: the same webhook-id for the same decision.
      const idOf = new Map<string, string>();
      for (const s of seen) {
        expect(idOf.get(s.eventId) ?? s.id).toBe(s.id);
        idOf.set(s.eventId, s.id);
      }
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 240_000);
});
