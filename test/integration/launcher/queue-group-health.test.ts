// Health that acts (services/runtime/src/queue-groups.ts), on real NATS and PostgreSQL: two ledger replicas on one
// NATS, one of them reaching PostgreSQL through a TCP proxy. Cut the proxy: that replica leaves its queue group (its
// /readyz 503 with the reason, its queue_group_member gauge 0) and every event goes to the healthy one; heal it: it
// joins again and serves alone once the other has stopped. With no ledger left in the group, the edge answers 503
// retry_later saying that nothing was stored. A path that goes silent instead (the proxy frozen: the probe gets no
// answer within its timeout) makes it leave as well.
import { pino } from 'pino';
import { EnvReader } from '#runtime/config.ts';
import { Database, migrate } from '#runtime/db/database.ts';
import { createMetrics, type Metrics } from '#runtime/metrics.ts';
import type { ProgramName } from '#runtime/program.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import { EVENT_NOT_STORED } from '../../../services/ingest/src/routes/event-decision.ts';
import {
  type InProcessPrograms,
  migrationsOf,
  readProgramConfigs,
  startInProcess,
} from '../../../services/launcher/src/in-process.ts';
import { createTestDatabase, sql } from '../../support/database.ts';
import { eventBody, expectDecision, expectError, postEvent } from '../../support/ingest.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startNats } from '../../support/servers.ts';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.ts';

const logger = pino({ level: 'silent' });

async function until(condition: () => Promise<boolean>, what: string, boundMs = 20_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Started {
  programs: InProcessPrograms;
  url: string;
  metrics: Metrics;
  close(): Promise<void>;
}

describe('a state owner whose database fails leaves its queue group', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let db: string;
  let world: EventWorld;
  let proxy: TcpProxy;
  const started: Started[] = [];

  async function start(programs: readonly ProgramName[], databaseUrl: string, name: string): Promise<Started> {
    const metrics = createMetrics();
    const transport = await NatsTransport.connect({
      url: nats.url,
      connectionName: name,
      requestTimeoutMs: 3000,
      undeliveredWaitMs: 300,
      logger,
      metrics,
    });
    const database = await Database.open({ url: databaseUrl, poolMax: 2, logger, metrics });
    const composed = await startInProcess({
      programs,
      configs: readProgramConfigs(new EnvReader({}), programs),
      transport,
      database,
      logger,
      metrics,
      http: { name, port: 0, host: '127.0.0.1', readiness: async () => ({ nats: transport.isReady() }) },
    });
    const one: Started = {
      programs: composed,
      url: `http://127.0.0.1:${composed.port}`,
      metrics,
      async close() {
        await composed.stop();
        await transport.close();
        await database.close();
      },
    };
    started.push(one);
    return one;
  }

  beforeAll(async () => {
    nats = await startNats();
    db = await createTestDatabase();
    await migrate(db, migrationsOf(), logger);
    world = await createEventWorld(db);
    const target = new URL(db);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  });
  afterAll(async () => {
    for (const one of started.reverse()) await one.close().catch(() => undefined);
    await proxy?.close();
    await nats?.stop();
  });

  const member = async (replica: Started) => {
    const text = await (await fetch(`${replica.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('queue_group_member{service="ledger"}'));
    return line?.split(' ')[1];
  };
  const readiness = async (replica: Started) => {
    const response = await fetch(`${replica.url}/readyz`);
    return { status: response.status, body: (await response.json()) as { reason?: string } };
  };
  const events = async (edge: Started, count: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      const response = await postEvent(edge.url, world.key.value, eventBody(world));
      statuses.push(response.status);
    }
    return statuses;
  };

  const storedCount = async (eventId: string) =>
    (await sql(db, 'select 1 from ledger.events where event_id = $1', [eventId])).length;

  const throughProxy = () => {
    const url = new URL(db);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    return url.toString();
  };

  it('sends every request to the healthy replica while the other is cut, and takes the other back after the heal', async () => {
    const sick = await start(['ledger'], throughProxy(), 'ledger-a');
    const healthy = await start(['ledger'], db, 'ledger-b');
    const edge = await start(['identity-admission', 'ingest'], db, 'edge');
    expect(await member(sick)).toBe('1');
    expect(await member(healthy)).toBe('1');
    expect((await readiness(sick)).status).toBe(200);
    expectDecision(await postEvent(edge.url, world.key.value, eventBody(world)));

    proxy.cutAll();
    await until(async () => (await member(sick)) === '0', 'the cut replica to leave its queue group');
    const unready = await readiness(sick);
    expect(unready.status).toBe(503);
    expect(unready.body.reason).toMatch(/^ledger is not in its queue groups: database probe failed: /);
    // Every event is decided: none is sent to the replica that cannot reach its database.
    expect(await events(edge, 30)).toEqual(Array(30).fill(200));
    expect(await member(healthy)).toBe('1');

    proxy.heal();
    await until(async () => (await member(sick)) === '1', 'the healed replica to join again');
    expect((await readiness(sick)).status).toBe(200);
    // The healthy one stops: the healed one, back in the group, answers alone.
    await healthy.programs.stop();
    expect(await events(edge, 10)).toEqual(Array(10).fill(200));

    // Cut again with no other replica: no responders, and the edge says that nothing was stored.
    proxy.cutAll();
    await until(async () => (await member(sick)) === '0', 'the last replica to leave its queue group');
    const refused = await postEvent(edge.url, world.key.value, eventBody(world));
    expectError(refused, 503, 'retry_later');
    expect((refused.body as { error: { message: string } }).error.message).toBe(EVENT_NOT_STORED);
    proxy.heal();
    // Out of the next test, which freezes the same proxy.
    await sick.programs.stop();
  });

  it('leaves when the path to its database goes silent (the probe times out), and rejoins after the heal', async () => {
    const sick = await start(['ledger'], throughProxy(), 'ledger-c');
    await start(['ledger'], db, 'ledger-d');
    const edge = await start(['identity-admission', 'ingest'], db, 'edge-2');
    expectDecision(await postEvent(edge.url, world.key.value, eventBody(world)));

    proxy.freeze();
    await until(async () => (await member(sick)) === '0', 'the silent replica to leave its queue group');
    expect((await readiness(sick)).body.reason).toMatch(/^ledger is not in its queue groups: database probe failed: /);
    expect(await events(edge, 30)).toEqual(Array(30).fill(200));

    proxy.heal();
    await until(async () => (await member(sick)) === '1', 'the healed replica to join again');
    // Ready again: its readiness follows its membership (on a loaded machine, a moment later).
    await until(async () => (await readiness(sick)).status === 200, 'the healed replica to be ready again');
  });

  it('closes its connections when it leaves: a statement held on the silent path is never run after the heal', async () => {
    // The replicas of the tests before stop: this one is the only ledger.
    for (const one of started.splice(0)) await one.close().catch(() => undefined);
    const sick = await start(['ledger'], throughProxy(), 'ledger-e');
    const edge = await start(['identity-admission', 'ingest'], db, 'edge-3');
    expectDecision(await postEvent(edge.url, world.key.value, eventBody(world)));

    proxy.freeze();
    // Its decision goes out on a pooled connection and is held by the silent path.
    const held = eventBody(world);
    const answered = postEvent(edge.url, world.key.value, held);
    await until(async () => (await member(sick)) === '0', 'the silent replica to leave its queue group');
    // The connection was closed under it: the edge cannot know whether it was stored, and says so.
    const answer = await answered;
    expectError(answer, 503, 'retry_later');
    expect((answer.body as { error: { message: string } }).error.message).toMatch(/unknown/);

    // The heal forwards what the path held back; the closed connection's statement is not part of it.
    proxy.heal();
    await until(async () => (await member(sick)) === '1', 'the healed replica to join again');
    const after = eventBody(world);
    expectDecision(await postEvent(edge.url, world.key.value, after));
    expect(await storedCount(after.eventId)).toBe(1);
    expect(await storedCount(held.eventId)).toBe(0);
  });
});
