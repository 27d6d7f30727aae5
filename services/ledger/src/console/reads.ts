// Reads of the console: the snapshot's lists and the records pages. Everything is scoped in SQL to the
// organizations where the caller is a member right now, so membership is checked by every query.
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoMicrosSql, isoSql } from '#runtime/db/sql.ts';
import type { CursorPosition, RecordKind } from '../domain/records-cursor.ts';
import { credits, type Field, flag, numeric, optionalText, queryRows, rowReader, text } from './repository.ts';

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
}
export interface EventRecord {
  id: string;
  eventId: string;
  gameId: string;
  organizationId: string;
  playerId: string;
  eventType: string;
  occurredAt: string;
  status: string;
  reason?: string;
  rewardCredits: bigint;
  createdAt: string;
}

/** `organization_id in (...)`: the organizations where the identity (the first parameter) is a member. */
const MEMBER_ORGS = `(select m.organization_id from ledger.members m where m.identity_user_id = ?)`;

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
const playerRow = rowReader<Player>({
  id,
  gameId,
  organizationId,
  externalPlayerId: text('external_player_id'),
  creditsUserId: optionalText('credits_user_id'),
  username: optionalText('username'),
  linkedAt: optionalText('linked_at'),
  createdAt,
});
const PLAYER_COLUMNS = `p.id, p.game_id, p.organization_id, p.external_player_id, p.credits_user_id, p.username,
  ${isoSql('p.linked_at', 'linked_at')}, ${isoSql('p.created_at', 'created_at')}`;

const eventRow = rowReader<EventRecord>({
  id,
  eventId: text('event_id'),
  gameId,
  organizationId,
  playerId: text('player_id'),
  eventType: text('event_type'),
  occurredAt: text('occurred_at'),
  status: text('status'),
  reason: optionalText('reason'),
  rewardCredits: credits('reward_credits'),
  createdAt,
});
const EVENT_COLUMNS = `p.id, p.event_id, p.game_id, p.organization_id, p.player_id, p.event_type,
  ${isoSql('p.occurred_at', 'occurred_at')}, p.status, p.reason, p.reward_credits, ${isoSql('p.created_at', 'created_at')}`;

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

/** Everything the snapshot shows, read on one database snapshot (the caller's transaction). */
export async function readSnapshot(
  em: EntityManager,
  identityUserId: string,
  limits: { players: number; events: number },
): Promise<SnapshotLists> {
  const identity = [identityUserId];
  const organizations = await all(
    em,
    `select o.id, o.name, o.unlimited_funding, o.balance_credits, m.role, ${isoSql('o.created_at', 'created_at')},
            m.joined_at is not null as joined
       from ledger.organizations o join ledger.members m on m.organization_id = o.id
      where m.identity_user_id = ? order by o.created_at, o.id`,
    identity,
    organizationRow,
  );
  if (organizations.length === 0) {
    return { organizations, projects: [], games: [], keys: [], rules: [], members: [], players: [], events: [] };
  }
  /** The rows of a table (`p`) in the caller's organizations, oldest first. */
  const ofMemberOrgs = <T>(table: string, columns: string, read: Field<T>) =>
    all(
      em,
      `select ${columns} from ledger.${table} p where p.organization_id in ${MEMBER_ORGS} order by p.created_at, p.id`,
      identity,
      read,
    );
  const projects = await ofMemberOrgs(
    'projects',
    `p.id, p.organization_id, p.name, p.max_payout_credits, p.budget_credits,
     (select coalesce(sum(g.spent_credits), 0) from ledger.games g where g.project_id = p.id)::text as spent,
     ${isoSql('p.created_at', 'created_at')}`,
    projectRow,
  );
  const games = await ofMemberOrgs(
    'games',
    `p.id, p.project_id, p.organization_id, p.name, p.platform, p.status, p.max_payout_credits, p.budget_credits,
     p.spent_credits, p.daily_player_cap_credits, ${isoSql('p.created_at', 'created_at')}`,
    gameRow,
  );
  // Key metadata only: the hash never leaves the database.
  const keys = await ofMemberOrgs(
    'keys',
    `p.id, p.game_id, p.organization_id, p.kind, p.name, p.prefix, p.public_key,
     ${isoSql('p.created_at', 'created_at')}, ${isoSql('p.revoked_at', 'revoked_at')}`,
    keyRow,
  );
  const rules = await ofMemberOrgs(
    'rules',
    `p.id, p.game_id, p.organization_id, p.event_type, p.reward_credits, p.active,
     ${isoSql('p.created_at', 'created_at')}`,
    ruleRow,
  );
  const members = await ofMemberOrgs(
    'members',
    `p.id, p.organization_id, p.identity_user_id, p.role, ${isoSql('p.created_at', 'created_at')},
     p.joined_at is not null as joined`,
    memberRow,
  );
  const players = await all(
    em,
    `select ${PLAYER_COLUMNS} from ledger.players p
      where p.organization_id in ${MEMBER_ORGS} and p.credits_user_id is not null
      order by p.created_at desc, p.id desc limit ?`,
    [identityUserId, limits.players],
    playerRow,
  );
  const events = await all(
    em,
    `select ${EVENT_COLUMNS} from ledger.events p where p.organization_id in ${MEMBER_ORGS}
      order by p.created_at desc, p.id desc limit ?`,
    [identityUserId, limits.events],
    eventRow,
  );
  return { organizations, projects, games, keys, rules, members, players, events };
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
  table: 'organizations' | 'projects' | 'games' | 'players',
  id: string,
): Promise<boolean> {
  const column = table === 'organizations' ? 'id' : 'organization_id';
  const rows = await queryRows(em, `select 1 from ledger.${table} t where t.id = ? and t.${column} in ${MEMBER_ORGS}`, [
    id,
    identityUserId,
  ]);
  return rows.length > 0;
}

/** One page of records, newest first by (createdAt, id), after the cursor's position. */
export async function readRecords(em: EntityManager, q: RecordsQuery): Promise<RecordsRows> {
  const where = [`p.organization_id in ${MEMBER_ORGS}`];
  const params: unknown[] = [q.identityUserId];
  if (q.organizationId !== undefined) {
    where.push('p.organization_id = ?');
    params.push(q.organizationId);
  }
  if (q.projectId !== undefined) {
    // Players carry no project: they belong to a game of the project.
    where.push(
      q.kind === 'events'
        ? 'p.project_id = ?'
        : 'p.game_id in (select g.id from ledger.games g where g.project_id = ?)',
    );
    params.push(q.projectId);
  }
  if (q.gameId !== undefined) {
    where.push('p.game_id = ?');
    params.push(q.gameId);
  }
  if (q.after !== undefined) {
    where.push('(p.created_at, p.id) < (?::timestamptz, ?::uuid)');
    params.push(q.after.createdAt, q.after.id);
  }
  const table = q.kind === 'events' ? 'ledger.events' : 'ledger.players';
  const columns = q.kind === 'events' ? EVENT_COLUMNS : PLAYER_COLUMNS;
  const rows = await queryRows(
    em,
    `select ${columns}, ${isoMicrosSql('p.created_at', 'position_at')} from ${table} p
      where ${where.join(' and ')} order by p.created_at desc, p.id desc limit ?`,
    [...params, q.take],
  );
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
}

const DECISION_FILTER_COLUMNS: Array<[keyof DecisionFilters, string]> = [
  ['organizationId', 'p.organization_id = ?'],
  ['projectId', 'p.project_id = ?'],
  ['gameId', 'p.game_id = ?'],
  ['playerId', 'p.player_id = ?'],
  ['eventId', 'p.event_id = ?'],
  ['status', 'p.status = ?'],
  ['reason', 'p.reason = ?'],
  ['eventType', 'p.event_type = ?'],
];

/** The `where` of a decision search (membership first), and its parameters. */
function decisionsWhere(identityUserId: string, f: DecisionFilters): { where: string[]; params: unknown[] } {
  const where = [`p.organization_id in ${MEMBER_ORGS}`];
  const params: unknown[] = [identityUserId];
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
 * decisions, ascending for newer ones. The planner reads it through the most selective index the filters lead with:
 * events_by_player (player_id, created_at desc, id desc), events_one_decision (event_id, game_id), events_by_game,
 * events_by_project, events_by_organization; status, reason, event type and the window filter that range
 * (test/integration/graphql/decisions.test.ts checks the plans).
 */
export function decisionsStatement(q: DecisionsQuery): { sql: string; params: unknown[] } {
  const { where, params } = decisionsWhere(q.identityUserId, q);
  if (q.cursor !== undefined) {
    where.push(`(p.created_at, p.id) ${q.older ? '<' : '>'} (?::timestamptz, ?::uuid)`);
    params.push(q.cursor.createdAt, q.cursor.id);
  }
  const order = q.older ? 'desc' : 'asc';
  return {
    sql: `select ${EVENT_COLUMNS}, ${isoMicrosSql('p.created_at', 'position_at')},
        (select pl.external_player_id from ledger.players pl where pl.id = p.player_id and pl.game_id = p.game_id)
          as external_player_id, p.metadata
      from ledger.events p
      where ${where.join(' and ')} order by p.created_at ${order}, p.id ${order} limit ?`,
    params: [...params, q.take],
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
  if (q.cursor !== undefined) {
    const { where, params } = decisionsWhere(q.identityUserId, q);
    // The cursor's own decision counts: it is on the previous page.
    where.push(`(p.created_at, p.id) ${q.older ? '>=' : '<='} (?::timestamptz, ?::uuid)`);
    params.push(q.cursor.createdAt, q.cursor.id);
    const behind = await queryRows(em, `select 1 from ledger.events p where ${where.join(' and ')} limit 1`, params);
    beyondCursor = behind.length > 0;
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
  return all(
    em,
    `select (extract(epoch from date_bin(make_interval(secs => ?), e.created_at, ?::timestamptz)) * 1000)::bigint
              as bucket_start_ms,
            e.status, e.reason, count(*)::int as count, coalesce(sum(e.reward_credits), 0)::bigint as reward_credits
       from ledger.events e
      where e.game_id = ? and e.created_at >= ?::timestamptz and e.created_at < ?::timestamptz
      group by 1, 2, 3
      order by 1, 2, 3`,
    [q.bucketSeconds, q.from.toISOString(), q.gameId, q.from.toISOString(), q.to.toISOString()],
    decisionStatsRow,
  );
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
