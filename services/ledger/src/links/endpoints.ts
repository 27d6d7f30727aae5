// Transport handlers of the linking operations: they check what arrived, call the repository and map outcomes to
// the API's errors (CONTRACT section 6). The ledger never receives a link token, only its SHA-256.

import type { Clock } from '#runtime/clock.ts';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import type { Database } from '#runtime/db/database.ts';
import { classifyDatabaseFailure } from '#runtime/db/failures.ts';
import { AppError } from '#runtime/errors.ts';
import type { Logger } from '#runtime/logger.ts';
import { bind, type EndpointBinding } from '#runtime/transport/operation.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import { LinkRepository, type PlayerSelector } from './repository.ts';
import { isValidExternalPlayerId, type LinkRefusal } from './rules.ts';

export interface LinkEndpointDeps {
  database: Database;
  /** The time of link intents: creation, inspection, approval (null: the operation's transaction's `now()`). */
  clock: Clock;
  logger: Logger;
}

const invalidKey = () => new AppError('invalid_key', 'The key is unknown, revoked or not a secret key.');

/** The API's answer to a refused intent. Messages describe the intent, never the token. */
export function refusalError(refusal: LinkRefusal): AppError {
  switch (refusal) {
    case 'unknown':
      return AppError.withStatus(404, 'invalid_link', 'No link intent has this token.');
    case 'used':
      return AppError.withStatus(409, 'invalid_link', 'This link token was already used.');
    case 'expired':
      return AppError.withStatus(409, 'invalid_link', 'This link token has expired; ask the game for a new one.');
    case 'player_linked':
      return new AppError('already_linked', 'This player is already linked to an account.');
    case 'account_linked':
      return new AppError('already_linked', 'This account is already linked to another player of this game.');
  }
}

export function linkEndpoints(deps: LinkEndpointDeps): EndpointBinding[] {
  const links = new LinkRepository(deps.database);
  const { clock, logger } = deps;
  // Outages as db/failures.ts classifies them (deadlocks and serialization failures were retried there first).
  const storeFailure = (error: unknown): never => {
    const failure = classifyDatabaseFailure(error);
    if (!failure) throw error;
    logger.warn({ err: error, failure }, 'ledger database unavailable');
    throw new AppError(
      'retry_later',
      failure === 'connection_lost'
        ? 'The ledger lost its database connection; the outcome is unknown. Retry later.'
        : 'The ledger is temporarily unavailable; retry later. Nothing was changed.',
    );
  };
  const hashOf = (bytes: Uint8Array): Buffer | undefined =>
    bytes.length === EVENT_LIMITS.hashBytes ? Buffer.from(bytes) : undefined;

  return [
    bind(ledgerOps.createLinkIntent, async (request) => {
      const keyHash = hashOf(request.keyHash);
      if (!keyHash) throw invalidKey();
      const tokenHash = hashOf(request.tokenHash);
      if (!tokenHash) throw new AppError('INVALID_REQUEST', 'token_hash must be 32 bytes.');
      if (!isValidExternalPlayerId(request.externalPlayerId)) {
        throw new AppError(
          'INVALID_PLAYER',
          'externalPlayerId must be 1 to 200 characters without control characters.',
        );
      }
      const result = await links
        .createIntent({ keyHash, externalPlayerId: request.externalPlayerId, tokenHash, now: clock.now() })
        .catch(storeFailure);
      switch (result.outcome) {
        case 'invalid_key':
          throw invalidKey();
        case 'already_linked':
          throw new AppError('already_linked', 'This player is already linked to an account.');
        default:
          return { playerId: result.playerId, expiresAt: result.expiresAt };
      }
    }),
    bind(ledgerOps.inspectLinkIntent, async (request) => {
      const tokenHash = hashOf(request.tokenHash);
      if (!tokenHash) throw refusalError('unknown');
      const result = await links.inspect(tokenHash, clock.now()).catch(storeFailure);
      if (result.outcome === 'refused') throw refusalError(result.refusal);
      return { gameName: result.gameName, externalPlayerId: result.externalPlayerId, expiresAt: result.expiresAt };
    }),
    bind(ledgerOps.approveLinkIntent, async (request) => {
      const tokenHash = hashOf(request.tokenHash);
      if (!tokenHash) throw refusalError('unknown');
      const account = request.account;
      if (!account || !isUuid(account.creditsUserId)) {
        throw new AppError('UNAUTHORIZED', 'An admitted native account is required.');
      }
      const result = await links
        .approve(
          tokenHash,
          { creditsUserId: account.creditsUserId.toLowerCase(), username: account.username ?? null },
          clock.now(),
        )
        .catch(storeFailure);
      if (result.outcome === 'refused') throw refusalError(result.refusal);
      return { playerId: result.playerId, gameId: result.gameId };
    }),
    bind(ledgerOps.getPlayer, async (request) => {
      const keyHash = hashOf(request.keyHash);
      if (!keyHash) throw invalidKey();
      const { selector } = request;
      const notFound = () => new AppError('not_found', "No such player in this key's game.");
      let query: PlayerSelector;
      if (selector.case === 'playerId') {
        // A malformed id names no player (404), but the key is still checked first (401).
        query = { playerId: isUuid(selector.value) ? selector.value : null };
      } else if (selector.case === 'externalPlayerId') {
        query = { externalPlayerId: selector.value };
      } else {
        throw new AppError('INVALID_PLAYER', 'A playerId or an externalPlayerId is required.');
      }
      const result = await links.player(keyHash, query).catch(storeFailure);
      if (result.outcome === 'invalid_key') throw invalidKey();
      if (result.outcome === 'not_found') throw notFound();
      const { player } = result;
      return {
        player: {
          playerId: player.playerId,
          externalPlayerId: player.externalPlayerId,
          ...(player.linkedAt === null ? {} : { linkedAt: player.linkedAt }),
        },
      };
    }),
  ];
}
