// The delivery worker's claim on real PostgreSQL, as two ledger replicas (two pools) run it at once: no delivery is
// claimed twice while its lease runs, and an endpoint never has more than its bound in flight across both.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { Database, migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { RETENTION_HORIZONS, RetentionRepository } from '../../../services/ledger/src/retention/index.ts';
import { WebhookRepository } from '../../../services/ledger/src/webhooks/repository.ts';
import { createTestDatabase, sql } from '../../support/database.ts';
import { createGame } from '../../support/ledger-fixtures.ts';

const logger = pino({ level: 'silent' });
const ENDPOINTS = 3;
const MESSAGES_PER_ENDPOINT = 10;
const IN_FLIGHT_MAX = 4;

describe('claiming webhook deliveries from two replicas', () => {
  let url: string;
  let replicas: Database[];

  beforeAll(async () => {
    url = await createTestDatabase();
    await migrate(url, [identityMigrations, ledgerMigrations], logger);
    replicas = [await Database.open({ url, poolMax: 4, logger }), await Database.open({ url, poolMax: 4, logger })];
    for (let e = 0; e < ENDPOINTS; e += 1) {
      const game = await createGame(url);
      const [endpoint] = await sql<{ id: string }>(
        url,
        `insert into ledger.webhook_endpoints (id, game_id, organization_id, url, event_types, secret_ciphertext)
         values (gen_random_uuid(), $1, $2, 'https://hooks.example.com/in', array['game.paused'], $3) returning id`,
        [game.gameId, game.organizationId, randomBytes(60)],
      );
      await sql(
        url,
        `insert into ledger.webhook_messages (id, endpoint_id, game_id, event_type, data, next_attempt_at)
         select gen_random_uuid(), $1, $2, 'webhook.test', '{}'::jsonb, now() from generate_series(1, $3)`,
        [endpoint!.id, game.gameId, MESSAGES_PER_ENDPOINT],
      );
    }
  });
  afterAll(async () => {
    await Promise.all((replicas ?? []).map((r) => r.close()));
  });

  it('claims disjoint deliveries, at most the bound per endpoint across replicas, none again under its lease', async () => {
    const options = { endpointsMax: 10, inFlightMax: IN_FLIGHT_MAX, leaseMs: 60_000 };
    const rounds = await Promise.all(
      replicas.flatMap((replica) => [0, 1, 2, 3].map(() => new WebhookRepository(replica).claim(options))),
    );
    const claimed = rounds.flat();
    expect(new Set(claimed.map((m) => m.id)).size).toBe(claimed.length);
    const perEndpoint = new Map<string, number>();
    for (const m of claimed) perEndpoint.set(m.endpointId, (perEndpoint.get(m.endpointId) ?? 0) + 1);
    for (const n of perEndpoint.values()) expect(n).toBeLessThanOrEqual(IN_FLIGHT_MAX);
    expect(claimed.every((m) => m.attempt === 1)).toBe(true);

    // Each endpoint's bound is taken: nothing more until an attempt is recorded or a lease runs out.
    const more = await new WebhookRepository(replicas[1]!).claim(options);
    const full = [...perEndpoint.entries()].filter(([, n]) => n === IN_FLIGHT_MAX).map(([id]) => id);
    expect(more.filter((m) => full.includes(m.endpointId))).toEqual([]);
    expect(more.filter((m) => claimed.some((c) => c.id === m.id))).toEqual([]);

    // A lease that ran out (a replica died mid-attempt): the delivery is claimed again, same id, next attempt.
    const lost = claimed[0]!;
    await sql(url, `update ledger.webhook_messages set in_flight_until = now() - interval '1 second' where id = $1`, [
      lost.id,
    ]);
    const again = await new WebhookRepository(replicas[0]!).claim(options);
    expect(again.filter((m) => m.id === lost.id).map((m) => m.attempt)).toEqual([2]);
  });

  it('records an attempt once per claim, and the retention removes finished messages past 30 days', async () => {
    const repository = new WebhookRepository(replicas[0]!);
    const [, , victim] = await sql<{ id: string; endpoint_id: string; attempts: number }>(
      url,
      `select id, endpoint_id, attempts from ledger.webhook_messages where attempts > 0 order by id limit 3`,
    );
    const message = { id: victim!.id, endpointId: victim!.endpoint_id, attempt: victim!.attempts };
    const outcome = { startedAt: new Date(), latencyMs: 12, statusCode: 200, error: undefined, responseExcerpt: 'ok' };
    await repository.finish(message, outcome, { kind: 'delivered' }, 3_600_000);
    // A late second record of the same claim changes nothing (the attempt is already there, the message finished).
    await repository.finish(message, { ...outcome, statusCode: 500 }, { kind: 'retry', retryInMs: 1000 }, 3_600_000);
    const [row] = await sql<{ state: string; codes: number[] }>(
      url,
      `select m.state, array(select status_code from ledger.webhook_attempts a where a.message_id = m.id) as codes
         from ledger.webhook_messages m where m.id = $1`,
      [message.id],
    );
    expect(row).toEqual({ state: 'delivered', codes: [200] });

    const retention = new RetentionRepository(replicas[1]!);
    expect(await retention.removeWebhookMessages(null, RETENTION_HORIZONS, 100)).toBe(0);
    await sql(url, `update ledger.webhook_messages set finished_at = now() - interval '31 days' where id = $1`, [
      message.id,
    ]);
    expect(await retention.removeWebhookMessages(null, RETENTION_HORIZONS, 100)).toBe(1);
    const [left] = await sql<{ n: number }>(
      url,
      `select count(*)::int as n from ledger.webhook_attempts where message_id = $1`,
      [message.id],
    );
    expect(left!.n).toBe(0);
  });
});
