// Link intents and players in the ledger schema (tables of migration 0001). Plain SQL through MikroORM's connection,
// like the console: each operation is a few statements whose row locks must be visible in the code.
//
// Locks: creation takes the key row FOR SHARE (a concurrent revokeKey, an UPDATE of that row, waits for it or is
// seen by it: the revocation recheck is inside the transaction). Approval locks the intent row FOR UPDATE, then
// the player row FOR NO KEY UPDATE, and nothing else: never an organization, project or game row, so it cannot
// deadlock with the console (organization -> project -> game -> member) or the event path (game row).
//
// An intent past its expiry by the retention grace is moved by the clean-up (../retention.ts) to a tombstone
// (ledger.link_intent_tombstones: its token hash and whether it was used); inspection and approval read the tombstone
// when the intent is gone, so the answer for the token stays what it was.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Database } from '#runtime/db/database.ts';
import { isoSql } from '#runtime/db/sql.ts';
import { approvalRefusal, type IntentState, inspectionRefusal, type LinkRefusal } from './rules.ts';

/** An issued link token is valid for this long (spec: Link and player shapes). */
export const LINK_INTENT_LIFETIME_MINUTES = 10;

type Raw = Record<string, unknown>;

/** Null: the database's now(). */
export type Instant = Date | null;

const at = (instant: Instant) => instant?.toISOString() ?? null;
// `now` of the statement: the injected instant or the transaction's time.
const NOW = 'coalesce(?::timestamptz, now())';

export type CreateIntentResult =
  | { outcome: 'created'; playerId: string; expiresAt: string }
  | { outcome: 'invalid_key' | 'already_linked' };

export type InspectResult =
  | { outcome: 'pending'; gameName: string; externalPlayerId: string; expiresAt: string }
  | { outcome: 'refused'; refusal: LinkRefusal };

export type ApproveResult =
  | { outcome: 'linked'; playerId: string; gameId: string }
  | { outcome: 'refused'; refusal: LinkRefusal };

export interface PlayerRow {
  playerId: string;
  externalPlayerId: string;
  linkedAt: string | null;
}

/** `playerId` null: a malformed id, which names no player. */
export type PlayerSelector = { playerId: string | null } | { externalPlayerId: string };

export type PlayerResult =
  | { outcome: 'found'; player: PlayerRow }
  | { outcome: 'invalid_key' }
  | { outcome: 'not_found' };

/** A unique violation of the index that allows one player per account and game (players_one_per_account). */
function isAccountConflict(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown; message?: unknown };
  return e?.code === '23505' && String(e.constraint ?? e.message).includes('players_one_per_account');
}

export class LinkRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /** Run again from the start on a serialization failure or deadlock (Database.transaction). */
  private transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  private static async rows(em: EntityManager, sql: string, params: unknown[]): Promise<Raw[]> {
    return (await em.execute(sql, params)) as Raw[];
  }

  /**
   * Finds or creates the game's player for `externalPlayerId` and stores a pending intent holding the token's hash,
   * valid for 10 minutes. One transaction; the key must be a secret key that is not revoked at this moment.
   */
  createIntent(params: {
    keyHash: Buffer;
    externalPlayerId: string;
    tokenHash: Buffer;
    now: Instant;
  }): Promise<CreateIntentResult> {
    return this.transaction(async (em) => {
      const key = (
        await LinkRepository.rows(
          em,
          `select game_id, organization_id from ledger.keys
            where key_hash = ? and kind = 'secret' and revoked_at is null for share`,
          [params.keyHash],
        )
      )[0];
      if (!key) return { outcome: 'invalid_key' };
      // A concurrent creation for the same external id waits on the unique index, then does nothing.
      await em.execute(
        `insert into ledger.players (id, game_id, organization_id, external_player_id, created_at)
         values (?, ?, ?, ?, ${NOW})
         on conflict on constraint players_one_per_external_id do nothing`,
        [randomUUID(), key.game_id, key.organization_id, params.externalPlayerId, at(params.now)],
      );
      const player = (
        await LinkRepository.rows(
          em,
          `select id, linked_at is not null as linked from ledger.players where game_id = ? and external_player_id = ?`,
          [key.game_id, params.externalPlayerId],
        )
      )[0];
      if (!player) throw new Error('the player of a link intent vanished inside its transaction');
      if (player.linked) return { outcome: 'already_linked' };
      const intent = (
        await LinkRepository.rows(
          em,
          `insert into ledger.link_intents (id, game_id, player_id, token_hash, expires_at, created_at)
           values (?, ?, ?, ?, ${NOW} + make_interval(mins => ?), ${NOW})
           returning ${isoSql('expires_at')}`,
          [
            randomUUID(),
            key.game_id,
            player.id,
            params.tokenHash,
            at(params.now),
            LINK_INTENT_LIFETIME_MINUTES,
            at(params.now),
          ],
        )
      )[0];
      return { outcome: 'created', playerId: player.id as string, expiresAt: intent!.expires_at as string };
    });
  }

  /** What a pending intent would link; reads only (the token stays usable). */
  async inspect(tokenHash: Buffer, now: Instant): Promise<InspectResult> {
    const row = (
      await this.db.query(
        `select i.consumed_at is not null as consumed, i.expires_at <= ${NOW} as expired,
                ${isoSql('i.expires_at', 'expires_at')}, p.external_player_id, p.linked_at is not null as linked,
                g.name as game_name
           from ledger.link_intents i
           join ledger.players p on p.id = i.player_id
           join ledger.games g on g.id = i.game_id
          where i.token_hash = ?
         union all
         select t.used, not t.used, null, null, null, null
           from ledger.link_intent_tombstones t
          where t.token_hash = ?`,
        [at(now), tokenHash, tokenHash],
      )
    )[0];
    const refusal = inspectionRefusal(row && intentState(row), row && { linked: row.linked as boolean });
    if (refusal || !row) return { outcome: 'refused', refusal: refusal ?? 'unknown' };
    return {
      outcome: 'pending',
      gameName: row.game_name as string,
      externalPlayerId: row.external_player_id as string,
      expiresAt: row.expires_at as string,
    };
  }

  /**
   * Consumes the intent and links its player to the account, in one transaction. The intent row lock makes
   * concurrent approvals of one token queue up: the first links, the others find the intent used.
   */
  async approve(
    tokenHash: Buffer,
    account: { creditsUserId: string; username: string | null },
    now: Instant,
  ): Promise<ApproveResult> {
    try {
      return await this.transaction(async (em): Promise<ApproveResult> => {
        const intent = (
          await LinkRepository.rows(
            em,
            `select id, player_id, game_id, consumed_at is not null as consumed, expires_at <= ${NOW} as expired
               from ledger.link_intents where token_hash = ? for update`,
            [at(now), tokenHash],
          )
        )[0];
        const state = intent ? intentState(intent) : await tombstoneState(em, tokenHash);
        if (!intent || !state || state.consumed || state.expired) {
          return { outcome: 'refused', refusal: approvalRefusal(state, undefined, false) ?? 'unknown' };
        }
        const player = (
          await LinkRepository.rows(
            em,
            `select id, linked_at is not null as linked from ledger.players where id = ? for no key update`,
            [intent.player_id],
          )
        )[0];
        const elsewhere = await LinkRepository.rows(
          em,
          `select 1 from ledger.players where game_id = ? and credits_user_id = ? and id <> ?`,
          [intent.game_id, account.creditsUserId, intent.player_id],
        );
        const refusal = approvalRefusal(state, player && { linked: player.linked as boolean }, elsewhere.length > 0);
        if (refusal) return { outcome: 'refused', refusal };
        if (!player) throw new Error('the player of a link intent is missing');
        await em.execute(
          `update ledger.players set credits_user_id = ?, username = ?, linked_at = ${NOW} where id = ?`,
          [account.creditsUserId, account.username, at(now), intent.player_id],
        );
        await em.execute(`update ledger.link_intents set consumed_at = ${NOW}, consumed_by = ? where id = ?`, [
          at(now),
          account.creditsUserId,
          intent.id,
        ]);
        return { outcome: 'linked', playerId: intent.player_id as string, gameId: intent.game_id as string };
      });
    } catch (error) {
      // Two approvals by one account of intents for two different players of one game: the unique index lets one
      // link, the other's transaction rolls back here.
      if (isAccountConflict(error)) return { outcome: 'refused', refusal: 'account_linked' };
      throw error;
    }
  }

  /** A player of the key's game (unknown players and players of other games alike: not_found). */
  async player(keyHash: Buffer, selector: PlayerSelector): Promise<PlayerResult> {
    const byId = 'playerId' in selector;
    const rows = await this.db.query(
      `select k.game_id, p.id as player_id, p.external_player_id, ${isoSql('p.linked_at', 'linked_at')}
         from ledger.keys k
         left join ledger.players p on p.game_id = k.game_id and ${byId ? 'p.id = ?::uuid' : 'p.external_player_id = ?'}
        where k.key_hash = ? and k.kind = 'secret' and k.revoked_at is null`,
      [byId ? selector.playerId : selector.externalPlayerId, keyHash],
    );
    const row = rows[0];
    if (!row) return { outcome: 'invalid_key' };
    if (row.player_id === null || row.player_id === undefined) return { outcome: 'not_found' };
    return {
      outcome: 'found',
      player: {
        playerId: row.player_id as string,
        externalPlayerId: row.external_player_id as string,
        linkedAt: (row.linked_at as string | null) ?? null,
      },
    };
  }
}

/**
 * A cleaned intent (the ledger's retention): used, or expired unused; undefined when the token was never issued.
 * Read after the intent's own lookup found nothing: a clean-up that committed in between is seen here.
 */
async function tombstoneState(em: EntityManager, tokenHash: Buffer): Promise<IntentState | undefined> {
  const rows = (await em.execute('select used from ledger.link_intent_tombstones where token_hash = ?', [
    tokenHash,
  ])) as Raw[];
  const row = rows[0];
  return row && { consumed: row.used as boolean, expired: !row.used };
}

function intentState(row: Raw): IntentState {
  return { consumed: row.consumed as boolean, expired: row.expired as boolean };
}
