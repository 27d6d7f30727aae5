// The console actions (spec: POST /api/developer/v1/console; CONTRACT section 8; and acceptMembership).
// Each is one transaction that locks what it reads to decide, always in the order organization -> project -> game ->
// member, so two actions can never wait on each other in a cycle. Membership and role are checked inside the
// transaction, after the organization row is locked: a member removed or demoted concurrently is seen. The gateway
// admits the developer (invitation recheck) immediately before it calls, i.e. before the organization is locked.
import type {
  AcceptMembershipAction,
  AddMemberAction,
  AdvanceGameClockAction,
  AllocateGameAction,
  AllocateProjectAction,
  ConsolePrincipal,
  CreateGameAction,
  CreateOrganizationAction,
  CreateProjectAction,
  CreateRuleAction,
  CreateTestPlayerAction,
  FundOrganizationAction,
  IssueKeyAction,
  RemoveMemberAction,
  RevokeKeyAction,
  UpdateGameAction,
  UpdateMemberAction,
  UpdateProjectAction,
  UpdateRuleAction,
} from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import type {
  CreateWebhookEndpointAction,
  DeleteWebhookEndpointAction,
  RecoverWebhookDeliveriesAction,
  RedeliverWebhookAction,
  RotateWebhookSecretAction,
  SendTestWebhookAction,
  UpdateWebhookEndpointAction,
} from '#runtime/contracts/gen/rewards/v1/webhooks_pb.ts';
import {
  CREDITS_MAX_BIGINT,
  EVENT_TYPE_REGEX,
  GAME_STATUSES as VOCABULARY_GAME_STATUSES,
  PLATFORMS as VOCABULARY_PLATFORMS,
} from '#runtime/contracts/vocabulary.ts';
import { issueKeyValue, type KeyKind } from '#runtime/credentials/keys.ts';
import { AppError } from '#runtime/errors.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import { checkWebhookUrl } from '../webhooks/addresses.ts';
import { WEBHOOK_ENDPOINTS_PER_GAME_MAX } from '../webhooks/limits.ts';
import type { EndpointRow } from '../webhooks/repository.ts';
import { encryptSecret, newWebhookSecret } from '../webhooks/secrets.ts';
import type {
  AuditTargetKind,
  ConsoleRepository,
  ConsoleTx,
  OrganizationRow,
  OwnedTable,
  Role,
} from './write-repository.ts';

const CREDITS_MAX = CREDITS_MAX_BIGINT;
const EVENT_TYPE = EVENT_TYPE_REGEX;
const PLATFORMS = new Set<string>(VOCABULARY_PLATFORMS);
const GAME_STATUSES = new Set<string>(VOCABULARY_GAME_STATUSES);
const MEMBER_ROLES = new Set<Role>(['admin', 'viewer']);

/** advanceGameClock's `seconds`: 1 to a year (CONTRACT section 11.2). */
export const CLOCK_ADVANCE_SECONDS_MAX = 31_536_000;
/** How far a game's clock may be ahead of real time, in seconds (ten years). */
export const CLOCK_AHEAD_SECONDS_MAX = 315_360_000;
/** rotateWebhookSecret's `overlapSeconds`: 0 to a week, absent: a day. */
export const WEBHOOK_SECRET_OVERLAP_SECONDS_MAX = 604_800;
export const WEBHOOK_SECRET_OVERLAP_SECONDS_DEFAULT = 86_400;
/** recoverWebhookDeliveries: the most failed messages one action sends again (one transaction's update). */
export const WEBHOOK_RECOVER_MAX = 10_000;
// The document's player id rule (the players table's CHECK says the same).
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is refused.
const EXTERNAL_PLAYER_ID = /^[^\u0000-\u001f\u007f]{1,200}$/u;

export interface ActionResult {
  id: string;
  issuedKey?: string;
  kind?: KeyKind;
  /** createWebhookEndpoint, rotateWebhookSecret: the signing secret, returned this once. */
  secret?: string;
}

/** The event types an endpoint may subscribe to (CONTRACT section 11.1). */
export const WEBHOOK_EVENT_TYPES = [
  'decision.accepted',
  'decision.rejected',
  'game.budget_low',
  'game.budget_exhausted',
  'game.paused',
  'game.resumed',
] as const;

/** What the webhook actions need of the ledger's configuration. */
export interface WebhookSettings {
  /** WEBHOOK_ALLOW_PRIVATE_ADDRESSES (true on the development default). */
  allowPrivateAddresses: boolean;
  /** 443, 80 and WEBHOOK_ALLOWED_PORTS: the ports of public endpoints (any port when private addresses are allowed). */
  allowedPorts: readonly number[];
  /** The key secrets are encrypted with (WEBHOOK_SECRET_KEY, or the database's on the development default). */
  secretKey: () => Promise<Buffer>;
}

function eventTypes(values: string[], field: string): string[] {
  const known = new Set<string>(WEBHOOK_EVENT_TYPES);
  if (values.length === 0 || values.some((value) => !known.has(value)) || new Set(values).size !== values.length) {
    throw invalid(`${field} must be a non-empty list of distinct values of ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
  }
  return values;
}

const notFound = () => new AppError('not_found', 'No such object in an organization you are a member of.');
const forbidden = (what: string) => new AppError('forbidden', `Your role in this organization cannot ${what}.`);
const invalid = (message: string) => new AppError('invalid_action', message);

// The edge validates every action against its JSON Schema; these checks repeat the ones the ledger's invariants
// depend on, so that a caller on the transport cannot bypass them.
function amount(value: bigint, field: string): bigint {
  if (value <= 0n || value > CREDITS_MAX) throw invalid(`${field} must be an integer from 1 to ${CREDITS_MAX}.`);
  return value;
}

function ceiling(value: bigint, field: string): bigint {
  if (value < 0n || value > CREDITS_MAX) throw invalid(`${field} must be an integer from 0 to ${CREDITS_MAX}.`);
  return value;
}

function uuid(value: string, field: string): string {
  if (!isUuid(value)) throw invalid(`${field} must be a valid uuid.`);
  return value;
}

function oneOf<T extends string>(values: Set<T>, value: string, field: string): T {
  if (!values.has(value as T)) throw invalid(`${field} must be one of ${[...values].join(', ')}.`);
  return value as T;
}

/** `read`: any member (acceptMembership); `manage`: owner or admin; `members`: the owner. */
export type Permission = 'read' | 'manage' | 'members';

/**
 * The role check of every console action (and of the rule dry-run, which needs what editing rules needs): a
 * non-member gets 404 like a missing object (an organization one does not belong to is not disclosed), a viewer 403,
 * member management needs the owner.
 */
export function checkRole(role: Role | undefined, permission: Permission): Role {
  if (!role) throw notFound();
  if (permission === 'members' && role !== 'owner') throw forbidden('manage members; only its owner can');
  if (permission === 'manage' && role === 'viewer') throw forbidden('change anything; viewers can only read');
  return role;
}

/** An audit entry's `changes`: each field of the action's body (but `type` and the target's id) -> {from, to}. */
export type AuditChanges = Record<string, { from: unknown; to: unknown }>;

/** What an action's audit entry says of its target (CONTRACT section 11.2). */
export interface AuditTarget {
  kind: AuditTargetKind;
  id: string;
  /** The project the target belongs to or is; none above projects (organizations, members). */
  projectId?: string | undefined;
  /** The game the target belongs to or is. */
  gameId?: string | undefined;
  changes: AuditChanges;
}

/** The changes of a creation (or of an amount): every given field from null. */
export function created(fields: Record<string, unknown>): AuditChanges {
  const changes: AuditChanges = {};
  for (const [field, to] of Object.entries(fields)) if (to !== undefined) changes[field] = { from: null, to };
  return changes;
}

/** The changes of an update: each given field from the target's value before it. */
export function changed(before: Record<string, unknown>, given: Record<string, unknown>): AuditChanges {
  const changes: AuditChanges = {};
  for (const [field, to] of Object.entries(given)) {
    if (to !== undefined) changes[field] = { from: before[field] ?? null, to };
  }
  return changes;
}

/** The principal of one console call with the request id it travelled with (the audit entry's requestId). */
export type ConsoleCaller = ConsolePrincipal & { requestId?: string | undefined };

/** Told of each action after its transaction committed (the audit entry's fields); must not throw or wait. */
export type CommittedAction = (action: string, organizationId: string, details: Record<string, unknown>) => void;

export class ConsoleActions {
  private readonly repository: ConsoleRepository;
  private readonly committed: CommittedAction | undefined;
  private readonly webhookSettings: WebhookSettings | undefined;

  constructor(repository: ConsoleRepository, committed?: CommittedAction, webhooks?: WebhookSettings) {
    this.repository = repository;
    this.committed = committed;
    this.webhookSettings = webhooks;
  }

  private get webhooks(): WebhookSettings {
    if (!this.webhookSettings) throw new AppError('internal_error', 'Webhooks are not configured in this ledger.');
    return this.webhookSettings;
  }

  /**
   * Locks the organization and checks the caller's role in it. Non-members get 404 like a missing object (an
   * organization one does not belong to is not disclosed); viewers 403; member management needs the owner.
   */
  private async admit(
    tx: ConsoleTx,
    principal: ConsolePrincipal,
    organizationId: string | undefined,
    permission: Permission,
  ): Promise<OrganizationRow> {
    if (organizationId === undefined) throw notFound();
    // Outsiders are turned away before any lock: they cannot make members wait on their organization's row.
    if (!(await tx.memberRole(organizationId, principal.identityUserId))) throw notFound();
    const organization = await tx.lockOrganization(organizationId);
    if (!organization) throw notFound();
    // Read again under the lock: a concurrent removal or demotion committed before the lock is seen.
    checkRole(await tx.memberRole(organizationId, principal.identityUserId), permission);
    return organization;
  }

  /** Finds the organization of an object, then locks it and checks the caller's role. */
  private async admitFor(
    tx: ConsoleTx,
    principal: ConsolePrincipal,
    table: OwnedTable,
    id: string,
    permission: Permission,
  ): Promise<OrganizationRow> {
    return this.admit(tx, principal, await tx.organizationOf(table, id), permission);
  }

  /**
   * One action as one transaction, its audit entry written in it after the change (a refused action throws before:
   * no entry). `details` is what 0001's column held and what the committed callback is told.
   */
  private run(
    principal: ConsoleCaller,
    action: string,
    work: (tx: ConsoleTx) => Promise<{
      organizationId: string;
      result: ActionResult;
      details: Record<string, unknown>;
      audit: AuditTarget;
    }>,
  ): Promise<ActionResult> {
    if (!principal.identityUserId) throw new AppError('UNAUTHORIZED', 'A developer principal is required.');
    return this.repository
      .transaction(async (tx) => {
        const { organizationId, result, details, audit } = await work(tx);
        await tx.audit({
          organizationId,
          actor: principal.identityUserId,
          actorEmail: principal.email,
          action,
          targetKind: audit.kind,
          targetId: audit.id,
          projectId: audit.projectId,
          gameId: audit.gameId,
          changes: audit.changes,
          requestId: principal.requestId,
          details,
        });
        return { organizationId, result, details };
      })
      .then(({ organizationId, result, details }) => {
        this.committed?.(action, organizationId, details);
        return result;
      });
  }

  async createOrganization(principal: ConsolePrincipal, a: CreateOrganizationAction): Promise<ActionResult> {
    const unlimitedFunding = a.unlimitedFunding ?? false;
    if (unlimitedFunding && !principal.canCreateUnlimitedOrganization) {
      throw AppError.withStatus(
        403,
        'unlimited_funding',
        'Your invitation does not allow organizations with unlimited funding.',
      );
    }
    return this.run(principal, 'createOrganization', async (tx) => {
      const id = await tx.insertOrganization(a.name, unlimitedFunding, principal.identityUserId);
      await tx.insertMember(id, principal.identityUserId, 'owner', true);
      return {
        organizationId: id,
        result: { id },
        details: { name: a.name, unlimitedFunding },
        audit: {
          kind: 'organization',
          id,
          changes: created({ name: a.name, unlimitedFunding: a.unlimitedFunding }),
        },
      };
    });
  }

  async fundOrganization(principal: ConsolePrincipal, a: FundOrganizationAction): Promise<ActionResult> {
    const credits = amount(a.amountCredits, 'amountCredits');
    return this.run(principal, 'fundOrganization', async (tx) => {
      const organization = await this.admit(tx, principal, uuid(a.organizationId, 'organizationId'), 'manage');
      if (organization.unlimitedFunding) {
        throw AppError.withStatus(400, 'unlimited_funding', 'An organization with unlimited funding takes no funding.');
      }
      if (organization.balanceCredits + credits > CREDITS_MAX) {
        throw new AppError('limit_exceeded', `The organization balance cannot exceed ${CREDITS_MAX} credits.`);
      }
      await tx.addBalance(organization.id, credits);
      return {
        organizationId: organization.id,
        result: { id: organization.id },
        details: { amountCredits: Number(credits) },
        audit: { kind: 'organization', id: organization.id, changes: created({ amountCredits: Number(credits) }) },
      };
    });
  }

  async createProject(principal: ConsolePrincipal, a: CreateProjectAction): Promise<ActionResult> {
    const maxPayoutCredits = ceiling(a.maxPayoutCredits, 'maxPayoutCredits');
    return this.run(principal, 'createProject', async (tx) => {
      const organization = await this.admit(tx, principal, uuid(a.organizationId, 'organizationId'), 'manage');
      const id = await tx.insertProject(organization.id, a.name, maxPayoutCredits);
      return {
        organizationId: organization.id,
        result: { id },
        details: { name: a.name, maxPayoutCredits: Number(maxPayoutCredits) },
        audit: {
          kind: 'project',
          id,
          projectId: id,
          changes: created({
            organizationId: organization.id,
            name: a.name,
            maxPayoutCredits: Number(maxPayoutCredits),
          }),
        },
      };
    });
  }

  async updateProject(principal: ConsolePrincipal, a: UpdateProjectAction): Promise<ActionResult> {
    const maxPayoutCredits =
      a.maxPayoutCredits === undefined ? undefined : ceiling(a.maxPayoutCredits, 'maxPayoutCredits');
    return this.run(principal, 'updateProject', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'projects', uuid(a.projectId, 'projectId'), 'manage');
      const project = await tx.lockProject(a.projectId);
      if (!project) throw notFound();
      if (maxPayoutCredits !== undefined) {
        const spent = await tx.projectSpent(project.id);
        if (maxPayoutCredits < project.budgetCredits || maxPayoutCredits < spent) {
          throw new AppError(
            'limit_exceeded',
            `maxPayoutCredits cannot fall below the project's budget (${project.budgetCredits}) or spending (${spent}).`,
          );
        }
      }
      await tx.updateProject(project.id, { name: a.name, maxPayoutCredits });
      const given = {
        name: a.name,
        maxPayoutCredits: maxPayoutCredits === undefined ? undefined : Number(maxPayoutCredits),
      };
      return {
        organizationId: organization.id,
        result: { id: project.id },
        details: given,
        audit: {
          kind: 'project',
          id: project.id,
          projectId: project.id,
          changes: changed({ name: project.name, maxPayoutCredits: Number(project.maxPayoutCredits) }, given),
        },
      };
    });
  }

  async allocateProject(principal: ConsolePrincipal, a: AllocateProjectAction): Promise<ActionResult> {
    const credits = amount(a.amountCredits, 'amountCredits');
    return this.run(principal, 'allocateProject', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'projects', uuid(a.projectId, 'projectId'), 'manage');
      const project = await tx.lockProject(a.projectId);
      if (!project) throw notFound();
      if (!organization.unlimitedFunding && organization.balanceCredits < credits) {
        throw new AppError(
          'insufficient_funds',
          `The organization balance (${organization.balanceCredits}) is below the amount.`,
        );
      }
      if (project.budgetCredits + credits > project.maxPayoutCredits) {
        throw new AppError(
          'project_limit',
          `The project's budget would exceed its ceiling of ${project.maxPayoutCredits} credits.`,
        );
      }
      if (!organization.unlimitedFunding) await tx.addBalance(organization.id, -credits);
      await tx.addToProject(project.id, 'budget_credits', credits);
      return {
        organizationId: organization.id,
        result: { id: project.id },
        details: { amountCredits: Number(credits) },
        audit: {
          kind: 'project',
          id: project.id,
          projectId: project.id,
          changes: created({ amountCredits: Number(credits) }),
        },
      };
    });
  }

  async createGame(principal: ConsolePrincipal, a: CreateGameAction): Promise<ActionResult> {
    const platform = oneOf(PLATFORMS, a.platform, 'platform');
    const maxPayoutCredits = ceiling(a.maxPayoutCredits, 'maxPayoutCredits');
    const dailyPlayerCapCredits = ceiling(a.dailyPlayerCapCredits, 'dailyPlayerCapCredits');
    return this.run(principal, 'createGame', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'projects', uuid(a.projectId, 'projectId'), 'manage');
      const id = await tx.insertGame(
        { id: a.projectId, organizationId: organization.id },
        { name: a.name, platform, maxPayoutCredits, dailyPlayerCapCredits },
      );
      const details = {
        projectId: a.projectId,
        name: a.name,
        platform,
        maxPayoutCredits: Number(maxPayoutCredits),
        dailyPlayerCapCredits: Number(dailyPlayerCapCredits),
      };
      return {
        organizationId: organization.id,
        result: { id },
        details,
        audit: { kind: 'game', id, projectId: a.projectId, gameId: id, changes: created(details) },
      };
    });
  }

  async updateGame(principal: ConsolePrincipal, a: UpdateGameAction): Promise<ActionResult> {
    const maxPayoutCredits =
      a.maxPayoutCredits === undefined ? undefined : ceiling(a.maxPayoutCredits, 'maxPayoutCredits');
    const dailyPlayerCapCredits =
      a.dailyPlayerCapCredits === undefined ? undefined : ceiling(a.dailyPlayerCapCredits, 'dailyPlayerCapCredits');
    const status = a.status === undefined ? undefined : oneOf(GAME_STATUSES, a.status, 'status');
    return this.run(principal, 'updateGame', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'games', uuid(a.gameId, 'gameId'), 'manage');
      const game = await tx.lockGame(a.gameId);
      if (!game) throw notFound();
      if (
        maxPayoutCredits !== undefined &&
        (maxPayoutCredits < game.budgetCredits || maxPayoutCredits < game.spentCredits)
      ) {
        throw new AppError(
          'limit_exceeded',
          `maxPayoutCredits cannot fall below the game's budget (${game.budgetCredits}) or spending (${game.spentCredits}).`,
        );
      }
      await tx.updateGame(game.id, { name: a.name, maxPayoutCredits, dailyPlayerCapCredits, status });
      if (status !== undefined && status !== game.status) {
        // Reported in this transaction (the webhook outbox): nothing reported that did not commit.
        await tx.webhooks.insertMessages({ gameId: game.id }, status === 'paused' ? 'game.paused' : 'game.resumed', {
          gameId: game.id,
          organizationId: organization.id,
          status,
        });
      }
      const given = {
        name: a.name,
        maxPayoutCredits: maxPayoutCredits === undefined ? undefined : Number(maxPayoutCredits),
        dailyPlayerCapCredits: dailyPlayerCapCredits === undefined ? undefined : Number(dailyPlayerCapCredits),
        status,
      };
      const before = {
        name: game.name,
        maxPayoutCredits: Number(game.maxPayoutCredits),
        dailyPlayerCapCredits: Number(game.dailyPlayerCapCredits),
        status: game.status,
      };
      return {
        organizationId: organization.id,
        result: { id: game.id },
        details: given,
        audit: {
          kind: 'game',
          id: game.id,
          projectId: game.projectId,
          gameId: game.id,
          changes: changed(before, given),
        },
      };
    });
  }

  /** Moves the game's clock forward for good (CONTRACT section 11.2, game clocks). */
  async advanceGameClock(principal: ConsolePrincipal, a: AdvanceGameClockAction): Promise<ActionResult> {
    const seconds = a.seconds;
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > CLOCK_ADVANCE_SECONDS_MAX) {
      throw invalid(`seconds must be an integer from 1 to ${CLOCK_ADVANCE_SECONDS_MAX}.`);
    }
    return this.run(principal, 'advanceGameClock', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'games', uuid(a.gameId, 'gameId'), 'manage');
      const game = await tx.lockGame(a.gameId);
      if (!game) throw notFound();
      const offset = await tx.advanceGameClock(game.id, seconds, CLOCK_AHEAD_SECONDS_MAX);
      if (offset === undefined) {
        throw invalid(
          `A game's clock can be at most ${CLOCK_AHEAD_SECONDS_MAX.toLocaleString('en-US')} seconds ` +
            `(${CLOCK_AHEAD_SECONDS_MAX}) ahead of real time.`,
        );
      }
      return {
        organizationId: organization.id,
        result: { id: game.id },
        details: { seconds },
        // The amount of an advance, like a funding amount: from null (CONTRACT section 11.2).
        audit: { kind: 'game', id: game.id, projectId: game.projectId, gameId: game.id, changes: created({ seconds }) },
      };
    });
  }

  /** A player of the game linked to a new test account of the sandbox (CONTRACT section 11.2, test players). */
  async createTestPlayer(principal: ConsolePrincipal, a: CreateTestPlayerAction): Promise<ActionResult> {
    if (!EXTERNAL_PLAYER_ID.test(a.externalPlayerId)) {
      throw invalid('externalPlayerId must be 1 to 200 characters without control characters.');
    }
    return this.run(principal, 'createTestPlayer', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'games', uuid(a.gameId, 'gameId'), 'manage');
      const game = await tx.lockGame(a.gameId);
      if (!game) throw notFound();
      const id = await tx.insertTestPlayer(game, a.externalPlayerId);
      if (!id) throw new AppError('conflict', 'The game already has a player with this externalPlayerId.');
      return {
        organizationId: organization.id,
        result: { id },
        details: { gameId: game.id, externalPlayerId: a.externalPlayerId },
        audit: {
          kind: 'player',
          id,
          projectId: game.projectId,
          gameId: game.id,
          changes: created({ gameId: game.id, externalPlayerId: a.externalPlayerId }),
        },
      };
    });
  }

  async allocateGame(principal: ConsolePrincipal, a: AllocateGameAction): Promise<ActionResult> {
    const credits = amount(a.amountCredits, 'amountCredits');
    return this.run(principal, 'allocateGame', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'games', uuid(a.gameId, 'gameId'), 'manage');
      const projectId = await tx.projectOfGame(a.gameId);
      const project = projectId === undefined ? undefined : await tx.lockProject(projectId);
      const game = await tx.lockGame(a.gameId);
      if (!project || !game) throw notFound();
      const unallocated = project.budgetCredits - project.allocatedCredits;
      if (unallocated < credits) {
        throw new AppError(
          'insufficient_funds',
          `The project's budget not yet allocated to its games (${unallocated}) is below the amount.`,
        );
      }
      if (game.budgetCredits + credits > game.maxPayoutCredits) {
        throw new AppError(
          'game_limit',
          `The game's budget would exceed its ceiling of ${game.maxPayoutCredits} credits.`,
        );
      }
      await tx.addToProject(project.id, 'allocated_credits', credits);
      await tx.addGameBudget(game.id, credits);
      return {
        organizationId: organization.id,
        result: { id: game.id },
        details: { projectId: project.id, amountCredits: Number(credits) },
        audit: {
          kind: 'game',
          id: game.id,
          projectId: project.id,
          gameId: game.id,
          changes: created({ amountCredits: Number(credits) }),
        },
      };
    });
  }

  async createRule(principal: ConsolePrincipal, a: CreateRuleAction): Promise<ActionResult> {
    if (!EVENT_TYPE.test(a.eventType)) throw invalid(`eventType must match ${EVENT_TYPE.source}.`);
    const rewardCredits = amount(a.rewardCredits, 'rewardCredits');
    return this.run(principal, 'createRule', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'games', uuid(a.gameId, 'gameId'), 'manage');
      const id = await tx.insertRule({ id: a.gameId, organizationId: organization.id }, a.eventType, rewardCredits);
      if (!id) throw new AppError('conflict', `The game already has a rule for event type '${a.eventType}'.`);
      const details = { gameId: a.gameId, eventType: a.eventType, rewardCredits: Number(rewardCredits) };
      return {
        organizationId: organization.id,
        result: { id },
        details,
        audit: {
          kind: 'rule',
          id,
          projectId: await tx.projectOfGame(a.gameId),
          gameId: a.gameId,
          changes: created(details),
        },
      };
    });
  }

  async updateRule(principal: ConsolePrincipal, a: UpdateRuleAction): Promise<ActionResult> {
    const rewardCredits = a.rewardCredits === undefined ? undefined : amount(a.rewardCredits, 'rewardCredits');
    return this.run(principal, 'updateRule', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'rules', uuid(a.ruleId, 'ruleId'), 'manage');
      const rule = await tx.lockRule(a.ruleId);
      if (!rule) throw notFound();
      await tx.updateRule(a.ruleId, { rewardCredits, active: a.active });
      const given = {
        rewardCredits: rewardCredits === undefined ? undefined : Number(rewardCredits),
        active: a.active,
      };
      return {
        organizationId: organization.id,
        result: { id: a.ruleId },
        details: given,
        audit: {
          kind: 'rule',
          id: rule.id,
          projectId: await tx.projectOfGame(rule.gameId),
          gameId: rule.gameId,
          changes: changed({ rewardCredits: Number(rule.rewardCredits), active: rule.active }, given),
        },
      };
    });
  }

  async issueKey(principal: ConsolePrincipal, a: IssueKeyAction): Promise<ActionResult> {
    const kind = oneOf(new Set<KeyKind>(['public', 'secret']), a.kind, 'kind');
    return this.run(principal, 'issueKey', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'games', uuid(a.gameId, 'gameId'), 'manage');
      const issued = issueKeyValue(kind);
      const id = await tx.insertKey(
        { id: a.gameId, organizationId: organization.id },
        {
          kind,
          name: a.name,
          prefix: issued.prefix,
          // Public keys travel in URLs and are shown again in the console; secret values never leave this reply.
          publicKey: kind === 'public' ? issued.value : null,
          hash: issued.hash,
        },
      );
      return {
        organizationId: organization.id,
        result: { id, issuedKey: issued.value, kind },
        details: { gameId: a.gameId, kind, name: a.name, prefix: issued.prefix },
        // Never the key's value: its name, kind and prefix (CONTRACT section 11.2).
        audit: {
          kind: 'key',
          id,
          projectId: await tx.projectOfGame(a.gameId),
          gameId: a.gameId,
          changes: created({ gameId: a.gameId, kind, name: a.name, prefix: issued.prefix }),
        },
      };
    });
  }

  async revokeKey(principal: ConsolePrincipal, a: RevokeKeyAction): Promise<ActionResult> {
    return this.run(principal, 'revokeKey', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'keys', uuid(a.keyId, 'keyId'), 'manage');
      await tx.revokeKey(a.keyId);
      const gameId = await tx.gameOf('keys', a.keyId);
      const projectId = gameId === undefined ? undefined : await tx.projectOfGame(gameId);
      return {
        organizationId: organization.id,
        result: { id: a.keyId },
        details: {},
        audit: { kind: 'key', id: a.keyId, projectId, gameId, changes: {} },
      };
    });
  }

  async addMember(principal: ConsolePrincipal, a: AddMemberAction): Promise<ActionResult> {
    const role = oneOf(MEMBER_ROLES, a.role, 'role');
    if (a.identityUserId.length < 1 || a.identityUserId.length > 200) {
      throw invalid('identityUserId must have 1 to 200 characters.');
    }
    return this.run(principal, 'addMember', async (tx) => {
      const organization = await this.admit(tx, principal, uuid(a.organizationId, 'organizationId'), 'members');
      const id = await tx.insertMember(organization.id, a.identityUserId, role, false);
      if (!id) throw new AppError('conflict', 'This identity is already a member of the organization.');
      return {
        organizationId: organization.id,
        result: { id },
        details: { identityUserId: a.identityUserId, role },
        audit: {
          kind: 'member',
          id,
          changes: created({ organizationId: organization.id, identityUserId: a.identityUserId, role }),
        },
      };
    });
  }

  /**
   * The caller accepts a membership an owner gave them (any role may): from then on their e-mail is shown to the
   * organization's members and their console no longer marks it as not joined. Accepting again changes nothing.
   */
  async acceptMembership(principal: ConsolePrincipal, a: AcceptMembershipAction): Promise<ActionResult> {
    return this.run(principal, 'acceptMembership', async (tx) => {
      const organization = await this.admit(tx, principal, uuid(a.organizationId, 'organizationId'), 'read');
      const id = await tx.joinMember(organization.id, principal.identityUserId);
      if (!id) throw notFound();
      // The target is what the action names by its id: the organization (docs/decisions.md).
      return {
        organizationId: organization.id,
        result: { id },
        details: {},
        audit: { kind: 'organization', id: organization.id, changes: {} },
      };
    });
  }

  async updateMember(principal: ConsolePrincipal, a: UpdateMemberAction): Promise<ActionResult> {
    const role = oneOf(MEMBER_ROLES, a.role, 'role');
    return this.run(principal, 'updateMember', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'members', uuid(a.memberId, 'memberId'), 'members');
      const member = await tx.lockMember(a.memberId);
      if (!member) throw notFound();
      if (member.role === 'owner') throw new AppError('owner_immutable', 'The owner cannot be changed.');
      await tx.updateMemberRole(member.id, role);
      return {
        organizationId: organization.id,
        result: { id: member.id },
        details: { identityUserId: member.identityUserId, from: member.role, role },
        audit: { kind: 'member', id: member.id, changes: changed({ role: member.role }, { role }) },
      };
    });
  }

  async removeMember(principal: ConsolePrincipal, a: RemoveMemberAction): Promise<ActionResult> {
    return this.run(principal, 'removeMember', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'members', uuid(a.memberId, 'memberId'), 'members');
      const member = await tx.lockMember(a.memberId);
      if (!member) throw notFound();
      if (member.role === 'owner') throw new AppError('owner_immutable', 'The owner cannot be removed.');
      await tx.deleteMember(member.id);
      return {
        organizationId: organization.id,
        result: { id: member.id },
        details: { identityUserId: member.identityUserId, role: member.role },
        audit: { kind: 'member', id: member.id, changes: {} },
      };
    });
  }
  async createWebhookEndpoint(principal: ConsolePrincipal, a: CreateWebhookEndpointAction): Promise<ActionResult> {
    const types = eventTypes(a.eventTypes, 'eventTypes');
    const secret = newWebhookSecret();
    const secretCiphertext = encryptSecret(await this.webhooks.secretKey(), secret.raw);
    return this.run(principal, 'createWebhookEndpoint', async (tx) => {
      const organization = await this.admitFor(tx, principal, 'games', uuid(a.gameId, 'gameId'), 'manage');
      // The URL rule is the action's own rule: checked after the object and the role (docs/console.md).
      const url = checkWebhookUrl(a.url, this.webhooks);
      if ((await tx.webhooks.lockAndCountEndpointsOfGame(a.gameId)) >= WEBHOOK_ENDPOINTS_PER_GAME_MAX) {
        throw new AppError(
          'invalid_action',
          `A game has at most ${WEBHOOK_ENDPOINTS_PER_GAME_MAX} webhook endpoints; delete one before adding another.`,
        );
      }
      const id = await tx.webhooks.insertEndpoint({
        gameId: a.gameId,
        organizationId: organization.id,
        url,
        eventTypes: types,
        secretCiphertext,
      });
      return {
        organizationId: organization.id,
        result: { id, secret: secret.text },
        details: { gameId: a.gameId, url, eventTypes: types },
        // Never the secret.
        audit: {
          kind: 'webhookEndpoint',
          id,
          projectId: await tx.projectOfGame(a.gameId),
          gameId: a.gameId,
          changes: created({ gameId: a.gameId, url, eventTypes: types }),
        },
      };
    });
  }

  async updateWebhookEndpoint(principal: ConsolePrincipal, a: UpdateWebhookEndpointAction): Promise<ActionResult> {
    const types = a.eventTypes.length === 0 ? undefined : eventTypes(a.eventTypes, 'eventTypes');
    return this.onEndpoint(principal, 'updateWebhookEndpoint', a.webhookEndpointId, async (tx, endpoint) => {
      const url = a.url === undefined ? undefined : checkWebhookUrl(a.url, this.webhooks);
      await tx.webhooks.updateEndpoint(endpoint.id, { url, eventTypes: types, enabled: a.enabled });
      const given = { url, eventTypes: types, enabled: a.enabled };
      return {
        id: endpoint.id,
        details: given,
        changes: changed({ url: endpoint.url, eventTypes: endpoint.eventTypes, enabled: endpoint.enabled }, given),
      };
    });
  }

  async deleteWebhookEndpoint(principal: ConsolePrincipal, a: DeleteWebhookEndpointAction): Promise<ActionResult> {
    return this.onEndpoint(principal, 'deleteWebhookEndpoint', a.webhookEndpointId, async (tx, endpoint) => {
      await tx.webhooks.deleteEndpoint(endpoint.id);
      return { id: endpoint.id, details: { gameId: endpoint.gameId, url: endpoint.url }, changes: {} };
    });
  }

  async rotateWebhookSecret(principal: ConsolePrincipal, a: RotateWebhookSecretAction): Promise<ActionResult> {
    const overlapSeconds = a.overlapSeconds ?? WEBHOOK_SECRET_OVERLAP_SECONDS_DEFAULT;
    if (
      !Number.isInteger(overlapSeconds) ||
      overlapSeconds < 0 ||
      overlapSeconds > WEBHOOK_SECRET_OVERLAP_SECONDS_MAX
    ) {
      throw invalid(`overlapSeconds must be an integer from 0 to ${WEBHOOK_SECRET_OVERLAP_SECONDS_MAX}.`);
    }
    const secret = newWebhookSecret();
    const secretCiphertext = encryptSecret(await this.webhooks.secretKey(), secret.raw);
    return this.onEndpoint(principal, 'rotateWebhookSecret', a.webhookEndpointId, async (tx, endpoint) => {
      // The previous secret keeps signing until the overlap ends (the delivery worker signs with both).
      await tx.webhooks.setSecret(endpoint.id, secretCiphertext, overlapSeconds);
      // Nothing but its target: never the secret (CONTRACT section 11.2).
      return { id: endpoint.id, secret: secret.text, details: {}, changes: {} };
    });
  }

  /** A `webhook.test` message to the endpoint, whatever its event types; the result's id is the message's. */
  async sendTestWebhook(principal: ConsolePrincipal, a: SendTestWebhookAction): Promise<ActionResult> {
    return this.onEndpoint(principal, 'sendTestWebhook', a.webhookEndpointId, async (tx, endpoint) => {
      const [id] = await tx.webhooks.insertMessages({ endpointId: endpoint.id }, 'webhook.test', {
        webhookEndpointId: endpoint.id,
        gameId: endpoint.gameId,
        organizationId: endpoint.organizationId,
      });
      if (!id) throw notFound();
      // The target is the endpoint (the result's id is the message's).
      return { id, details: { webhookEndpointId: endpoint.id }, changes: {} };
    });
  }

  /** The message again, with the same webhook-id: pending and due now, its retries counted from now. */
  async redeliverWebhook(principal: ConsolePrincipal, a: RedeliverWebhookAction): Promise<ActionResult> {
    return this.run(principal, 'redeliverWebhook', async (tx) => {
      const messageId = uuid(a.webhookDeliveryId, 'webhookDeliveryId');
      const endpointId = await tx.webhooks.endpointOfMessage(messageId);
      if (endpointId === undefined) throw notFound();
      const organization = await this.admitFor(tx, principal, 'webhook_endpoints', endpointId, 'manage');
      await tx.webhooks.redeliver(messageId);
      const gameId = await tx.gameOf('webhook_endpoints', endpointId);
      return {
        organizationId: organization.id,
        result: { id: messageId },
        details: { webhookEndpointId: endpointId },
        // The delivery has no kind of its own: the entry names its endpoint (docs/decisions.md).
        audit: {
          kind: 'webhookEndpoint',
          id: endpointId,
          projectId: gameId === undefined ? undefined : await tx.projectOfGame(gameId),
          gameId,
          changes: created({ webhookDeliveryId: messageId }),
        },
      };
    });
  }

  /**
   * Every failed message of the endpoint written since `since` again, each with its own webhook-id (as
   * redeliverWebhook does one); at most WEBHOOK_RECOVER_MAX at once. The result's id is the endpoint's.
   */
  async recoverWebhookDeliveries(
    principal: ConsolePrincipal,
    a: RecoverWebhookDeliveriesAction,
  ): Promise<ActionResult> {
    // Checked at the edge as an RFC 3339 date-time; kept as given (to the microsecond) for PostgreSQL.
    if (!Number.isFinite(Date.parse(a.since))) throw invalid('since must be an RFC 3339 date-time.');
    const since = a.since;
    return this.onEndpoint(principal, 'recoverWebhookDeliveries', a.webhookEndpointId, async (tx, endpoint) => {
      const recovered = await tx.webhooks.recoverFailed(endpoint.id, since, WEBHOOK_RECOVER_MAX);
      if (recovered === undefined) {
        throw invalid(
          `More than ${WEBHOOK_RECOVER_MAX.toLocaleString('en-US')} failed deliveries since ${since}: choose a later since.`,
        );
      }
      return { id: endpoint.id, details: { since, recovered }, changes: created({ since }) };
    });
  }

  /** An action on one endpoint: its organization locked and the role checked, then the endpoint locked. */
  private onEndpoint(
    principal: ConsolePrincipal,
    action: string,
    endpointId: string,
    work: (
      tx: ConsoleTx,
      endpoint: EndpointRow,
    ) => Promise<{ id: string; secret?: string; details: Record<string, unknown>; changes: AuditChanges }>,
  ): Promise<ActionResult> {
    return this.run(principal, action, async (tx) => {
      const organization = await this.admitFor(
        tx,
        principal,
        'webhook_endpoints',
        uuid(endpointId, 'webhookEndpointId'),
        'manage',
      );
      const endpoint = await tx.webhooks.lockEndpoint(endpointId);
      if (!endpoint) throw notFound();
      const { id, secret, details, changes } = await work(tx, endpoint);
      return {
        organizationId: organization.id,
        result: secret === undefined ? { id } : { id, secret },
        details,
        audit: {
          kind: 'webhookEndpoint',
          id: endpoint.id,
          projectId: await tx.projectOfGame(endpoint.gameId),
          gameId: endpoint.gameId,
          changes,
        },
      };
    });
  }
}
