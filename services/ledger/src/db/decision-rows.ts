// A stored decision (a row of ledger.events) as the ledger reads it: the one mapping of its columns to DeveloperEvent's
// fields, for every read that shows decisions: the console's lists, records pages, search and export
// (console/read-repository.ts, console/search-repository.ts) and the webhooks' message bodies (webhooks/repository.ts).
import type { DeveloperEvent } from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import { isoSql } from '#runtime/db/sql.ts';
import { credits, type Field, optionalText, rowReader, text } from './rows.ts';

/** A decision as DeveloperEvent has it (the ledger hands it on as that message): the generated type's fields. */
export type DecisionRow = Omit<DeveloperEvent, '$typeName' | '$unknown'>;

/**
 * The select list of a decision from the table alias `table` (e.g. `p` in `from ledger.events p`), each column named
 * `prefix` + its name (a prefix tells a joined decision's columns from the row's own).
 */
export function decisionColumns(table: string, prefix = ''): string {
  const t = table;
  const as = (column: string) => `${t}.${column} as ${prefix}${column}`;
  return [
    as('id'),
    as('event_id'),
    as('game_id'),
    as('organization_id'),
    as('player_id'),
    as('event_type'),
    isoSql(`${t}.occurred_at`, `${prefix}occurred_at`),
    as('status'),
    as('reason'),
    as('reward_credits'),
    isoSql(`${t}.created_at`, `${prefix}created_at`),
    isoSql(`(${t}.created_at + coalesce(${t}.clock_offset_seconds, 0) * interval '1 second')`, `${prefix}game_time`),
  ].join(', ');
}

/** Reads a decision selected with decisionColumns(table, prefix). */
export function decisionRow(prefix = ''): Field<DecisionRow> {
  return rowReader<DecisionRow>({
    id: text(`${prefix}id`),
    eventId: text(`${prefix}event_id`),
    gameId: text(`${prefix}game_id`),
    organizationId: text(`${prefix}organization_id`),
    playerId: text(`${prefix}player_id`),
    eventType: text(`${prefix}event_type`),
    occurredAt: text(`${prefix}occurred_at`),
    status: text(`${prefix}status`),
    reason: optionalText(`${prefix}reason`),
    rewardCredits: credits(`${prefix}reward_credits`),
    createdAt: text(`${prefix}created_at`),
    gameTime: text(`${prefix}game_time`),
  });
}
