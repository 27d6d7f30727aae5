// The operator API's shapes (CONTRACT section 3): request bodies and answers. The same objects validate the bodies
// at the gateway, validate answers in the tests, and describe /api/admin/v1 in /openapi.json.
import {
  EMAIL_MAX,
  EMAIL_PATTERN,
  SESSION_ID_MAX,
  SESSION_ID_PATTERN,
  USERNAME_MAX,
  USERNAME_PATTERN,
} from '#runtime/contracts/identity-names.ts';
import type { OpenApiFragment } from '../openapi.ts';
import { dataEnvelope, dateTime, strictObject, uuid } from './common.ts';
import { type JsonSchema, nullable, ref } from './json-schema.ts';

export const PERMIT_SECONDS_MAX = 86_400;

// The same rules identity-admission applies (services/runtime/src/contracts/identity-names.ts): no control characters.
const email: JsonSchema = { type: 'string', minLength: 3, maxLength: EMAIL_MAX, pattern: EMAIL_PATTERN };
const username: JsonSchema = { type: 'string', minLength: 1, maxLength: USERNAME_MAX, pattern: USERNAME_PATTERN };
const sessionId: JsonSchema = { type: 'string', minLength: 1, maxLength: SESSION_ID_MAX, pattern: SESSION_ID_PATTERN };
const accountStatus: JsonSchema = { enum: ['active', 'disabled'] };

export const adminSchemas: Record<string, JsonSchema> = {
  CreateInvitation: strictObject({ email, canCreateUnlimitedOrganization: { type: 'boolean' } }, [
    'canCreateUnlimitedOrganization',
  ]),
  Invitation: strictObject({
    id: uuid,
    email: { type: 'string' },
    status: { enum: ['active', 'revoked'] },
    identityUserId: nullable({ type: 'string', minLength: 1, maxLength: 200 }),
    canCreateUnlimitedOrganization: { type: 'boolean' },
    createdAt: dateTime,
    boundAt: nullable(dateTime),
  }),
  InvitationList: strictObject({ records: { type: 'array', items: ref('Invitation') } }),
  PutNativeAccount: strictObject({ status: accountStatus, username: nullable(username) }, ['username']),
  NativeAccount: strictObject({
    creditsUserId: uuid,
    status: accountStatus,
    username: nullable({ type: 'string' }),
    createdAt: dateTime,
  }),
  CreateDevicePermit: strictObject({
    sessionId,
    creditsUserId: uuid,
    expiresInSeconds: { type: 'integer', minimum: 1, maximum: PERMIT_SECONDS_MAX },
  }),
  DevicePermit: strictObject({ id: uuid, sessionId, creditsUserId: uuid, expiresAt: dateTime }),
  PlatformState: strictObject({ enabled: { type: 'boolean' } }),
  OperatorAuditEntry: strictObject({
    id: uuid,
    action: { enum: ['createInvitation', 'revokeInvitation', 'setPlatformState'] },
    targetKind: { enum: ['invitation', 'platform'] },
    targetId: nullable(uuid),
    changes: {
      type: 'object',
      description: 'Each field the call set, as {from, to}: from the value before (null on creation).',
      additionalProperties: strictObject({ from: {}, to: {} }),
    },
    requestId: { type: 'string', minLength: 1, maxLength: 200 },
    createdAt: dateTime,
  }),
  OperatorAuditPage: strictObject({
    records: { type: 'array', items: ref('OperatorAuditEntry') },
    nextCursor: nullable({ type: 'string', minLength: 1 }),
  }),
};

// ---- OpenAPI path items ----

const security = [{ adminToken: [] }];
const tags = ['operator'];

function errors(codes: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(codes)) {
    out[status] = { $ref: `#/components/responses/Error${status}`, description };
  }
  return out;
}

const common = {
  '401': 'UNAUTHORIZED: missing or wrong operator token.',
  '404': 'not_found: the operator API is hidden while ADMIN_TOKEN is not configured.',
  '503': 'PLATFORM_UNAVAILABLE: identity-admission or its store is unreachable.',
};
const withBody = {
  ...common,
  '400': 'INVALID_REQUEST: body not JSON, unknown field or schema violation.',
  '413': 'PAYLOAD_TOO_LARGE: body over 16,384 bytes.',
  '415': 'INVALID_CONTENT_TYPE: Content-Type is not application/json.',
};

function ok(schemaName: string, description: string): Record<string, unknown> {
  return { '200': { description, content: { 'application/json': { schema: dataEnvelope(schemaName) } } } };
}

function body(schemaName: string): Record<string, unknown> {
  return { required: true, content: { 'application/json': { schema: ref(schemaName) } } };
}

export const adminOpenApi: OpenApiFragment = {
  schemas: adminSchemas,
  paths: {
    '/api/admin/v1/invitations': {
      post: {
        operationId: 'createInvitation',
        summary: 'Invites a developer e-mail (one active invitation per e-mail, compared case-insensitively).',
        tags,
        security,
        requestBody: body('CreateInvitation'),
        responses: {
          ...ok('Invitation', 'The new invitation.'),
          ...errors({ ...withBody, '409': 'conflict: the e-mail already has an active invitation.' }),
        },
      },
      get: {
        operationId: 'listInvitations',
        summary: 'Every invitation, newest first.',
        tags,
        security,
        responses: { ...ok('InvitationList', 'The invitations.'), ...errors(common) },
      },
    },
    '/api/admin/v1/invitations/{id}/revoke': {
      post: {
        operationId: 'revokeInvitation',
        summary: 'Revokes an invitation; the developer is denied from the next request on.',
        tags,
        security,
        parameters: [{ name: 'id', in: 'path', required: true, schema: uuid }],
        responses: {
          ...ok('Invitation', 'The invitation with status revoked.'),
          ...errors({ ...common, '404': 'not_found: no invitation with this id (or the API is hidden).' }),
        },
      },
    },
    '/api/admin/v1/native-accounts/{creditsUserId}': {
      put: {
        operationId: 'putNativeAccount',
        summary: 'Creates or updates a native account; an omitted username is kept, null clears it.',
        tags,
        security,
        parameters: [{ name: 'creditsUserId', in: 'path', required: true, schema: uuid }],
        requestBody: body('PutNativeAccount'),
        responses: { ...ok('NativeAccount', 'The account.'), ...errors(withBody) },
      },
    },
    '/api/admin/v1/device-permits': {
      post: {
        operationId: 'createDevicePermit',
        summary: 'Permits one native session id on one account until it expires (1 to 86400 seconds).',
        tags,
        security,
        requestBody: body('CreateDevicePermit'),
        responses: { ...ok('DevicePermit', 'The permit.'), ...errors(withBody) },
      },
    },
    '/api/admin/v1/audit': {
      get: {
        operationId: 'listOperatorAudit',
        summary:
          "The operator's audit trail, newest first: every invitation created or revoked and every platform switch, " +
          'with what changed and the request id. Entries are never updated or deleted.',
        tags,
        security,
        parameters: [
          {
            name: 'limit',
            in: 'query',
            required: false,
            schema: { type: 'integer', minimum: 1, maximum: 999, default: 100 },
          },
          { name: 'cursor', in: 'query', required: false, schema: { type: 'string', minLength: 1 } },
        ],
        responses: {
          ...ok('OperatorAuditPage', 'A page of entries; nextCursor continues after its last (null: no more).'),
          ...errors({
            ...common,
            '400': 'INVALID_REQUEST: limit outside 1..999; INVALID_CURSOR: a cursor this API did not give.',
          }),
        },
      },
    },
    '/api/admin/v1/platform': {
      put: {
        operationId: 'setPlatformState',
        summary: 'Enables or disables the platform; while disabled every non-operator route answers 503.',
        tags,
        security,
        requestBody: body('PlatformState'),
        responses: { ...ok('PlatformState', 'The new state.'), ...errors(withBody) },
      },
    },
  },
};
