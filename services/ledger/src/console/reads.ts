// Reads of the console: the snapshot's lists and the records pages. Everything is scoped in SQL to the
// organizations where the caller is a member right now, so membership is checked by every query.
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoMicrosSql, isoSql } from '#runtime/db/sql.ts';
import type { CursorPosition, RecordKind } from '../domain/records-cursor.ts';

export interface Organization {
  id: string;
  name: string;
  unlimitedFunding: boolean;
  balanceCredits: bigint;
  role: string;
  createdAt: string;
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

type Raw = Record<string, unknown>;
const str = (v: unknown) => v as string;
const opt = (v: unknown) => (v === null || v === undefined ? undefined : (v as string));
const credits = (v: unknown) => BigInt(v as string | number);

/** `organization_id in (...)`: the organizations where the identity (the first parameter) is a member. */
const MEMBER_ORGS = `(select m.organization_id from ledger.members m where m.identity_user_id = ?)`;

const toPlayer = (r: Raw): Player => ({
  id: str(r.id),
  gameId: str(r.game_id),
  organizationId: str(r.organization_id),
  externalPlayerId: str(r.external_player_id),
  creditsUserId: opt(r.credits_user_id),
  username: opt(r.username),
  linkedAt: opt(r.linked_at),
  createdAt: str(r.created_at),
});
const PLAYER_COLUMNS = `p.id, p.game_id, p.organization_id, p.external_player_id, p.credits_user_id, p.username,
  ${isoSql('p.linked_at', 'linked_at')}, ${isoSql('p.created_at', 'created_at')}`;

const toEvent = (r: Raw): EventRecord => ({
  id: str(r.id),
  eventId: str(r.event_id),
  gameId: str(r.game_id),
  organizationId: str(r.organization_id),
  playerId: str(r.player_id),
  eventType: str(r.event_type),
  occurredAt: str(r.occurred_at),
  status: str(r.status),
  reason: opt(r.reason),
  rewardCredits: credits(r.reward_credits),
  createdAt: str(r.created_at),
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

async function all(em: EntityManager, sql: string, params: unknown[]): Promise<Raw[]> {
  return (await em.execute(sql, params)) as Raw[];
}

/** Everything the snapshot shows, read on one database snapshot (the caller's transaction). */
export async function readSnapshot(
  em: EntityManager,
  identityUserId: string,
  limits: { players: number; events: number },
): Promise<SnapshotLists> {
  const id = [identityUserId];
  const organizations = (
    await all(
      em,
      `select o.id, o.name, o.unlimited_funding, o.balance_credits, m.role, ${isoSql('o.created_at', 'created_at')}
         from ledger.organizations o join ledger.members m on m.organization_id = o.id
        where m.identity_user_id = ? order by o.created_at, o.id`,
      id,
    )
  ).map(
    (r): Organization => ({
      id: str(r.id),
      name: str(r.name),
      unlimitedFunding: r.unlimited_funding as boolean,
      balanceCredits: credits(r.balance_credits),
      role: str(r.role),
      createdAt: str(r.created_at),
    }),
  );
  if (organizations.length === 0) {
    return { organizations, projects: [], games: [], keys: [], rules: [], members: [], players: [], events: [] };
  }
  const projects = (
    await all(
      em,
      `select p.id, p.organization_id, p.name, p.max_payout_credits, p.budget_credits,
              (select coalesce(sum(g.spent_credits), 0) from ledger.games g where g.project_id = p.id)::text as spent,
              ${isoSql('p.created_at', 'created_at')}
         from ledger.projects p where p.organization_id in ${MEMBER_ORGS} order by p.created_at, p.id`,
      id,
    )
  ).map(
    (r): Project => ({
      id: str(r.id),
      organizationId: str(r.organization_id),
      name: str(r.name),
      maxPayoutCredits: credits(r.max_payout_credits),
      budgetCredits: credits(r.budget_credits),
      spentCredits: credits(r.spent),
      createdAt: str(r.created_at),
    }),
  );
  const games = (
    await all(
      em,
      `select p.id, p.project_id, p.organization_id, p.name, p.platform, p.status, p.max_payout_credits,
              p.budget_credits, p.spent_credits, p.daily_player_cap_credits, ${isoSql('p.created_at', 'created_at')}
         from ledger.games p where p.organization_id in ${MEMBER_ORGS} order by p.created_at, p.id`,
      id,
    )
  ).map(
    (r): Game => ({
      id: str(r.id),
      projectId: str(r.project_id),
      organizationId: str(r.organization_id),
      name: str(r.name),
      platform: str(r.platform),
      status: str(r.status),
      maxPayoutCredits: credits(r.max_payout_credits),
      budgetCredits: credits(r.budget_credits),
      spentCredits: credits(r.spent_credits),
      dailyPlayerCapCredits: credits(r.daily_player_cap_credits),
      createdAt: str(r.created_at),
    }),
  );
  // Key metadata only: the hash never leaves the database, public values are shown again (they are not secret).
  const keys = (
    await all(
      em,
      `select p.id, p.game_id, p.organization_id, p.kind, p.name, p.prefix, p.public_key,
              ${isoSql('p.created_at', 'created_at')}, ${isoSql('p.revoked_at', 'revoked_at')}
         from ledger.keys p where p.organization_id in ${MEMBER_ORGS} order by p.created_at, p.id`,
      id,
    )
  ).map(
    (r): Key => ({
      id: str(r.id),
      gameId: str(r.game_id),
      organizationId: str(r.organization_id),
      kind: str(r.kind),
      name: str(r.name),
      prefix: str(r.prefix),
      publicKey: r.kind === 'public' ? opt(r.public_key) : undefined,
      createdAt: str(r.created_at),
      revokedAt: opt(r.revoked_at),
    }),
  );
  const rules = (
    await all(
      em,
      `select p.id, p.game_id, p.organization_id, p.event_type, p.reward_credits, p.active,
              ${isoSql('p.created_at', 'created_at')}
         from ledger.rules p where p.organization_id in ${MEMBER_ORGS} order by p.created_at, p.id`,
      id,
    )
  ).map(
    (r): Rule => ({
      id: str(r.id),
      gameId: str(r.game_id),
      organizationId: str(r.organization_id),
      eventType: str(r.event_type),
      rewardCredits: credits(r.reward_credits),
      active: r.active as boolean,
      createdAt: str(r.created_at),
    }),
  );
  const members = (
    await all(
      em,
      `select p.id, p.organization_id, p.identity_user_id, p.role, ${isoSql('p.created_at', 'created_at')}
         from ledger.members p where p.organization_id in ${MEMBER_ORGS} order by p.created_at, p.id`,
      id,
    )
  ).map(
    (r): Member => ({
      id: str(r.id),
      organizationId: str(r.organization_id),
      identityUserId: str(r.identity_user_id),
      role: str(r.role),
      createdAt: str(r.created_at),
    }),
  );
  const players = (
    await all(
      em,
      `select ${PLAYER_COLUMNS} from ledger.players p
        where p.organization_id in ${MEMBER_ORGS} and p.credits_user_id is not null
        order by p.created_at desc, p.id desc limit ?`,
      [identityUserId, limits.players],
    )
  ).map(toPlayer);
  const events = (
    await all(
      em,
      `select ${EVENT_COLUMNS} from ledger.events p where p.organization_id in ${MEMBER_ORGS}
        order by p.created_at desc, p.id desc limit ?`,
      [identityUserId, limits.events],
    )
  ).map(toEvent);
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

/** Whether the caller is a member of the organization owning the object (false for no such object). */
export async function canSee(
  em: EntityManager,
  identityUserId: string,
  table: 'organizations' | 'projects' | 'games',
  id: string,
): Promise<boolean> {
  const column = table === 'organizations' ? 'id' : 'organization_id';
  const rows = await all(em, `select 1 from ledger.${table} t where t.id = ? and t.${column} in ${MEMBER_ORGS}`, [
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
  const rows = await all(
    em,
    `select ${columns}, ${isoMicrosSql('p.created_at', 'position_at')} from ${table} p
      where ${where.join(' and ')} order by p.created_at desc, p.id desc limit ?`,
    [...params, q.take],
  );
  return {
    players: q.kind === 'players' ? rows.map(toPlayer) : [],
    events: q.kind === 'events' ? rows.map(toEvent) : [],
    positions: rows.map((r) => ({ createdAt: str(r.position_at), id: str(r.id) })),
  };
}

export interface DecisionStatsRow {
  bucketStartMs: number;
  status: string;
  reason: string | undefined;
  count: number;
  rewardCredits: number;
}

/**
 * The decisions of one game within [from, to), counted per bucket, status and reason: one range scan of the
 * events_by_game index (game_id, created_at desc, id desc), grouped in SQL (docs/console-ui.md shows the plan).
 */
export async function readDecisionStats(
  em: EntityManager,
  q: { gameId: string; from: Date; to: Date; bucketSeconds: number },
): Promise<DecisionStatsRow[]> {
  const rows = await all(
    em,
    `select (extract(epoch from date_bin(make_interval(secs => ?), e.created_at, ?::timestamptz)) * 1000)::bigint
              as bucket_start_ms,
            e.status, e.reason, count(*)::int as count, coalesce(sum(e.reward_credits), 0)::bigint as reward_credits
       from ledger.events e
      where e.game_id = ? and e.created_at >= ?::timestamptz and e.created_at < ?::timestamptz
      group by 1, 2, 3
      order by 1, 2, 3`,
    [q.bucketSeconds, q.from.toISOString(), q.gameId, q.from.toISOString(), q.to.toISOString()],
  );
  return rows.map((r) => ({
    bucketStartMs: Number(r.bucket_start_ms),
    status: str(r.status),
    reason: r.reason === null || r.reason === undefined ? undefined : str(r.reason),
    count: Number(r.count),
    rewardCredits: Number(r.reward_credits),
  }));
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
  const rows = await all(
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
  return {
    intents: rows.map(
      (r): LinkIntent => ({
        id: str(r.id),
        gameId: str(r.game_id),
        organizationId: str(r.organization_id),
        playerId: str(r.player_id),
        externalPlayerId: str(r.external_player_id),
        state: str(r.state) as LinkIntent['state'],
        createdAt: str(r.created_at),
        expiresAt: str(r.expires_at),
        consumedAt: opt(r.consumed_at),
      }),
    ),
    positions: rows.map((r) => ({ createdAt: str(r.position_at), id: str(r.id) })),
  };
}
