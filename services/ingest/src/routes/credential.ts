// Game key credentials at the edge: shape and kind are checked here, existence and revocation by the ledger.
// Only the SHA-256 of a key leaves this process.
import { classifyGameKey, type KeyKind, sha256 } from '../../../ledger/src/domain/keys.ts';

export interface PresentedKey {
  kind: KeyKind;
  hash: Buffer;
}

// RFC 9110: the scheme is case-insensitive; one space, then the token.
const BEARER = /^bearer ([^\s]+)$/i;

/** The key in an `Authorization: Bearer` header, if the header is well formed and the value is a game key. */
export function bearerGameKey(header: string | undefined): PresentedKey | undefined {
  const match = header ? BEARER.exec(header) : null;
  const value = match?.[1];
  if (value === undefined) return undefined;
  const kind = classifyGameKey(value);
  return kind ? { kind, hash: sha256(value) } : undefined;
}
