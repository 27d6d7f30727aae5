// The single-event decision, ledger.record_event (../sql/record_event.sql): one event per call and transaction. It is
// the benchmarks' pgbench baseline (the same SQL work as one decision: fixtures.ts, bench.ts) and the reference of the
// differential test of batched decisions (test/integration/ingest/batching.test.ts). No program calls it, so the
// migrations do not install it: the bench or test that needs it runs installSingleEventFunction after migrating.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import {
  parseRecordTuple,
  type RecordEventParams,
  type RecordResult,
} from '../../services/ledger/src/events/repository.ts';

const FUNCTION_FILE = new URL('../sql/record_event.sql', import.meta.url);

/**
 * The decision statement: the decision comes back as one JSON array in a text column (one field for the driver to
 * describe and parse instead of eleven), as the ledger's batched statement answers.
 */
export const RECORD_EVENT_SQL = `select json_build_array(o_outcome, o_id, o_game_id, o_organization_id, o_player_id,
    o_event_type, o_occurred_at_ms::text, o_status, o_reason, o_reward_credits::text, o_created_at_ms::text)::text as d
  from ledger.record_event($1, $2, $3, $4, $5, $6, $7, $8)`;

/** Creates (or replaces) ledger.record_event in the migrated database at `url`. */
export async function installSingleEventFunction(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // No parameters: the simple query protocol, which runs every statement of the file.
    await client.query(readFileSync(FUNCTION_FILE, 'utf8'));
  } finally {
    await client.end();
  }
}

/** Decides one event with ledger.record_event (installed first: installSingleEventFunction). */
export async function recordEvent(pool: pg.Pool, params: RecordEventParams): Promise<RecordResult> {
  const { rows } = await pool.query<{ d: string }>(RECORD_EVENT_SQL, [
    Buffer.from(params.keyHash),
    params.eventId,
    params.playerId,
    params.eventType,
    params.occurredAtMs.toString(),
    Buffer.from(params.payloadHash),
    params.receivedAt,
    params.rateLimitPerMinute,
  ]);
  const row = rows[0];
  if (!row) throw new Error('ledger.record_event returned no row');
  return parseRecordTuple(row.d);
}

/**
 * RECORD_EVENT_SQL with its eight parameters replaced by SQL expressions, on one line, for a pgbench script. The
 * arguments, in order: key hash, event id, player id, event type, occurredAt in epoch milliseconds, payload hash,
 * receipt time (null: now()), rate limit per minute.
 */
export function recordEventStatement(args: string[]): string {
  if (args.length !== 8) throw new Error(`record_event takes 8 arguments, got ${args.length}`);
  return `${RECORD_EVENT_SQL.replace(/\$(\d)/g, (_, i: string) => args[Number(i) - 1]!).replace(/\s+/g, ' ')};`;
}
