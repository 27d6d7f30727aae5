/**
 * Opaque, tamper-evident cursor for keyset pagination of records, newest first by (createdAt, id)
 * (spec GET /api/developer/v1/records; CONTRACT §8: an altered cursor, or one used with another kind
 * or other filters, is 400 INVALID_CURSOR).
 *
 * Format: base64url( version(1 byte) || mac(16 bytes) || payload ), payload = UTF-8 JSON
 * `[createdAt, id]`. mac = HMAC-SHA256(key, context || "\n" || payload) truncated to 128 bits, where
 * context = JSON `["records-cursor", version, kind, scope]`. Kind and scope are bound by the MAC but
 * not carried, so the cursor does not reveal the filters and stays short. JSON framing makes the MAC
 * input unambiguous (a JSON text cannot contain a raw newline). `createdAt` is kept verbatim (the
 * microsecond text PostgreSQL stored) so no precision is lost through a JS Date.
 */
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';

export type RecordKind = 'players' | 'events';
/** What a cursor can page through: the records kinds, link intents, a decision search and export, the audit trail. */
export type CursorKind = RecordKind | 'link_intents' | 'decisions' | 'decision_export' | 'audit';
const CURSOR_KINDS: readonly string[] = ['players', 'events', 'link_intents', 'decisions', 'decision_export', 'audit'];

export interface CursorPosition {
  createdAt: string;
  id: string;
}

export interface CursorContext {
  kind: CursorKind;
  /** Caller-built canonical form of the filters, e.g. `org=..;project=..;game=..`. */
  scope: string;
}

export const CURSOR_LENGTH_MAX = 512;
export const INVALID_CURSOR = { error: 'INVALID_CURSOR' } as const;

const VERSION = 1;
const MAC_BYTES = 16;
const MIN_KEY_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The MAC's key from its bytes. A KeyObject, made once: given raw bytes, createHmac imports the key again for every
 * MAC, which made 100 cursors of a records page cost about 2 ms of the process's one thread instead of 0.5 ms.
 */
export function cursorKey(bytes: Buffer): KeyObject {
  if (!Buffer.isBuffer(bytes) || bytes.length < MIN_KEY_BYTES) {
    throw new TypeError(`records cursor key must be a Buffer of at least ${MIN_KEY_BYTES} bytes`);
  }
  return createSecretKey(bytes);
}

function mac(key: KeyObject, kind: CursorKind, scope: string, payload: Buffer): Buffer {
  return createHmac('sha256', key)
    .update(`${JSON.stringify(['records-cursor', VERSION, kind, scope])}\n`, 'utf8')
    .update(payload)
    .digest()
    .subarray(0, MAC_BYTES);
}

export function encodeCursor(key: KeyObject, c: CursorContext & CursorPosition): string {
  if (!CURSOR_KINDS.includes(c.kind))
    throw new TypeError(`records cursor kind must be one of ${CURSOR_KINDS.join(', ')}`);
  if (typeof c.createdAt !== 'string' || typeof c.id !== 'string' || typeof c.scope !== 'string') {
    throw new TypeError('records cursor fields must be strings');
  }
  const payload = Buffer.from(JSON.stringify([c.createdAt, c.id]), 'utf8');
  const text = Buffer.concat([Buffer.of(VERSION), mac(key, c.kind, c.scope, payload), payload]).toString('base64url');
  // A cursor we could not decode again would strand the client; fail loudly at the source instead.
  if (text.length > CURSOR_LENGTH_MAX) throw new RangeError('records cursor exceeds its maximum length');
  return text;
}

export function decodeCursor(
  key: KeyObject,
  text: unknown,
  expected: CursorContext,
): CursorPosition | { error: 'INVALID_CURSOR' } {
  // Bound the work before any decoding or hashing.
  if (typeof text !== 'string' || text.length === 0 || text.length > CURSOR_LENGTH_MAX) return INVALID_CURSOR;
  if (!BASE64URL.test(text)) return INVALID_CURSOR;
  const bytes = Buffer.from(text, 'base64url');
  // Node's decoder ignores the unused low bits of the last character; requiring the canonical
  // encoding makes every single-character change visible (otherwise 'A' -> 'B' at the end could pass).
  if (bytes.toString('base64url') !== text) return INVALID_CURSOR;
  if (bytes.length <= 1 + MAC_BYTES || bytes[0] !== VERSION) return INVALID_CURSOR;
  const given = bytes.subarray(1, 1 + MAC_BYTES);
  const payload = bytes.subarray(1 + MAC_BYTES);
  if (!CURSOR_KINDS.includes(expected.kind)) return INVALID_CURSOR;
  if (!timingSafeEqual(given, mac(key, expected.kind, expected.scope, payload))) return INVALID_CURSOR;
  // Authentic from here on; the shape checks only guard against our own format changes.
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch {
    return INVALID_CURSOR;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return INVALID_CURSOR;
  const [createdAt, id] = parsed as unknown[];
  if (typeof createdAt !== 'string' || typeof id !== 'string') return INVALID_CURSOR;
  return { createdAt, id };
}
