// The game-server client when the service decided events but lost their answers (CONTRACT section 7): the ledger's
// database connection is cut as PostgreSQL sends the committed decisions back (a TCP proxy between the ledger and
// PostgreSQL; the programs composed in the test process on real NATS). A batch answers those events 503 retry_later
// inside a 200, without Retry-After; the client retries each of them alone, backing off, with its bytes, and is
// answered the stored decision as a replay: one decision per event.
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { type EventOutcome, GameServerClient, type RetryNotice } from '../../../clients/game-server/src/index.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { type Composed, compose } from '../../support/compose.ts';
import { createTestDatabase } from '../../support/database.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startNats } from '../../support/servers.ts';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.ts';
import { eventTexts, recordingFetch, storedDecisions } from './support.ts';

const logger = pino({ level: 'silent' });

describe('game-server client: batch items answered 503 after their decision was committed', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let db: string;
  let world: EventWorld;
  let proxy: TcpProxy;
  let system: Composed;

  beforeAll(async () => {
    nats = await startNats();
    db = await createTestDatabase();
    await migrate(db, [identityMigrations, ledgerMigrations], logger);
    world = await createEventWorld(db);
    const target = new URL(db);
    proxy = await startTcpProxy(target.hostname, Number(target.port));
    const proxied = new URL(db);
    proxied.port = String(proxy.port);
    system = await compose({
      natsUrl: nats.url,
      identityDatabaseUrl: db,
      ledgerDatabaseUrl: proxied.toString(),
      logger,
    });
  });
  afterAll(async () => {
    await system?.stop();
    await proxy?.close();
    await nats?.stop();
  });

  it('retries each 503 item alone with its bytes and gets the stored decision, replayed', async () => {
    const { fetch, sent } = recordingFetch();
    const retries: RetryNotice[] = [];
    const client = new GameServerClient({
      baseUrl: system.url,
      secretKey: world.key.value,
      fetch,
      lingerMs: 60_000,
      retryDelayMinMs: 200,
      onRetry: (retry) => retries.push(retry),
    });
    // Warm: the ledger's connections exist and its statement is prepared.
    const event = { playerId: world.player.id, eventType: world.eventType };
    const warm = await client.record(event);
    await client.flush();
    expect((await warm.outcome).kind).toBe('decided');
    const recorded = await Promise.all([client.record(event), client.record(event), client.record(event)]);
    // The ledger's answer carrying the outcome "decided" is sent by PostgreSQL after the commit: cut there.
    const cut = proxy.cutWhen('toClient', Buffer.from('"decided"'));
    await client.flush();
    await cut;
    const outcomes: EventOutcome[] = await Promise.all(recorded.map((r) => r.outcome));
    await client.close();

    // The batch went once; the items that met the cut went again, each alone, after a backoff from 200 ms.
    const [batch, ...again] = sent.slice(1);
    expect(eventTexts(batch!)).toHaveLength(3);
    const itemRetries = retries.filter((r) => r.cause === 'item');
    expect(itemRetries.length).toBeGreaterThanOrEqual(1);
    for (const retry of itemRetries) {
      expect(retry).toMatchObject({ status: 503, eventIds: [expect.any(String)] });
      expect(retry.error).toMatch(/^503 retry_later: .*same eventId/);
      expect(retry.delayMs).toBeGreaterThanOrEqual(200);
    }
    const retried = new Set(itemRetries.map((r) => r.eventIds[0]));
    for (const request of again) {
      expect(new URL(request.url).pathname).toBe('/api/game-sdk/v2/events');
      const eventId = (JSON.parse(request.body) as { eventId: string }).eventId;
      expect(retried.has(eventId)).toBe(true);
      expect(request.body).toBe(recorded.find((r) => r.eventId === eventId)!.body);
    }
    // Every event decided once; a retried one answered its stored decision as a replay.
    const stored = await storedDecisions(db, world.game.gameId);
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome.kind !== 'decided') throw new Error(`not decided: ${JSON.stringify(outcome)}`);
      expect(stored.get(recorded[i]!.eventId)).toEqual([outcome.decision.id]);
      expect(outcome.decision.replayed).toBe(retried.has(outcome.eventId));
      expect(outcome.attempts).toBe(retried.has(outcome.eventId) ? 2 : 1);
    }
  }, 60_000);
});
