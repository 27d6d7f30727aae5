// What the single and the batch event routes share: asking the ledger for one checked event's decision through the
// edge's batcher (one event path), the answer's shape (GameEventResult) and the quota fields of a fresh decision.

import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type Koa from 'koa';
import { AppError, relabelUnavailable } from '#runtime/errors.ts';
import type { PresentedKey } from '#runtime/http/game-key.ts';
import { eventCanonicalForms } from '../domain/canonical-json.ts';
import type { GameEventInput } from '../domain/event-input.ts';
import type { EdgeEventBatcher, RecordEventInit } from './event-batcher.ts';
import type { EdgeDecision, EdgeQuota } from './record-events-wire.ts';

/** The RecordEvent request never reached a ledger (no responders, NATS disconnected): known not stored. */
export const EVENT_NOT_STORED = 'The ledger is temporarily unavailable; retry later. Nothing was stored.';
/**
 * The RecordEvent request may have reached a ledger and its reply was lost (timeout, connection lost): the event may
 * have been decided (CONTRACT section 7). A retry with the same eventId answers the stored decision.
 */
export const EVENT_OUTCOME_UNKNOWN =
  'The ledger did not answer in time; whether the event was decided is unknown. ' +
  'Retry with the same eventId: it answers the stored decision if one was made.';

/**
 * The proposed ids' random bytes, drawn 4 KiB at a time: one randomBytes call per event cost the edge several
 * microseconds of CPU per event (a call into the system's generator each time). Each id is a view of a pool that is
 * never refilled, only replaced, so an id is never overwritten while a request holds it.
 */
const ID_POOL_BYTES = 4096;
let idPool: Buffer = Buffer.alloc(0);
let idPoolAt = 0;

/**
 * The id this request proposes for the event's decision: 16 random bytes with the bits of a version 4 UUID. A copy of
 * the request sent again after a per-try timeout (transport/nats.ts) carries the same id, so that the ledger answers
 * the decision the first copy made as this request's own (replayed false), not as an earlier request's.
 */
export function proposedDecisionId(): Uint8Array {
  if (idPoolAt + 16 > idPool.length) {
    idPool = randomBytes(ID_POOL_BYTES);
    idPoolAt = 0;
  }
  const id = idPool.subarray(idPoolAt, idPoolAt + 16);
  idPoolAt += 16;
  id[6] = ((id[6] as number) & 0x0f) | 0x40;
  id[8] = ((id[8] as number) & 0x3f) | 0x80;
  return id;
}

/** The RecordEvent request of one checked event of a key: its canonical forms (metadata text, payload hash). */
export function recordEventRequest(key: PresentedKey, input: GameEventInput): RecordEventInit {
  const canonical = eventCanonicalForms(input);
  return {
    proposedDecisionId: proposedDecisionId(),
    keyHash: key.hash,
    eventId: input.eventId,
    playerId: input.playerId,
    eventType: input.eventType,
    occurredAtMs: input.occurredAtMs,
    payloadHash: canonical.payloadHash,
    metadataJson: canonical.metadataJson,
  };
}

/** A transport failure of RecordEvent(s) as the event's 503 (not stored, or its outcome unknown); others as they are. */
export function decisionError(error: unknown): unknown {
  return relabelUnavailable(error, 'retry_later', EVENT_NOT_STORED, { unknown: EVENT_OUTCOME_UNKNOWN });
}

/** Asks the ledger (through the edge's batcher) for one checked event's decision; a transport failure is a 503. */
export function decide(
  ledger: EdgeEventBatcher,
  key: PresentedKey,
  input: GameEventInput,
  ctx: Koa.Context,
  queue?: string,
): Promise<EdgeDecision> {
  return ledger.record(recordEventRequest(key, input), ctx.state.call, queue).catch((error: unknown) => {
    throw decisionError(error);
  });
}

/**
 * The quota fields of a fresh decision (CONTRACT section 11): the IETF httpapi rate-limit fields for the game's
 * per-minute limit, in structured-field syntax, and the player's and the game's credits left after the decision.
 * Replays carry none (their figures would describe a moment long gone).
 */
export function setQuotaHeaders(response: ServerResponse, quota: EdgeQuota): void {
  response.setHeader('RateLimit-Policy', `"minute";q=${quota.rateLimit};w=60`);
  response.setHeader('RateLimit', `"minute";r=${quota.rateRemaining};t=${quota.rateResetSeconds}`);
  response.setHeader('Rewards-Daily-Remaining', quota.dailyRemainingCredits.toString());
  response.setHeader('Rewards-Budget-Remaining', quota.budgetRemainingCredits.toString());
}

/** GameEventResult's JSON text of a decision the ledger answered (the edge's codec wrote it: record-events-wire.ts). */
export function gameEventResultText(decision: EdgeDecision): Buffer {
  if (!decision.json) throw new AppError('internal_error', 'The ledger returned no decision.');
  return decision.json;
}

/**
 * Answers a JSON body given as its UTF-8 pieces (the decisions' texts as the codec wrote them; no object to
 * stringify): the Content-Type Koa sets for an object body, the length of the bytes.
 */
export function answerJson(ctx: Koa.Context, pieces: Buffer[]): void {
  ctx.type = 'json';
  ctx.body = Buffer.concat(pieces);
}
