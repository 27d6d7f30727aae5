// An ingest replica killed mid-stream under the game-server client: the service's state owners on real PostgreSQL and
// NATS (the all-in-one process of the test system), two ingest replicas as separate processes on the same NATS, the
// client given both base URLs. One replica is SIGKILLed while requests are in flight to it; the client resends their
// events' bytes to the other. Every event gets an answer, and every eventId exactly one decision in the database: the
// one the client was answered.
import { GameServerClient, type RetryNotice } from '../../../clients/game-server/src/index.ts';
import { createEventWorld } from '../../support/ledger-fixtures.ts';
import { type ProgramProcess, startProgram } from '../../support/processes.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import { recordingFetch, storedDecisions } from './support.ts';

const EVENTS = 1_500;

describe('game-server client: an ingest replica killed mid-stream', () => {
  let system: TestSystem;
  const replicas: ProgramProcess[] = [];

  beforeAll(async () => {
    system = await startTestSystem({ env: { EVENT_RATE_LIMIT_PER_MINUTE: '1000000' } });
    for (let i = 0; i < 2; i++) replicas.push(await startProgram('ingest', { NATS_URL: system.natsUrl }));
  }, 240_000);
  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await system?.stop();
  });

  it('every event is decided exactly once and answered', async () => {
    const db = system.databaseUrl!;
    const world = await createEventWorld(db, { budgetCredits: 1_000_000_000, dailyPlayerCapCredits: 1_000_000_000 });
    const [doomed, survivor] = replicas as [ProgramProcess, ProgramProcess];
    let killed: Promise<void> | undefined;
    let toDoomed = 0;
    // The third request to the doomed replica is on its way when the replica is killed (others may be too).
    const { fetch, sent } = recordingFetch((request) => {
      if (request.url.startsWith(doomed.url) && ++toDoomed === 3) killed = doomed.kill('SIGKILL');
    });
    const retries: RetryNotice[] = [];
    const client = new GameServerClient({
      baseUrl: [doomed.url, survivor.url],
      secretKey: world.key.value,
      fetch,
      maxBatchEvents: 20,
      lingerMs: 2,
      maxPendingEvents: 200,
      onRetry: (retry) => retries.push(retry),
    });
    const recorded = [];
    for (let i = 0; i < EVENTS; i++) {
      recorded.push(await client.record({ playerId: world.player.id, eventType: world.eventType, metadata: { i } }));
    }
    await client.close();
    await killed;
    expect(doomed.running()).toBe(false);

    // Every event answered with a decision.
    const outcomes = await Promise.all(recorded.map((r) => r.outcome));
    const decisions = outcomes.map((o) => (o.kind === 'decided' ? o.decision : undefined));
    expect(outcomes.filter((o) => o.kind !== 'decided')).toEqual([]);
    expect(decisions.every((d) => d?.status === 'accepted')).toBe(true);
    // The kill was met: requests to the doomed replica got no answer, their events went again to the survivor.
    expect(client.stats.transportFailures).toBeGreaterThanOrEqual(1);
    expect(retries.some((r) => r.cause === 'transport' && r.baseUrl === doomed.url)).toBe(true);
    const lastToDoomed = sent.findLastIndex((r) => r.url.startsWith(doomed.url));
    expect(sent.slice(lastToDoomed + 1).length).toBeGreaterThan(0);
    // Exactly one decision per eventId, and it is the one the client was answered.
    const stored = await storedDecisions(db, world.game.gameId);
    expect(stored.size).toBe(EVENTS);
    expect([...stored.values()].filter((ids) => ids.length !== 1)).toEqual([]);
    for (const [i, r] of recorded.entries()) expect(stored.get(r.eventId)).toEqual([decisions[i]!.id]);
    const spent = outcomes.length * world.rewardCredits;
    expect(decisions.reduce((sum, d) => sum + d!.rewardCredits, 0)).toBe(spent);
  }, 180_000);
});
