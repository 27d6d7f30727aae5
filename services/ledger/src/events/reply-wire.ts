// The ledger's own encoder of its event replies and decision notices (the ledger's CPU and garbage per
// event). The generated code of proto/rewards/v1/events.proto and notices.proto stays the contract, and
// reply-wire.test.ts holds this encoder to it byte for byte (`toBinary(Schema, create(Schema, ...))` of the same
// values). What differs is what is made per event: one buffer per decision (its DecisionCommitted notice, whose
// DeveloperEvent bytes the reply copies), then one buffer per reply, written straight from the repository's
// StoredDecision and quota figures; no message objects, no reflection, no BigInt per figure that fits a double.
import { Buffer } from 'node:buffer';
import {
  fieldSize,
  int64Varint,
  presentFieldSize,
  uint64Size,
  varintSize,
  writeString,
  writeUint64,
  writeVarint,
} from '#runtime/contracts/wire-writer.ts';
import { AppError } from '#runtime/errors.ts';
import type { DecisionQuota, StoredDecision } from './repository.ts';

/** One decision encoded once: its DecisionCommitted notice, and within it the DeveloperEvent the reply carries. */
export class EncodedDecision {
  /** DecisionCommitted { decision } (the live notice's bytes). */
  readonly notice: Uint8Array;
  /** The DeveloperEvent's bytes (a view into `notice`). */
  readonly event: Uint8Array;

  constructor(notice: Uint8Array, event: Uint8Array) {
    this.notice = notice;
    this.event = event;
  }
}

/** A RecordEventResponse as the ledger answers it: the encoded decision, whether it is a replay, a fresh one's quota. */
export interface DecisionAnswer {
  decision: EncodedDecision;
  replayed: boolean;
  quota: DecisionQuota | undefined;
}

/** One outcome of a RecordEventsResponse: a decision, or the error RecordEvent would have answered. */
export type AnswerOutcome = DecisionAnswer | AppError;

const isoDate = (ms: number): string => new Date(ms).toISOString();
const textLength = (text: string): number => Buffer.byteLength(text, 'utf8');

// DeveloperEvent's string fields in number order (1-8, then 11; reason, 9, is optional; reward_credits, 10, an int64).
const STRING_TAGS = [0x0a, 0x12, 0x1a, 0x22, 0x2a, 0x32, 0x3a, 0x42] as const;
const REASON_TAG = 0x4a;
const REWARD_CREDITS_TAG = 0x50;
const CREATED_AT_TAG = 0x5a;
const GAME_TIME_TAG = 0x62;

/**
 * The decision of `eventId` (PostgreSQL's spelling: lower case) as DeveloperEvent, wrapped in DecisionCommitted: the
 * bytes `toBinary` writes of `create(DecisionCommittedSchema, { decision: <the records' DeveloperEvent> })`.
 */
export function encodeDecision(eventId: string, d: StoredDecision): EncodedDecision {
  const strings = [
    d.id,
    eventId,
    d.gameId,
    d.organizationId,
    d.playerId,
    d.eventType,
    isoDate(d.occurredAtMs),
    d.status,
  ];
  const createdAt = isoDate(d.createdAtMs);
  const lengths = strings.map(textLength);
  let size = 0;
  for (const length of lengths) size += fieldSize(length);
  const reasonLength = d.reason === null ? -1 : textLength(d.reason);
  if (reasonLength >= 0) size += presentFieldSize(reasonLength);
  const credits = int64Varint(d.rewardCredits);
  if (credits !== 0) size += 1 + uint64Size(credits);
  const createdAtLength = textLength(createdAt);
  size += fieldSize(createdAtLength);
  // game_time (12): only for a game whose clock was advanced (absent, the gateway takes createdAt).
  const gameTime = d.clockOffsetSeconds ? isoDate(d.createdAtMs + d.clockOffsetSeconds * 1000) : '';
  const gameTimeLength = gameTime.length;
  size += fieldSize(gameTimeLength);

  const header = 1 + varintSize(size);
  const buf = Buffer.allocUnsafe(header + size);
  buf[0] = 0x0a; // DecisionCommitted.decision = 1, length-delimited
  let pos = writeVarint(buf, 1, size);
  for (let i = 0; i < strings.length; i++) {
    const length = lengths[i] as number;
    if (length > 0) pos = writeString(buf, pos, STRING_TAGS[i] as number, strings[i] as string, length);
  }
  if (reasonLength >= 0) pos = writeString(buf, pos, REASON_TAG, d.reason as string, reasonLength);
  if (credits !== 0) {
    buf[pos++] = REWARD_CREDITS_TAG;
    pos = writeUint64(buf, pos, credits);
  }
  if (createdAtLength > 0) pos = writeString(buf, pos, CREATED_AT_TAG, createdAt, createdAtLength);
  if (gameTimeLength > 0) pos = writeString(buf, pos, GAME_TIME_TAG, gameTime, gameTimeLength);
  if (pos !== buf.length) throw new Error(`DecisionCommitted encoded ${pos} bytes, sized ${buf.length}`);
  return new EncodedDecision(buf, buf.subarray(header));
}

// ---- DecisionQuota, RecordEventResponse, ServiceError, RecordEventOutcome, RecordEventsResponse -------------------

/** DecisionQuota's int32 and int64 figures in number order (tags 0x08 to 0x28), as varint values. */
function quotaFigures(q: DecisionQuota): (number | bigint)[] {
  return [q.rateLimit, q.rateRemaining, q.rateResetSeconds, q.dailyRemainingCredits, q.budgetRemainingCredits].map(
    int64Varint,
  );
}

function quotaSize(figures: (number | bigint)[]): number {
  let size = 0;
  for (const figure of figures) if (figure !== 0) size += 1 + uint64Size(figure);
  return size;
}

function writeQuota(buf: Buffer, pos: number, figures: (number | bigint)[]): number {
  for (let i = 0; i < figures.length; i++) {
    const figure = figures[i] as number | bigint;
    if (figure === 0) continue;
    buf[pos++] = 0x08 + 8 * i;
    pos = writeUint64(buf, pos, figure);
  }
  return pos;
}

/** One answer or error, sized once and then written (RecordEventResponse or ServiceError). */
interface Sized {
  /** The message's own size (without a tag and length around it). */
  size: number;
  write(buf: Buffer, pos: number): number;
}

function sizedAnswer(answer: DecisionAnswer): Sized {
  const event = answer.decision.event;
  const figures = answer.quota && quotaFigures(answer.quota);
  const figuresSize = figures ? quotaSize(figures) : 0;
  const size =
    presentFieldSize(event.length) + (answer.replayed ? 2 : 0) + (figures ? presentFieldSize(figuresSize) : 0);
  return {
    size,
    write(buf, pos) {
      buf[pos++] = 0x0a; // decision = 1
      pos = writeVarint(buf, pos, event.length);
      buf.set(event, pos);
      pos += event.length;
      if (answer.replayed) {
        buf[pos++] = 0x10; // replayed = 2
        buf[pos++] = 1;
      }
      if (figures) {
        buf[pos++] = 0x1a; // quota = 3
        pos = writeVarint(buf, pos, figuresSize);
        pos = writeQuota(buf, pos, figures);
      }
      return pos;
    },
  };
}

/** ServiceError { status, code, message } (an event's outcome never has extra fields). */
function sizedError(error: AppError): Sized {
  const codeLength = textLength(error.code);
  const messageLength = textLength(error.message);
  const size =
    (error.status !== 0 ? 1 + varintSize(error.status) : 0) + fieldSize(codeLength) + fieldSize(messageLength);
  return {
    size,
    write(buf, pos) {
      if (error.status !== 0) {
        buf[pos++] = 0x08;
        pos = writeVarint(buf, pos, error.status);
      }
      if (codeLength > 0) pos = writeString(buf, pos, 0x12, error.code, codeLength);
      if (messageLength > 0) pos = writeString(buf, pos, 0x1a, error.message, messageLength);
      return pos;
    },
  };
}

function finished(buf: Buffer, pos: number, message: string): Buffer {
  if (pos !== buf.length) throw new Error(`${message} encoded ${pos} bytes, sized ${buf.length}`);
  return buf;
}

/** RecordEventResponse, RecordEvent's reply. */
export function encodeRecordEventReply(answer: DecisionAnswer): Uint8Array {
  const sized = sizedAnswer(answer);
  const buf = Buffer.allocUnsafe(sized.size);
  return finished(buf, sized.write(buf, 0), 'RecordEventResponse');
}

/** RecordEventsResponse { outcomes }: per event RecordEventOutcome's `result` (1) or `error` (2) case, in order. */
export function encodeRecordEventsReply(outcomes: readonly AnswerOutcome[]): Uint8Array {
  const parts: { tag: number; sized: Sized; outcomeSize: number }[] = [];
  let total = 0;
  for (const outcome of outcomes) {
    const isAnswer = !(outcome instanceof AppError);
    const sized = outcome instanceof AppError ? sizedError(outcome) : sizedAnswer(outcome);
    const outcomeSize = presentFieldSize(sized.size);
    parts.push({ tag: isAnswer ? 0x0a : 0x12, sized, outcomeSize });
    total += presentFieldSize(outcomeSize);
  }
  const buf = Buffer.allocUnsafe(total);
  let pos = 0;
  for (const { tag, sized, outcomeSize } of parts) {
    buf[pos++] = 0x0a; // outcomes = 1
    pos = writeVarint(buf, pos, outcomeSize);
    buf[pos++] = tag;
    pos = writeVarint(buf, pos, sized.size);
    pos = sized.write(buf, pos);
  }
  return finished(buf, pos, 'RecordEventsResponse');
}
