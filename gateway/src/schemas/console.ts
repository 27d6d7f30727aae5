// The developer console's shapes (spec: Resources, POST/GET /api/developer/v1/console, GET /api/developer/v1/records):
// the 15 actions and acceptMembership, every response shape, the records query. The same objects validate requests at the edge, validate
// responses in the tests, and describe the endpoints in /openapi.json.
import type { OpenApiFragment } from '../openapi.ts';
import {
  credits,
  dataEnvelope,
  dateTime,
  eventReason,
  eventStatus,
  eventType,
  externalPlayerId,
  gameStatus,
  mode,
  name,
  platform,
  positiveCredits,
  role,
  strictObject,
  uuid,
} from './common.ts';
import { type JsonSchema, nullable, ref } from './json-schema.ts';

export const RECORDS_LIMIT_MAX = 100;
export const RECORDS_LIMIT_DEFAULT = 50;

const memberRole: JsonSchema = { enum: ['admin', 'viewer'] };
const keyKind: JsonSchema = { enum: ['public', 'secret'] };
const identityUserId: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  // PostgreSQL text cannot hold NUL; every other character of an identity provider's subject is kept.
  pattern: '^[^\\u0000]*$',
};

/** Webhook event types (CONTRACT section 11.1). */
export const WEBHOOK_EVENT_TYPES = [
  'decision.accepted',
  'decision.rejected',
  'game.budget_low',
  'game.budget_exhausted',
  'game.paused',
  'game.resumed',
];
// The URL's rule (https:// to a public address unless allowed) is the ledger's: it depends on its configuration.
const webhookUrl: JsonSchema = {
  type: 'string',
  minLength: 8,
  maxLength: 2048,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://\\S+$',
};
const webhookEventTypes: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  items: { enum: WEBHOOK_EVENT_TYPES },
};

function action(type: string, fields: Record<string, JsonSchema>, optional: string[] = []): JsonSchema {
  return strictObject({ type: { const: type }, ...fields }, optional);
}

/**
 * The 15 actions of the spec's table, acceptMembership and the webhook actions (CONTRACT section 11.1), by
 * `type`, with their fields and limits.
 */
export const consoleActionSchemas: Record<string, JsonSchema> = {
  createOrganization: action('createOrganization', { name, unlimitedFunding: { type: 'boolean' } }, [
    'unlimitedFunding',
  ]),
  fundOrganization: action('fundOrganization', { organizationId: uuid, amountCredits: positiveCredits }),
  createProject: action('createProject', { organizationId: uuid, name, maxPayoutCredits: credits }),
  updateProject: action('updateProject', { projectId: uuid, name, maxPayoutCredits: credits }, [
    'name',
    'maxPayoutCredits',
  ]),
  allocateProject: action('allocateProject', { projectId: uuid, amountCredits: positiveCredits }),
  createGame: action('createGame', {
    projectId: uuid,
    name,
    platform,
    maxPayoutCredits: credits,
    dailyPlayerCapCredits: credits,
  }),
  updateGame: action(
    'updateGame',
    { gameId: uuid, name, maxPayoutCredits: credits, dailyPlayerCapCredits: credits, status: gameStatus },
    ['name', 'maxPayoutCredits', 'dailyPlayerCapCredits', 'status'],
  ),
  allocateGame: action('allocateGame', { gameId: uuid, amountCredits: positiveCredits }),
  createRule: action('createRule', { gameId: uuid, eventType, rewardCredits: positiveCredits }),
  updateRule: action('updateRule', { ruleId: uuid, rewardCredits: positiveCredits, active: { type: 'boolean' } }, [
    'rewardCredits',
    'active',
  ]),
  issueKey: action('issueKey', { gameId: uuid, kind: keyKind, name }),
  revokeKey: action('revokeKey', { keyId: uuid }),
  addMember: action('addMember', { organizationId: uuid, identityUserId, role: memberRole }),
  updateMember: action('updateMember', { memberId: uuid, role: memberRole }),
  removeMember: action('removeMember', { memberId: uuid }),
  acceptMembership: action('acceptMembership', { organizationId: uuid }),
  createWebhookEndpoint: action('createWebhookEndpoint', {
    gameId: uuid,
    url: webhookUrl,
    eventTypes: webhookEventTypes,
  }),
  updateWebhookEndpoint: action(
    'updateWebhookEndpoint',
    { webhookEndpointId: uuid, url: webhookUrl, eventTypes: webhookEventTypes, enabled: { type: 'boolean' } },
    ['url', 'eventTypes', 'enabled'],
  ),
  deleteWebhookEndpoint: action('deleteWebhookEndpoint', { webhookEndpointId: uuid }),
  rotateWebhookSecret: action(
    'rotateWebhookSecret',
    { webhookEndpointId: uuid, overlapSeconds: { type: 'integer', minimum: 0, maximum: 604_800 } },
    ['overlapSeconds'],
  ),
  sendTestWebhook: action('sendTestWebhook', { webhookEndpointId: uuid }),
  redeliverWebhook: action('redeliverWebhook', { webhookDeliveryId: uuid }),
  recoverWebhookDeliveries: action('recoverWebhookDeliveries', { webhookEndpointId: uuid, since: dateTime }),
  advanceGameClock: action('advanceGameClock', {
    gameId: uuid,
    seconds: { type: 'integer', minimum: 1, maximum: 31_536_000 },
  }),
  createTestPlayer: action('createTestPlayer', { gameId: uuid, externalPlayerId }),
};

export const CONSOLE_ACTION_TYPES = Object.keys(consoleActionSchemas);

const actionSchemaName = (type: string) => `${type[0]!.toUpperCase()}${type.slice(1)}Action`;

const DeveloperOrganization = strictObject({
  id: uuid,
  name: { type: 'string' },
  unlimitedFunding: { type: 'boolean' },
  balanceCredits: credits,
  role,
  createdAt: dateTime,
});
const DeveloperProject = strictObject({
  id: uuid,
  organizationId: uuid,
  name: { type: 'string' },
  maxPayoutCredits: credits,
  budgetCredits: credits,
  spentCredits: credits,
  createdAt: dateTime,
});
const DeveloperGame = strictObject({
  id: uuid,
  projectId: uuid,
  organizationId: uuid,
  name: { type: 'string' },
  platform,
  status: gameStatus,
  maxPayoutCredits: credits,
  budgetCredits: credits,
  spentCredits: credits,
  dailyPlayerCapCredits: credits,
  createdAt: dateTime,
});
const DeveloperKey = strictObject({
  id: uuid,
  gameId: uuid,
  organizationId: uuid,
  kind: keyKind,
  name: { type: 'string' },
  // The kind's prefix and the first 6 characters of the random part (CONTRACT section 8).
  prefix: { type: 'string', pattern: '^cr_(sk|pk)_sandbox_[A-Za-z0-9_-]{6}$' },
  publicKey: nullable({ type: 'string', pattern: '^cr_pk_sandbox_[A-Za-z0-9_-]{43}$' }),
  createdAt: dateTime,
  revokedAt: nullable(dateTime),
});
const DeveloperMember = strictObject({
  id: uuid,
  organizationId: uuid,
  identityUserId: { type: 'string', minLength: 1, maxLength: 200 },
  role,
  createdAt: dateTime,
});
const DeveloperRule = strictObject({
  id: uuid,
  gameId: uuid,
  organizationId: uuid,
  eventType,
  rewardCredits: positiveCredits,
  active: { type: 'boolean' },
  createdAt: dateTime,
});
const DeveloperPlayer = strictObject({
  id: uuid,
  gameId: uuid,
  organizationId: uuid,
  externalPlayerId,
  creditsUserId: nullable(uuid),
  username: nullable({ type: 'string' }),
  linkedAt: nullable(dateTime),
  createdAt: dateTime,
});
const developerEventProperties: Record<string, JsonSchema> = {
  id: uuid,
  eventId: uuid,
  gameId: uuid,
  organizationId: uuid,
  playerId: uuid,
  eventType,
  occurredAt: dateTime,
  status: eventStatus,
  reason: nullable(eventReason),
  rewardCredits: credits,
  createdAt: dateTime,
};
const DeveloperEvent = strictObject(developerEventProperties);
const list = (schemaName: string): JsonSchema => ({ type: 'array', items: ref(schemaName) });
const DeveloperSnapshot = strictObject({
  mode,
  unitsPerDollar: { const: 1000 },
  canCreateUnlimitedOrganization: { type: 'boolean' },
  organizations: list('DeveloperOrganization'),
  projects: list('DeveloperProject'),
  games: list('DeveloperGame'),
  keys: list('DeveloperKey'),
  players: list('DeveloperPlayer'),
  events: list('DeveloperEvent'),
  rules: list('DeveloperRule'),
  members: list('DeveloperMember'),
  limits: strictObject({ players: { type: 'integer', minimum: 0 }, events: { type: 'integer', minimum: 0 } }),
});
// kind decides the element shape of `records`.
const DeveloperRecordPage: JsonSchema = {
  oneOf: [
    strictObject({
      kind: { const: 'players' },
      records: list('DeveloperPlayer'),
      nextCursor: nullable({ type: 'string' }),
    }),
    strictObject({
      kind: { const: 'events' },
      records: list('DeveloperEvent'),
      nextCursor: nullable({ type: 'string' }),
    }),
  ],
};
const DeveloperActionResult = strictObject(
  {
    id: uuid,
    mode,
    issuedKey: { type: 'string', pattern: '^cr_(sk|pk)_sandbox_[A-Za-z0-9_-]{43}$' },
    kind: keyKind,
    // createWebhookEndpoint and rotateWebhookSecret: the signing secret, shown this once.
    secret: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]{43}=$' },
  },
  ['issuedKey', 'kind', 'secret'],
);
const DeveloperAccess = strictObject({ authorized: { const: true }, email: { type: 'string', format: 'email' }, mode });

/** The records query (GET /api/developer/v1/records) as an object of its parameters; `limit` already a number. */
export const recordsQueryParameters: Record<string, JsonSchema> = {
  kind: { enum: ['players', 'events'] },
  organizationId: uuid,
  projectId: uuid,
  gameId: uuid,
  cursor: { type: 'string', minLength: 1 },
  limit: { type: 'integer', minimum: 1, maximum: RECORDS_LIMIT_MAX, default: RECORDS_LIMIT_DEFAULT },
};
export const RecordsQuery = strictObject(recordsQueryParameters, [
  'organizationId',
  'projectId',
  'gameId',
  'cursor',
  'limit',
]);

/** The audit trail's query (GET /api/developer/v1/audit; CONTRACT section 11.2); `limit` already a number. */
export const auditQueryParameters: Record<string, JsonSchema> = {
  organizationId: uuid,
  projectId: uuid,
  gameId: uuid,
  actor: { type: 'string', minLength: 1, maxLength: 200 },
  action: { type: 'string', minLength: 1, maxLength: 200 },
  from: dateTime,
  to: dateTime,
  cursor: { type: 'string', minLength: 1 },
  limit: { type: 'integer', minimum: 1, maximum: RECORDS_LIMIT_MAX, default: RECORDS_LIMIT_DEFAULT },
};
export const AuditQuery = strictObject(
  auditQueryParameters,
  Object.keys(auditQueryParameters).filter((name) => name !== 'organizationId'),
);
/** One audit entry (CONTRACT section 11.2). */
const AuditEntry = strictObject({
  id: { type: 'string', minLength: 1 },
  organizationId: uuid,
  projectId: nullable(uuid),
  gameId: nullable(uuid),
  actor: strictObject({ identityUserId: { type: 'string', minLength: 1 }, email: nullable({ type: 'string' }) }),
  action: { type: 'string' },
  targetKind: nullable({
    enum: ['organization', 'project', 'game', 'rule', 'key', 'member', 'webhookEndpoint', 'player'],
  }),
  targetId: uuid,
  changes: {
    type: 'object',
    additionalProperties: strictObject({ from: {}, to: {} }),
  },
  requestId: nullable({ type: 'string' }),
  createdAt: dateTime,
});
const AuditPage = strictObject({ records: list('AuditEntry'), nextCursor: nullable({ type: 'string' }) });

/** The decision export's query (GET /api/developer/v1/decisions/export) as an object of its parameters. */
export const decisionExportQueryParameters: Record<string, JsonSchema> = {
  gameId: uuid,
  from: dateTime,
  to: dateTime,
  format: { enum: ['ndjson', 'csv'], default: 'ndjson' },
  organizationId: uuid,
  projectId: uuid,
  playerId: uuid,
  eventId: uuid,
  status: eventStatus,
  reason: eventReason,
  eventType,
};
export const DecisionExportQuery = strictObject(
  decisionExportQueryParameters,
  Object.keys(decisionExportQueryParameters).filter((name) => !['gameId', 'from', 'to'].includes(name)),
);
/** One exported decision: a DeveloperEvent and its player's externalPlayerId (an NDJSON line, a CSV row). */
const ExportedDecision = strictObject({ ...developerEventProperties, gameTime: dateTime, externalPlayerId });

export const consoleSchemas: Record<string, JsonSchema> = {
  ...Object.fromEntries(CONSOLE_ACTION_TYPES.map((type) => [actionSchemaName(type), consoleActionSchemas[type]!])),
  DeveloperAction: {
    oneOf: CONSOLE_ACTION_TYPES.map((type) => ref(actionSchemaName(type))),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        CONSOLE_ACTION_TYPES.map((type) => [type, `#/components/schemas/${actionSchemaName(type)}`]),
      ),
    },
  },
  DeveloperOrganization,
  DeveloperProject,
  DeveloperGame,
  DeveloperKey,
  DeveloperMember,
  DeveloperRule,
  DeveloperPlayer,
  DeveloperEvent,
  DeveloperSnapshot,
  DeveloperRecordPage,
  DeveloperActionResult,
  DeveloperAccess,
  RecordsQuery,
  DecisionExportQuery,
  ExportedDecision,
  AuditQuery,
  AuditEntry,
  AuditPage,
};

/** Names of the action schemas, for the validator: `createOrganization` -> `CreateOrganizationAction`. */
export function consoleActionSchemaName(type: string): string {
  return actionSchemaName(type);
}

// ---- OpenAPI path items ----

const security = [{ developerSession: [] }];

function errors(codes: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(codes)) {
    out[status] = { $ref: `#/components/responses/Error${status}`, description };
  }
  return out;
}

const admissionErrors = {
  '401': 'UNAUTHORIZED: no or invalid developer session token.',
  '403':
    'INVALID_SESSION_ORIGIN, EMAIL_VERIFICATION_REQUIRED, DEVELOPER_INVITATION_REQUIRED; for actions also forbidden, unlimited_funding.',
  '429':
    "TOO_MANY_REQUESTS: past the developer's limits (DEVELOPER_RATE_PER_SECOND, DEVELOPER_BURST, DEVELOPER_IN_FLIGHT_MAX).",
  '503': 'PLATFORM_DISABLED, AUTH_UNAVAILABLE (identity store), DEVELOPER_ACCESS_UNAVAILABLE (ledger).',
};

function ok(schemaName: string, description: string): Record<string, unknown> {
  return {
    '200': { description, content: { 'application/json': { schema: dataEnvelope(schemaName) } } },
  };
}

const DECISION_EXPORT_PARAMETERS: Record<string, string> = {
  gameId: 'The game (404 not_found if the caller cannot see it).',
  from: 'Decisions created at or after this instant.',
  to: 'Decisions created before this instant: after `from`, at most 31 days after it.',
  format: '`ndjson` (application/x-ndjson) or `csv` (text/csv, RFC 4180, a header row).',
  organizationId: "Only if the game is this organization's.",
  projectId: "Only if the game is this project's.",
  playerId: "A player of the game (DeveloperPlayer.id): that player's decisions.",
  eventId: "The game server's idempotency id (one decision per game).",
  status: 'Only accepted, or only rejected, decisions.',
  reason: 'Only rejections with this reason.',
  eventType: 'Only decisions of this event type.',
};

const AUDIT_PARAMETERS: Record<string, string> = {
  organizationId: 'The organization (404 not_found if the caller is not a member; 403 forbidden for a viewer).',
  projectId: 'Only entries of this project (its own, its games and their objects).',
  gameId: 'Only entries of this game and its objects.',
  actor: 'Only entries of this acting member (identityUserId).',
  action: 'Only entries of this action type.',
  from: 'Entries created at or after this instant (RFC 3339).',
  to: 'Entries created before this instant (RFC 3339), after `from`.',
  cursor: "The previous page's nextCursor, with the same filters.",
  limit: 'Entries per page, 1..100 (default 50).',
};

export const consoleOpenApi: OpenApiFragment = {
  schemas: consoleSchemas,
  paths: {
    '/api/developer/v1/access': {
      get: {
        operationId: 'getDeveloperAccess',
        summary: 'Admits the developer; the first use binds the invitation to the session subject.',
        tags: ['developer'],
        security,
        responses: { ...ok('DeveloperAccess', 'Admitted.'), ...errors(admissionErrors) },
      },
    },
    '/api/developer/v1/console': {
      get: {
        operationId: 'getConsoleSnapshot',
        summary: "The caller's organizations with their projects, games, keys, rules, members and recent records.",
        tags: ['developer'],
        security,
        responses: { ...ok('DeveloperSnapshot', 'The snapshot.'), ...errors(admissionErrors) },
      },
      post: {
        operationId: 'runConsoleAction',
        summary: 'Runs one console action, discriminated by type, as one transaction.',
        tags: ['developer'],
        security,
        requestBody: {
          required: true,
          description: 'Exactly one action; unknown fields rejected; at most 16,384 bytes.',
          content: { 'application/json': { schema: ref('DeveloperAction') } },
        },
        responses: {
          ...ok('DeveloperActionResult', 'The affected or created object (issuedKey and kind for issueKey).'),
          ...errors({
            '400':
              'INVALID_REQUEST (not JSON; a webhook url outside the URL rule, docs/webhooks.md), invalid_action (schema, unknown field or type), insufficient_funds, project_limit, game_limit, limit_exceeded, unlimited_funding.',
            ...admissionErrors,
            '404': "not_found: no such object in the caller's organizations.",
            '409': 'conflict (rule for the event type, member exists), owner_immutable.',
            '413': 'PAYLOAD_TOO_LARGE: body over 16,384 bytes.',
            '415': 'INVALID_CONTENT_TYPE: Content-Type is not application/json.',
          }),
        },
      },
    },
    '/api/developer/v1/records': {
      get: {
        operationId: 'listRecords',
        summary: 'One page of players or events, newest first by (createdAt, id).',
        tags: ['developer'],
        security,
        parameters: Object.entries(recordsQueryParameters).map(([parameter, schema]) => ({
          name: parameter,
          in: 'query',
          required: parameter === 'kind',
          schema,
        })),
        responses: {
          ...ok('DeveloperRecordPage', 'A page; continue with nextCursor until it is null.'),
          ...errors({
            '400':
              'INVALID_RECORD_QUERY (unknown, repeated or malformed parameter; limit outside 1..100), INVALID_CURSOR.',
            ...admissionErrors,
            '404': 'not_found: a filter names an object the caller cannot see.',
          }),
        },
      },
    },
    '/api/developer/v1/audit': {
      get: {
        operationId: 'listAuditEntries',
        summary:
          "One page of an organization's audit trail (one entry per successful console action), newest first by (createdAt, id); its owner and admins only.",
        tags: ['developer'],
        security,
        parameters: Object.entries(auditQueryParameters).map(([parameter, schema]) => ({
          name: parameter,
          in: 'query',
          required: parameter === 'organizationId',
          description: AUDIT_PARAMETERS[parameter],
          schema,
        })),
        responses: {
          ...ok('AuditPage', 'A page; continue with nextCursor until it is null.'),
          ...errors({
            '400':
              'INVALID_RECORD_QUERY (unknown, repeated, missing or malformed parameter; limit outside 1..100; to not after from), INVALID_CURSOR.',
            ...admissionErrors,
            '403': `${admissionErrors['403']} forbidden: a viewer of the organization.`,
            '404': 'not_found: the caller is not a member of the organization.',
          }),
        },
      },
    },
    '/api/developer/v1/decisions/export': {
      get: {
        operationId: 'exportDecisions',
        summary:
          'Every decision of one game created in [from, to) (at most 31 days) matching the filters, oldest first by (createdAt, id), streamed as NDJSON or CSV. A failure after the first bytes ends NDJSON with a line {"error": {code, message}} and aborts CSV without its final line end (docs/console.md).',
        tags: ['developer'],
        security,
        parameters: Object.entries(decisionExportQueryParameters).map(([parameter, schema]) => ({
          name: parameter,
          in: 'query',
          required: ['gameId', 'from', 'to'].includes(parameter),
          description: DECISION_EXPORT_PARAMETERS[parameter],
          schema,
        })),
        responses: {
          '200': {
            description:
              'The decisions, one ExportedDecision per line (ndjson), or an RFC 4180 table with a header row (csv).',
            content: {
              'application/x-ndjson': { schema: ref('ExportedDecision') },
              'text/csv': { schema: { type: 'string' } },
            },
          },
          ...errors({
            '400':
              'INVALID_RECORD_QUERY (unknown, repeated, missing or malformed parameter; to not after from; a window over 31 days).',
            ...admissionErrors,
            '404': 'not_found: the game (or another filter) names an object the caller cannot see.',
          }),
        },
      },
    },
  },
};
