// The edge's own codec of RecordEvents (the edge's CPU per event). The generated code of
// proto/rewards/v1/events.proto stays the contract: the ledger serves RecordEvents with it, and record-events-wire.test.ts
// holds this codec to it field by field (the generated encoder's bytes, unknown fields, oneof cases, int64 beyond a
// double). What differs is the shape on the edge's side:
// - the request is written straight from the edge's events (no message copy by `create`, no reflection), byte for
//   byte what `toBinary(RecordEventsRequestSchema, create(...))` writes;
// - the reply is read straight into what the edge answers: per event the JSON text of the API's GameEventResult
//   (what JSON.stringify writes of gameEventResultJson's object, copied from the reply's UTF-8 bytes), the
//   decision's status and reason, the quota figures with int64 as a number where it fits a double's integers (a
//   BigInt only beyond), or the ledger's error; no RecordEventOutcome, RecordEventResponse, DeveloperEvent or
//   DecisionQuota message objects, no string per field and no BigInt per event.
// edgeDecisionOf maps the generated RecordEventResponse to the same shape (RecordEvent, unbatched).
import { Buffer, isUtf8 } from 'node:buffer';
import { EVENT_RECORD_FIELDS, eventRecordJson } from '#runtime/contracts/event-record.ts';
import type { DeveloperEvent } from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import type { DecisionQuota, RecordEventResponse } from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import {
  fieldSize,
  int64Varint,
  uint64Size,
  varintSize,
  writeBytes,
  writeString,
  writeUint64,
  writeVarint,
} from '#runtime/contracts/wire-writer.ts';
import { withWire } from '#runtime/transport/operation.ts';

/** One event of a RecordEventsRequest as the edge holds it (RecordEventRequest's fields; absent is the default). */
export interface EdgeEventRequest {
  keyHash?: Uint8Array | undefined;
  eventId?: string | undefined;
  playerId?: string | undefined;
  eventType?: string | undefined;
  /** Milliseconds since the Unix epoch (an integer). */
  occurredAtMs?: number | undefined;
  payloadHash?: Uint8Array | undefined;
  metadataJson?: string | undefined;
  /** The id the decision takes if this request makes it (16 bytes; see events.proto). */
  proposedDecisionId?: Uint8Array | undefined;
}

/** GameEventResult (CONTRACT section 7): the event record (eventRecordJson's), then `replayed` and `mode`, in this order. */
export type GameEventResultJson = ReturnType<typeof eventRecordJson> & { replayed: boolean; mode: 'sandbox' };

/** DecisionQuota's figures; an int64 is a number when it is a safe integer, else a BigInt (same decimal text). */
export interface EdgeQuota {
  rateLimit: number;
  rateRemaining: number;
  rateResetSeconds: number;
  dailyRemainingCredits: number | bigint;
  budgetRemainingCredits: number | bigint;
}

/** RecordEventResponse as the edge answers it. */
export interface EdgeDecision {
  /** GameEventResult's JSON text (UTF-8, JSON.stringify's of gameEventResultJson); undefined without a decision. */
  json: Buffer | undefined;
  /** The decision's status and reason (the decisions counter's labels). */
  status: string;
  reason: string | null;
  replayed: boolean;
  quota: EdgeQuota | undefined;
}

/** A RecordEventOutcome's `error` case (ServiceError without its extra fields, which the event routes never use). */
export class LedgerOutcomeError {
  readonly status: number;
  readonly code: string;
  readonly message: string;

  constructor(status: number, code: string, message: string) {
    this.status = status;
    this.code = code;
    this.message = message;
  }
}

/** One outcome of a RecordEventsResponse; undefined for an outcome with neither case. */
export type EdgeOutcome = EdgeDecision | LedgerOutcomeError | undefined;

/** GameEventResult of a decision: eventRecordJson's object, completed with `replayed` and `mode`. */
export function gameEventResultJson(e: DeveloperEvent, replayed: boolean): GameEventResultJson {
  const result: ReturnType<typeof eventRecordJson> & { replayed?: boolean; mode?: 'sandbox' } = eventRecordJson(e);
  result.replayed = replayed;
  result.mode = 'sandbox';
  return result as GameEventResultJson;
}

const int64Figure = (value: bigint): number | bigint =>
  value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;

/** The generated RecordEventResponse in the edge's shape (what decodeRecordEventsReply gives for its outcome). */
export function edgeDecisionOf(reply: RecordEventResponse): EdgeDecision {
  const q: DecisionQuota | undefined = reply.quota;
  const decision = reply.decision;
  return {
    json: decision && Buffer.from(JSON.stringify(gameEventResultJson(decision, reply.replayed))),
    status: decision?.status ?? '',
    reason: decision?.reason ?? null,
    replayed: reply.replayed,
    quota: q && {
      rateLimit: q.rateLimit,
      rateRemaining: q.rateRemaining,
      rateResetSeconds: q.rateResetSeconds,
      dailyRemainingCredits: int64Figure(q.dailyRemainingCredits),
      budgetRemainingCredits: int64Figure(q.budgetRemainingCredits),
    },
  };
}

// ---- the request -------------------------------------------------------------------------------------------------

const TWO_32 = 4294967296;

/** One event's encoded size (without its own tag and length); its strings' UTF-8 lengths are pushed on `sizes`. */
function eventSize(e: EdgeEventRequest, sizes: number[]): number {
  const eventId = e.eventId ? Buffer.byteLength(e.eventId) : 0;
  const playerId = e.playerId ? Buffer.byteLength(e.playerId) : 0;
  const eventType = e.eventType ? Buffer.byteLength(e.eventType) : 0;
  sizes.push(eventId, playerId, eventType);
  let size =
    fieldSize(e.keyHash?.length ?? 0) +
    fieldSize(eventId) +
    fieldSize(playerId) +
    fieldSize(eventType) +
    fieldSize(e.payloadHash?.length ?? 0);
  if (e.occurredAtMs) size += 1 + uint64Size(int64Varint(e.occurredAtMs));
  if (e.metadataJson !== undefined) {
    const length = Buffer.byteLength(e.metadataJson);
    sizes.push(length);
    size += 1 + varintSize(length) + length;
  }
  size += fieldSize(e.proposedDecisionId?.length ?? 0);
  return size;
}

/** RecordEventsRequest { events } in the bytes the generated encoder writes (fields in number order, defaults left out). */
export function encodeRecordEventsRequest(request: { events: readonly EdgeEventRequest[] }): Uint8Array {
  const sizes: number[] = [];
  const eventSizes: number[] = [];
  let total = 0;
  for (const e of request.events) {
    const size = eventSize(e, sizes);
    eventSizes.push(size);
    total += 1 + varintSize(size) + size;
  }
  const buf = Buffer.allocUnsafe(total);
  let pos = 0;
  let s = 0;
  for (let i = 0; i < request.events.length; i++) {
    const e = request.events[i] as EdgeEventRequest;
    buf[pos++] = 0x0a; // events = 1, length-delimited
    pos = writeVarint(buf, pos, eventSizes[i] as number);
    if (e.keyHash && e.keyHash.length > 0) pos = writeBytes(buf, pos, 0x0a, e.keyHash);
    const eventId = sizes[s++] as number;
    if (eventId > 0) pos = writeString(buf, pos, 0x12, e.eventId as string, eventId);
    const playerId = sizes[s++] as number;
    if (playerId > 0) pos = writeString(buf, pos, 0x1a, e.playerId as string, playerId);
    const eventType = sizes[s++] as number;
    if (eventType > 0) pos = writeString(buf, pos, 0x22, e.eventType as string, eventType);
    if (e.occurredAtMs) {
      buf[pos++] = 0x28; // occurred_at_ms = 5, varint
      pos = writeUint64(buf, pos, int64Varint(e.occurredAtMs));
    }
    if (e.payloadHash && e.payloadHash.length > 0) pos = writeBytes(buf, pos, 0x32, e.payloadHash);
    if (e.metadataJson !== undefined) pos = writeString(buf, pos, 0x3a, e.metadataJson, sizes[s++] as number);
    if (e.proposedDecisionId && e.proposedDecisionId.length > 0) pos = writeBytes(buf, pos, 0x42, e.proposedDecisionId);
  }
  if (pos !== total) throw new Error(`RecordEventsRequest encoded ${pos} bytes, sized ${total}`);
  return buf;
}

// ---- the reply ---------------------------------------------------------------------------------------------------

/** A reader over one reply; `lo` and `hi` hold the last varint's low and high 32 bits (no object per varint). */
class Reader {
  readonly buf: Buffer;
  pos = 0;
  lo = 0;
  hi = 0;

  constructor(data: Uint8Array) {
    this.buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }

  varint(): void {
    let lo = 0;
    let hi = 0;
    let byte = 128;
    // Bits 0-27 from the first four bytes.
    for (let shift = 0; shift < 28 && byte & 128; shift += 7) {
      byte = this.byte();
      lo |= (byte & 127) << shift;
    }
    if (byte & 128) {
      // The fifth byte: bits 28-31 and 32-34; then at most five more bytes (ten in all).
      byte = this.byte();
      lo |= (byte & 15) << 28;
      hi = (byte & 127) >> 4;
      for (let shift = 3; byte & 128; shift += 7) {
        if (shift > 31) throw new Error('invalid varint');
        byte = this.byte();
        hi |= (byte & 127) << shift;
      }
    }
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
  }

  private byte(): number {
    if (this.pos >= this.buf.length) throw new Error('premature end of the message');
    return this.buf[this.pos++] as number;
  }

  uint32(): number {
    this.varint();
    return this.lo;
  }

  int32(): number {
    this.varint();
    return this.lo | 0;
  }

  bool(): boolean {
    this.varint();
    return this.lo !== 0 || this.hi !== 0;
  }

  /** An int64: a number when it is a safe integer, else a BigInt. */
  int64(): number | bigint {
    this.varint();
    const { lo, hi } = this;
    if (hi <= 0x1fffff) return hi * TWO_32 + lo;
    if (hi >= 0xffe00000 && !(hi === 0xffe00000 && lo === 0)) return (hi - TWO_32) * TWO_32 + lo;
    return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo));
  }

  /** The end of a length-delimited field that starts here (a length past 32 bits is past any reply's end). */
  end(): number {
    this.varint();
    if (this.hi !== 0) throw new Error('premature end of the message');
    const length = this.lo;
    const end = this.pos + length;
    if (end > this.buf.length) throw new Error('premature end of the message');
    return end;
  }

  /** A string field (ServiceError's); refused when not UTF-8, as the generated decoder refuses it. */
  string(): string {
    const end = this.end();
    if (!isUtf8(this.buf.subarray(this.pos, end))) throw new Error('invalid UTF-8 in a string field');
    const text = this.buf.toString('utf8', this.pos, end);
    this.pos = end;
    return text;
  }

  /** A tag: sets `lo` to it and returns the field number (wire type `this.lo & 7`). */
  tag(): number {
    this.varint();
    const field = this.lo >>> 3;
    const wireType = this.lo & 7;
    if (field <= 0 || wireType > 5) throw new Error(`illegal tag: field no ${field} wire type ${wireType}`);
    return field;
  }

  /** Skips an unknown field of `wireType` (a group up to its end tag). */
  skip(wireType: number, field: number, depth = 0): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.advance(8);
        return;
      case 2:
        this.pos = this.end();
        return;
      case 5:
        this.advance(4);
        return;
      case 3:
        if (depth >= 100) throw new Error('maximum recursion depth reached');
        for (;;) {
          const inner = this.tag();
          const innerType = this.lo & 7;
          if (innerType === 4) {
            if (inner !== field) throw new Error('invalid end group tag');
            return;
          }
          this.skip(innerType, inner, depth + 1);
        }
      default:
        throw new Error(`cannot skip wire type ${wireType}`);
    }
  }

  private advance(bytes: number): void {
    if (this.pos + bytes > this.buf.length) throw new Error('premature end of the message');
    this.pos += bytes;
  }
}

/** A known field's wire type checked: the generated decoder's types, or the message is not ours. */
function expectWireType(reader: Reader, wireType: number, field: number): void {
  if ((reader.lo & 7) !== wireType) throw new Error(`field ${field}: wire type ${reader.lo & 7}, not ${wireType}`);
}

// GameEventResult's JSON is written straight from the reply's bytes (its strings are UTF-8 there already), as
// JSON.stringify writes gameEventResultJson's object: members in its order, a string's `"` and `\\` and control
// characters escaped (\b \t \n \f \r, else \u00xx), other characters as they are (the reply's strings are valid
// UTF-8: checked as the generated decoder checks them, so no lone surrogate reaches the text).
const ascii = (text: string): Buffer => Buffer.from(text, 'latin1');
/**
 * The members before each field of DeveloperEvent, by field number: the record's keys are in field-number order
 * (EVENT_RECORD_FIELDS). rewardCredits (10) is written after reason, as a number.
 */
const MEMBER_BEFORE: Buffer[] = [
  ascii(''),
  ...EVENT_RECORD_FIELDS.map((key, i) => ascii(`${i === 0 ? '{' : ','}${JSON.stringify(key)}:`)),
];
const REWARD_CREDITS = MEMBER_BEFORE[10] as Buffer;
const NULL = ascii('null');
const REPLAYED_TRUE = ascii(',"replayed":true,"mode":"sandbox"}');
const REPLAYED_FALSE = ascii(',"replayed":false,"mode":"sandbox"}');
const SHORT_ESCAPES: Record<number, string> = { 8: 'b', 9: 't', 10: 'n', 12: 'f', 13: 'r', 34: '"', 92: '\\' };
const HEX = '0123456789abcdef';

/** Whether bytes [start, end) hold a byte JSON escapes (`"`, `\\`, below 0x20); throws if they are not UTF-8. */
function scanString(buf: Buffer, start: number, end: number): boolean {
  let escapes = false;
  let high = false;
  for (let i = start; i < end; i++) {
    const byte = buf[i] as number;
    if (byte < 0x20 || byte === 0x22 || byte === 0x5c) escapes = true;
    else if (byte >= 0x80) high = true;
  }
  if (high && !isUtf8(buf.subarray(start, end))) throw new Error('invalid UTF-8 in a string field');
  return escapes;
}

/** The scratch buffer's size at start, and the most it keeps between replies (a larger one grew for one reply). */
const SCRATCH_BYTES = 16 * 1024;
export const SCRATCH_KEPT_MAX_BYTES = 256 * 1024;

/**
 * The JSON texts of one reply's decisions, written one after the other into a scratch buffer shared by all calls. A
 * buffer grown past SCRATCH_KEPT_MAX_BYTES for one large reply is not kept for the next (`done`).
 */
class JsonWriter {
  private static scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  out = JsonWriter.scratch;
  pos = 0;

  /** The shared scratch buffer's size now (tests: jsonScratchBytes). */
  static get scratchBytes(): number {
    return JsonWriter.scratch.length;
  }

  /** The reply is read: a scratch buffer grown past the bound goes back to its size at start. */
  done(): void {
    if (JsonWriter.scratch.length > SCRATCH_KEPT_MAX_BYTES) JsonWriter.scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  }

  room(bytes: number): void {
    if (this.pos + bytes <= this.out.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.pos + bytes));
    this.out.copy(bigger, 0, 0, this.pos);
    this.out = bigger;
    JsonWriter.scratch = bigger;
  }

  put(bytes: Buffer): void {
    const out = this.out;
    let pos = this.pos;
    for (let i = 0; i < bytes.length; i++) out[pos++] = bytes[i] as number;
    this.pos = pos;
  }

  /** A JSON string of UTF-8 bytes [start, end) of `src` (room for 6 bytes a byte made before). */
  string(src: Buffer, start: number, end: number, escapes: boolean): void {
    const out = this.out;
    out[this.pos++] = 0x22;
    if (!escapes) {
      this.pos += src.copy(out, this.pos, start, end);
    } else {
      let pos = this.pos;
      for (let i = start; i < end; i++) {
        const byte = src[i] as number;
        if (byte >= 0x20 && byte !== 0x22 && byte !== 0x5c) {
          out[pos++] = byte;
          continue;
        }
        out[pos++] = 0x5c;
        const short = SHORT_ESCAPES[byte];
        if (short !== undefined) out[pos++] = short.charCodeAt(0);
        else {
          out[pos++] = 0x75; // u00xx
          out[pos++] = 0x30;
          out[pos++] = 0x30;
          out[pos++] = HEX.charCodeAt(byte >> 4);
          out[pos++] = HEX.charCodeAt(byte & 15);
        }
      }
      this.pos = pos;
    }
    out[this.pos++] = 0x22;
  }

  ascii(text: string): void {
    const out = this.out;
    for (let i = 0; i < text.length; i++) out[this.pos++] = text.charCodeAt(i);
  }
}

/**
 * A RecordEventResponse being read (one instance for a whole reply, reset per outcome): DeveloperEvent's strings as
 * byte ranges of the reply, fields as they arrive (a repeated message field merges, as protobuf says).
 */
class DecisionFields {
  hasDecision = false;
  /** Byte ranges of DeveloperEvent's string fields, by field number (10 is rewardCredits). */
  readonly start = new Int32Array(12);
  readonly end = new Int32Array(12);
  /** Field numbers (bits) whose text has a byte JSON escapes. */
  escapes = 0;
  hasReason = false;
  rewardCredits: number | bigint = 0;
  replayed = false;
  quota: EdgeQuota | undefined = undefined;

  reset(): void {
    this.hasDecision = false;
    this.start.fill(0);
    this.end.fill(0);
    this.escapes = 0;
    this.hasReason = false;
    this.rewardCredits = 0;
    this.replayed = false;
    this.quota = undefined;
  }

  /** The decision; its JSON text written by `json` at [jsonStart, jsonEnd) (set on `json` once the reply is read). */
  decision(src: Buffer, json: JsonWriter, texts: number[]): EdgeDecision {
    const { start, end } = this;
    let text: Buffer | undefined;
    let status = '';
    let reason: string | null = null;
    if (this.hasDecision) {
      let bytes = 512;
      for (let f = 1; f <= 11; f++) bytes += 6 * ((end[f] as number) - (start[f] as number));
      json.room(bytes);
      texts.push(json.pos);
      for (let f = 1; f <= 11; f++) {
        if (f === 10) continue;
        json.put(MEMBER_BEFORE[f] as Buffer);
        if (f === 9 && !this.hasReason) json.put(NULL);
        else json.string(src, start[f] as number, end[f] as number, (this.escapes & (1 << f)) !== 0);
        if (f === 9) {
          json.put(REWARD_CREDITS);
          json.ascii(String(Number(this.rewardCredits)));
        }
      }
      json.put(this.replayed ? REPLAYED_TRUE : REPLAYED_FALSE);
      texts.push(json.pos);
      text = EMPTY;
      status = src.toString('utf8', start[8], end[8]);
      if (this.hasReason) reason = src.toString('utf8', start[9], end[9]);
    }
    return { json: text, status, reason, replayed: this.replayed, quota: this.quota };
  }
}

const EMPTY = Buffer.alloc(0);

function readDeveloperEvent(reader: Reader, end: number, into: DecisionFields): void {
  into.hasDecision = true;
  while (reader.pos < end) {
    const field = reader.tag();
    const wireType = reader.lo & 7;
    if (field > 11) {
      reader.skip(wireType, field);
      continue;
    }
    expectWireType(reader, field === 10 ? 0 : 2, field);
    if (field === 10) {
      into.rewardCredits = reader.int64();
      continue;
    }
    const stop = reader.end();
    into.start[field] = reader.pos;
    into.end[field] = stop;
    if (scanString(reader.buf, reader.pos, stop)) into.escapes |= 1 << field;
    else into.escapes &= ~(1 << field);
    if (field === 9) into.hasReason = true;
    reader.pos = stop;
  }
  if (reader.pos !== end) throw new Error('premature end of DeveloperEvent');
}

function readQuota(reader: Reader, end: number, into: DecisionFields): void {
  const quota: EdgeQuota = into.quota ?? {
    rateLimit: 0,
    rateRemaining: 0,
    rateResetSeconds: 0,
    dailyRemainingCredits: 0,
    budgetRemainingCredits: 0,
  };
  into.quota = quota;
  while (reader.pos < end) {
    const field = reader.tag();
    const wireType = reader.lo & 7;
    if (field > 5) {
      reader.skip(wireType, field);
      continue;
    }
    expectWireType(reader, 0, field);
    if (field === 1) quota.rateLimit = reader.int32();
    else if (field === 2) quota.rateRemaining = reader.int32();
    else if (field === 3) quota.rateResetSeconds = reader.int32();
    else if (field === 4) quota.dailyRemainingCredits = reader.int64();
    else quota.budgetRemainingCredits = reader.int64();
  }
  if (reader.pos !== end) throw new Error('premature end of DecisionQuota');
}

function readResponse(reader: Reader, end: number, into: DecisionFields): void {
  while (reader.pos < end) {
    const field = reader.tag();
    const wireType = reader.lo & 7;
    if (field > 3) {
      reader.skip(wireType, field);
      continue;
    }
    expectWireType(reader, field === 2 ? 0 : 2, field);
    if (field === 1) readDeveloperEvent(reader, reader.end(), into);
    else if (field === 2) into.replayed = reader.bool();
    else readQuota(reader, reader.end(), into);
  }
  if (reader.pos !== end) throw new Error('premature end of RecordEventResponse');
}

/** A ServiceError being read (a repeated `error` field merges into it). */
class ErrorFields {
  status = 0;
  code = '';
  message = '';
}

function readError(reader: Reader, end: number, into: ErrorFields): void {
  while (reader.pos < end) {
    const field = reader.tag();
    const wireType = reader.lo & 7;
    // extra_json (4) and unknown fields: not part of the event routes' answer.
    if (field > 3) {
      reader.skip(wireType, field);
      continue;
    }
    expectWireType(reader, field === 1 ? 0 : 2, field);
    if (field === 1) into.status = reader.uint32();
    else if (field === 2) into.code = reader.string();
    else into.message = reader.string();
  }
  if (reader.pos !== end) throw new Error('premature end of ServiceError');
}

function readOutcome(
  reader: Reader,
  end: number,
  fields: DecisionFields,
  json: JsonWriter,
  texts: number[],
): EdgeOutcome {
  // The oneof: the last case on the wire wins; the same case again merges into it.
  let decision = false;
  let error: ErrorFields | undefined;
  fields.reset();
  while (reader.pos < end) {
    const field = reader.tag();
    const wireType = reader.lo & 7;
    if (field === 1 && wireType === 2) {
      error = undefined;
      if (!decision) fields.reset();
      decision = true;
      readResponse(reader, reader.end(), fields);
    } else if (field === 2 && wireType === 2) {
      decision = false;
      error ??= new ErrorFields();
      readError(reader, reader.end(), error);
    } else if (field === 1 || field === 2) {
      throw new Error(`RecordEventOutcome field ${field}: wire type ${wireType}, not 2`);
    } else {
      reader.skip(wireType, field);
    }
  }
  if (reader.pos !== end) throw new Error('premature end of RecordEventOutcome');
  if (decision) return fields.decision(reader.buf, json, texts);
  if (error) return new LedgerOutcomeError(error.status, error.code, error.message);
  return undefined;
}

/**
 * RecordEventsResponse's outcomes, in order, in the edge's shape (each decision's JSON text in one buffer of the
 * reply). Throws on bytes that are not the message, as the generated decoder does.
 */
export function decodeRecordEventsReply(data: Uint8Array): EdgeOutcome[] {
  const reader = new Reader(data);
  const fields = new DecisionFields();
  const json = new JsonWriter();
  // Each decision's [start, end) in the writer, in the order of the decisions.
  const texts: number[] = [];
  const outcomes: EdgeOutcome[] = [];
  try {
    const end = reader.buf.length;
    while (reader.pos < end) {
      const field = reader.tag();
      const wireType = reader.lo & 7;
      if (field === 1 && wireType === 2) outcomes.push(readOutcome(reader, reader.end(), fields, json, texts));
      else if (field === 1) throw new Error(`RecordEventsResponse field 1: wire type ${wireType}, not 2`);
      else reader.skip(wireType, field);
    }
    if (texts.length > 0) {
      const all = Buffer.allocUnsafe(json.pos);
      json.out.copy(all, 0, 0, json.pos);
      let t = 0;
      for (const outcome of outcomes) {
        if (outcome instanceof LedgerOutcomeError || outcome?.json === undefined) continue;
        outcome.json = all.subarray(texts[t] as number, texts[t + 1] as number);
        t += 2;
      }
    }
    return outcomes;
  } finally {
    json.done();
  }
}

/** The size of the scratch buffer the replies' JSON texts are written into, kept between replies (tests). */
export function jsonScratchBytes(): number {
  return JsonWriter.scratchBytes;
}

const edgeCodec = { encode: encodeRecordEventsRequest, decode: decodeRecordEventsReply };

/**
 * RecordEventsWithProposedIds with the edge's codec: the request from EdgeEventRequest, the reply as EdgeOutcome[]
 * (callWired). The edge's event writes, copied after a per-try timeout (event-write-route.ts).
 */
export const recordEventsAtEdge = withWire(ledgerOps.recordEventsWithProposedIds, edgeCodec);

/** RecordEvents with the edge's codec: while no ledger serves the proposed-id subject (event-write-route.ts). */
export const recordEventsAtEdgeUncopied = withWire(ledgerOps.recordEvents, edgeCodec);
