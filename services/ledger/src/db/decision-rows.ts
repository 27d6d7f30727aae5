// A stored decision (a row of ledger.events) as the ledger reads it: the one mapping of its columns to DeveloperEvent's
// fields, for every read that shows decisions: the console's lists, records pages, search and export
// (console/read-repository.ts, console/search-repository.ts) and the webhooks' message bodies (webhooks/repository.ts).
import type { DeveloperEvent } from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import { isoSql } from '#runtime/db/sql.ts';
import { credits, type Field, optionalText, rowReader, text } from './rows.ts';

/** A decision as DeveloperEvent has it (the ledger hands it on as that message): the generated type's fields. */
export type DecisionRow = Omit<DeveloperEvent, '$typeName' | '$unknown'>;

/** One field of a decision: its column (the name it is selected as), how it is read, and its SQL if not the column. */
interface DecisionColumn<V> {
  column: string;
  read: (name: string) => Field<V>;
  select?: (table: string, name: string) => string;
}

/** A timestamptz column as the API's text (isoSql). */
const iso = (column: string) => (table: string, name: string) => isoSql(`${table}.${column}`, name);

/** Every field of a decision, in DeveloperEvent's order: the one place that says which column each is. */
const DECISION_COLUMNS: { [K in keyof DecisionRow]-?: DecisionColumn<DecisionRow[K]> } = {
  id: { column: 'id', read: text },
  eventId: { column: 'event_id', read: text },
  gameId: { column: 'game_id', read: text },
  organizationId: { column: 'organization_id', read: text },
  playerId: { column: 'player_id', read: text },
  eventType: { column: 'event_type', read: text },
  occurredAt: { column: 'occurred_at', read: text, select: iso('occurred_at') },
  status: { column: 'status', read: text },
  reason: { column: 'reason', read: optionalText },
  rewardCredits: { column: 'reward_credits', read: credits },
  createdAt: { column: 'created_at', read: text, select: iso('created_at') },
  gameTime: {
    column: 'game_time',
    read: text,
    select: (t, name) =>
      isoSql(`(${t}.created_at + coalesce(${t}.clock_offset_seconds, 0) * interval '1 second')`, name),
  },
};

/**
 * The select list of a decision from the table alias `table` (e.g. `p` in `from ledger.events p`), each column named
 * `prefix` + its name (a prefix tells a joined decision's columns from the row's own).
 */
export function decisionColumns(table: string, prefix = ''): string {
  return Object.values<DecisionColumn<unknown>>(DECISION_COLUMNS)
    .map(({ column, select }) => select?.(table, prefix + column) ?? `${table}.${column} as ${prefix}${column}`)
    .join(', ');
}

/** Reads a decision selected with decisionColumns(table, prefix). */
export function decisionRow(prefix = ''): Field<DecisionRow> {
  const fields = Object.entries<DecisionColumn<unknown>>(DECISION_COLUMNS).map(([field, { column, read }]) => [
    field,
    read(prefix + column),
  ]);
  return rowReader<DecisionRow>(Object.fromEntries(fields));
}
