// The differential proof extended to the batch endpoint: the same event streams decided through
// single-endpoint requests one after the other (the reference), through batch requests of 1, of 7 and of 100, and
// through random interleavings of single requests and batches of 1, 7 and 100, each on its own copy of the same
// world, give identical answers (decision, reason, reward, replay, times, which decision a replay answers, the
// error's status and code) and identical quota figures (a batch's are its last fresh decision's: the reference's
// figures for that event), and leave identical balances. The streams mix fresh events, copies (replays, also inside
// one batch), conflicts, unknown and unlinked players, schema and metadata faults, events too large, an unknown rule,
// timestamps outside the window, a daily cap, the game's budget and the rate limit. Real PostgreSQL and NATS; the
// receipt clock is fixed by the test (no timing in any assertion).
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { postEvent } from '../../support/ingest.ts';
import {
  createEventWorld,
  createPlayer,
  type EventWorld,
  gameState,
  type PlayerFixture,
} from '../../support/ledger-fixtures.ts';
import { type ApiResponse, api, startTestSystem, type TestSystem } from '../../support/system.ts';

const BATCH_PATH = '/api/game-sdk/v2/events/batch';
const LIMIT = 50;
const AT = '2031-05-06T07:08:09.000Z';
const SIZES = [1, 7, 100] as const;

interface World {
  events: EventWorld;
  players: PlayerFixture[];
}

async function createWorld(db: string): Promise<World> {
  const events = await createEventWorld(db, { rewardCredits: 10, budgetCredits: 700, dailyPlayerCapCredits: 150 });
  const players = [
    events.player,
    await createPlayer(db, events.game),
    await createPlayer(db, events.game, { linked: false }),
  ];
  return { events, players };
}

/** A symbolic event: instantiated per world (the ids of its game and players). */
interface StreamEvent {
  kind: 'ok' | 'unknownPlayer' | 'schema' | 'metadata' | 'tooLarge' | 'unknownRule' | 'late';
  player: number;
  eventId: string;
  payload: string;
}

function instantiate(world: World, e: StreamEvent): Record<string, unknown> {
  const occurredAt = e.kind === 'late' ? '2031-05-06T06:08:09.000Z' : AT;
  const body: Record<string, unknown> = {
    eventId: e.eventId,
    playerId: e.kind === 'unknownPlayer' ? '3f2b1c0d-0000-4000-8000-00000000beef' : world.players[e.player]!.id,
    eventType: e.kind === 'unknownRule' ? 'no.such.rule' : world.events.eventType,
    occurredAt,
    metadata: { payload: e.payload },
  };
  if (e.kind === 'schema') delete body.playerId;
  if (e.kind === 'metadata') body.metadata = { a: { b: { c: { d: { e: { f: e.payload } } } } } };
  if (e.kind === 'tooLarge') body.metadata = { payload: e.payload, pad: 'x'.repeat(16_400) };
  return body;
}

const stepArb = fc.record({
  kind: fc.constantFrom('fresh', 'fresh', 'fresh', 'fresh', 'fresh', 'copy', 'copy', 'conflict'),
  eventKind: fc.oneof(
    { weight: 20, arbitrary: fc.constant('ok' as const) },
    fc.constantFrom('unknownPlayer', 'schema', 'metadata', 'tooLarge', 'unknownRule', 'late'),
  ),
  player: fc.integer({ min: 0, max: 2 }),
  pick: fc.nat(),
});

const streamArb = fc.array(stepArb, { minLength: 120, maxLength: 160 }).map((steps) => {
  const events: StreamEvent[] = [];
  steps.forEach((step, i) => {
    const earlier = events.length > 0 ? events[step.pick % events.length] : undefined;
    if (step.kind === 'copy' && earlier) events.push({ ...earlier });
    else if (step.kind === 'conflict' && earlier) events.push({ ...earlier, payload: `${earlier.payload}+${i}` });
    else events.push({ kind: step.eventKind, player: step.player, eventId: randomUUID(), payload: `p${i}` });
  });
  return events;
});

/** How a stream is sent: consecutive chunks, each a single request (`single`) or a batch request. */
type Chunk = { how: 'single' } | { how: 'batch'; size: number };

/** One answer per event: what the single endpoint said, or the batch's result for it. */
interface Answer {
  status: number;
  body: { data?: Record<string, unknown>; error?: { code: string } };
}

const quotaOf = (response: ApiResponse) =>
  ['RateLimit-Policy', 'RateLimit', 'Rewards-Daily-Remaining', 'Rewards-Budget-Remaining'].map(
    (name) => response.headers.get(name) ?? null,
  );

/**
 * Sends the stream in `chunks`; answers one Answer per event and, per request, the index of its last event and its
 * quota figures.
 */
async function send(system: TestSystem, world: World, stream: StreamEvent[], chunks: Chunk[]) {
  const answers: Answer[] = [];
  const quotas: Array<{ last: number; quota: Array<string | null> }> = [];
  let at = 0;
  for (const chunk of chunks) {
    if (at >= stream.length) break;
    if (chunk.how === 'single') {
      const response = await postEvent(system.url, world.events.key.value, instantiate(world, stream[at]!));
      answers.push({ status: response.status, body: response.body });
      quotas.push({ last: at, quota: quotaOf(response) });
      at++;
      continue;
    }
    const events = stream.slice(at, at + chunk.size);
    const response = await api(system.url, 'POST', BATCH_PATH, {
      token: world.events.key.value,
      body: { events: events.map((e) => instantiate(world, e)) },
    });
    expect(response.status).toBe(200);
    for (const result of response.body.data.results as Array<{ status: number; data?: never; error?: never }>) {
      answers.push({
        status: result.status,
        body: result.status === 200 ? { data: result.data } : { error: result.error },
      });
    }
    at += events.length;
    quotas.push({ last: at - 1, quota: quotaOf(response) });
  }
  return { answers, quotas };
}

/** The answers with the world's ids replaced by symbols and each decision's id by the index that made it. */
function normalize(world: World, answers: Answer[]) {
  const firstIndex = new Map<string, number>();
  const playerSymbol = new Map(world.players.map((p, i) => [p.id, `p${i}`]));
  return answers.map((answer, i) => {
    if (answer.status !== 200) return { status: answer.status, code: answer.body.error?.code };
    const d = answer.body.data as Record<string, unknown>;
    const id = d.id as string;
    if (!firstIndex.has(id)) firstIndex.set(id, i);
    return {
      status: 200,
      decision: firstIndex.get(id),
      player: playerSymbol.get(d.playerId as string),
      eventType: d.eventType === world.events.eventType ? 'rule' : d.eventType,
      decisionStatus: d.status,
      reason: d.reason,
      rewardCredits: d.rewardCredits,
      replayed: d.replayed,
      occurredAt: d.occurredAt,
      createdAt: d.createdAt,
    };
  });
}

/**
 * The quota figures a request must carry: those of the last fresh decision among its events, as the reference's
 * single request for that event answered them (none when its events hold no fresh decision).
 */
function expectedQuotas(
  reference: Awaited<ReturnType<typeof send>>,
  normalized: ReturnType<typeof normalize>,
  sent: Awaited<ReturnType<typeof send>>,
) {
  let first = 0;
  return sent.quotas.map(({ last }) => {
    let quota: Array<string | null> = [null, null, null, null];
    for (let i = first; i <= last; i++) {
      const n = normalized[i]!;
      if (n.status === 200 && n.replayed === false) quota = reference.quotas[i]!.quota;
    }
    first = last + 1;
    return quota;
  });
}

describe('batch requests decide exactly as single requests (differential)', () => {
  let system: TestSystem;
  let db: string;

  beforeAll(async () => {
    system = await startTestSystem({ env: { EVENT_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    db = system.databaseUrl as string;
    system.clock.set(new Date(AT));
  });
  afterAll(async () => system?.stop());

  const chunkArb = fc.array(
    fc.oneof(
      fc.constant<Chunk>({ how: 'single' }),
      fc.constantFrom(...SIZES).map((size): Chunk => ({ how: 'batch', size })),
    ),
    { minLength: 160, maxLength: 160 },
  );

  it('singly, in batches of 1, 7 and 100, and interleaved: identical answers, quota figures and balances', async () => {
    await fc.assert(
      fc.asyncProperty(streamArb, chunkArb, async (stream, interleaving) => {
        const modes: Array<[string, Chunk[]]> = [
          ['single', stream.map(() => ({ how: 'single' }) as const)],
          ...SIZES.map((size): [string, Chunk[]] => [`batches of ${size}`, stream.map(() => ({ how: 'batch', size }))]),
          ['interleaved', interleaving],
        ];
        const outcomes = [];
        for (const [name, chunks] of modes) {
          const world = await createWorld(db);
          const sent = await send(system, world, stream, chunks);
          outcomes.push({ name, world, sent, normalized: normalize(world, sent.answers) });
        }
        const [reference, ...others] = outcomes;
        const referenceState = await gameState(db, reference!.world.events.game.gameId);
        // The stream reached the interesting decisions.
        const reasons = new Set(reference!.normalized.map((n) => ('reason' in n ? n.reason : n.code)));
        expect(reasons.has('rate_limited') || reasons.has('daily_player_cap')).toBe(true);
        for (const other of others) {
          expect({ mode: other.name, answers: other.normalized }).toEqual({
            mode: other.name,
            answers: reference!.normalized,
          });
          expect({ mode: other.name, quotas: other.sent.quotas.map((q) => q.quota) }).toEqual({
            mode: other.name,
            quotas: expectedQuotas(reference!.sent, reference!.normalized, other.sent),
          });
          const state = await gameState(db, other.world.events.game.gameId);
          expect({ mode: other.name, ...state }).toEqual({ mode: other.name, ...referenceState });
        }
      }),
      // No shrinking: a failure is reported as found (each run is a few hundred HTTP requests).
      { numRuns: 3, endOnFailure: true },
    );
  }, 600_000);
});
