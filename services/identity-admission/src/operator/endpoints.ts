// Transport handlers of the operator calls (the platform switch, invitations, native accounts, device permits): they
// check what arrived against the domain's rules, call the repositories and map rows to messages.

import { PlatformStateChange } from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import {
  isValidEmail,
  isValidSessionId,
  isValidUsername,
  SESSION_ID_MAX,
  USERNAME_MAX,
} from '#runtime/contracts/identity-names.ts';
import { identityOps } from '#runtime/contracts/operations.ts';
import type { Database } from '#runtime/db/database.ts';
import { isDatabaseFailure } from '#runtime/db/failures.ts';
import { AppError } from '#runtime/errors.ts';
import type { Logger } from '#runtime/logger.ts';
import { bind, type EndpointBinding } from '#runtime/transport/operation.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import { isValidPermitLifetime, PERMIT_SECONDS_MAX } from '../domain/device-permits.ts';
import { DevicePermitRepository, type DevicePermitRow } from '../repositories/device-permits.ts';
import { InvitationRepository, type InvitationRow } from '../repositories/invitations.ts';
import { NativeAccountRepository, type NativeAccountRow } from '../repositories/native-accounts.ts';
import { OPERATOR_AUDIT_PAGE_MAX, OperatorAuditRepository } from '../repositories/operator-audit.ts';
import { PlatformRepository } from '../repositories/platform.ts';

export interface OperatorEndpointDeps {
  database: Database;
  logger: Logger;
}

export function invitationMessage(row: InvitationRow) {
  return {
    id: row.id,
    email: row.email,
    status: row.status,
    identityUserId: row.identity_user_id ?? undefined,
    canCreateUnlimitedOrganization: row.can_create_unlimited_organization,
    createdAt: row.created_at,
    boundAt: row.bound_at ?? undefined,
  };
}

export function nativeAccountMessage(row: NativeAccountRow) {
  return {
    creditsUserId: row.credits_user_id,
    status: row.status,
    username: row.username ?? undefined,
    createdAt: row.created_at,
  };
}

export function devicePermitMessage(row: DevicePermitRow) {
  return {
    id: row.id,
    sessionId: row.session_id,
    creditsUserId: row.credits_user_id,
    expiresAt: row.expires_at,
  };
}

const invalid = (message: string) => new AppError('INVALID_REQUEST', message);

/**
 * The state a SetPlatformState request asks for. The switch is named explicitly (`change`); a message without it (an
 * empty or malformed body, or a request from a gateway of the previous release) is refused and logged, never read as
 * "off" or "on". `enabled` must agree with `change`.
 */
export function platformChange(request: { enabled: boolean; change: PlatformStateChange }, logger: Logger): boolean {
  const wanted =
    request.change === PlatformStateChange.ENABLE
      ? true
      : request.change === PlatformStateChange.DISABLE
        ? false
        : undefined;
  if (wanted === undefined || wanted !== request.enabled) {
    logger.error(
      { change: request.change, enabled: request.enabled },
      'platform switch refused: the request does not name the change explicitly',
    );
    throw new AppError(
      'PLATFORM_UNAVAILABLE',
      'The platform switch was not changed: the request did not name the change; retry through a current gateway.',
    );
  }
  return wanted;
}

export function operatorEndpoints(deps: OperatorEndpointDeps): EndpointBinding[] {
  const invitations = new InvitationRepository(deps.database);
  const accounts = new NativeAccountRepository(deps.database);
  const permits = new DevicePermitRepository(deps.database);
  const platform = new PlatformRepository(deps.database);
  const audit = new OperatorAuditRepository(deps.database);
  // Operator calls and the platform switch: a failing store (db/failures.ts) is a 503 the edges relabel for their
  // route; anything else is a bug (500).
  const storeError = (error: unknown): never => {
    if (error instanceof AppError || !isDatabaseFailure(error)) throw error;
    deps.logger.warn({ err: error }, 'identity store unavailable');
    throw new AppError('PLATFORM_UNAVAILABLE', 'The identity store is temporarily unavailable.');
  };

  return [
    bind(identityOps.getPlatformState, async () => ({
      enabled: await platform.isEnabled().catch(storeError),
    })),
    bind(identityOps.setPlatformState, async (request, ctx) => ({
      enabled: await platform.setEnabled(platformChange(request, deps.logger), ctx.requestId).catch(storeError),
    })),
    bind(identityOps.createInvitation, async (request, ctx) => {
      if (!isValidEmail(request.email)) throw invalid('email must be an e-mail address.');
      const row = await invitations
        .create(request.email, request.canCreateUnlimitedOrganization, ctx.requestId)
        .catch(storeError);
      if (!row) throw new AppError('conflict', 'This e-mail already has an active invitation.');
      return { invitation: invitationMessage(row) };
    }),
    bind(identityOps.listInvitations, async () => ({
      invitations: (await invitations.list().catch(storeError)).map(invitationMessage),
    })),
    bind(identityOps.revokeInvitation, async (request, ctx) => {
      const row = await invitations.revoke(request.id, ctx.requestId).catch(storeError);
      if (!row) throw new AppError('not_found', 'No invitation with this id.');
      return { invitation: invitationMessage(row) };
    }),
    bind(identityOps.putNativeAccount, async (request) => {
      if (!isUuid(request.creditsUserId)) throw invalid('creditsUserId must be a UUID.');
      if (request.status !== 'active' && request.status !== 'disabled') {
        throw invalid('status must be active or disabled.');
      }
      const username = request.setUsername ? (request.username ?? null) : undefined;
      if (typeof username === 'string' && !isValidUsername(username)) {
        throw invalid(`username must be 1 to ${USERNAME_MAX} characters without control characters.`);
      }
      const row = await accounts.put(request.creditsUserId, request.status, username).catch(storeError);
      return { account: nativeAccountMessage(row) };
    }),
    bind(identityOps.createDevicePermit, async (request) => {
      if (!isValidSessionId(request.sessionId)) {
        throw invalid(`sessionId must be 1 to ${SESSION_ID_MAX} characters without control characters.`);
      }
      if (!isUuid(request.creditsUserId)) throw invalid('creditsUserId must be a UUID.');
      if (!isValidPermitLifetime(request.expiresInSeconds)) {
        throw invalid(`expiresInSeconds must be from 1 to ${PERMIT_SECONDS_MAX}.`);
      }
      const row = await permits
        .create(request.sessionId, request.creditsUserId, request.expiresInSeconds)
        .catch(storeError);
      return { permit: devicePermitMessage(row) };
    }),
    bind(identityOps.listOperatorAudit, async (request) => {
      if (!(request.limit >= 1 && request.limit <= OPERATOR_AUDIT_PAGE_MAX)) {
        throw invalid(`limit must be from 1 to ${OPERATOR_AUDIT_PAGE_MAX}.`);
      }
      const { beforeCreatedAt, beforeId } = request;
      if (
        (beforeCreatedAt === undefined) !== (beforeId === undefined) ||
        (beforeId !== undefined && !isUuid(beforeId))
      ) {
        throw invalid('The page key is incomplete or malformed.');
      }
      const before = beforeCreatedAt && beforeId ? { createdAt: beforeCreatedAt, id: beforeId } : undefined;
      const rows = await audit.list(request.limit, before).catch(storeError);
      return {
        entries: rows.map((row) => ({
          id: row.id,
          action: row.action,
          targetKind: row.target_kind,
          targetId: row.target_id ?? undefined,
          changesJson: row.changes,
          requestId: row.request_id,
          createdAt: row.created_at,
          cursorAt: row.created_at_us,
        })),
      };
    }),
  ];
}
