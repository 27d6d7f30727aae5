// Event writes are copied like reads (transport/deadline.ts): a ledger the NATS server still routes to after it was
// cut (nats-server on its default pings notices after minutes) swallows its share of the edge's requests; each is
// sent again after NATS_TRY_TIMEOUT_PERCENT of its timeout, the first copy still awaited, and the live ledger decides
// it. Every event is answered 200 as a fresh decision (replayed false: the copy carries the decision id the edge
// proposed, so the ledger tells the request's own decision from an earlier request's) and decided exactly once.
// Beside a ledger of an earlier release (which decides under ids of its own), no copy reaches it: the edge sends on the
// proposed-id subjects only ledgers that take the ids serve. Real PostgreSQL, NATS and the five programs; the
// swallowing member and the earlier-release ledger are further NATS clients in the ledger's queue group.

import { Buffer } from 'node:buffer';
import { pino } from 'pino';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { bearerGameKey } from '#runtime/http/game-key.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import { bind, bindEncoded } from '#runtime/transport/operation.ts';
import { validateEventInput } from '../../../services/ingest/src/domain/event-input.ts';
import { proposedDecisionId, recordEventRequest } from '../../../services/ingest/src/routes/event-decision.ts';
import { sql } from '../../support/database.ts';
import { eventBody, expectDecision, postEvent } from '../../support/ingest.ts';
import { createEventWorld } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

const EVENTS = 40;

/** The event as the edge checked it (services/ingest/src/domain/event-input.ts). */
function checkedInput(body: unknown) {
  const checked = validateEventInput(body, undefined);
  if (!checked.ok) throw new Error(checked.message);
  return checked.input;
}

/** One event per request (every request meets one member of the ledger's queue group on its own), 4 s to answer. */
const SYSTEM_ENV = {
  EVENT_RATE_LIMIT_PER_MINUTE: '100000',
  INGEST_EVENT_BATCH_MAX: '1',
  NATS_EVENT_REQUEST_TIMEOUT_MS: '4000',
};

/** Another client of the system's NATS server: a member of the ledger's queue group, or a caller. */
function natsClient(system: TestSystem, connectionName: string): Promise<NatsTransport> {
  return NatsTransport.connect({
    url: system.natsUrl!,
    connectionName,
    requestTimeoutMs: 4000,
    undeliveredWaitMs: 0,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(),
  });
}

describe('copies of event writes', () => {
  let system: TestSystem;
  let swallowing: NatsTransport | undefined;
  const held: Array<() => void> = [];
  let swallowed = 0;

  beforeAll(async () => {
    system = await startTestSystem({ env: SYSTEM_ENV });
    swallowing = await natsClient(system, 'swallowing-ledger');
    await swallowing.serve({
      service: 'ledger',
      version: '1.0.0',
      description: 'a ledger cut from NATS that the server still routes to',
      endpoints: [
        bindEncoded(
          ledgerOps.recordEventWithProposedId,
          () => {
            swallowed++;
            return new Promise<never>((_, reject) => held.push(() => reject(new Error('too late'))));
          },
          () => new Uint8Array(),
        ),
      ],
    });
  });
  afterAll(async () => {
    for (const release of held) release();
    await swallowing?.close().catch(() => undefined);
    await system?.stop();
  });

  it('answers nearly every event as a fresh decision, each decided once, though a member swallows its share', async () => {
    const db = system.databaseUrl!;
    const world = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const bodies = Array.from({ length: EVENTS }, () => eventBody(world));
    const answers = await Promise.all(bodies.map((body) => postEvent(system.url, world.key.value, body)));
    // Each copy meets the swallowing member with probability 1/2, and a request has several (within the copy budget):
    // nearly all are answered; the rest are 503s whose outcome is unknown (never a wrong answer).
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(EVENTS - 4);
    for (const answer of answers) {
      if (answer.status === 200) expect(expectDecision(answer)).toMatchObject({ status: 'accepted', replayed: false });
      else expect(answer.body).toMatchObject({ error: { code: 'retry_later' } });
    }
    expect(swallowed).toBeGreaterThan(0);
    const [row] = await sql<{ n: number; distinct_ids: number }>(
      db,
      `select count(*)::int as n, count(distinct event_id)::int as distinct_ids from ledger.events where game_id = $1`,
      [world.game.gameId],
    );
    // Each event decided at most once; every one answered 200 is among them.
    expect(row!.n).toBe(row!.distinct_ids);
    expect(row!.n).toBeGreaterThanOrEqual(answers.filter((a) => a.status === 200).length);

    // A client's own retry (another request, another proposed id) is a replay of the stored decision.
    const index = answers.findIndex((a) => a.status === 200);
    const again = expectDecision(await postEvent(system.url, world.key.value, bodies[index]));
    expect(again).toMatchObject({ id: expectDecision(answers[index]!).id, replayed: true });
  });

  it("answers a copy that finds its first copy's decision as the request's own, another request's as a replay", async () => {
    const db = system.databaseUrl!;
    const world = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const client = await natsClient(system, 'copies-client');
    try {
      const body = eventBody(world);
      const request = (proposed: Uint8Array) => ({
        ...recordEventRequest(bearerGameKey(`Bearer ${world.key.value}`)!, checkedInput(body)),
        proposedDecisionId: proposed,
      });
      const first = proposedDecisionId();
      const send = async (proposed: Uint8Array) => {
        // Until the swallowing member is passed over: it answers nothing (no outcome, not an error).
        for (;;) {
          const reply = await client
            .call(
              ledgerOps.recordEventWithProposedId,
              { ...request(proposed), occurredAtMs: BigInt(Date.parse(body.occurredAt)) },
              {
                requestId: 'copies-test',
              },
            )
            .catch(() => undefined);
          if (reply) return reply;
        }
      };
      const made = await send(first);
      expect(made.replayed).toBe(false);
      expect(made.quota).toBeDefined();
      const idText = Buffer.from(first).toString('hex');
      expect(made.decision?.id.replaceAll('-', '')).toBe(idText);
      // The same request again (a copy: the same proposed id): its own decision, not a replay; no quota figures.
      const copy = await send(first);
      expect({ id: copy.decision?.id, replayed: copy.replayed, quota: copy.quota }).toEqual({
        id: made.decision?.id,
        replayed: false,
        quota: undefined,
      });
      // Another request with the same event (another proposed id): a replay.
      const other = await send(proposedDecisionId());
      expect({ id: other.decision?.id, replayed: other.replayed }).toEqual({ id: made.decision?.id, replayed: true });
    } finally {
      await client.close();
    }
  });
});

describe('copies of event writes beside a ledger of an earlier release', () => {
  let system: TestSystem;
  let earlier: NatsTransport | undefined;
  let earlierCalls = 0;

  beforeAll(async () => {
    system = await startTestSystem({ env: SYSTEM_ENV });
    earlier = await natsClient(system, 'earlier-release-ledger');
    // A ledger of an earlier release: it serves RecordEvent only, decides under an id of its own (it reads no proposed
    // id: the decision is made by the real ledger with none), and answers late, well past the edge's per-try timeout
    // (15 % of 4 s), so that a copy of its request would be sent and would find its decision.
    await earlier.serve({
      service: 'ledger',
      version: '0.2.0',
      description: 'a ledger of an earlier release',
      endpoints: [
        bind(ledgerOps.recordEvent, async (request, ctx) => {
          earlierCalls++;
          const reply = await earlier!.call(
            ledgerOps.recordEventWithProposedId,
            { ...request, proposedDecisionId: new Uint8Array() },
            ctx,
          );
          await new Promise((resolve) => setTimeout(resolve, 1500));
          return reply;
        }),
      ],
    });
  });
  afterAll(async () => {
    await earlier?.close().catch(() => undefined);
    await system?.stop();
  });

  it('sends it nothing: every event a fresh decision, none answered as a replay of its own copy', async () => {
    const db = system.databaseUrl!;
    const world = await createEventWorld(db, { rewardCredits: 1, budgetCredits: 1_000_000 });
    const answers = await Promise.all(
      Array.from({ length: EVENTS }, () => postEvent(system.url, world.key.value, eventBody(world))),
    );
    for (const answer of answers) expect(expectDecision(answer)).toMatchObject({ replayed: false });
    expect(earlierCalls).toBe(0);
  });
});
