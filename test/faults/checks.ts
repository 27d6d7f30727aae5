// What the fault suite checks: the shape of every answer, each answer against the decision stored in the database,
// and the ledger's invariants in SQL over the whole database.
import type pg from 'pg';
import type { EventRecordJson } from '#runtime/contracts/event-record.ts';
import { gameEventResultSchema } from '#runtime/contracts/ingest-shapes.ts';
import { createAjv, describeAjvError } from '#runtime/validation/ajv.ts';
import type { SentRequest } from './load.ts';

/**
 * What a 503's message says about the event. The single place that reads the wording: adapt it here when the
 * messages change.
 *   outcome-unknown  the service does not know whether the event was stored and says to retry with the same eventId
 *   nothing-stored   the message claims that nothing was stored (or changed)
 *   unspecified      neither (e.g. "A dependency is temporarily unavailable; retry later.")
 */
export type UnavailableClaim = 'outcome-unknown' | 'nothing-stored' | 'unspecified';

export function classifyUnavailableMessage(message: string): UnavailableClaim {
  if (
    /outcome (is |was |remains )?unknown|unknown outcome|may (already )?have been (stored|recorded|decided)|might have been (stored|recorded|decided)|(retry|resend|send it again) with the same eventId/i.test(
      message,
    )
  ) {
    return 'outcome-unknown';
  }
  if (/nothing (was|has been|is) (stored|changed|recorded|written|decided)|was not (stored|recorded)/i.test(message)) {
    return 'nothing-stored';
  }
  return 'unspecified';
}

/** Outcomes of named checks: how many cases passed, how many failed, and a few examples of the failures. */
export class CheckBook {
  readonly results = new Map<string, { passed: number; failed: number; examples: string[] }>();

  private entry(name: string) {
    let entry = this.results.get(name);
    if (!entry) {
      entry = { passed: 0, failed: 0, examples: [] };
      this.results.set(name, entry);
    }
    return entry;
  }

  pass(name: string, count = 1): void {
    this.entry(name).passed += count;
  }

  fail(name: string, example: string): void {
    const entry = this.entry(name);
    entry.failed++;
    if (entry.examples.length < 3) entry.examples.push(example);
  }

  check(name: string, ok: boolean, example: () => string): boolean {
    if (ok) this.pass(name);
    else this.fail(name, example());
    return ok;
  }

  failedNames(): string[] {
    return [...this.results].filter(([, r]) => r.failed > 0).map(([name]) => name);
  }
}

export const CHECK = {
  wellFormed: 'every answer well-formed (schema-valid 200, error envelope, expected status and code)',
  no500: 'no 500',
  retryAfter: 'every 503 carries Retry-After',
  inTime: 'every request answered within its timeout',
  equalsRow: 'every 200 equals its stored row',
  conflict: 'every 409 event_conflict is for a payload other than the stored one',
  oneFresh: 'each decision answered with replayed: false at most once',
  noFalseClaim: 'no 503 claims nothing was stored for an event that is stored',
  retries: "retries of the 503'd / unanswered events answer the decision",
  replays: 'replays after the fault equal the first answers',
  recovered: 'recovered after the fault',
  linearizable: 'every history linearizable (Porcupine: a register per event, a bank per game)',
} as const;

const ajv = createAjv();
const validateResult = ajv.compile(gameEventResultSchema);

/** A decision as the service answers it: the event record (eventRecordJson's) and whether it was a replay. */
export type Decision = EventRecordJson & { replayed: boolean };

const describe = (r: SentRequest) =>
  `${r.kind} ${r.copy.eventId} after ${(r.answeredAt ?? r.sentAt) - r.sentAt} ms: ` +
  (r.failure ?? `${r.answer?.status} ${JSON.stringify(r.answer?.body).slice(0, 200)}`);

/** The decision of a 200, when its body is a well-formed GameEventResult of the event sent. */
export function decisionOf(r: SentRequest): Decision | undefined {
  if (r.answer?.status !== 200) return undefined;
  const body = r.answer.body as { data?: unknown };
  if (typeof body !== 'object' || body === null || Object.keys(body).join() !== 'data') return undefined;
  if (!validateResult(body.data)) return undefined;
  const d = body.data as Decision;
  if (d.eventId !== r.copy.eventId.toLowerCase() || d.gameId !== r.copy.gameId) return undefined;
  return d;
}

export function errorOf(r: SentRequest): { code: string; message: string } | undefined {
  const body = r.answer?.body as { error?: Record<string, unknown> } | undefined;
  if (typeof body !== 'object' || body === null || Object.keys(body).join() !== 'error') return undefined;
  const error = body.error;
  if (typeof error !== 'object' || error === null) return undefined;
  if (Object.keys(error).sort().join() !== 'code,message') return undefined;
  if (typeof error.code !== 'string' || typeof error.message !== 'string') return undefined;
  return { code: error.code, message: error.message };
}

/** Checks that need no database: shape, status, Retry-After, timeout. */
export function checkAnswer(book: CheckBook, r: SentRequest): void {
  if (r.failure) {
    book.fail(CHECK.inTime, describe(r));
    return;
  }
  book.pass(CHECK.inTime);
  const status = r.answer!.status;
  book.check(CHECK.no500, status < 500 || status > 599 || status === 503, () => describe(r));
  if (status === 200) {
    book.check(CHECK.wellFormed, decisionOf(r) !== undefined, () => {
      const data = (r.answer!.body as { data?: unknown })?.data;
      const why = validateResult(data) ? 'not the event sent' : describeAjvError(validateResult.errors, 'data');
      return `${describe(r)} (${why})`;
    });
    return;
  }
  const error = errorOf(r);
  const expected =
    (status === 409 && error?.code === 'event_conflict') || (status === 503 && error?.code === 'retry_later');
  book.check(CHECK.wellFormed, expected, () => describe(r));
  if (status === 503) book.check(CHECK.retryAfter, r.answer!.retryAfter !== null, () => describe(r));
}

export interface StoredRow {
  id: string;
  gameId: string;
  eventId: string;
  organizationId: string;
  playerId: string;
  eventType: string;
  occurredAtMs: number;
  status: string;
  reason: string | null;
  rewardCredits: number;
  createdAtMs: number;
  hash: string;
}

export const rowKey = (gameId: string, eventId: string) => `${gameId}/${eventId.toLowerCase()}`;

/** The stored decisions of these events, by rowKey. */
export async function storedRows(client: pg.Client, eventIds: string[]): Promise<Map<string, StoredRow>> {
  const { rows } = await client.query(
    `select id, game_id, event_id, organization_id, player_id, event_type, status, reason,
       reward_credits::text as reward, floor(extract(epoch from occurred_at) * 1000)::text as occurred_ms,
       floor(extract(epoch from created_at) * 1000)::text as created_ms, encode(payload_hash, 'hex') as hash
     from ledger.events where event_id = any($1::uuid[])`,
    [[...new Set(eventIds.map((e) => e.toLowerCase()))]],
  );
  const map = new Map<string, StoredRow>();
  for (const row of rows) {
    map.set(rowKey(row.game_id, row.event_id), {
      id: row.id,
      gameId: row.game_id,
      eventId: row.event_id,
      organizationId: row.organization_id,
      playerId: row.player_id,
      eventType: row.event_type,
      occurredAtMs: Number(row.occurred_ms),
      status: row.status,
      reason: row.reason,
      rewardCredits: Number(row.reward),
      createdAtMs: Number(row.created_ms),
      hash: row.hash,
    });
  }
  return map;
}

/** The fields in which a decision differs from the stored row (empty: equal). */
export function differences(d: Decision, row: StoredRow, hash: string): string[] {
  const diffs: string[] = [];
  const compare = (name: string, answered: unknown, stored: unknown) => {
    if (answered !== stored) diffs.push(`${name}: answered ${String(answered)}, stored ${String(stored)}`);
  };
  compare('id', d.id, row.id);
  compare('eventId', d.eventId, row.eventId);
  compare('gameId', d.gameId, row.gameId);
  compare('organizationId', d.organizationId, row.organizationId);
  compare('playerId', d.playerId, row.playerId);
  compare('eventType', d.eventType, row.eventType);
  compare('occurredAt', Date.parse(d.occurredAt), row.occurredAtMs);
  compare('status', d.status, row.status);
  compare('reason', d.reason, row.reason);
  compare('rewardCredits', d.rewardCredits, row.rewardCredits);
  compare('createdAt', Date.parse(d.createdAt), row.createdAtMs);
  compare('payload', hash, row.hash);
  return diffs;
}

/**
 * The answer against the stored decision: a 200 equals the row (same payload); a 409 event_conflict is for another
 * payload than the stored one; a 503 may not claim that nothing was stored when its own attempt stored the event
 * (isFalseNothingStoredClaim).
 */
export function checkAgainstRows(
  book: CheckBook,
  r: SentRequest,
  rows: Map<string, StoredRow>,
  before: Map<string, StoredRow>,
  freshIds: Set<string>,
  unknownCopies: Map<string, SentRequest[]>,
): void {
  if (!r.answer) return;
  const row = rows.get(rowKey(r.copy.gameId, r.copy.eventId));
  const status = r.answer.status;
  if (status === 200) {
    const d = decisionOf(r);
    if (!d) return; // reported as malformed
    if (!row) {
      book.fail(CHECK.equalsRow, `${describe(r)}: no stored row`);
      return;
    }
    const diffs = differences(d, row, r.copy.hash);
    book.check(CHECK.equalsRow, diffs.length === 0, () => `${r.kind} ${r.copy.eventId}: ${diffs.join('; ')}`);
  } else if (status === 409) {
    book.check(
      CHECK.conflict,
      row !== undefined && row.hash !== r.copy.hash,
      () => `${describe(r)}: ${row ? 'the stored payload is the one sent' : 'nothing stored'}`,
    );
  } else if (status === 503) {
    const stored = before.get(rowKey(r.copy.gameId, r.copy.eventId));
    book.check(
      CHECK.noFalseClaim,
      !isFalseNothingStoredClaim(r, before, freshIds, unknownCopies),
      () => `${describe(r)}: stored as ${stored?.status} ${stored?.id}`,
    );
  }
}

/**
 * The copies of each event (rowKey) whose outcome their client does not know: no answer, or a 503 that does not say
 * nothing was stored. Any of them may have stored its event while it was out (isFalseNothingStoredClaim).
 */
export function unknownOutcomeCopies(requests: SentRequest[]): Map<string, SentRequest[]> {
  const copies = new Map<string, SentRequest[]>();
  for (const r of requests) {
    const unknown =
      r.failure !== undefined ||
      (r.answer?.status === 503 && classifyUnavailableMessage(errorOf(r)?.message ?? '') !== 'nothing-stored');
    if (!unknown) continue;
    const key = rowKey(r.copy.gameId, r.copy.eventId);
    copies.set(key, [...(copies.get(key) ?? []), r]);
  }
  return copies;
}

/**
 * Whether `r` is a 503 saying nothing was stored for an event that its own attempt stored. `before` holds the rows as
 * they were before the suite retried anything. A row is this request's doing only if its transaction began while the
 * request was out: after it was sent, and before it was answered (created_at is the transaction's start; a copy still
 * in flight may store the event after this answer, and that is no false claim of this one). It is another copy's
 * doing, not held against the claim, when another request of the same payload got it as a fresh decision
 * (`freshIds`: ids of decisions answered with `replayed: false`), or when another copy whose outcome is unknown
 * (`unknownCopies`) was out when the row's transaction began: "nothing stored" speaks of the request's own attempt.
 */
export function isFalseNothingStoredClaim(
  r: SentRequest,
  before: Map<string, StoredRow>,
  freshIds: Set<string>,
  unknownCopies: Map<string, SentRequest[]>,
): boolean {
  if (r.answer?.status !== 503) return false;
  const error = errorOf(r);
  if (!error || classifyUnavailableMessage(error.message) !== 'nothing-stored') return false;
  const key = rowKey(r.copy.gameId, r.copy.eventId);
  const stored = before.get(key);
  if (stored === undefined || stored.hash !== r.copy.hash || freshIds.has(stored.id)) return false;
  const outWhenStored = (c: SentRequest) =>
    stored.createdAtMs >= c.sentAt - 5 && stored.createdAtMs <= (c.answeredAt ?? Number.POSITIVE_INFINITY) + 5;
  if (!outWhenStored(r)) return false;
  return !(unknownCopies.get(key) ?? []).some((c) => c !== r && c.copy.hash === r.copy.hash && outWhenStored(c));
}

// The ledger's invariants live with the load tools that check them after a bench too (load/lib/invariants.ts).
export { checkInvariants, INVARIANTS, type InvariantResult } from '../../load/lib/invariants.ts';
