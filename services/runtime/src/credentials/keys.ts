// Game keys and one-time link tokens: a fixed prefix and 43 base64url characters (32 bytes of a CSPRNG). Only
// the SHA-256 of a secret value is stored; public keys are also stored in clear (the configuration read needs it).
import { hash, randomBytes } from 'node:crypto';

export type KeyKind = 'public' | 'secret';

export const KEY_PREFIXES: Record<KeyKind, string> = { secret: 'cr_sk_sandbox_', public: 'cr_pk_sandbox_' };
export const LINK_TOKEN_PREFIX = 'cr_link_sandbox_';

export const SECRET_KEY_PATTERN = /^cr_sk_sandbox_[A-Za-z0-9_-]{43}$/;
export const PUBLIC_KEY_PATTERN = /^cr_pk_sandbox_[A-Za-z0-9_-]{43}$/;
export const LINK_TOKEN_PATTERN = /^cr_link_sandbox_[A-Za-z0-9_-]{43}$/;

/** Characters of the random part shown in a key's `prefix` (CONTRACT section 8: `cr_sk_sandbox_AbC123`). */
export const KEY_PREFIX_RANDOM_CHARS = 6;

export function sha256(value: string): Buffer {
  // One-shot (no Hash object): the ingest edge hashes every request's key.
  return hash('sha256', value, 'buffer');
}

export interface IssuedKey {
  kind: KeyKind;
  value: string;
  prefix: string;
  hash: Buffer;
}

export function issueKeyValue(kind: KeyKind): IssuedKey {
  const random = randomBytes(32).toString('base64url');
  const value = `${KEY_PREFIXES[kind]}${random}`;
  return {
    kind,
    value,
    prefix: `${KEY_PREFIXES[kind]}${random.slice(0, KEY_PREFIX_RANDOM_CHARS)}`,
    hash: sha256(value),
  };
}

export function issueLinkToken(): { value: string; hash: Buffer } {
  const value = `${LINK_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { value, hash: sha256(value) };
}

/** What a bearer credential looks like, before any lookup. */
export function classifyGameKey(value: string): KeyKind | undefined {
  if (SECRET_KEY_PATTERN.test(value)) return 'secret';
  if (PUBLIC_KEY_PATTERN.test(value)) return 'public';
  return undefined;
}
