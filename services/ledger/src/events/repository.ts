// The ledger's event data: one call of ledger.record_event per event (migration 0003), the key check of the edges'
// error paths, and the public configuration read. Raw `pg` on the ORM's own pool: the hot path is one statement
// and gains nothing from a unit of work.
import type { PostgreSqlConnection } from '@mikro-orm/postgresql';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { Database } from '../../../runtime/src/db/database.ts';

export type RecordOutcome = 'decided' | 'replayed' | 'invalid_key' | 'invalid_player' | 'event_conflict';

export interface RecordEventParams {
  keyHash: Uint8Array;
  eventId: string;
  playerId: string;
  eventType: string;
  occurredAtMs: bigint;
  payloadHash: Uint8Array;
  /** Null: the database's now(). */
  receivedAt: Date | null;
  rateLimitPerMinute: number;
}

export interface StoredDecision {
  id: string;
  gameId: string;
  organizationId: string;
  playerId: string;
  eventType: string;
  occurredAtMs: number;
  status: 'accepted' | 'rejected';
  reason: string | null;
  rewardCredits: bigint;
  createdAtMs: number;
}

export type RecordResult =
  | { outcome: 'decided' | 'replayed'; decision: StoredDecision }
  | { outcome: 'invalid_key' | 'invalid_player' | 'event_conflict' };

export interface PublicConfigRow {
  gameId: string;
  name: string;
  slug: string;
  platform: string;
  status: string;
  maxPayoutCredits: bigint;
  dailyPlayerCapCredits: bigint;
  rules: Array<{ eventType: string; rewardCredits: bigint }>;
}

const RECORD_EVENT_SQL = `select o_outcome, o_id, o_game_id, o_organization_id, o_player_id, o_event_type,
    o_occurred_at_ms::text, o_status, o_reason, o_reward_credits::text, o_created_at_ms::text
  from ledger.record_event($1, $2, $3, $4, $5, $6, $7, $8)`;

const AUTHENTICATE_KEY_SQL = `select kind from ledger.keys where key_hash = $1 and revoked_at is null`;

const PUBLIC_CONFIG_SQL = `select g.id, g.name, g.slug, g.platform, g.status, g.max_payout_credits::text,
    g.daily_player_cap_credits::text,
    coalesce((select json_agg(json_build_object('eventType', r.event_type, 'rewardCredits', r.reward_credits::text)
                              order by r.event_type)
              from ledger.rules r where r.game_id = g.id and r.active), '[]'::json) as rules
  from ledger.keys k join ledger.games g on g.id = k.game_id
  where k.key_hash = $1 and k.kind = 'public' and k.revoked_at is null`;

interface RecordRow {
  o_outcome: RecordOutcome;
  o_id: string | null;
  o_game_id: string | null;
  o_organization_id: string | null;
  o_player_id: string | null;
  o_event_type: string | null;
  o_occurred_at_ms: string | null;
  o_status: 'accepted' | 'rejected' | null;
  o_reason: string | null;
  o_reward_credits: string | null;
  o_created_at_ms: string | null;
}

/** SQLSTATE of a unique violation: a concurrent copy got its decision in first (see record_event). */
const UNIQUE_VIOLATION = '23505';

/**
 * The database cannot serve now: no connection could be made, the connection broke, or the server refused the work
 * for a transient reason (SQLSTATE classes 08 connection, 40 rollback (serialization, deadlock), 53 insufficient
 * resources, 57 operator intervention, 58 system error). Nothing was committed; the caller may retry.
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

const TRANSIENT_SQLSTATE = /^(08|40|53|57|58)/;

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export class EventRepository {
  private readonly database: Database;
  private pool: Pool | undefined;

  constructor(database: Database) {
    this.database = database;
  }

  private async nativePool(): Promise<Pool> {
    this.pool ??= await (this.database.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    return this.pool;
  }

  /** One statement on a pooled connection; transient failures become DatabaseUnavailableError. */
  private async query<R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
    const pool = await this.nativePool();
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw new DatabaseUnavailableError(error);
    }
    try {
      const rows = (await client.query<R>(text, values)).rows;
      client.release();
      return rows;
    } catch (error) {
      const state = sqlState(error);
      // A connection that failed below SQL (no SQLSTATE) or was terminated is not given back to the pool.
      client.release(state === undefined || state.startsWith('08') || state.startsWith('57') ? true : undefined);
      if (state === undefined || TRANSIENT_SQLSTATE.test(state)) throw new DatabaseUnavailableError(error);
      throw error;
    }
  }

  async recordEvent(params: RecordEventParams): Promise<RecordResult> {
    const values = [
      Buffer.from(params.keyHash),
      params.eventId,
      params.playerId,
      params.eventType,
      params.occurredAtMs.toString(),
      Buffer.from(params.payloadHash),
      params.receivedAt,
      params.rateLimitPerMinute,
    ];
    let row: RecordRow | undefined;
    try {
      row = (await this.query<RecordRow>(RECORD_EVENT_SQL, values))[0];
    } catch (error) {
      // The function serializes fresh decisions per game and re-reads under the lock, so this should not happen;
      // if it does, the whole transaction was rolled back and the stored decision answers as a replay.
      if (sqlState(error) !== UNIQUE_VIOLATION) throw error;
      row = (await this.query<RecordRow>(RECORD_EVENT_SQL, values))[0];
    }
    if (!row) throw new Error('ledger.record_event returned no row');
    if (row.o_outcome !== 'decided' && row.o_outcome !== 'replayed') return { outcome: row.o_outcome };
    return {
      outcome: row.o_outcome,
      decision: {
        id: row.o_id as string,
        gameId: row.o_game_id as string,
        organizationId: row.o_organization_id as string,
        playerId: row.o_player_id as string,
        eventType: row.o_event_type as string,
        occurredAtMs: Number(row.o_occurred_at_ms),
        status: row.o_status as 'accepted' | 'rejected',
        reason: row.o_reason,
        rewardCredits: BigInt(row.o_reward_credits as string),
        createdAtMs: Number(row.o_created_at_ms),
      },
    };
  }

  /** The kind of a known, unrevoked key; undefined otherwise. */
  async keyKind(keyHash: Uint8Array): Promise<'public' | 'secret' | undefined> {
    const rows = await this.query<{ kind: 'public' | 'secret' }>(AUTHENTICATE_KEY_SQL, [Buffer.from(keyHash)]);
    return rows[0]?.kind;
  }

  /** The game of a known, unrevoked public key, with its active rules; undefined otherwise. */
  async publicConfig(keyHash: Uint8Array): Promise<PublicConfigRow | undefined> {
    const rows = await this.query<{
      id: string;
      name: string;
      slug: string;
      platform: string;
      status: string;
      max_payout_credits: string;
      daily_player_cap_credits: string;
      rules: Array<{ eventType: string; rewardCredits: string }>;
    }>(PUBLIC_CONFIG_SQL, [Buffer.from(keyHash)]);
    const row = rows[0];
    if (!row) return undefined;
    return {
      gameId: row.id,
      name: row.name,
      slug: row.slug,
      platform: row.platform,
      status: row.status,
      maxPayoutCredits: BigInt(row.max_payout_credits),
      dailyPlayerCapCredits: BigInt(row.daily_player_cap_credits),
      rules: row.rules.map((r) => ({ eventType: r.eventType, rewardCredits: BigInt(r.rewardCredits) })),
    };
  }
}
