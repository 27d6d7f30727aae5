// An endpoint's deliveries page, filtered or not, costs what it shows: over 200,000 messages of 20 endpoints (the most a game has), the
// statement of webhookDeliveries (deliveriesStatement) plans as a range of webhook_messages_by_endpoint, the index
// that leads with the endpoint, never a scan of ledger.webhook_messages: the newest page and a time window read about
// a page of rows, a state or type filter at most the endpoint's messages, a webhook-id one row. The assertions are on
// the plans' structure (EXPLAIN ANALYZE, FORMAT JSON).
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import type { Statement } from '../../../services/ledger/src/console/read-repository.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { type DeliveryFilter, deliveriesStatement } from '../../../services/ledger/src/webhooks/repository.ts';
import { createTestDatabase } from '../../support/database.ts';
import { createGame } from '../../support/ledger-fixtures.ts';

const ENDPOINTS = 20;
const MESSAGES = 200_000;
const PAGE = 20;
const endpointId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

let client: pg.Client;

beforeAll(async () => {
  const url = await createTestDatabase();
  await migrate(url, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
  const game = await createGame(url);
  client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `insert into ledger.webhook_endpoints (id, game_id, organization_id, url, event_types, secret_ciphertext)
     select ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, $2, $3, 'https://example.com/hook',
            array['game.paused', 'game.resumed'], decode(repeat('00', 60), 'hex')
       from generate_series(1, $1::int) n`,
    [ENDPOINTS, game.gameId, game.organizationId],
  );
  // Spread over the endpoints and the last 30 days; one in 50 failed, one in 10 pending, the rest delivered.
  await client.query(
    `insert into ledger.webhook_messages (id, endpoint_id, game_id, event_type, data, created_at, state,
                                          next_attempt_at, finished_at)
     select gen_random_uuid(), ('00000000-0000-4000-8000-' || lpad((1 + i % $2::int)::text, 12, '0'))::uuid, $3,
            case when i % 3 = 0 then 'game.resumed' else 'game.paused' end, '{}'::jsonb,
            now() - (i % 2592000) * interval '1 second',
            s.state, case when s.state = 'pending' then now() end, case when s.state <> 'pending' then now() end
       from generate_series(1, $1::int) i
       cross join lateral (select case when i % 50 = 7 then 'failed' when i % 10 = 3 then 'pending'
                                       else 'delivered' end as state) s`,
    [MESSAGES, ENDPOINTS, game.gameId],
  );
  await client.query('analyze ledger.webhook_messages');
}, 600_000);

afterAll(async () => {
  await client?.end();
});

function numbered(statement: Statement): string {
  let n = 0;
  return statement.sql.replace(/\?/g, () => `$${++n}`);
}

async function plan(statement: Statement): Promise<PlanNode> {
  const result = await client.query(`explain (analyze, format json) ${numbered(statement)}`, statement.params);
  return (result.rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
}

const nodes = (root: PlanNode): PlanNode[] => [root, ...(root.Plans ?? []).flatMap(nodes)];

/** The webhook_messages scans (an index's name, or the node type) and the rows they read. */
function messageScans(root: PlanNode): { scans: string[]; rowsRead: number } {
  const scans = nodes(root).filter((n) => n['Relation Name'] === 'webhook_messages');
  return {
    scans: scans.flatMap((n) =>
      n['Node Type'] === 'Bitmap Heap Scan'
        ? nodes(n).flatMap((b) => b['Index Name'] ?? [])
        : [n['Index Name'] ?? n['Node Type']],
    ),
    rowsRead: scans.reduce(
      (sum, n) => sum + ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0)) * (n['Actual Loops'] ?? 1),
      0,
    ),
  };
}

const page = (filter: DeliveryFilter) => deliveriesStatement(endpointId(7), undefined, PAGE + 1, filter);
const PER_ENDPOINT = MESSAGES / ENDPOINTS;

describe('webhook deliveries reads over 200,000 messages (slow: the rows generated in SQL)', () => {
  it("an endpoint's newest page and a time window read its index range, about a page of rows", async () => {
    const newest = messageScans(await plan(page({})));
    expect(newest.scans).toEqual(['webhook_messages_by_endpoint']);
    expect(newest.rowsRead).toBeLessThanOrEqual(PAGE + 1);
    const nowMicros = BigInt(Date.now()) * 1000n;
    const window = messageScans(
      await plan(page({ fromMicros: nowMicros - 86_400_000_000n * 10n, toMicros: nowMicros - 86_400_000_000n * 9n })),
    );
    expect(window.scans).toEqual(['webhook_messages_by_endpoint']);
    expect(window.rowsRead).toBeLessThanOrEqual(PAGE + 1);
  });

  it("the state and type filters stay inside the endpoint's range; a webhook-id reads one row", async () => {
    for (const filter of [{ state: 'failed' }, { eventType: 'game.resumed' }, { state: 'pending' }]) {
      const { scans, rowsRead } = messageScans(await plan(page(filter)));
      expect(scans.length).toBeGreaterThan(0);
      for (const scan of scans) {
        expect({ filter, scan }).toEqual({ filter, scan: expect.stringMatching(/^webhook_messages_/) });
      }
      expect(rowsRead).toBeLessThanOrEqual(PER_ENDPOINT);
    }
    const [row] = (
      await client.query(`select id::text from ledger.webhook_messages where endpoint_id = $1 limit 1`, [endpointId(7)])
    ).rows as Array<{ id: string }>;
    const one = messageScans(await plan(page({ webhookId: row!.id })));
    expect(one.rowsRead).toBeLessThanOrEqual(1);
  });
});
