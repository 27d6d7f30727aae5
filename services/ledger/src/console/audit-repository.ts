// The audit trail's reads (CONTRACT section 11.2): one organization's entries newest first by (created_at, id), a
// keyset page over the index audit_log_by_organization_and_id (0019). Entries written before 0018 read with
// targetKind, e-mail and request id absent and changes {}.
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoMicrosSql, isoSql } from '#runtime/db/sql.ts';
import { optionalText, queryRows, rowReader, text } from '../db/rows.ts';
import type { CursorPosition } from '../domain/records-cursor.ts';
import type { Statement } from './read-repository.ts';

export interface AuditEntryRow {
  id: string;
  organizationId: string;
  projectId: string | undefined;
  gameId: string | undefined;
  actor: { identityUserId: string; email: string | undefined };
  action: string;
  targetKind: string | undefined;
  targetId: string;
  /** The JSON text of the changes object. */
  changesJson: string;
  requestId: string | undefined;
  createdAt: string;
}

export interface AuditQuery {
  organizationId: string;
  projectId?: string | undefined;
  gameId?: string | undefined;
  actor?: string | undefined;
  action?: string | undefined;
  /** Epoch microseconds (decimal text): from inclusive, to exclusive. */
  fromMicros?: string | undefined;
  toMicros?: string | undefined;
  after?: CursorPosition | undefined;
  take: number;
}

const entryFields = {
  id: text('id'),
  organizationId: text('organization_id'),
  projectId: optionalText('project_id'),
  gameId: optionalText('game_id'),
  action: text('action'),
  targetKind: optionalText('target_kind'),
  targetId: text('target_id'),
  changesJson: text('changes'),
  requestId: optionalText('request_id'),
  createdAt: text('created_at'),
};
const readEntry = rowReader({ ...entryFields, actor: text('actor'), actorEmail: optionalText('actor_email') });
const readPosition = rowReader<CursorPosition>({ createdAt: text('position_at'), id: text('id') });

/** The page's statement (its plan is tested over a million entries: audit-reads.test.ts). */
export function auditEntriesStatement(q: AuditQuery): Statement {
  const where = ['a.organization_id = ?'];
  const params: unknown[] = [q.organizationId];
  const filters: [string, string | undefined][] = [
    ['a.project_id = ?::uuid', q.projectId],
    ['a.game_id = ?::uuid', q.gameId],
    ['a.actor = ?', q.actor],
    ['a.action = ?', q.action],
    [`a.created_at >= 'epoch'::timestamptz + ?::bigint * interval '1 microsecond'`, q.fromMicros],
    [`a.created_at < 'epoch'::timestamptz + ?::bigint * interval '1 microsecond'`, q.toMicros],
  ];
  for (const [condition, value] of filters) {
    if (value === undefined) continue;
    where.push(condition);
    params.push(value);
  }
  if (q.after !== undefined) {
    where.push('(a.created_at, a.id) < (?::timestamptz, ?::bigint)');
    params.push(q.after.createdAt, q.after.id);
  }
  return {
    sql: `select a.id::text as id, a.organization_id, a.project_id, a.game_id, a.actor, a.actor_email, a.action,
            a.target_kind, a.target_id, coalesce(a.changes, '{}'::jsonb)::text as changes, a.request_id,
            ${isoSql('a.created_at', 'created_at')}, ${isoMicrosSql('a.created_at', 'position_at')}
       from ledger.audit_log a
      where ${where.join(' and ')}
      order by a.created_at desc, a.id desc
      limit ?`,
    params: [...params, q.take],
  };
}

export async function readAuditEntries(
  em: EntityManager,
  q: AuditQuery,
): Promise<{ entries: AuditEntryRow[]; positions: CursorPosition[] }> {
  const statement = auditEntriesStatement(q);
  const rows = await queryRows(em, statement.sql, statement.params);
  return {
    entries: rows.map((row) => {
      const { actor, actorEmail, ...entry } = readEntry(row);
      return { ...entry, actor: { identityUserId: actor, email: actorEmail } };
    }),
    positions: rows.map(readPosition),
  };
}
