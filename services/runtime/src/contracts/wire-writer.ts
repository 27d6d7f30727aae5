// The protobuf wire format's writing side, for the hand-written codecs of the event path (the edge's request:
// services/ingest/src/routes/record-events-wire.ts; the ledger's reply and decision notice:
// services/ledger/src/events/reply-wire.ts). Each codec sizes a message first and then writes it into one buffer of that size, in the bytes the generated encoder
// (protobuf-es `toBinary`) writes: fields in number order, proto3 defaults left out. The codecs' tests hold them to
// the generated encoder byte for byte.
import type { Buffer } from 'node:buffer';

/** Bytes of a varint of a non-negative safe integer. */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

/** Writes a varint of a non-negative safe integer at `pos`; returns the position after it. */
export function writeVarint(buf: Buffer, pos: number, value: number): number {
  while (value >= 128) {
    buf[pos++] = (value % 128) | 128;
    value = Math.floor(value / 128);
  }
  buf[pos++] = value;
  return pos;
}

/**
 * The unsigned value an int64 (or int32) field's varint carries: a non-negative safe integer as a number, anything
 * else as a BigInt (a negative value is its 64-bit two's complement: ten bytes, as protobuf writes negative ints).
 */
export function int64Varint(value: number | bigint): number | bigint {
  if (typeof value === 'number') return value >= 0 ? value : BigInt.asUintN(64, BigInt(value));
  if (value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
  return BigInt.asUintN(64, value);
}

export function writeUint64(buf: Buffer, pos: number, value: number | bigint): number {
  if (typeof value === 'number') return writeVarint(buf, pos, value);
  let v = value;
  while (v >= 128n) {
    buf[pos++] = Number(v & 127n) | 128;
    v >>= 7n;
  }
  buf[pos++] = Number(v);
  return pos;
}

export function uint64Size(value: number | bigint): number {
  if (typeof value === 'number') return varintSize(value);
  let size = 1;
  for (let v = value; v >= 128n; v >>= 7n) size++;
  return size;
}

/** Bytes of a length-delimited field of `length` bytes with a one-byte tag; none when empty (the default). */
export const fieldSize = (length: number): number => (length > 0 ? 1 + varintSize(length) + length : 0);

/** Bytes of a length-delimited field that is written even when empty (a message field that is set). */
export const presentFieldSize = (length: number): number => 1 + varintSize(length) + length;

export function writeBytes(buf: Buffer, pos: number, tag: number, bytes: Uint8Array): number {
  buf[pos++] = tag;
  pos = writeVarint(buf, pos, bytes.length);
  buf.set(bytes, pos);
  return pos + bytes.length;
}

/** A string field of `length` UTF-8 bytes (Buffer.byteLength's of `text`). */
export function writeString(buf: Buffer, pos: number, tag: number, text: string, length: number): number {
  buf[pos++] = tag;
  pos = writeVarint(buf, pos, length);
  buf.write(text, pos, length, 'utf8');
  return pos + length;
}
