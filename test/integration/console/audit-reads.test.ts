// The audit trail's reads cost what they show: over a million entries of 500 organizations, an organization's page
// (with or without its filters, first page or after a cursor) plans as a range of the index that leads with the
// organization (audit_log_by_organization_and_id, migration 0019), never a scan of ledger.audit_log, and a page reads
// about the rows it shows. The assertions are on the plans' structure (EXPLAIN ANALYZE, FORMAT JSON).
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import { type AuditQuery, auditEntriesStatement } from '../../../services/ledger/src/console/audit-repository.ts';
import type { Statement } from '../../../services/ledger/src/console/read-repository.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { createTestDatabase } from '../../support/database.ts';
import { explainPlan, type PlanNode, rowsRead, scansOf } from '../../support/plans.ts';

const ORGANIZATIONS = 500;
const ENTRIES = 1_000_000;
const PAGE = 50;
/** Organization n's id. */
const organizationId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

let client: pg.Client;

beforeAll(async () => {
  const url = await createTestDatabase();
  await migrate(url, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
  client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `insert into ledger.organizations (id, name, created_by)
     select ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, 'Org ' || n, 'owner-' || n
       from generate_series(1, $1::int) n`,
    [ORGANIZATIONS],
  );
  // A million entries, spread over the organizations and the last 30 days; a tenth of them `updateGame`.
  await client.query(
    `insert into ledger.audit_log (organization_id, actor, action, target_kind, target_id, changes, request_id,
                                   created_at)
     select ('00000000-0000-4000-8000-' || lpad((1 + i % $2::int)::text, 12, '0'))::uuid, 'actor-' || (i % 7),
            case when i % 10 = 0 then 'updateGame' else 'createRule' end, 'game', gen_random_uuid(), '{}'::jsonb,
            'request-' || i, now() - (i % 2592000) * interval '1 second'
       from generate_series(1, $1::int) i`,
    [ENTRIES, ORGANIZATIONS],
  );
  await client.query('analyze ledger.audit_log');
}, 600_000);

afterAll(async () => {
  await client?.end();
});

const plan = (statement: Statement) => explainPlan(client, statement, true);

/** The audit_log scans (an index's name, or the node type) and the rows they read (returned and filtered out). */
const auditScans = (root: PlanNode) => ({ scans: scansOf(root, 'audit_log'), rowsRead: rowsRead(root, 'audit_log') });

const query = (q: Partial<AuditQuery>): AuditQuery => ({ organizationId: organizationId(7), take: PAGE + 1, ...q });

describe('audit reads over a million entries (slow: a million rows generated in SQL)', () => {
  it("an organization's newest page reads its index range, about a page of rows", async () => {
    const { scans, rowsRead } = auditScans(await plan(auditEntriesStatement(query({}))));
    expect(scans).toEqual(['audit_log_by_organization_and_id']);
    expect(rowsRead).toBeLessThanOrEqual(PAGE + 1);
  });

  it('a page after a cursor, and a time window, start inside the range', async () => {
    const [row] = (
      await client.query(
        `select created_at::text as at, id::text from ledger.audit_log where organization_id = $1
          order by created_at desc, id desc offset 500 limit 1`,
        [organizationId(7)],
      )
    ).rows as Array<{ at: string; id: string }>;
    const after = auditScans(await plan(auditEntriesStatement(query({ after: { createdAt: row!.at, id: row!.id } }))));
    expect(after.scans).toEqual(['audit_log_by_organization_and_id']);
    expect(after.rowsRead).toBeLessThanOrEqual(PAGE + 1);
    const nowMicros = BigInt(Date.now()) * 1000n;
    const window = auditScans(
      await plan(
        auditEntriesStatement(
          query({
            fromMicros: String(nowMicros - 86_400_000_000n * 10n),
            toMicros: String(nowMicros - 86_400_000_000n * 9n),
          }),
        ),
      ),
    );
    expect(window.scans).toEqual(['audit_log_by_organization_and_id']);
    expect(window.rowsRead).toBeLessThanOrEqual(PAGE + 1);
  });

  it("the filters (action, actor) stay inside the organization's range: at most its entries are read", async () => {
    for (const filters of [
      { action: 'updateGame' },
      { actor: 'actor-3' },
      { action: 'updateGame', actor: 'actor-3' },
    ]) {
      const { scans, rowsRead } = auditScans(await plan(auditEntriesStatement(query(filters))));
      // Either index that leads with the organization (0001's, or 0019's with the id), as a range or a bitmap.
      expect(scans.length).toBeGreaterThan(0);
      for (const scan of scans) {
        expect({ filters, scan }).toEqual({
          filters,
          scan: expect.stringMatching(/^audit_log_by_organization(_and_id)?$/),
        });
      }
      // An organization holds 2,000 of the million entries: a filter reads within them, never the table.
      expect(rowsRead).toBeLessThanOrEqual(ENTRIES / ORGANIZATIONS);
    }
  });
});
