// Transport handlers of the console operations: they translate messages to the domain and back, nothing else.

import type { Clock } from '#runtime/clock.ts';
import type { ConsolePrincipal } from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { MEMBERSHIP_SUBJECT, membershipTopic } from '#runtime/contracts/subjects.ts';
import type { Database } from '#runtime/db/database.ts';
import { classifyDatabaseFailure } from '#runtime/db/failures.ts';
import { AppError } from '#runtime/errors.ts';
import type { Logger } from '#runtime/logger.ts';
import { bind, type EndpointBinding, type Transport } from '#runtime/transport/operation.ts';
import { type ActionResult, ConsoleActions, type ConsoleCaller, type WebhookSettings } from './action-service.ts';
import { ConsoleQueries, SNAPSHOT_LIMITS } from './read-service.ts';
import { ConsoleRepository } from './write-repository.ts';

export interface ConsoleDeps {
  database: Database;
  /** The time link intents are read at. */
  clock: Clock;
  logger: Logger;
  /** Announces removed members after commit (MembershipChanged), so that live subscriptions end at once. */
  transport?: Transport | undefined;
  /** The webhook actions' settings (URL rule, secret key); without them those actions answer 500. */
  webhooks?: WebhookSettings | undefined;
}

/**
 * A column's own CHECK, named by PostgreSQL `<table>_<column>_check`: it bounds a value the action supplied (a name's
 * length and characters, a platform, a role). Named constraints (`members_owner_joined`, `decision_shape`, ...) are
 * invariants of the ledger's own decisions.
 */
export function isValueCheck(constraint: string): boolean {
  return /^[a-z0-9_]+_check\d*$/.test(constraint);
}

/** Maps what the database threw to the API's errors: db/failures.ts decides what is an outage. */
export function translateStoreError(error: unknown, logger: Logger): never {
  if (error instanceof AppError) throw error;
  const failure = classifyDatabaseFailure(error);
  if (failure) {
    logger.warn({ err: error, failure }, 'ledger database unavailable');
    throw new AppError(
      'DEVELOPER_ACCESS_UNAVAILABLE',
      failure === 'connection_lost'
        ? 'The console lost its database connection; an action may or may not have been applied. Check before retrying.'
        : 'The console is temporarily unavailable; retry later.',
    );
  }
  const code = String((error as { code?: unknown })?.code ?? '');
  if (code === '23514') {
    const constraint = String((error as { constraint?: unknown }).constraint ?? '');
    if (isValueCheck(constraint)) {
      // A column's own CHECK refused a value the checks above let through (for example a name with a control
      // character sent straight to the transport): the invariant held, the action is invalid.
      logger.warn({ err: error, constraint }, 'console action refused by a database constraint');
      throw new AppError('invalid_action', 'The action violates a constraint of the ledger.');
    }
    // A named invariant across columns or rows refused what the domain decided: the client did not cause it (a bug,
    // or a release running beside a schema it does not know). Nothing was changed; a 503, logged as an error.
    logger.error({ err: error, constraint }, 'console action refused by a ledger invariant the client did not cause');
    throw new AppError(
      'DEVELOPER_ACCESS_UNAVAILABLE',
      'The console could not apply the action (a ledger invariant refused it); nothing was changed. Retry later.',
    );
  }
  throw error;
}

export function principalOf(principal: ConsolePrincipal | undefined): ConsolePrincipal {
  if (!principal?.identityUserId) throw new AppError('UNAUTHORIZED', 'A developer principal is required.');
  return principal;
}

export function consoleEndpoints(deps: ConsoleDeps): EndpointBinding[] {
  const repository = new ConsoleRepository(deps.database);
  const actions = new ConsoleActions(
    repository,
    (action, organizationId, details) => {
      if (action === 'removeMember' && typeof details.identityUserId === 'string') {
        deps.transport?.publish(membershipTopic, MEMBERSHIP_SUBJECT, {
          organizationId,
          identityUserId: details.identityUserId,
        });
      }
    },
    deps.webhooks,
  );
  const queries = new ConsoleQueries(repository, deps.clock);
  const fail = (error: unknown) => translateStoreError(error, deps.logger);

  return [
    bind(ledgerOps.consoleAction, async (request, ctx) => {
      // The call's request id (the gateway's X-Request-Id, NATS header Rewards-Request-Id) goes into the audit entry.
      const principal: ConsoleCaller = { ...principalOf(request.principal), requestId: ctx.requestId };
      const { action } = request;
      let result: Promise<ActionResult>;
      switch (action.case) {
        case 'createOrganization':
          result = actions.createOrganization(principal, action.value);
          break;
        case 'fundOrganization':
          result = actions.fundOrganization(principal, action.value);
          break;
        case 'createProject':
          result = actions.createProject(principal, action.value);
          break;
        case 'updateProject':
          result = actions.updateProject(principal, action.value);
          break;
        case 'allocateProject':
          result = actions.allocateProject(principal, action.value);
          break;
        case 'createGame':
          result = actions.createGame(principal, action.value);
          break;
        case 'updateGame':
          result = actions.updateGame(principal, action.value);
          break;
        case 'allocateGame':
          result = actions.allocateGame(principal, action.value);
          break;
        case 'createRule':
          result = actions.createRule(principal, action.value);
          break;
        case 'updateRule':
          result = actions.updateRule(principal, action.value);
          break;
        case 'issueKey':
          result = actions.issueKey(principal, action.value);
          break;
        case 'revokeKey':
          result = actions.revokeKey(principal, action.value);
          break;
        case 'addMember':
          result = actions.addMember(principal, action.value);
          break;
        case 'updateMember':
          result = actions.updateMember(principal, action.value);
          break;
        case 'removeMember':
          result = actions.removeMember(principal, action.value);
          break;
        case 'acceptMembership':
          result = actions.acceptMembership(principal, action.value);
          break;
        case 'createWebhookEndpoint':
          result = actions.createWebhookEndpoint(principal, action.value);
          break;
        case 'updateWebhookEndpoint':
          result = actions.updateWebhookEndpoint(principal, action.value);
          break;
        case 'deleteWebhookEndpoint':
          result = actions.deleteWebhookEndpoint(principal, action.value);
          break;
        case 'rotateWebhookSecret':
          result = actions.rotateWebhookSecret(principal, action.value);
          break;
        case 'sendTestWebhook':
          result = actions.sendTestWebhook(principal, action.value);
          break;
        case 'redeliverWebhook':
          result = actions.redeliverWebhook(principal, action.value);
          break;
        case 'recoverWebhookDeliveries':
          result = actions.recoverWebhookDeliveries(principal, action.value);
          break;
        case 'advanceGameClock':
          result = actions.advanceGameClock(principal, action.value);
          break;
        case 'createTestPlayer':
          result = actions.createTestPlayer(principal, action.value);
          break;
        default:
          throw new AppError('invalid_action', 'Unknown console action.');
      }
      return result.catch(fail);
    }),
    bind(ledgerOps.getSnapshot, async (request) => {
      const principal = principalOf(request.principal);
      const lists = await queries.snapshot(principal.identityUserId).catch(fail);
      return {
        canCreateUnlimitedOrganization: principal.canCreateUnlimitedOrganization,
        ...lists,
        limits: { ...SNAPSHOT_LIMITS },
      };
    }),
    bind(ledgerOps.listRecords, async (request) => {
      const principal = principalOf(request.principal);
      const page = await queries
        .records({
          identityUserId: principal.identityUserId,
          kind: request.kind,
          organizationId: request.organizationId,
          projectId: request.projectId,
          gameId: request.gameId,
          cursor: request.cursor,
          limit: request.limit,
        })
        .catch(fail);
      return {
        kind: page.kind,
        players: page.players,
        events: page.events,
        nextCursor: page.nextCursor,
        cursors: page.cursors,
      };
    }),
    bind(ledgerOps.listAuditEntries, async (request) => {
      const principal = principalOf(request.principal);
      const page = await queries
        .audit({
          identityUserId: principal.identityUserId,
          organizationId: request.organizationId,
          projectId: request.projectId,
          gameId: request.gameId,
          actor: request.actor,
          action: request.action,
          fromMicros: request.fromMicros,
          toMicros: request.toMicros,
          cursor: request.cursor,
          limit: request.limit,
        })
        .catch(fail);
      return {
        entries: page.entries.map((entry) => ({
          id: entry.id,
          organizationId: entry.organizationId,
          projectId: entry.projectId,
          gameId: entry.gameId,
          actor: entry.actor,
          action: entry.action,
          targetKind: entry.targetKind,
          targetId: entry.targetId,
          changesJson: entry.changesJson,
          requestId: entry.requestId,
          createdAt: entry.createdAt,
        })),
        nextCursor: page.nextCursor,
        cursors: page.cursors,
      };
    }),
    bind(ledgerOps.decisionStats, async (request) => {
      const principal = principalOf(request.principal);
      const rows = await queries
        .decisionStats({
          identityUserId: principal.identityUserId,
          gameId: request.gameId,
          fromMs: Number(request.fromMs),
          toMs: Number(request.toMs),
          bucketSeconds: request.bucketSeconds,
        })
        .catch(fail);
      return {
        rows: rows.map((row) => ({
          bucketStartMs: BigInt(row.bucketStartMs),
          status: row.status,
          reason: row.reason,
          count: row.count,
          rewardCredits: BigInt(row.rewardCredits),
        })),
      };
    }),
    bind(ledgerOps.listDecisions, async (request) => {
      const principal = principalOf(request.principal);
      const page = await queries
        .decisions({
          identityUserId: principal.identityUserId,
          organizationId: request.organizationId,
          projectId: request.projectId,
          gameId: request.gameId,
          playerId: request.playerId,
          eventId: request.eventId,
          status: request.status,
          reason: request.reason,
          eventType: request.eventType,
          fromMs: request.fromMs === undefined ? undefined : Number(request.fromMs),
          toMs: request.toMs === undefined ? undefined : Number(request.toMs),
          cursor: request.cursor,
          limit: request.limit,
          backward: request.backward,
        })
        .catch(fail);
      return {
        events: page.events,
        externalPlayerIds: page.externalPlayerIds,
        metadataJson: page.metadataJson,
        cursors: page.cursors,
        hasOlder: page.hasOlder,
        hasNewer: page.hasNewer,
      };
    }),
    bind(ledgerOps.searchConsole, async (request) => {
      const principal = principalOf(request.principal);
      const found = await queries.search({ identityUserId: principal.identityUserId, text: request.text }).catch(fail);
      return {
        organizationIds: found.organizationIds,
        projectIds: found.projectIds,
        gameIds: found.gameIds,
        keys: found.keys,
        players: found.players,
        decisions: found.decisions,
      };
    }),
    bind(ledgerOps.exportDecisions, async (request) => {
      const principal = principalOf(request.principal);
      const page = await queries
        .exportDecisions({
          identityUserId: principal.identityUserId,
          gameId: request.gameId,
          organizationId: request.organizationId,
          projectId: request.projectId,
          playerId: request.playerId,
          eventId: request.eventId,
          status: request.status,
          reason: request.reason,
          eventType: request.eventType,
          fromMs: Number(request.fromMs),
          toMs: Number(request.toMs),
          cursor: request.cursor,
          limit: request.limit,
        })
        .catch(fail);
      return { events: page.events, externalPlayerIds: page.externalPlayerIds, nextCursor: page.nextCursor };
    }),
    bind(ledgerOps.listLinkIntents, async (request) => {
      const principal = principalOf(request.principal);
      return queries
        .linkIntents({
          identityUserId: principal.identityUserId,
          gameId: request.gameId,
          cursor: request.cursor,
          limit: request.limit,
        })
        .catch(fail);
    }),
  ];
}
