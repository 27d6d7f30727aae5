// Reads that cost what they show: over a million decisions of 500 organizations, every console and
// records read of a small tenant (one organization, 100 decisions) and of a large one (two organizations) plans as
// ranges of indexes that lead with the tenant (organization, game or player), never a scan of ledger.events. The
// assertions are on the plans' structure (EXPLAIN FORMAT JSON): node types, relations, index names, rows read.
import pg from 'pg';
import { pino } from 'pino';
import { DECISION_EXPORT_PAGE_DEFAULT } from '#runtime/contracts/decision-search.ts';
import { migrate } from '#runtime/db/database.ts';
import { createTenants, insertDecisions, tenantIdentity, tenantIds } from '../../../load/lib/tenants.ts';
import { identityMigrations } from '../../../services/identity-admission/src/migrations/index.ts';
import {
  beyondCursorStatement,
  type DecisionsQuery,
  decisionStatsStatement,
  decisionsStatement,
  ofMemberOrgsStatement,
  type RecordsQuery,
  recordsStatement,
  type Statement,
  snapshotEventsStatement,
  snapshotPlayersStatement,
} from '../../../services/ledger/src/console/read-repository.ts';
import { decisionFiltersOf, SNAPSHOT_LIMITS } from '../../../services/ledger/src/console/read-service.ts';
import {
  keyUseStatement,
  playerRewardsStatement,
  searchStatements,
} from '../../../services/ledger/src/console/search-repository.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { countWindowDecisionsStatement } from '../../../services/ledger/src/simulation/repository.ts';
import { createTestDatabase } from '../../support/database.ts';
import { explainPlan, numbered, type PlanNode, rowsRead, scansOf } from '../../support/plans.ts';

const ORGANIZATIONS = 500;
const DECISIONS = 1_000_000;
const SMALL = ORGANIZATIONS + 1;
const SMALL_DECISIONS = 100;
const small = { identity: tenantIdentity(SMALL), ...tenantIds(SMALL) };
// The large tenant: member of organizations 1 and 2 (2,000 decisions each).
const large = { identity: tenantIdentity(1), ...tenantIds(1) };
const NOW = new Date();
const HOUR_MS = 3_600_000;

let client: pg.Client;

beforeAll(async () => {
  const url = await createTestDatabase();
  await migrate(url, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
  client = new pg.Client({ connectionString: url });
  await client.connect();
  await createTenants(client, 1, SMALL);
  await client.query(
    `insert into ledger.members (id, organization_id, identity_user_id, role) values (gen_random_uuid(), $1, $2, 'viewer')`,
    [tenantIds(2).organizationId, large.identity],
  );
  await insertDecisions(client, {
    first: 0,
    count: DECISIONS,
    organizations: { first: 1, last: ORGANIZATIONS },
    newest: NOW,
  });
  // The small tenant's decisions are older than everyone's: a read over the whole table in time order finds them last.
  await insertDecisions(client, {
    first: DECISIONS,
    count: SMALL_DECISIONS,
    organizations: { first: SMALL, last: SMALL },
    newest: new Date(NOW.getTime() - HOUR_MS),
  });
  await client.query('analyze');
}, 600_000);

afterAll(async () => {
  await client?.end();
});

const plan = (statement: Statement, analyze = false) => explainPlan(client, statement, analyze);

/** Asserts every scan of the table is one of the indexes (at least one scan), and returns the plan. */
async function expectIndexes(statement: Statement, table: string, indexes: string[]): Promise<PlanNode> {
  const root = await plan(statement);
  const scans = scansOf(root, table);
  expect(scans.length).toBeGreaterThan(0);
  for (const scan of scans) expect(indexes).toContain(scan);
  return root;
}

const ids = async (statement: Statement) =>
  (await client.query(numbered(statement), statement.params)).rows.map((r: { id: string }) => r.id);

describe('tenant-first reads over a million decisions (slow: a million rows generated in SQL)', () => {
  test("the snapshot reads each organization's newest decisions through events_by_organization, and only those", async () => {
    for (const tenant of [small, large]) {
      const statement = snapshotEventsStatement(tenant.identity, SNAPSHOT_LIMITS.events);
      await expectIndexes(statement, 'events', ['events_by_organization']);
      const organizations = tenant === small ? 1 : 2;
      const analyzed = await plan(statement, true);
      expect(rowsRead(analyzed, 'events')).toBeLessThanOrEqual(organizations * SNAPSHOT_LIMITS.events);
      // What it shows is what the whole table says: the tenant's newest decisions.
      const orgs = tenant === small ? [small.organizationId] : [large.organizationId, tenantIds(2).organizationId];
      const expected = await client.query(
        `select id from ledger.events where organization_id = any($1::uuid[]) order by created_at desc, id desc limit $2`,
        [orgs, SNAPSHOT_LIMITS.events],
      );
      expect(await ids(statement)).toEqual(expected.rows.map((r: { id: string }) => r.id));
    }
    expect(await ids(snapshotEventsStatement(small.identity, SNAPSHOT_LIMITS.events))).toHaveLength(SMALL_DECISIONS);
  });

  test("the snapshot's linked players: players_linked_by_organization, only the linked ones read", async () => {
    for (const tenant of [small, large]) {
      const statement = snapshotPlayersStatement(tenant.identity, SNAPSHOT_LIMITS.players);
      await expectIndexes(statement, 'players', ['players_linked_by_organization']);
      const analyzed = await plan(statement, true);
      const shown = (await ids(statement)).length;
      expect(shown).toBeGreaterThan(0);
      expect(rowsRead(analyzed, 'players')).toBe(shown);
    }
  });

  test("the snapshot's console lists: an index leading with the organization for each table", async () => {
    // These tables hold a few rows per organization, so the planner may well scan them whole: with sequential scans
    // priced out, the plan shows the index that leads with the organization.
    await client.query('set enable_seqscan = off');
    try {
      for (const [table, index] of [
        ['projects', 'projects_by_organization'],
        ['games', 'games_by_organization'],
        ['keys', 'keys_by_organization'],
        ['rules', 'rules_by_organization'],
        ['members', 'members_one_per_identity'],
      ] as const) {
        const scans = scansOf(await plan(ofMemberOrgsStatement(small.identity, table, 'p.id')), table);
        // (members is also read for the caller's organizations, through members_by_identity.)
        expect(scans.filter((scan) => scan !== 'members_by_identity')).toEqual([index]);
      }
    } finally {
      await client.query('reset enable_seqscan');
    }
  });

  const gameId = small.gameIds[0]!;
  const cursor = {
    createdAt: new Date(NOW.getTime() - HOUR_MS - 10).toISOString(),
    id: 'ffffffff-ffff-4fff-8fff-ffffffffffff',
  };

  test.each<[string, Partial<RecordsQuery>, string[]]>([
    ["every organization's", {}, ['events_by_organization']],
    ['one organization', { organizationId: small.organizationId }, ['events_by_organization']],
    ["a project's games, one by one", { projectId: small.projectId }, ['events_by_game']],
    ['one game', { gameId }, ['events_by_game']],
    ['one game, after a cursor', { gameId, after: cursor }, ['events_by_game']],
    ['every organization, after a cursor', { after: cursor }, ['events_by_organization']],
  ])('records of decisions, %s: a range per tenant unit', async (_name, filters, indexes) => {
    const q: RecordsQuery = { identityUserId: small.identity, kind: 'events', take: 51, ...filters };
    await expectIndexes(recordsStatement(q), 'events', indexes);
    await expectIndexes(recordsStatement({ ...q, identityUserId: large.identity }), 'events', indexes);
  });

  test.each<[string, Partial<RecordsQuery>, string[]]>([
    ["every organization's", {}, ['players_by_organization']],
    ['one organization', { organizationId: small.organizationId }, ['players_by_organization']],
    ["a project's games, one by one", { projectId: small.projectId }, ['players_by_game']],
    ['one game, after a cursor', { gameId, after: cursor }, ['players_by_game']],
  ])('records of players, %s: a range per tenant unit', async (_name, filters, indexes) => {
    const q: RecordsQuery = { identityUserId: small.identity, kind: 'players', take: 51, ...filters };
    await expectIndexes(recordsStatement(q), 'players', indexes);
  });

  const someEventId = 'b0000000-0000-4000-8000-000000000005';
  test.each<[string, () => Partial<DecisionsQuery>, string[]]>([
    ['no filter', () => ({}), ['events_by_organization']],
    ['a status', () => ({ status: 'rejected' }), ['events_by_organization']],
    [
      'an organization, going newer',
      () => ({ organizationId: small.organizationId, older: false }),
      ['events_by_organization'],
    ],
    ['a project', () => ({ projectId: small.projectId }), ['events_by_game']],
    [
      'a game, a reason and a window',
      () => ({ gameId, reason: 'daily_player_cap', from: new Date(NOW.getTime() - 2 * HOUR_MS) }),
      ['events_by_game'],
    ],
    ['a game after a cursor, going newer', () => ({ gameId, cursor, older: false }), ['events_by_game']],
    ['a player', () => ({ playerId: smallPlayer() }), ['events_by_player']],
    ['an event id (a probe per game)', () => ({ eventId: someEventId }), ['events_one_decision']],
    ['an event id in a game', () => ({ eventId: someEventId, gameId }), ['events_one_decision']],
  ])('the decision search, %s: a range per tenant unit', async (_name, filters, indexes) => {
    const q: DecisionsQuery = { identityUserId: small.identity, older: true, take: 51, ...filters() };
    await expectIndexes(decisionsStatement(q), 'events', indexes);
    await expectIndexes(decisionsStatement({ ...q, identityUserId: large.identity }), 'events', indexes);
    const withCursor = { ...q, cursor: q.cursor ?? cursor };
    const beyond = await plan(beyondCursorStatement(withCursor));
    expect(scansOf(beyond, 'events')).not.toContain('Seq Scan');
  });

  test("the search box: players and decisions one probe per caller's game, rewards and key use by tenant", async () => {
    const someId = 'c0000000-0000-4000-8000-000000000001';
    for (const tenant of [small, large]) {
      const byId = searchStatements({ identityUserId: tenant.identity, text: someId, uuid: true });
      await expectIndexes(byId.decisions, 'events', ['events_pkey', 'events_one_decision']);
      await expectIndexes(byId.players, 'players', ['players_pkey', 'players_one_per_external_id']);
      const byName = searchStatements({ identityUserId: tenant.identity, text: 'hero-9', uuid: false });
      await expectIndexes(byName.players, 'players', ['players_one_per_external_id']);
    }
    const player = { id: smallPlayer(), gameId };
    await expectIndexes(playerRewardsStatement(player, NOW.toISOString().slice(0, 10)), 'events', ['events_by_player']);
    const dayStart = new Date(NOW.getTime() - 2 * HOUR_MS);
    await expectIndexes(keyUseStatement({ id: someEventId, gameId }, dayStart), 'events', ['events_by_game']);
  });

  test('the decision export: a range of events_by_game going newer, one page read', async () => {
    for (const tenant of [small, large]) {
      const exportOf = (page: Partial<DecisionsQuery>) =>
        decisionsStatement({
          ...decisionFiltersOf({
            identityUserId: tenant.identity,
            gameId: tenant.gameIds[0]!,
            fromMs: NOW.getTime() - 31 * 24 * HOUR_MS,
            toMs: NOW.getTime(),
          }),
          older: false,
          take: DECISION_EXPORT_PAGE_DEFAULT + 1,
          ...page,
        });
      for (const statement of [exportOf({}), exportOf({ cursor })]) {
        await expectIndexes(statement, 'events', ['events_by_game']);
        // The page and nothing more: the range is read in the order it is answered.
        const analyzed = await plan(statement, true);
        expect(rowsRead(analyzed, 'events')).toBeLessThanOrEqual(DECISION_EXPORT_PAGE_DEFAULT + 1);
      }
      // A filter within the game's range: still that range (the rows it filters out are read).
      await expectIndexes(exportOf({ cursor, status: 'accepted' }), 'events', ['events_by_game']);
    }
  });

  test('the decision statistics and the dry-run window count: ranges of events_by_game', async () => {
    const window = { gameId, from: new Date(NOW.getTime() - 2 * HOUR_MS), to: NOW };
    await expectIndexes(decisionStatsStatement({ ...window, bucketSeconds: 3600 }), 'events', ['events_by_game']);
    await expectIndexes(countWindowDecisionsStatement({ ...window, atMost: 10_001 }), 'events', ['events_by_game']);
  });

  test("the dry-run's own statements (ledger.simulate_rule) read the game's decisions through events_by_game", async () => {
    // auto_explain logs the plans of the function's statements (nested), sent back as notices.
    const notices: string[] = [];
    const listen = (notice: { message?: string }) => notices.push(notice.message ?? '');
    client.on('notice', listen);
    try {
      await client.query(`load 'auto_explain'`);
      for (const setting of ['log_min_duration = 0', 'log_nested_statements = on', 'log_level = notice']) {
        await client.query(`set auto_explain.${setting}`);
      }
      await client.query('begin transaction isolation level repeatable read read only');
      await client.query(`select ledger.simulate_rule($1, 'level.complete', 15, 30, true, $2, $3, 5, 20)`, [
        gameId,
        new Date(NOW.getTime() - 2 * HOUR_MS).toISOString(),
        NOW.toISOString(),
      ]);
    } finally {
      await client.query('rollback');
      await client.query('set auto_explain.log_min_duration = -1');
      client.off('notice', listen);
    }
    const onEvents = notices.filter((n) => / on events /.test(n));
    expect(onEvents.length).toBeGreaterThanOrEqual(4);
    for (const notice of onEvents) {
      expect(notice).toMatch(/(using|on) events_by_game/);
      expect(notice).not.toMatch(/Seq Scan on events/);
    }
  });
});

/** A player of the small tenant's first game (tenants.ts numbers players game * PLAYERS + p). */
function smallPlayer(): string {
  const game = (SMALL - 1) * 2 + 1;
  return `60000000-0000-4000-8000-${(game * 10).toString(16).padStart(12, '0')}`;
}
