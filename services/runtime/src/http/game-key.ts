// The game server's secret key on the game SDK's write and player routes (events, link intents, players),
// CONTRACT section 7 applied to every secret-key route of section 2: missing or malformed bearer 401 invalid_key;
// a public key 403 secret_key_required; unknown or revoked 401 invalid_key, decided by the ledger. Only the key's
// SHA-256 leaves this process.
//
// A valid request asks the ledger once: the operation itself checks the key inside its transaction. A request that
// fails an edge check after the credential's shape (a public key, a bad body or query) first asks
// AuthenticateGameKey, so that an unknown or revoked key answers 401 before anything else about the request.
import type Koa from 'koa';
import { ledgerOps } from '../contracts/operations.ts';
import { classifyGameKey, type KeyKind, sha256 } from '../credentials/keys.ts';
import { AppError, relabelUnavailable } from '../errors.ts';
import type { Transport } from '../transport/operation.ts';

export interface PresentedKey {
  kind: KeyKind;
  hash: Buffer;
}

/** An unreachable ledger on the game SDK routes: the request never reached it. */
export const RETRY_LATER = 'The ledger is temporarily unavailable; retry later. Nothing was changed.';
/** The request reached the ledger (or may have) and the reply was lost: nothing is claimed about what happened. */
export const RETRY_LATER_UNKNOWN = 'The ledger did not answer in time; the outcome is unknown. Retry later.';

export const retryLater = (error: unknown) =>
  relabelUnavailable(error, 'retry_later', RETRY_LATER, { unknown: RETRY_LATER_UNKNOWN });

export const invalidKey = () => new AppError('invalid_key', 'A valid, unrevoked secret game key is required.');

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

export class SecretKeyGate {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** 401 unless the key is known and not revoked (asked of the ledger). */
  async assertKnown(ctx: Koa.Context, key: PresentedKey): Promise<void> {
    const reply = await this.transport
      .call(ledgerOps.authenticateGameKey, { keyHash: key.hash }, ctx.state.call)
      .catch((error: unknown) => {
        throw retryLater(error);
      });
    if (!reply.valid) throw invalidKey();
  }

  /** The request's secret key: its shape here, the public-key refusal after the ledger knows the key. */
  async secretKey(ctx: Koa.Context): Promise<PresentedKey> {
    const key = bearerGameKey(ctx.get('Authorization'));
    if (!key) throw invalidKey();
    if (key.kind === 'public') {
      await this.assertKnown(ctx, key);
      throw new AppError(
        'secret_key_required',
        'This operation needs a secret game key; public keys only read configuration.',
      );
    }
    return key;
  }

  /** Runs an edge check; if it fails, an unknown or revoked key is reported instead of the check's failure. */
  async check<T>(ctx: Koa.Context, key: PresentedKey, work: () => T | Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      await this.assertKnown(ctx, key);
      throw error;
    }
  }
}
