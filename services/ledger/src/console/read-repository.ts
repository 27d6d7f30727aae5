// The console's read repository: the SQL of the snapshot's lists, the records pages, the decision search, stats and
// export. Everything is scoped in SQL to the organizations where the caller is a member right now, so membership is
// checked by every query.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Database } from '#runtime/db/database.ts';
import { isoMicrosSql, isoSql } from '#runtime/db/sql.ts';
import { type DecisionRow, decisionColumns, decisionRow } from '../db/decision-rows.ts';
import {
  credits,
  type Field,
  flag,
  numeric,
  optionalText,
  queryRows,
  type Row,
  RowShapeError,
  rowReader,
  text,
} from '../db/rows.ts';
import type { CursorPosition, RecordKind } from '../domain/records-cursor.ts';

export interface Organization {
  id: string;
  name: string;
  unlimitedFunding: boolean;
  balanceCredits: bigint;
  role: string;
  createdAt: string;
  /** The caller joined by their own act (created it, or acceptMembership). */
  joined: boolean;
}
export interface Project {
  id: string;
  organizationId: string;
  name: string;
  maxPayoutCredits: bigint;
  budgetCredits: bigint;
  spentCredits: bigint;
  createdAt: string;
}
export interface Game {
  id: string;
  projectId: string;
  organizationId: string;
  name: string;
  platform: string;
  status: string;
  maxPayoutCredits: bigint;
  budgetCredits: bigint;
  spentCredits: bigint;
  dailyPlayerCapCredits: bigint;
  createdAt: string;
  /** Seconds the game's clock was advanced (CONTRACT section 11.2); GraphQL only. */
  clockAdvancedSeconds: bigint;
}
export interface Key {
  id: string;
  gameId: string;
  organizationId: string;
  kind: string;
  name: string;
  prefix: string;
  publicKey?: string;
  createdAt: string;
  revokedAt?: string;
}
export interface Member {
  id: string;
  organizationId: string;
  identityUserId: string;
  role: string;
  createdAt: string;
  /** The member joined by their own act (the gateway shows e-mails of joined members only). */
  joined: boolean;
}
export interface Rule {
  id: string;
  gameId: string;
  organizationId: string;
  eventType: string;
  rewardCredits: bigint;
  active: boolean;
  createdAt: string;
}
export interface Player {
  id: string;
  gameId: string;
  organizationId: string;
  externalPlayerId: string;
  creditsUserId?: string;
  username?: string;
  linkedAt?: string;
  createdAt: string;
  /** Created by createTestPlayer; GraphQL only. */
  test: boolean;
}
/** A decision as the console shows it (db/decision-rows.ts: the ledger's one reading of a stored decision). */
export type EventRecord = DecisionRow;

/** `organization_id in (...)`: the organizations where the identity (the first parameter) is a member. */
export const MEMBER_ORGS = `(select m.organization_id from ledger.members m where m.identity_user_id = ?)`;

/** The organizations where the identity is a member: what its console reads cover (organization-turns.ts). */
export async function memberOrganizationIds(database: Database, identityUserId: string): Promise<string[]> {
  const rows = await database.query<{ id: string }>(
    'select m.organization_id::text as id from ledger.members m where m.identity_user_id = ?',
    [identityUserId],
  );
  return rows.map((row) => row.id);
}

/** A statement and its parameters (`?` placeholders, in order). */
export interface Statement {
  sql: string;
  params: unknown[];
}

/**
 * The tenant units a read of events or players ranges over, each visible to the caller: the caller's organizations,
 * one organization, the games of a project, one game or one player. A read takes each unit's own range of an index
 * that leads with the unit's column (events_by_organization, events_by_game, events_by_player, players_by_...) and
 * merges the units' rows: it reads the rows it shows (at most `take` per unit), whatever other tenants store.
 */
export interface TenantUnits {
  /** A select of the units' ids (`id`), membership checked. */
  sql: string;
  params: unknown[];
  /** The column of the read table that equals the unit's id. */
  column: 'organization_id' | 'game_id' | 'player_id';
}

/**
 * The narrowest units the filters name (player, then game or project, then organization), with every filter. With
 * an event id, games at the least: an event id is unique per game, so each game's range is one probe of
 * events_one_decision (event_id, game_id), where an organization's would be its whole history filtered.
 */
export function tenantUnits(
  identityUserId: string,
  f: {
    organizationId?: string | undefined;
    projectId?: string | undefined;
    gameId?: string | undefined;
    playerId?: string | undefined;
    eventId?: string | undefined;
  },
): TenantUnits {
  const byGame = f.gameId !== undefined || f.projectId !== undefined || f.eventId !== undefined;
  if (f.playerId === undefined && !byGame) {
    const organization = f.organizationId === undefined ? '' : 'and m.organization_id = ?';
    return {
      sql: `select m.organization_id as id from ledger.members m where m.identity_user_id = ? ${organization}`,
      params: f.organizationId === undefined ? [identityUserId] : [identityUserId, f.organizationId],
      column: 'organization_id',
    };
  }
  const where = [`g.organization_id in ${MEMBER_ORGS}`];
  const params: unknown[] = [identityUserId];
  for (const [condition, value] of [
    ['g.organization_id = ?', f.organizationId],
    ['g.project_id = ?', f.projectId],
    ['g.id = ?', f.gameId],
  ] as const) {
    if (value === undefined) continue;
    where.push(condition);
    params.push(value);
  }
  if (f.playerId === undefined) {
    return { sql: `select g.id from ledger.games g where ${where.join(' and ')}`, params, column: 'game_id' };
  }
  return {
    sql: `select u.id from ledger.players u join ledger.games g on g.id = u.game_id
           where u.id = ? and ${where.join(' and ')}`,
    params: [f.playerId, ...params],
    column: 'player_id',
  };
}

/**
 * One keyset page over the units: each unit's first `take` rows of `table` (alias `p`) in (created_at, id) order
 * that match `where`, a range of the unit's index, merged and cut to `take`. The rows carry `sort_at` (the raw
 * created_at) besides `columns`. `oneRowPerUnit`: `where` names a unique key within the unit (an event id in a game),
 * so each unit's part is a lookup of that key, not a range in time order.
 */
export function tenantPage(
  units: TenantUnits,
  read: {
    table: string;
    columns: string;
    where: string[];
    params: unknown[];
    order: 'asc' | 'desc';
    take: number;
    oneRowPerUnit?: boolean;
  },
): Statement {
  const where = [`p.${units.column} = s.id`, ...read.where].join(' and ');
  const order = read.order;
  const range = read.oneRowPerUnit ? '' : `order by p.created_at ${order}, p.id ${order} limit ?`;
  return {
    sql: `select q.* from (${units.sql}) s cross join lateral (
            select ${read.columns}, p.created_at as sort_at from ${read.table} p where ${where} ${range}) q
          order by q.sort_at ${order}, q.id ${order} limit ?`,
    params: [...units.params, ...read.params, ...(read.oneRowPerUnit ? [] : [read.take]), read.take],
  };
}

// Each row shape's one reader (the columns each query below selects).
const id = text('id');
const organizationId = text('organization_id');
const gameId = text('game_id');
const createdAt = text('created_at');
const organizationRow = rowReader<Organization>({
  id,
  name: text('name'),
  unlimitedFunding: flag('unlimited_funding'),
  balanceCredits: credits('balance_credits'),
  role: text('role'),
  createdAt,
  joined: flag('joined'),
});
const projectRow = rowReader<Project>({
  id,
  organizationId,
  name: text('name'),
  maxPayoutCredits: credits('max_payout_credits'),
  budgetCredits: credits('budget_credits'),
  spentCredits: credits('spent'),
  createdAt,
});
const gameRow = rowReader<Game>({
  id,
  projectId: text('project_id'),
  organizationId,
  name: text('name'),
  platform: text('platform'),
  status: text('status'),
  maxPayoutCredits: credits('max_payout_credits'),
  budgetCredits: credits('budget_credits'),
  spentCredits: credits('spent_credits'),
  dailyPlayerCapCredits: credits('daily_player_cap_credits'),
  createdAt,
  clockAdvancedSeconds: credits('clock_offset_seconds'),
});
const publicKey = optionalText('public_key');
const keyRow = rowReader<Key>({
  id,
  gameId,
  organizationId,
  kind: text('kind'),
  name: text('name'),
  prefix: text('prefix'),
  // Public values are shown again (they are not secret); a secret key's never.
  publicKey: (row) => (row.kind === 'public' ? publicKey(row) : undefined),
  createdAt,
  revokedAt: optionalText('revoked_at'),
});
const ruleRow = rowReader<Rule>({
  id,
  gameId,
  organizationId,
  eventType: text('event_type'),
  rewardCredits: credits('reward_credits'),
  active: flag('active'),
  createdAt,
});
const memberRow = rowReader<Member>({
  id,
  organizationId,
  identityUserId: text('identity_user_id'),
  role: text('role'),
  createdAt,
  joined: flag('joined'),
});
export const playerRow = rowReader<Player>({
  id,
  gameId,
  organizationId,
  externalPlayerId: text('external_player_id'),
  creditsUserId: optionalText('credits_user_id'),
  username: optionalText('username'),
  linkedAt: optionalText('linked_at'),
  createdAt,
  test: flag('test'),
});
export const PLAYER_COLUMNS = `p.id, p.game_id, p.organization_id, p.external_player_id, p.credits_user_id, p.username,
  ${isoSql('p.linked_at', 'linked_at')}, ${isoSql('p.created_at', 'created_at')}, p.test`;

export const eventRow = decisionRow();
export const EVENT_COLUMNS = decisionColumns('p');

export interface SnapshotLists {
  organizations: Organization[];
  projects: Project[];
  games: Game[];
  keys: Key[];
  rules: Rule[];
  members: Member[];
  players: Player[];
  events: EventRecord[];
}

/** The rows of a statement, each read by `read`. */
async function all<T>(em: EntityManager, sql: string, params: unknown[], read: Field<T>): Promise<T[]> {
  return (await queryRows(em, sql, params)).map(read);
}

/** The snapshot's organizations: the caller's, with its role and whether it joined. */
const SNAPSHOT_ORGANIZATIONS_SQL = `select o.id, o.name, o.unlimited_funding, o.balance_credits, m.role,
    ${isoSql('o.created_at', 'created_at')}, m.joined_at is not null as joined
  from ledger.organizations o join ledger.members m on m.organization_id = o.id
  where m.identity_user_id = ? order by o.created_at, o.id`;

/**
 * Everything the snapshot shows, in ONE statement: each list a subquery aggregated to a JSON array in its own order
 * (json_agg over a sorted subquery keeps its order: a subquery scan under a plain aggregate), so one statement sees
 * one snapshot of the database and the snapshot costs one round trip instead of one per list. The driver parses the
 * json columns; each row is read by the same row reader as a statement's row would be (credits arrive as JSON
 * numbers, at most 1e12: exact).
 */
export async function readSnapshot(
  em: EntityManager,
  identityUserId: string,
  limits: { players: number; events: number },
): Promise<SnapshotLists> {
  const ofMemberOrgs = (table: string, columns: string) => ofMemberOrgsStatement(identityUserId, table, columns);
  const lists = {
    organizations: { sql: SNAPSHOT_ORGANIZATIONS_SQL, params: [identityUserId] },
    projects: ofMemberOrgs(
      'projects',
      `p.id, p.organization_id, p.name, p.max_payout_credits, p.budget_credits,
       (select coalesce(sum(g.spent_credits), 0) from ledger.games g where g.project_id = p.id)::text as spent,
       ${isoSql('p.created_at', 'created_at')}`,
    ),
    games: ofMemberOrgs(
      'games',
      `p.id, p.project_id, p.organization_id, p.name, p.platform, p.status, p.max_payout_credits, p.budget_credits,
       p.spent_credits, p.daily_player_cap_credits, ${isoSql('p.created_at', 'created_at')}, p.clock_offset_seconds`,
    ),
    // Key metadata only: the hash never leaves the database.
    keys: ofMemberOrgs(
      'keys',
      `p.id, p.game_id, p.organization_id, p.kind, p.name, p.prefix, p.public_key,
       ${isoSql('p.created_at', 'created_at')}, ${isoSql('p.revoked_at', 'revoked_at')}`,
    ),
    rules: ofMemberOrgs(
      'rules',
      `p.id, p.game_id, p.organization_id, p.event_type, p.reward_credits, p.active,
       ${isoSql('p.created_at', 'created_at')}`,
    ),
    members: ofMemberOrgs(
      'members',
      `p.id, p.organization_id, p.identity_user_id, p.role, ${isoSql('p.created_at', 'created_at')},
       p.joined_at is not null as joined`,
    ),
    players: snapshotPlayersStatement(identityUserId, limits.players),
    events: snapshotEventsStatement(identityUserId, limits.events),
  } satisfies Record<keyof SnapshotLists, Statement>;
  const names = Object.keys(lists) as Array<keyof SnapshotLists>;
  const sql = `select ${names
    .map((name) => `(select coalesce(json_agg(l), '[]'::json) from (${lists[name].sql}) l) as ${name}`)
    .join(',\n  ')}`;
  const [row] = await queryRows(
    em,
    sql,
    names.flatMap((name) => lists[name].params),
  );
  const list = <T>(name: keyof SnapshotLists, read: Field<T>): T[] => {
    const rows = row?.[name];
    if (!Array.isArray(rows)) throw new RowShapeError(name, 'a JSON array', rows);
    return (rows as Row[]).map(read);
  };
  return {
    organizations: list('organizations', organizationRow),
    projects: list('projects', projectRow),
    games: list('games', gameRow),
    keys: list('keys', keyRow),
    rules: list('rules', ruleRow),
    members: list('members', memberRow),
    players: list('players', playerRow),
    events: list('events', eventRow),
  };
}

/** The snapshot's linked players: the newest `take` of each organization (players_linked_by_organization), merged. */
export function snapshotPlayersStatement(identityUserId: string, take: number): Statement {
  return tenantPage(tenantUnits(identityUserId, {}), {
    table: 'ledger.players',
    columns: PLAYER_COLUMNS,
    where: ['p.credits_user_id is not null'],
    params: [],
    order: 'desc',
    take,
  });
}

/** The snapshot's recent decisions: the newest `take` of each organization (events_by_organization), merged. */
export function snapshotEventsStatement(identityUserId: string, take: number): Statement {
  return tenantPage(tenantUnits(identityUserId, {}), {
    table: 'ledger.events',
    columns: EVENT_COLUMNS,
    where: [],
    params: [],
    order: 'desc',
    take,
  });
}

/** The snapshot's list of one console table (`p`) in the caller's organizations, oldest first. */
export function ofMemberOrgsStatement(identityUserId: string, table: string, columns: string): Statement {
  return {
    sql: `select ${columns} from ledger.${table} p where p.organization_id in ${MEMBER_ORGS} order by p.created_at, p.id`,
    params: [identityUserId],
  };
}

export interface RecordsQuery {
  identityUserId: string;
  kind: RecordKind;
  organizationId?: string | undefined;
  projectId?: string | undefined;
  gameId?: string | undefined;
  after?: CursorPosition | undefined;
  /** Rows to read: the page size plus one, to know whether a next page exists. */
  take: number;
}

export interface RecordsRows {
  players: Player[];
  events: EventRecord[];
  /** Exact (microsecond) position of each row, for the next cursor. */
  positions: CursorPosition[];
}

/** A row's exact (microsecond) position, for the next cursor (the queries' `position_at`). */
const positionRow = rowReader<CursorPosition>({ createdAt: text('position_at'), id });

/** Whether the caller is a member of the organization owning the object (false for no such object). */
export async function canSee(
  em: EntityManager,
  identityUserId: string,
  table: 'organizations' | 'projects' | 'games' | 'players' | 'webhook_endpoints',
  id: string,
): Promise<boolean> {
  const column = table === 'organizations' ? 'id' : 'organization_id';
  const rows = await queryRows(em, `select 1 from ledger.${table} t where t.id = ? and t.${column} in ${MEMBER_ORGS}`, [
    id,
    identityUserId,
  ]);
  return rows.length > 0;
}

/**
 * The statement of one records page, newest first by (createdAt, id), after the cursor's position: a range of
 * events_by_/players_by_ organization or game per unit (a project's games one by one), merged (tenantPage).
 */
export function recordsStatement(q: RecordsQuery): Statement {
  const where: string[] = [];
  const params: unknown[] = [];
  if (q.after !== undefined) {
    where.push('(p.created_at, p.id) < (?::timestamptz, ?::uuid)');
    params.push(q.after.createdAt, q.after.id);
  }
  const events = q.kind === 'events';
  return tenantPage(tenantUnits(q.identityUserId, q), {
    table: events ? 'ledger.events' : 'ledger.players',
    columns: `${events ? EVENT_COLUMNS : PLAYER_COLUMNS}, ${isoMicrosSql('p.created_at', 'position_at')}`,
    where,
    params,
    order: 'desc',
    take: q.take,
  });
}

/** One page of records, newest first by (createdAt, id), after the cursor's position. */
export async function readRecords(em: EntityManager, q: RecordsQuery): Promise<RecordsRows> {
  const statement = recordsStatement(q);
  const rows = await queryRows(em, statement.sql, statement.params);
  return {
    players: q.kind === 'players' ? rows.map(playerRow) : [],
    events: q.kind === 'events' ? rows.map(eventRow) : [],
    positions: rows.map(positionRow),
  };
}

/** The filters of a decision search; each given one must hold (ledger.events columns). */
export interface DecisionFilters {
  organizationId?: string | undefined;
  projectId?: string | undefined;
  gameId?: string | undefined;
  playerId?: string | undefined;
  eventId?: string | undefined;
  status?: string | undefined;
  reason?: string | undefined;
  eventType?: string | undefined;
  /** created_at in [from, to). */
  from?: Date | undefined;
  to?: Date | undefined;
}

export interface DecisionsQuery extends DecisionFilters {
  identityUserId: string;
  /** The page starts right after this position, going `older` or newer. */
  cursor?: CursorPosition | undefined;
  older: boolean;
  take: number;
  /** False: skip the probe behind the cursor (beyondCursor stays false); decision export pages one way only. */
  probeBeyondCursor?: boolean | undefined;
}

/** The filters within a unit's range (the unit itself stands for the organization, project, game and player). */
const DECISION_FILTER_COLUMNS: Array<[keyof DecisionFilters, string]> = [
  ['eventId', 'p.event_id = ?'],
  ['status', 'p.status = ?'],
  ['reason', 'p.reason = ?'],
  ['eventType', 'p.event_type = ?'],
];

/** The conditions of a decision search within one unit's range, and their parameters. */
function decisionsWhere(f: DecisionFilters): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const [name, condition] of DECISION_FILTER_COLUMNS) {
    const value = f[name];
    if (value === undefined) continue;
    where.push(condition);
    params.push(value);
  }
  if (f.from !== undefined) {
    where.push('p.created_at >= ?::timestamptz');
    params.push(f.from.toISOString());
  }
  if (f.to !== undefined) {
    where.push('p.created_at < ?::timestamptz');
    params.push(f.to.toISOString());
  }
  return { where, params };
}

/**
 * The statement of one decision-search page: a keyset range in (created_at, id) order, descending for older
 * decisions, ascending for newer ones, over the narrowest units the filters name (tenantUnits): a player's range of
 * events_by_player (player_id, created_at desc, id desc), each game's of events_by_game (a project's games one by
 * one), each organization's of events_by_organization; an event id is found per unit through events_one_decision
 * (event_id, game_id); status, reason, event type and the window filter that range
 * (test/integration/console/tenant-reads.test.ts checks the plans over a million decisions).
 */
export function decisionsStatement(q: DecisionsQuery): Statement {
  const { where, params } = decisionsWhere(q);
  if (q.cursor !== undefined) {
    where.push(`(p.created_at, p.id) ${q.older ? '<' : '>'} (?::timestamptz, ?::uuid)`);
    params.push(q.cursor.createdAt, q.cursor.id);
  }
  return tenantPage(tenantUnits(q.identityUserId, q), {
    table: 'ledger.events',
    columns: `${EVENT_COLUMNS}, ${isoMicrosSql('p.created_at', 'position_at')},
        (select pl.external_player_id from ledger.players pl where pl.id = p.player_id and pl.game_id = p.game_id)
          as external_player_id, p.metadata`,
    where,
    params,
    order: q.older ? 'desc' : 'asc',
    take: q.take,
    // One decision per (event id, game): a probe of events_one_decision per game.
    oneRowPerUnit: q.eventId !== undefined && q.playerId === undefined,
  });
}

/** Whether a decision of the search lies at the cursor or beyond it (the other direction): one probe per unit. */
export function beyondCursorStatement(q: DecisionsQuery & { cursor: CursorPosition }): Statement {
  const units = tenantUnits(q.identityUserId, q);
  const { where, params } = decisionsWhere(q);
  // The cursor's own decision counts: it is on the previous page.
  where.push(`(p.created_at, p.id) ${q.older ? '>=' : '<='} (?::timestamptz, ?::uuid)`);
  params.push(q.cursor.createdAt, q.cursor.id);
  return {
    sql: `select 1 from (${units.sql}) s
           where exists (select 1 from ledger.events p where ${[`p.${units.column} = s.id`, ...where].join(' and ')})
           limit 1`,
    params: [...units.params, ...params],
  };
}

export interface DecisionRows {
  /** In the statement's order: newest first going older, oldest first going newer. */
  events: EventRecord[];
  /** The game's own id of each decision's player (players.external_player_id), in the same order. */
  externalPlayerIds: string[];
  /** Each decision's event metadata (canonical JSON text), "" when none was stored, in the same order. */
  metadataJson: string[];
  positions: CursorPosition[];
  /** Whether a matching decision lies on the other side of the cursor (or at it): none without a cursor. */
  beyondCursor: boolean;
}

const externalPlayerIdOf = text('external_player_id');
const metadataOf = optionalText('metadata');

/** One page of a decision search, and whether decisions lie behind its cursor (for the other direction's flag). */
export async function readDecisions(em: EntityManager, q: DecisionsQuery): Promise<DecisionRows> {
  const statement = decisionsStatement(q);
  const rows = await queryRows(em, statement.sql, statement.params);
  let beyondCursor = false;
  if (q.cursor !== undefined && q.probeBeyondCursor !== false) {
    const behind = beyondCursorStatement({ ...q, cursor: q.cursor });
    beyondCursor = (await queryRows(em, behind.sql, behind.params)).length > 0;
  }
  return {
    events: rows.map(eventRow),
    externalPlayerIds: rows.map(externalPlayerIdOf),
    metadataJson: rows.map((row) => metadataOf(row) ?? ''),
    positions: rows.map(positionRow),
    beyondCursor,
  };
}

export interface DecisionStatsRow {
  bucketStartMs: number;
  status: string;
  reason: string | undefined;
  count: number;
  rewardCredits: number;
}

const decisionStatsRow = rowReader<DecisionStatsRow>({
  bucketStartMs: numeric('bucket_start_ms'),
  status: text('status'),
  reason: optionalText('reason'),
  count: numeric('count'),
  rewardCredits: numeric('reward_credits'),
});

/**
 * The decisions of one game within [from, to), counted per bucket, status and reason: one range scan of the
 * events_by_game index (game_id, created_at desc, id desc), grouped in SQL (docs/console-ui.md shows the plan).
 */
export async function readDecisionStats(
  em: EntityManager,
  q: { gameId: string; from: Date; to: Date; bucketSeconds: number },
): Promise<DecisionStatsRow[]> {
  const statement = decisionStatsStatement(q);
  return all(em, statement.sql, statement.params, decisionStatsRow);
}

/** The statement of readDecisionStats. */
export function decisionStatsStatement(q: { gameId: string; from: Date; to: Date; bucketSeconds: number }): Statement {
  return {
    sql: `select (extract(epoch from date_bin(make_interval(secs => ?), e.created_at, ?::timestamptz)) * 1000)::bigint
              as bucket_start_ms,
            e.status, e.reason, count(*)::int as count, coalesce(sum(e.reward_credits), 0)::bigint as reward_credits
       from ledger.events e
      where e.game_id = ? and e.created_at >= ?::timestamptz and e.created_at < ?::timestamptz
      group by 1, 2, 3
      order by 1, 2, 3`,
    params: [q.bucketSeconds, q.from.toISOString(), q.gameId, q.from.toISOString(), q.to.toISOString()],
  };
}

export interface LinkIntent {
  id: string;
  gameId: string;
  organizationId: string;
  playerId: string;
  externalPlayerId: string;
  state: 'pending' | 'consumed' | 'expired';
  createdAt: string;
  expiresAt: string;
  consumedAt?: string;
}

export interface LinkIntentRows {
  intents: LinkIntent[];
  /** Exact (microsecond) position of each row, for the next cursor. */
  positions: CursorPosition[];
}

const linkIntentRow = rowReader<LinkIntent>({
  id,
  gameId,
  organizationId,
  playerId: text('player_id'),
  externalPlayerId: text('external_player_id'),
  state: text<LinkIntent['state']>('state'),
  createdAt,
  expiresAt: text('expires_at'),
  consumedAt: optionalText('consumed_at'),
});

/**
 * One page of a game's link intents, newest first by (createdAt, id), after the cursor's position: a range of the
 * link_intents_by_game index. The state is read at `now` (null: the transaction's now()), consumed before expired
 * as the token's refusals order them. Neither the token's hash nor the approving account is read.
 */
export async function readLinkIntents(
  em: EntityManager,
  q: { gameId: string; after?: CursorPosition | undefined; take: number; now: Date | null },
): Promise<LinkIntentRows> {
  const after = q.after ? 'and (i.created_at, i.id) < (?::timestamptz, ?::uuid)' : '';
  const rows = await queryRows(
    em,
    `select i.id, i.game_id, p.organization_id, i.player_id, p.external_player_id,
            case when i.consumed_at is not null then 'consumed'
                 when i.expires_at <= coalesce(?::timestamptz, now()) then 'expired'
                 else 'pending' end as state,
            ${isoSql('i.created_at', 'created_at')}, ${isoSql('i.expires_at', 'expires_at')},
            ${isoSql('i.consumed_at', 'consumed_at')}, ${isoMicrosSql('i.created_at', 'position_at')}
       from ledger.link_intents i join ledger.players p on p.id = i.player_id
      where i.game_id = ? ${after}
      order by i.created_at desc, i.id desc limit ?`,
    [q.now?.toISOString() ?? null, q.gameId, ...(q.after ? [q.after.createdAt, q.after.id] : []), q.take],
  );
  return { intents: rows.map(linkIntentRow), positions: rows.map(positionRow) };
}
