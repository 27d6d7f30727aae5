// The fault suite's independent checker (test/faults/checker, Porcupine, built with `go build`) on planted histories:
// each kind of damage it is meant to find is found (Illegal), and legal histories with requests of unknown outcome,
// concurrent copies and funding changes are Ok.
import { randomUUID } from 'node:crypto';
import { rowKey, type StoredRow } from './checks.ts';
import { buildHistories, checkerBinary, checkHistories, type FundingChange, type GameRead } from './history.ts';
import type { EventCopy, SentRequest } from './load.ts';

const REWARD = 10;
const gameId = randomUUID();
const organizationId = randomUUID();
const playerId = randomUUID();
let seq = 0;

const copy = (eventId: string, hash: string): EventCopy => ({ gameId, secret: 's', eventId, body: '{}', hash });

/** A request sent at `sentAt` (ms) and answered at `answeredAt` with a decision, a 409, a 503 or nothing. */
function request(
  c: EventCopy,
  sentAt: number,
  answeredAt: number,
  answer:
    | { decision: { id: string; status: 'accepted' | 'rejected'; reason: string | null; replayed: boolean } }
    | 409
    | 503
    | 'none',
): SentRequest {
  const base = { seq: seq++, kind: 'fresh' as const, copy: c, sentAt, answeredAt };
  if (answer === 'none') return { ...base, failure: 'no answer within 6000 ms' };
  if (answer === 503 || answer === 409) {
    const code = answer === 409 ? 'event_conflict' : 'retry_later';
    return { ...base, answer: { status: answer, body: { error: { code, message: 'm' } }, retryAfter: '1' } };
  }
  const { id, status, reason, replayed } = answer.decision;
  const data = {
    id,
    eventId: c.eventId,
    gameId,
    organizationId,
    playerId,
    eventType: 'level.complete',
    occurredAt: '2026-11-28T10:00:00.000Z',
    status,
    reason,
    rewardCredits: status === 'accepted' ? REWARD : 0,
    createdAt: '2026-11-28T10:00:00.000Z',
    replayed,
    mode: 'sandbox',
  };
  return { ...base, answer: { status: 200, body: { data }, retryAfter: null } };
}

const read = (at: number, spent: number, budget: number): GameRead => ({
  gameId,
  sentAt: at,
  answeredAt: at,
  state: { spent, budget },
});

const check = (
  requests: SentRequest[],
  options: { initial?: GameRead; fundings?: FundingChange[]; final?: GameRead; stored?: Map<string, StoredRow> } = {},
) =>
  checkHistories(
    buildHistories(
      requests,
      REWARD,
      [options.initial ?? read(0, 0, 1_000)],
      options.fundings ?? [],
      options.final ? [options.final] : [],
      options.stored,
    ),
  );

/** The stored decision of an event, as checks.ts reads it after a phase. */
const storedAs = (c: EventCopy, status: 'accepted' | 'rejected'): [string, StoredRow] => [
  rowKey(c.gameId, c.eventId),
  {
    id: randomUUID(),
    gameId,
    eventId: c.eventId,
    organizationId,
    playerId,
    eventType: 'level.complete',
    occurredAtMs: 0,
    status,
    reason: status === 'accepted' ? null : 'daily_player_cap',
    rewardCredits: status === 'accepted' ? REWARD : 0,
    createdAtMs: 0,
    hash: c.hash,
  },
];

/** A decision's id (a uuid) by a short name, so that a history can say which answers are the same decision. */
const ids = new Map<string, string>();
const idOf = (name: string) => ids.get(name) ?? ids.set(name, randomUUID()).get(name)!;
const accepted = (name: string, replayed: boolean) => ({
  decision: { id: idOf(name), status: 'accepted' as const, reason: null, replayed },
});
const exhausted = (name: string) => ({
  decision: { id: idOf(name), status: 'rejected' as const, reason: 'game_budget_exhausted', replayed: false },
});

describe('the fault suite checker (Porcupine)', () => {
  // The first run builds the checker (go build; the Go module proxy for its one dependency).
  beforeAll(() => checkerBinary(), 300_000);

  it('finds an event decided twice', async () => {
    const event = copy(randomUUID(), 'h1');
    const result = await check([
      request(event, 10, 20, accepted(randomUUID(), false)),
      request(event, 30, 40, accepted(randomUUID(), false)),
    ]);
    expect(result.ok).toBe(false);
    expect(result.failures.map((f) => [f.model, f.result])).toEqual([['register', 'Illegal']]);
  });

  it('finds a replay that differs from the first decision', async () => {
    const event = copy(randomUUID(), 'h1');
    const result = await check([
      request(event, 10, 20, accepted(randomUUID(), false)),
      request(event, 30, 40, accepted(randomUUID(), true)),
    ]);
    expect(result.failures.map((f) => f.model)).toEqual(['register']);
  });

  it('finds a replay of an event no request could have decided, and a 409 for the decided payload', async () => {
    const event = copy(randomUUID(), 'h1');
    const replayedFirst = await check([
      request(event, 10, 20, accepted(randomUUID(), true)),
      request(event, 30, 40, 503),
    ]);
    expect(replayedFirst.failures.map((f) => f.model)).toEqual(['register']);
    const other = copy(randomUUID(), 'h1');
    const conflict = await check([request(other, 10, 20, accepted(randomUUID(), false)), request(other, 30, 40, 409)]);
    expect(conflict.failures.map((f) => f.model)).toEqual(['register']);
  });

  it('finds an acceptance beyond the budget and a refusal for a budget that had room', async () => {
    const tight = read(0, 990, 1_000);
    const overspent = await check(
      [
        request(copy(randomUUID(), 'a'), 10, 20, accepted('a', false)),
        request(copy(randomUUID(), 'b'), 30, 40, accepted('b', false)),
      ],
      { initial: tight },
    );
    expect(overspent.failures.map((f) => [f.model, f.result])).toEqual([['bank', 'Illegal']]);
    const refused = await check([request(copy(randomUUID(), 'c'), 10, 20, exhausted('c'))], { initial: tight });
    expect(refused.failures.map((f) => f.model)).toEqual(['bank']);
  });

  it('finds a final read that no order of the operations explains', async () => {
    const result = await check([request(copy(randomUUID(), 'a'), 10, 20, accepted('a', false))], {
      final: read(50, 0, 1_000),
    });
    expect(result.failures.map((f) => f.model)).toEqual(['bank']);
  });

  it('accepts a legal history: unknown outcomes decided late, concurrent copies, conflicts, funding', async () => {
    const decidedBy503 = copy(randomUUID(), 'p');
    const concurrent = copy(randomUUID(), 'q');
    const conflicting = { ...concurrent, hash: 'q2' };
    const lost = copy(randomUUID(), 'r');
    const afterFunding = copy(randomUUID(), 's');
    const result = await check(
      [
        // A 503 that decided: the decision shows only in a replay after it was answered.
        request(decidedBy503, 10, 20, 503),
        request(decidedBy503, 30, 40, accepted('p1', true)),
        request(decidedBy503, 50, 60, accepted('p1', true)),
        // Two copies in flight: the one answered second is the fresh one; another payload gets 409.
        request(concurrent, 100, 130, accepted('q1', true)),
        request(concurrent, 105, 120, accepted('q1', false)),
        request(conflicting, 140, 150, 409),
        // No answer and nothing stored.
        request(lost, 200, 210, 'none'),
        // The budget is full until a funding change whose outcome was unknown took effect.
        request(copy(randomUUID(), 't'), 300, 310, exhausted('t1')),
        request(afterFunding, 400, 410, accepted('s1', false)),
      ],
      {
        initial: read(0, 980, 1_000),
        fundings: [{ gameId, amountCredits: 10, sentAt: 320, answeredAt: 330, outcome: 'unknown' }],
        final: read(500, 1_010, 1_010),
      },
    );
    expect(result).toEqual({ registers: 5, banks: 1, ok: true, failures: [] });
    // The same history less the funding change's effect is not explained: the last acceptance had no room.
    const unfunded = await check([request(copy(randomUUID(), 'u'), 10, 20, accepted('u1', false))], {
      initial: read(0, 1_000, 1_000),
      fundings: [{ gameId, amountCredits: 10, sentAt: 30, answeredAt: 40, outcome: 'unknown' }],
    });
    expect(unfunded.failures.map((f) => f.model)).toEqual(['bank']);
  });

  it('with the stored decisions, takes a 503 whose event was stored as accepted for an acceptance', async () => {
    const lost = copy(randomUUID(), 'l');
    const refused = copy(randomUUID(), 'm');
    const requests = [request(lost, 10, 20, 503), request(lost, 30, 40, 503), request(refused, 10, 20, 'none')];
    const stored = new Map([storedAs(lost, 'accepted'), storedAs(refused, 'rejected')]);
    // No room for it: the acceptance cannot be placed anywhere.
    const full = await check(requests, { initial: read(0, 1_000, 1_000), stored });
    expect(full.failures.map((f) => f.model)).toEqual(['bank']);
    // Room for one: it took effect before the read (which sees it), once (the refused event's 503 moved nothing).
    const ok = await check(requests, { initial: read(0, 990, 1_000), stored, final: read(50, 1_000, 1_000) });
    expect(ok.ok).toBe(true);
    const twice = await check(requests, { initial: read(0, 980, 1_000), stored, final: read(50, 1_000, 1_000) });
    expect(twice.failures.map((f) => f.model)).toEqual(['bank']);
  });
});
