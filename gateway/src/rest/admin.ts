// The operator API (CONTRACT section 3) under /api/admin/v1: a bearer ADMIN_TOKEN compared in constant time;
// unset ADMIN_TOKEN hides the API (404). Bodies are strict JSON; answers use the `{ data }` envelope.
import { Buffer } from 'node:buffer';
import { createHash, timingSafeEqual } from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import {
  type DevicePermit,
  type Invitation,
  type NativeAccount,
  PlatformStateChange,
} from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import { identityOps } from '#runtime/contracts/operations.ts';
import { AppError } from '#runtime/errors.ts';
import { readJsonBody } from '#runtime/http/body.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import { describeAjvError } from '#runtime/validation/ajv.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import { adminSchemas } from '../schemas/admin.ts';
import { commonSchemas } from '../schemas/common.ts';
import { SchemaSet } from '../schemas/json-schema.ts';

export const ADMIN_PREFIX = '/api/admin/v1';

const OPERATOR_AUDIT_LIMIT_DEFAULT = 100;
/** One less than the identity service's page bound: a page asks for one more to know whether another follows. */
const OPERATOR_AUDIT_LIMIT_MAX = 999;
const AUDIT_CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|([0-9a-f-]{36})$/;

/** A nextCursor of GET /audit, or 400 INVALID_CURSOR. */
function readAuditCursor(text: string | string[]): { at: string; id: string } {
  const match = typeof text === 'string' ? AUDIT_CURSOR.exec(Buffer.from(text, 'base64url').toString('utf8')) : null;
  if (!match || !isUuid(match[2] as string))
    throw new AppError('INVALID_CURSOR', 'The cursor is not one this API gave.');
  return { at: match[1] as string, id: match[2] as string };
}

const adminSchemaSet = new SchemaSet({ ...commonSchemas, ...adminSchemas });
const schemas = {
  createInvitation: adminSchemaSet.named('CreateInvitation'),
  putNativeAccount: adminSchemaSet.named('PutNativeAccount'),
  createDevicePermit: adminSchemaSet.named('CreateDevicePermit'),
  platform: adminSchemaSet.named('PlatformState'),
};

export function invitationJson(invitation: Invitation | undefined) {
  if (!invitation) throw new AppError('internal_error', 'The identity service returned no invitation.');
  return {
    id: invitation.id,
    email: invitation.email,
    status: invitation.status,
    identityUserId: invitation.identityUserId ?? null,
    canCreateUnlimitedOrganization: invitation.canCreateUnlimitedOrganization,
    createdAt: invitation.createdAt,
    boundAt: invitation.boundAt ?? null,
  };
}

export function nativeAccountJson(account: NativeAccount | undefined) {
  if (!account) throw new AppError('internal_error', 'The identity service returned no account.');
  return {
    creditsUserId: account.creditsUserId,
    status: account.status,
    username: account.username ?? null,
    createdAt: account.createdAt,
  };
}

export function devicePermitJson(permit: DevicePermit | undefined) {
  if (!permit) throw new AppError('internal_error', 'The identity service returned no permit.');
  return {
    id: permit.id,
    sessionId: permit.sessionId,
    creditsUserId: permit.creditsUserId,
    expiresAt: permit.expiresAt,
  };
}

/** Reads and validates a strict JSON body; schema errors answer 400 INVALID_REQUEST. */
export async function strictBody<T>(
  ctx: Koa.Context,
  validate: ((body: unknown) => boolean) & { errors?: unknown },
): Promise<T> {
  const body = await readJsonBody(ctx);
  if (!validate(body)) {
    throw new AppError('INVALID_REQUEST', describeAjvError(validate.errors as never));
  }
  return body as T;
}

function adminGuard(adminToken: string | undefined): Koa.Middleware {
  const expected = adminToken ? createHash('sha256').update(adminToken).digest() : undefined;
  return async (ctx, next) => {
    if (!expected) throw new AppError('not_found', `No route for ${ctx.method} ${ctx.path}.`);
    const match = /^Bearer (.+)$/.exec(ctx.get('Authorization'));
    // Hashing both sides gives equal lengths, so the comparison time does not depend on the token.
    const given = createHash('sha256')
      .update(match?.[1] ?? '')
      .digest();
    if (!match || !timingSafeEqual(given, expected)) {
      throw new AppError('UNAUTHORIZED', 'The operator token is missing or wrong.');
    }
    await next();
  };
}

export interface AdminRouteDeps {
  transport: Transport;
  platform: PlatformSwitch;
  adminToken: string | undefined;
}

export function addAdminRoutes(router: Router, deps: AdminRouteDeps): void {
  const { transport } = deps;
  const guard = adminGuard(deps.adminToken);
  const uuidParam = (value: string | undefined): string => {
    if (!value || !isUuid(value)) throw new AppError('not_found', 'No such object.');
    return value;
  };

  router.post(`${ADMIN_PREFIX}/invitations`, guard, async (ctx) => {
    const body = await strictBody<{ email: string; canCreateUnlimitedOrganization?: boolean }>(
      ctx,
      schemas.createInvitation,
    );
    const reply = await transport.call(
      identityOps.createInvitation,
      { email: body.email, canCreateUnlimitedOrganization: body.canCreateUnlimitedOrganization ?? false },
      ctx.state.call,
    );
    ctx.body = { data: invitationJson(reply.invitation) };
  });
  router.get(`${ADMIN_PREFIX}/invitations`, guard, async (ctx) => {
    const reply = await transport.call(identityOps.listInvitations, {}, ctx.state.call);
    ctx.body = { data: { records: reply.invitations.map(invitationJson) } };
  });
  router.post(`${ADMIN_PREFIX}/invitations/:id/revoke`, guard, async (ctx) => {
    const reply = await transport.call(identityOps.revokeInvitation, { id: uuidParam(ctx.params.id) }, ctx.state.call);
    ctx.body = { data: invitationJson(reply.invitation) };
  });
  router.put(`${ADMIN_PREFIX}/native-accounts/:creditsUserId`, guard, async (ctx) => {
    const creditsUserId = ctx.params.creditsUserId;
    if (!creditsUserId || !isUuid(creditsUserId)) {
      throw new AppError('INVALID_REQUEST', 'The creditsUserId in the path must be a UUID.');
    }
    const body = await strictBody<{ status: string; username?: string | null }>(ctx, schemas.putNativeAccount);
    const reply = await transport.call(
      identityOps.putNativeAccount,
      {
        creditsUserId,
        status: body.status,
        setUsername: body.username !== undefined,
        username: body.username ?? undefined,
      },
      ctx.state.call,
    );
    ctx.body = { data: nativeAccountJson(reply.account) };
  });
  router.post(`${ADMIN_PREFIX}/device-permits`, guard, async (ctx) => {
    const body = await strictBody<{ sessionId: string; creditsUserId: string; expiresInSeconds: number }>(
      ctx,
      schemas.createDevicePermit,
    );
    const reply = await transport.call(identityOps.createDevicePermit, body, ctx.state.call);
    ctx.body = { data: devicePermitJson(reply.permit) };
  });
  // The operator's audit trail (docs/operations.md, "The operator's audit trail"): newest first, `limit` 1..1000
  // (default 100), `cursor` the previous page's nextCursor.
  router.get(`${ADMIN_PREFIX}/audit`, guard, async (ctx) => {
    const limitText = ctx.query.limit;
    const limit = limitText === undefined ? OPERATOR_AUDIT_LIMIT_DEFAULT : Number(limitText);
    if (typeof limitText === 'object' || !Number.isInteger(limit) || limit < 1 || limit > OPERATOR_AUDIT_LIMIT_MAX) {
      throw new AppError('INVALID_REQUEST', `limit must be an integer from 1 to ${OPERATOR_AUDIT_LIMIT_MAX}.`);
    }
    const cursorText = ctx.query.cursor;
    const before = cursorText === undefined ? undefined : readAuditCursor(cursorText);
    const reply = await transport.call(
      identityOps.listOperatorAudit,
      { limit: limit + 1, beforeCreatedAt: before?.at, beforeId: before?.id },
      ctx.state.call,
    );
    const entries = reply.entries.slice(0, limit);
    const last = entries[entries.length - 1];
    ctx.body = {
      data: {
        records: entries.map((entry) => ({
          id: entry.id,
          action: entry.action,
          targetKind: entry.targetKind,
          targetId: entry.targetId ?? null,
          changes: JSON.parse(entry.changesJson) as unknown,
          requestId: entry.requestId,
          createdAt: entry.createdAt,
        })),
        nextCursor:
          reply.entries.length > limit && last
            ? Buffer.from(`${last.cursorAt}|${last.id}`, 'utf8').toString('base64url')
            : null,
      },
    };
  });
  router.put(`${ADMIN_PREFIX}/platform`, guard, async (ctx) => {
    const body = await strictBody<{ enabled: boolean }>(ctx, schemas.platform);
    const change = body.enabled ? PlatformStateChange.ENABLE : PlatformStateChange.DISABLE;
    const reply = await transport.call(identityOps.setPlatformState, { enabled: body.enabled, change }, ctx.state.call);
    deps.platform.invalidate();
    ctx.body = { data: { enabled: reply.enabled } };
  });
}
