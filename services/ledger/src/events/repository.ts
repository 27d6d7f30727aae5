// The ledger's event data: batches of one key's events in one call of ledger.record_events (../sql/record_events.sql),
// the stored decision read after a lost connection, the key check of the edges' error paths, and the public configuration read. Raw `pg` on the ORM's own pool: the hot path is one statement
// and gains nothing from a unit of work.
import type { PostgreSqlConnection } from '@mikro-orm/postgresql';
import type { Pool, PoolClient, QueryConfig, QueryResultRow } from 'pg';
import { type Outcome, Rejected } from '#runtime/batching/keyed-batcher.ts';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import type { Database } from '#runtime/db/database.ts';
import type { FailoverClient } from '#runtime/db/failover.ts';
import { classifyDatabaseFailure, sqlStateOf } from '#runtime/db/failures.ts';
import { DeadlinePassedError, remainingMs } from '#runtime/transport/deadline.ts';
import { creditsValue, numericValue, RowShapeError, textValue } from '../db/rows.ts';

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
  /**
   * The event's metadata, RFC 8785 canonical JSON text (an object of at most 4,096 UTF-8 bytes), stored with a fresh
   * decision; undefined when the event had none. Never part of a decision (the payload hash covers it). Stored by
   * ledger.record_events only (the benchmarks' single-event baseline, load/sql/record_event.sql, stores none).
   */
  metadataJson?: string | undefined;
  /**
   * The deadline of the event's request (performance.now() time, transport/deadline.ts), if it has one: past it the
   * event is not decided (its batch queue drops it), and its call's lock_timeout follows it. Never sent to SQL.
   */
  deadline?: number | undefined;
  /**
   * The id this event's fresh decision takes (a random UUID the ledger made for the request): after a lost answer,
   * a stored decision with this id is the request's own (its answer is unknown to the client: 503), one with another
   * id was made by another request (a replay). Undefined: the database makes one (and that tells nothing).
   */
  decisionId?: string | undefined;
  /**
   * Whether `decisionId` was proposed by the caller (the edge), so that a replay with this id is the caller's own
   * decision, made by an earlier copy of the same request (events/endpoints.ts).
   */
  proposedByCaller?: boolean | undefined;
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
  /** A fresh decision's game clock offset in seconds (CONTRACT section 11.2), when not 0: gameTime = createdAt + it. */
  clockOffsetSeconds?: number;
}

/**
 * A fresh decision's quota figures after it (CONTRACT section 11), from ledger.record_events' own transaction.
 * `rateLimit` is the per-minute limit the decision used.
 */
export interface DecisionQuota {
  rateLimit: number;
  rateRemaining: number;
  rateResetSeconds: number;
  dailyRemainingCredits: bigint;
  budgetRemainingCredits: bigint;
}

export type RecordResult =
  | { outcome: 'decided'; decision: StoredDecision; quota?: DecisionQuota | undefined }
  | { outcome: 'replayed'; decision: StoredDecision }
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

/**
 * The batched statement (../sql/record_events.sql): the events of one key, or of several keys (so games), as parallel
 * arrays (a key hash per event), decided in array order in one transaction. The answer is one JSON array (one text
 * column: one field for the driver to describe and parse), per event its outcome and decision (RecordTuple) followed
 * by the quota figures of a fresh decision, in the events' order.
 */
export const RECORD_EVENTS_SQL = `select json_agg(json_build_array(o_outcome, o_id, o_game_id,
    o_organization_id, o_player_id, o_event_type, o_occurred_at_ms::text, o_status, o_reason, o_reward_credits::text,
    o_created_at_ms::text, o_rate_remaining, o_rate_reset_s, o_daily_remaining::text, o_budget_remaining::text,
    o_clock_offset_s::text)
    order by o_index)::text as d
  from ledger.record_events($1::bytea[], $2::uuid[], $3::uuid[], $4::text[], $5::bigint[], $6, $7::timestamptz[], $8,
    $9::text[], $10::uuid[])`;

/**
 * RECORD_EVENTS_SQL as the ledger sends it: the transaction's lock_timeout set first ($11, in ms; null keeps the
 * server's), by an argument evaluated before the function runs, so that the wait for a game lock ends at the call's
 * deadline without a statement of its own (one round trip, as before). statement_timeout cannot follow a deadline
 * this way (it is armed when the statement starts): the call's only wait is the game lock.
 */
export const RECORD_EVENTS_WITHIN_SQL = RECORD_EVENTS_SQL.replace(
  '$8,',
  "(select $8::integer where set_config('lock_timeout', coalesce($11::text, current_setting('lock_timeout')), true) is not null),",
);
if (RECORD_EVENTS_WITHIN_SQL === RECORD_EVENTS_SQL) throw new Error('RECORD_EVENTS_SQL has no $8 argument');

// A call of recordEventGroups takes at most EVENT_LIMITS.keysPerCallMax keys and EVENT_LIMITS.eventsPerCallMax events
// (the SQL function refuses more: services/runtime/src/contracts/event-limits.ts, checked by npm run check).

const AUTHENTICATE_KEY_SQL = `select kind from ledger.keys where key_hash = $1 and revoked_at is null`;

const PUBLIC_CONFIG_SQL = `select g.id, g.name, g.slug, g.platform, g.status, g.max_payout_credits::text,
    g.daily_player_cap_credits::text,
    coalesce((select json_agg(json_build_object('eventType', r.event_type, 'rewardCredits', r.reward_credits::text)
                              order by r.event_type)
              from ledger.rules r where r.game_id = g.id and r.active), '[]'::json) as rules
  from ledger.keys k join ledger.games g on g.id = k.game_id
  where k.key_hash = $1 and k.kind = 'public' and k.revoked_at is null`;

/** A decision as a JSON array: outcome, then the decision's fields (null unless decided or replayed). */
type RecordTuple = [
  outcome: RecordOutcome,
  id: string | null,
  gameId: string | null,
  organizationId: string | null,
  playerId: string | null,
  eventType: string | null,
  occurredAtMs: string | null,
  status: 'accepted' | 'rejected' | null,
  reason: string | null,
  rewardCredits: string | null,
  createdAtMs: string | null,
  // RECORD_EVENTS_SQL only: the quota figures of a fresh decision.
  rateRemaining?: number | null,
  rateResetSeconds?: number | null,
  dailyRemainingCredits?: string | null,
  budgetRemainingCredits?: string | null,
  clockOffsetSeconds?: string | null,
];

/** SQLSTATE of a unique violation: a concurrent copy got its decision in first. */
const UNIQUE_VIOLATION = '23505';

/**
 * The database cannot serve now (db/failures.ts): no connection could be made, the server refused the work, or the
 * connection broke. `outcome` says what is known of a write: `not_stored` when nothing reached the database or the
 * server rolled the transaction back and said so; `unknown` when the connection broke while the statement was in
 * flight (the commit may have happened just before the break). Deadlocks and serialization failures were retried
 * first.
 */
export class DatabaseUnavailableError extends Error {
  readonly outcome: 'not_stored' | 'unknown';

  constructor(cause: unknown, outcome: 'not_stored' | 'unknown') {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'DatabaseUnavailableError';
    this.outcome = outcome;
  }
}

/** The stored decision of (the key's game, eventId), read on its own connection; see storedDecision. */
const STORED_DECISION_SQL = `select json_build_array(
    case when e.payload_hash = $3 then 'replayed' else 'event_conflict' end, e.id, e.game_id, e.organization_id,
    e.player_id, e.event_type, floor(extract(epoch from e.occurred_at) * 1000)::bigint::text, e.status, e.reason,
    e.reward_credits::text, floor(extract(epoch from e.created_at) * 1000)::bigint::text)::text as d
  from ledger.keys k join ledger.events e on e.game_id = k.game_id and e.event_id = $2
  where k.key_hash = $1 and k.kind = 'secret'`;

/** A decision's JSON array (STORED_DECISION_SQL's, or the single-event baseline's: load/lib/single-event.ts). */
export function parseRecordTuple(text: string): RecordResult {
  return toRecordResult(JSON.parse(text) as RecordTuple, undefined);
}

export class EventRepository {
  private readonly database: Database;
  private pool: Pool | undefined;
  /**
   * A named prepared statement for the hot statement (prepared once per pooled connection: no parse and plan per
   * call) only when the deployment says there is no transaction pooler in between (Database.namedStatements,
   * DATABASE_NAMED_STATEMENTS). By default each call is an unnamed statement, parsed and planned again (about 0.15
   * to 0.3 ms of PostgreSQL CPU per call of a few events, docs/deploy.md "PostgreSQL: pooler and failover").
   */
  private readonly recordBatchStatementName: string | undefined;

  constructor(database: Database) {
    this.database = database;
    this.recordBatchStatementName = database.namedStatements ? 'ledger_record_events_v5' : undefined;
  }

  /** Connections of the pool: how many batches can be in the database at once. */
  get poolMax(): number {
    return (this.database.orm.config.get('pool') as { max?: number } | undefined)?.max ?? 1;
  }

  private async nativePool(): Promise<Pool> {
    this.pool ??= await (this.database.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    return this.pool;
  }

  /**
   * One statement on a pooled connection, run again on a deadlock or serialization failure; database failures
   * (db/failures.ts) become DatabaseUnavailableError. `name`: a named prepared statement (see recordBatchStatementName);
   * without it the statement is unnamed, as a transaction pooler needs (a named statement lives in one server
   * session, which a pooler shares out per transaction: "prepared statement ... does not exist" / "already exists").
   */
  private query<R extends QueryResultRow>(text: string, values: unknown[], name?: string): Promise<R[]> {
    return this.database.retrying(() => this.queryOnce<R>(() => ({ text, values, name })));
  }

  /**
   * queryOnce's statement is made by `statement` once a connection is acquired (the wait for one may have been long:
   * what it sends may depend on the time). `statement` may throw: the connection goes back unused.
   */
  private async queryOnce<R extends QueryResultRow>(statement: () => PooledStatement): Promise<R[]> {
    const pool = await this.nativePool();
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      // Nothing was sent.
      throw new DatabaseUnavailableError(error, 'not_stored');
    }
    let config: PooledStatement;
    try {
      config = statement();
    } catch (error) {
      client.release();
      throw error;
    }
    try {
      const { text, values, name, timeoutMs } = config;
      const query = {
        ...(name ? { name } : {}),
        text,
        values,
        ...(timeoutMs === undefined ? {} : { query_timeout: timeoutMs }),
      } as QueryConfig;
      const rows = (await client.query<R>(query)).rows;
      client.release();
      return rows;
    } catch (error) {
      const failure = classifyDatabaseFailure(error);
      // The client stopped waiting (timeoutMs): the statement may still sit in the socket's send queue, to be run
      // whenever the path heals; the connection is reset (FailoverClient.abandon), not closed.
      if (error instanceof Error && error.message === QUERY_TIMEOUT_MESSAGE && 'abandon' in client) {
        (client as unknown as FailoverClient).abandon(error);
      }
      // A connection that broke (or whose statement the client stopped waiting for) is not given back to the pool.
      client.release(failure === 'connection_lost' || sqlStateOf(error) === undefined ? true : undefined);
      if (failure === 'contention') throw error;
      if (failure) throw new DatabaseUnavailableError(error, failure === 'connection_lost' ? 'unknown' : 'not_stored');
      throw error;
    }
  }

  /**
   * The decision stored for (the key's game, eventId), read on a new connection of its own, not the pool's (after a
   * broken connection, the pool's idle ones may be broken too): `replayed` with the decision, `event_conflict` when
   * the stored one has another payload, undefined when none is stored (or the key is unknown). The key's revocation
   * is not checked: this answers a request whose key was valid when its decision was made.
   */
  async storedDecision(
    keyHash: Uint8Array,
    eventId: string,
    payloadHash: Uint8Array,
  ): Promise<RecordResult | undefined> {
    // The pool's settings and server (after a failover, the new primary: the lost connection made it search).
    const client = await this.database.newClient();
    try {
      await client.connect();
      const rows = (
        await client.query<{ d: string }>(STORED_DECISION_SQL, [
          Buffer.from(keyHash),
          eventId,
          Buffer.from(payloadHash),
        ])
      ).rows;
      return rows[0] ? parseRecordTuple(rows[0].d) : undefined;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * Decides the events of ONE key (so of one game) in one call of ledger.record_events, one transaction, in array
   * order, each event decided as if alone, in turn. Throws on any failure (nothing was committed
   * then): DatabaseUnavailableError for transient ones, the driver's error otherwise.
   */
  async recordEvents(batch: RecordEventParams[]): Promise<RecordResult[]> {
    const [results = []] = await this.recordEventGroups([batch]);
    return results.map((result) => {
      if (result instanceof Rejected) throw result.error;
      return result;
    });
  }

  /**
   * Decides the batches of several keys (each as recordEvents would, in the order given) in ONE call of
   * ledger.record_events, one transaction: they share its statements, the round trip and the commit, and the call
   * locks their games in one order. Throws on any failure (nothing was committed then). Once the call has its
   * connection, an event whose request's deadline has passed is left out of it (Rejected with DeadlinePassedError:
   * nothing stored), and DeadlinePassedError is thrown when that is every event.
   */
  async recordEventGroups(batches: RecordEventParams[][]): Promise<Array<Array<Outcome<RecordResult>>>> {
    if (batches.length === 0 || batches.length > EVENT_LIMITS.keysPerCallMax) {
      throw new Error(`a group of ${batches.length} batches`);
    }
    const events = batches.flat();
    let live = events;
    const statement = (): PooledStatement => {
      live = events.filter((event) => event.deadline === undefined || remainingMs(event.deadline) > 0);
      if (live.length < events.length) {
        this.database.countLateWork(new DeadlinePassedError('its transaction started'), events.length - live.length);
      }
      // Throws DeadlinePassedError when no event is left. The call waits for a game lock until the latest deadline
      // of its events (each was taken before its own), and for its answer until LATE_ANSWER_GRACE_MS after that.
      const latest = latestDeadline(live);
      const { lockMs } = this.database.timeouts(latest);
      return {
        text: RECORD_EVENTS_WITHIN_SQL,
        values: [...recordEventsValues(live), lockMs ?? null],
        name: this.recordBatchStatementName,
        timeoutMs: latest === undefined ? undefined : Math.ceil(remainingMs(latest)) + LATE_ANSWER_GRACE_MS,
      };
    };
    const row = (await this.database.retrying(() => this.queryOnce<{ d: string }>(statement)))[0];
    if (!row) throw new Error('ledger.record_events returned no row');
    const decided = parseRecordEvents(row.d, live);
    let next = 0;
    // Made only when an event was left out (an Error captures a stack trace: 0.9 % of the ledger's busy time in
    // bench:edge's profile when it was made for every call).
    let late: DeadlinePassedError | undefined;
    return batches.map((batch) =>
      batch.map((event) => {
        if (live[next] === event) return decided[next++] as RecordResult;
        late ??= new DeadlinePassedError('its transaction started');
        return new Rejected(late);
      }),
    );
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

/**
 * How long after its latest event's deadline a call of ledger.record_events is still waited for. Its callers have
 * given up by then ("outcome unknown"); a call that has not answered is on a connection that lost its server (a cut
 * path: TCP would retransmit with back-off for seconds after the heal), which is then closed instead of holding one
 * of the pool's connections, and the batcher's slot, until TCP gives up.
 */
export const LATE_ANSWER_GRACE_MS = 1000;

/** node-postgres's error when a query_timeout passed. */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** A statement for queryOnce: unnamed unless `name`; `timeoutMs`: the client stops waiting for its answer then. */
interface PooledStatement {
  text: string;
  values: unknown[];
  name?: string | undefined;
  timeoutMs?: number | undefined;
}

/** The latest deadline of a call's events; undefined when one of them has none. */
function latestDeadline(events: RecordEventParams[]): number | undefined {
  let latest = Number.NEGATIVE_INFINITY;
  for (const event of events) {
    if (event.deadline === undefined) return undefined;
    latest = Math.max(latest, event.deadline);
  }
  return latest;
}

/** The parameters of RECORD_EVENTS_SQL for a call's events (parallel arrays, a key hash per event). */
export function recordEventsValues(events: RecordEventParams[]): unknown[] {
  const first = events[0];
  if (!first || events.length > EVENT_LIMITS.eventsPerCallMax) throw new Error(`a call of ${events.length} events`);
  const keyHashes: Buffer[] = [];
  const hashes = Buffer.allocUnsafe(32 * events.length);
  const eventIds: string[] = [];
  const playerIds: string[] = [];
  const eventTypes: string[] = [];
  const occurredAtMs: string[] = [];
  const receivedAt: Array<string | null> = [];
  const metadata: Array<string | null> = [];
  const decisionIds: Array<string | null> = [];
  events.forEach((p, i) => {
    if (p.payloadHash.length !== 32) throw new Error('a payload hash has 32 bytes');
    if (p.rateLimitPerMinute !== first.rateLimitPerMinute) throw new Error('a call has one rate limit');
    keyHashes.push(Buffer.from(p.keyHash.buffer, p.keyHash.byteOffset, p.keyHash.byteLength));
    hashes.set(p.payloadHash, 32 * i);
    eventIds.push(p.eventId);
    playerIds.push(p.playerId);
    eventTypes.push(p.eventType);
    occurredAtMs.push(p.occurredAtMs.toString());
    receivedAt.push(p.receivedAt ? p.receivedAt.toISOString() : null);
    metadata.push(p.metadataJson ?? null);
    decisionIds.push(p.decisionId ?? null);
  });
  return [
    keyHashes,
    eventIds,
    playerIds,
    eventTypes,
    occurredAtMs,
    hashes,
    receivedAt,
    first.rateLimitPerMinute,
    metadata,
    decisionIds,
  ];
}

/** The answer of one record_events call (a JSON array of tuples, in the batch's order). */
function parseRecordEvents(text: string | null, batch: RecordEventParams[]): RecordResult[] {
  if (text === null) throw new Error('ledger.record_events answered no events');
  const tuples = JSON.parse(text) as RecordTuple[];
  if (tuples.length !== batch.length) {
    throw new Error(`ledger.record_events answered ${tuples.length} of ${batch.length} events`);
  }
  const rateLimit = (batch[0] as RecordEventParams).rateLimitPerMinute;
  return tuples.map((tuple) => toRecordResult(tuple, rateLimit));
}

/** rateLimit: the limit of a RECORD_EVENTS_SQL call (whose fresh decisions carry quota figures). */
function toRecordResult(tuple: RecordTuple, rateLimit: number | undefined): RecordResult {
  const [
    outcome,
    id,
    gameId,
    organizationId,
    playerId,
    eventType,
    occurredAtMs,
    status,
    reason,
    reward,
    createdAtMs,
    rateRemaining,
    rateResetSeconds,
    dailyRemaining,
    budgetRemaining,
    clockOffset,
  ] = tuple;
  if (outcome !== 'decided' && outcome !== 'replayed') return { outcome };
  const quota =
    outcome === 'decided' && rateLimit !== undefined && rateRemaining != null && rateResetSeconds != null
      ? {
          rateLimit,
          rateRemaining,
          rateResetSeconds,
          dailyRemainingCredits: creditsValue(dailyRemaining, 'daily_remaining'),
          budgetRemainingCredits: creditsValue(budgetRemaining, 'budget_remaining'),
        }
      : undefined;
  return {
    outcome,
    ...(quota ? { quota } : {}),
    decision: {
      id: textValue(id, 'id'),
      gameId: textValue(gameId, 'game_id'),
      organizationId: textValue(organizationId, 'organization_id'),
      playerId: textValue(playerId, 'player_id'),
      eventType: textValue(eventType, 'event_type'),
      occurredAtMs: numericValue(occurredAtMs, 'occurred_at'),
      status: decisionStatus(status),
      reason,
      rewardCredits: creditsValue(reward, 'reward_credits'),
      createdAtMs: numericValue(createdAtMs, 'created_at'),
      ...(clockOffset == null ? {} : { clockOffsetSeconds: numericValue(clockOffset, 'clock_offset_s') }),
    },
  };
}

function decisionStatus(value: unknown): 'accepted' | 'rejected' {
  if (value === 'accepted' || value === 'rejected') return value;
  throw new RowShapeError('status', "'accepted' or 'rejected'", value);
}

/** True for a unique violation (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return sqlStateOf(error) === UNIQUE_VIOLATION;
}
