// Console tables of the ledger schema: organizations, members, projects, games, rules, keys and the audit log.
// Plain SQL through MikroORM's connection: every action is a handful of statements with explicit row locks, and
// the lock order (organization -> project -> game -> the rest) must be visible in the code, not left to a unit
// of work. Locks are `for no key update`: they exclude other console writers but not the `key share` locks that
// inserts of events and players take through their foreign keys, so the event path is never blocked by a lock on
// an organization or a project row.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Database } from '#runtime/db/database.ts';
import { credits, type Field, flag, queryRows, rowReader, text } from '../db/rows.ts';
import { WebhookTx } from '../webhooks/repository.ts';

export type Role = 'owner' | 'admin' | 'viewer';

export interface OrganizationRow {
  id: string;
  name: string;
  unlimitedFunding: boolean;
  balanceCredits: bigint;
}

export interface ProjectRow {
  id: string;
  organizationId: string;
  name: string;
  maxPayoutCredits: bigint;
  budgetCredits: bigint;
  allocatedCredits: bigint;
}

export interface GameRow {
  id: string;
  projectId: string;
  name: string;
  status: string;
  organizationId: string;
  maxPayoutCredits: bigint;
  dailyPlayerCapCredits: bigint;
  budgetCredits: bigint;
  spentCredits: bigint;
}

export interface MemberRow {
  id: string;
  organizationId: string;
  identityUserId: string;
  role: Role;
}

export interface RuleRow {
  id: string;
  gameId: string;
  rewardCredits: bigint;
  active: boolean;
}

const ruleRow = rowReader<RuleRow>({
  id: text('id'),
  gameId: text('game_id'),
  rewardCredits: credits('reward_credits'),
  active: flag('active'),
});

/** What an audit entry names (CONTRACT section 11.2). */
export type AuditTargetKind =
  | 'organization'
  | 'project'
  | 'game'
  | 'rule'
  | 'key'
  | 'member'
  | 'webhookEndpoint'
  | 'player';

/** One audit entry as a console action writes it. */
export interface AuditEntryInput {
  organizationId: string;
  actor: string;
  actorEmail: string | undefined;
  action: string;
  targetKind: AuditTargetKind;
  targetId: string;
  projectId: string | undefined;
  gameId: string | undefined;
  /** field -> {from, to}; never a key value or a secret. */
  changes: Record<string, { from: unknown; to: unknown }>;
  requestId: string | undefined;
  /** What 0001's column held (the funding invariant reads amountCredits from it). */
  details: Record<string, unknown>;
}

/** The table of an object addressed by id, for finding its organization before anything is locked. */
export type OwnedTable = 'projects' | 'games' | 'rules' | 'keys' | 'members' | 'webhook_endpoints';

const organizationRow = rowReader<OrganizationRow>({
  id: text('id'),
  name: text('name'),
  unlimitedFunding: flag('unlimited_funding'),
  balanceCredits: credits('balance_credits'),
});
const projectRow = rowReader<ProjectRow>({
  id: text('id'),
  organizationId: text('organization_id'),
  name: text('name'),
  maxPayoutCredits: credits('max_payout_credits'),
  budgetCredits: credits('budget_credits'),
  allocatedCredits: credits('allocated_credits'),
});
const gameRow = rowReader<GameRow>({
  id: text('id'),
  projectId: text('project_id'),
  name: text('name'),
  status: text('status'),
  organizationId: text('organization_id'),
  maxPayoutCredits: credits('max_payout_credits'),
  dailyPlayerCapCredits: credits('daily_player_cap_credits'),
  budgetCredits: credits('budget_credits'),
  spentCredits: credits('spent_credits'),
});
const memberRow = rowReader<MemberRow>({
  id: text('id'),
  organizationId: text('organization_id'),
  identityUserId: text('identity_user_id'),
  role: text<Role>('role'),
});

/** Repository methods inside one transaction. */
export class ConsoleTx {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /** The webhook statements of this transaction (webhooks/repository.ts). */
  get webhooks(): WebhookTx {
    return new WebhookTx(this.em);
  }

  /** The first row of a statement, read by `read`; undefined when there is none. */
  private async first<T>(sql: string, params: unknown[], read: Field<T>): Promise<T | undefined> {
    const row = (await queryRows(this.em, sql, params))[0];
    return row === undefined ? undefined : read(row);
  }

  /** The organization an object belongs to (never changes, so it is read without a lock). */
  async organizationOf(table: OwnedTable, id: string): Promise<string | undefined> {
    return this.first(`select organization_id from ledger.${table} where id = ?`, [id], text('organization_id'));
  }

  /** The project of a game (never changes). */
  async projectOfGame(gameId: string): Promise<string | undefined> {
    return this.first(`select project_id from ledger.games where id = ?`, [gameId], text('project_id'));
  }

  async lockOrganization(id: string): Promise<OrganizationRow | undefined> {
    return this.first(
      `select id, name, unlimited_funding, balance_credits from ledger.organizations where id = ? for no key update`,
      [id],
      organizationRow,
    );
  }

  async memberRole(organizationId: string, identityUserId: string): Promise<Role | undefined> {
    return this.first(
      `select role from ledger.members where organization_id = ? and identity_user_id = ?`,
      [organizationId, identityUserId],
      text<Role>('role'),
    );
  }

  async lockProject(id: string): Promise<ProjectRow | undefined> {
    return this.first(
      `select id, organization_id, name, max_payout_credits, budget_credits, allocated_credits
         from ledger.projects where id = ? for no key update`,
      [id],
      projectRow,
    );
  }

  /** What the project's games have paid out so far (the project's spentCredits). */
  async projectSpent(projectId: string): Promise<bigint> {
    const spent = await this.first(
      `select coalesce(sum(spent_credits), 0)::text as spent from ledger.games where project_id = ?`,
      [projectId],
      credits('spent'),
    );
    return spent ?? 0n;
  }

  async lockGame(id: string): Promise<GameRow | undefined> {
    return this.first(
      `select id, project_id, name, status, organization_id, max_payout_credits, daily_player_cap_credits,
              budget_credits, spent_credits
         from ledger.games where id = ? for no key update`,
      [id],
      gameRow,
    );
  }

  /** The game of a rule, a key or a webhook endpoint (never changes), read without a lock. */
  async gameOf(table: 'rules' | 'keys' | 'webhook_endpoints', id: string): Promise<string | undefined> {
    return this.first(`select game_id from ledger.${table} where id = ?`, [id], text('game_id'));
  }

  /** A rule's values before an update (the audit entry's `from`), locked after its organization. */
  async lockRule(id: string): Promise<RuleRow | undefined> {
    return this.first(
      `select id, game_id, reward_credits, active from ledger.rules where id = ? for no key update`,
      [id],
      ruleRow,
    );
  }

  async lockMember(id: string): Promise<MemberRow | undefined> {
    return this.first(
      `select id, organization_id, identity_user_id, role from ledger.members where id = ? for no key update`,
      [id],
      memberRow,
    );
  }

  async insertOrganization(name: string, unlimitedFunding: boolean, createdBy: string): Promise<string> {
    const id = randomUUID();
    await this.em.execute(
      `insert into ledger.organizations (id, name, unlimited_funding, balance_credits, created_by)
       values (?, ?, ?, 0, ?)`,
      [id, name, unlimitedFunding, createdBy],
    );
    return id;
  }

  async addBalance(organizationId: string, deltaCredits: bigint): Promise<void> {
    await this.em.execute(`update ledger.organizations set balance_credits = balance_credits + ? where id = ?`, [
      deltaCredits.toString(),
      organizationId,
    ]);
  }

  async insertProject(organizationId: string, name: string, maxPayoutCredits: bigint): Promise<string> {
    const id = randomUUID();
    await this.em.execute(
      `insert into ledger.projects (id, organization_id, name, max_payout_credits) values (?, ?, ?, ?)`,
      [id, organizationId, name, maxPayoutCredits.toString()],
    );
    return id;
  }

  async updateProject(id: string, changes: { name?: string; maxPayoutCredits?: bigint }): Promise<void> {
    await this.update('projects', id, { name: changes.name, max_payout_credits: changes.maxPayoutCredits });
  }

  /** Adds to the project's budget (allocateProject) or to what is carved out of it for games (allocateGame). */
  async addToProject(id: string, column: 'budget_credits' | 'allocated_credits', delta: bigint): Promise<void> {
    await this.em.execute(`update ledger.projects set ${column} = ${column} + ? where id = ?`, [delta.toString(), id]);
  }

  async insertGame(
    project: { id: string; organizationId: string },
    game: { name: string; platform: string; maxPayoutCredits: bigint; dailyPlayerCapCredits: bigint },
  ): Promise<string> {
    const id = randomUUID();
    await this.em.execute(
      `insert into ledger.games (id, project_id, organization_id, slug, name, platform, status, max_payout_credits,
                                 daily_player_cap_credits)
       values (?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
      [
        id,
        project.id,
        project.organizationId,
        randomUUID(),
        game.name,
        game.platform,
        game.maxPayoutCredits.toString(),
        game.dailyPlayerCapCredits.toString(),
      ],
    );
    return id;
  }

  async updateGame(
    id: string,
    changes: { name?: string; maxPayoutCredits?: bigint; dailyPlayerCapCredits?: bigint; status?: string },
  ): Promise<void> {
    await this.update('games', id, {
      name: changes.name,
      max_payout_credits: changes.maxPayoutCredits,
      daily_player_cap_credits: changes.dailyPlayerCapCredits,
      status: changes.status,
    });
  }

  /**
   * Advances the game's clock by `seconds` unless it would then be more than `maxAheadSeconds` ahead of real time;
   * the new offset, or undefined when refused (the caller holds the game's lock).
   */
  async advanceGameClock(id: string, seconds: number, maxAheadSeconds: number): Promise<bigint | undefined> {
    return this.first(
      `update ledger.games set clock_offset_seconds = clock_offset_seconds + ?
        where id = ? and clock_offset_seconds + ? <= ?
        returning clock_offset_seconds`,
      [seconds, id, seconds, maxAheadSeconds],
      credits('clock_offset_seconds'),
    );
  }

  /**
   * A test player of the game: a new active account of the sandbox's platform (identity.native_accounts, no native
   * app, no device permit) and the game's player linked to it; undefined when the external id is taken in the game.
   */
  async insertTestPlayer(
    game: { id: string; organizationId: string },
    externalPlayerId: string,
  ): Promise<string | undefined> {
    const taken = await this.first(
      `select id from ledger.players where game_id = ? and external_player_id = ? for key share`,
      [game.id, externalPlayerId],
      text('id'),
    );
    if (taken !== undefined) return undefined;
    const creditsUserId = randomUUID();
    await this.em.execute(
      `insert into identity.native_accounts (credits_user_id, status, username) values (?, 'active', null)`,
      [creditsUserId],
    );
    return this.first(
      `insert into ledger.players (id, game_id, organization_id, external_player_id, credits_user_id, linked_at, test)
       values (?, ?, ?, ?, ?, now(), true)
       on conflict on constraint players_one_per_external_id do nothing
       returning id`,
      [randomUUID(), game.id, game.organizationId, externalPlayerId, creditsUserId],
      text('id'),
    );
  }

  async addGameBudget(id: string, delta: bigint): Promise<void> {
    await this.em.execute(`update ledger.games set budget_credits = budget_credits + ? where id = ?`, [
      delta.toString(),
      id,
    ]);
  }

  /** Inserts a new active rule; undefined when the game already has a rule for this event type. */
  async insertRule(
    game: { id: string; organizationId: string },
    eventType: string,
    rewardCredits: bigint,
  ): Promise<string | undefined> {
    return this.first(
      `insert into ledger.rules (id, game_id, organization_id, event_type, reward_credits, active)
       values (?, ?, ?, ?, ?, true)
       on conflict on constraint rules_one_per_event_type do nothing
       returning id`,
      [randomUUID(), game.id, game.organizationId, eventType, rewardCredits.toString()],
      text('id'),
    );
  }

  async updateRule(id: string, changes: { rewardCredits?: bigint; active?: boolean }): Promise<void> {
    await this.update('rules', id, { reward_credits: changes.rewardCredits, active: changes.active });
  }

  async insertKey(
    game: { id: string; organizationId: string },
    key: { kind: string; name: string; prefix: string; publicKey: string | null; hash: Buffer },
  ): Promise<string> {
    const id = randomUUID();
    await this.em.execute(
      `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, public_key, key_hash)
       values (?, ?, ?, ?, ?, ?, ?, ?)`,
      [id, game.id, game.organizationId, key.kind, key.name, key.prefix, key.publicKey, key.hash],
    );
    return id;
  }

  /** Revokes a key; revoking a revoked key keeps its first revocation time. */
  async revokeKey(id: string): Promise<void> {
    await this.em.execute(`update ledger.keys set revoked_at = coalesce(revoked_at, now()) where id = ?`, [id]);
  }

  /**
   * Inserts a member; undefined when the identity is already a member of the organization. `joined`: the identity
   * itself acts (creates the organization); a member added by someone else joins by acceptMembership.
   */
  async insertMember(
    organizationId: string,
    identityUserId: string,
    role: Role,
    joined: boolean,
  ): Promise<string | undefined> {
    return this.first(
      `insert into ledger.members (id, organization_id, identity_user_id, role, joined_at)
       values (?, ?, ?, ?, case when ? then now() end)
       on conflict on constraint members_one_per_identity do nothing
       returning id`,
      [randomUUID(), organizationId, identityUserId, role, joined],
      text('id'),
    );
  }

  /** The caller accepts their membership (idempotent: the first acceptance's time stays); the member's id. */
  async joinMember(organizationId: string, identityUserId: string): Promise<string | undefined> {
    return this.first(
      `update ledger.members set joined_at = coalesce(joined_at, now())
        where organization_id = ? and identity_user_id = ? returning id`,
      [organizationId, identityUserId],
      text('id'),
    );
  }

  async updateMemberRole(id: string, role: Role): Promise<void> {
    await this.em.execute(`update ledger.members set role = ? where id = ?`, [role, id]);
  }

  async deleteMember(id: string): Promise<void> {
    await this.em.execute(`delete from ledger.members where id = ?`, [id]);
  }

  /**
   * Who changed what, in the same transaction as the change (CONTRACT section 11.2). The actor's e-mail is stored
   * only when the actor is a joined member of the organization once the action is done (docs/identity.md, "Member
   * e-mails": an e-mail is shown to an organization only where its identity joined by its own act).
   */
  async audit(entry: AuditEntryInput): Promise<void> {
    await this.em.execute(
      `insert into ledger.audit_log (organization_id, actor, actor_email, action, target_kind, target_id, project_id,
                                     game_id, changes, request_id, details)
       values (?, ?, case when exists (select 1 from ledger.members m
                                        where m.organization_id = ? and m.identity_user_id = ?
                                          and m.joined_at is not null) then ?::text end,
               ?, ?, ?, ?, ?, ?::jsonb, ?, ?::jsonb)`,
      [
        entry.organizationId,
        entry.actor,
        entry.organizationId,
        entry.actor,
        entry.actorEmail || null,
        entry.action,
        entry.targetKind,
        entry.targetId,
        entry.projectId ?? null,
        entry.gameId ?? null,
        JSON.stringify(entry.changes),
        entry.requestId || null,
        JSON.stringify(entry.details),
      ],
    );
  }

  /** Sets the given columns (undefined ones are left alone); column names come from this file only. */
  private async update(
    table: 'projects' | 'games' | 'rules',
    id: string,
    values: Record<string, string | bigint | boolean | undefined>,
  ): Promise<void> {
    const set: string[] = [];
    const params: unknown[] = [];
    for (const [column, value] of Object.entries(values)) {
      if (value === undefined) continue;
      set.push(`${column} = ?`);
      params.push(typeof value === 'bigint' ? value.toString() : value);
    }
    if (set.length === 0) return;
    await this.em.execute(`update ledger.${table} set ${set.join(', ')} where id = ?`, [...params, id]);
  }
}

/** Transactions over the console tables. */
export class ConsoleRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /**
   * One read-committed transaction; the callback takes its row locks in the documented order. Run again from the
   * start on a serialization failure or deadlock (Database.transaction).
   */
  transaction<T>(work: (tx: ConsoleTx) => Promise<T>): Promise<T> {
    return this.db.transaction((em) => work(new ConsoleTx(em)));
  }

  /** A read-only transaction on one snapshot of the database (repeatable read): the snapshot's lists agree. */
  read<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction((em) => work(em), { isolationLevel: 'repeatable read', readOnly: true });
  }

  /**
   * The key of the records cursor's MAC: 32 random bytes created on first use. Every replica inserts a candidate
   * and reads back the one that won, so all agree.
   */
  async cursorKey(candidate: Buffer): Promise<Buffer> {
    await this.db.query(`insert into ledger.settings (id, cursor_key) values (true, ?) on conflict (id) do nothing`, [
      candidate,
    ]);
    const rows = await this.db.query<{ cursor_key: Buffer }>(`select cursor_key from ledger.settings where id`);
    const key = rows[0]?.cursor_key;
    if (key?.length !== 32) throw new Error('ledger.settings.cursor_key is missing or malformed');
    return key;
  }
}
