// The developer console as the gateway's edges see it: validation of an action or a records query with the very
// schemas of the REST API, then one call to the ledger. The REST adapters (rest/console.ts) and the GraphQL
// resolvers (graphql/resolvers.ts) are two views of these functions; every rule about organizations, funding and
// membership lives in the ledger.
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import type {
  ConsolePrincipal,
  ExportDecisionsRequestSchema,
  ListAuditEntriesRequestSchema,
  ListDecisionsRequestSchema,
} from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import type { DeveloperPrincipal } from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { AppError, relabelUnavailable } from '#runtime/errors.ts';
import type { CallContext, Operation, Transport } from '#runtime/transport/operation.ts';
import { describeAjvError } from '#runtime/validation/ajv.ts';
import { isStorableDateTime } from '../graphql/scalars.ts';
import { commonSchemas } from '../schemas/common.ts';
import {
  CONSOLE_ACTION_TYPES,
  consoleActionSchemaName,
  consoleSchemas,
  RECORDS_LIMIT_DEFAULT,
} from '../schemas/console.ts';
import { SchemaSet } from '../schemas/json-schema.ts';
import { actionMessage } from './shapes.ts';

export const consoleSchemaSet = new SchemaSet({ ...commonSchemas, ...consoleSchemas });

// One validator per action type (each compiled on its first use: json-schema.ts).
const actionValidators = new Map(
  CONSOLE_ACTION_TYPES.map((type) => [type, consoleSchemaSet.named(consoleActionSchemaName(type))]),
);
const recordsQueryValidator = consoleSchemaSet.named('RecordsQuery');
const auditQueryValidator = consoleSchemaSet.named('AuditQuery');

/** The ledger unreachable, or its database down: the console's own 503 code. */
export const consoleUnavailable = (error: unknown) =>
  relabelUnavailable(error, 'DEVELOPER_ACCESS_UNAVAILABLE', 'The console is temporarily unavailable; retry later.');

/** One call to the ledger for the console; an unreachable ledger or database answers as consoleUnavailable says. */
function callLedger<I extends DescMessage, O extends DescMessage>(
  transport: Transport,
  operation: Operation<I, O>,
  request: MessageInitShape<I>,
  call: CallContext,
): Promise<MessageShape<O>> {
  return transport.call(operation, request, call).catch((error: unknown) => {
    throw consoleUnavailable(error);
  });
}

/** What the ledger needs of an admitted developer (the e-mail: the actor of its console actions' audit entries). */
export function consolePrincipal(principal: DeveloperPrincipal): {
  identityUserId: string;
  canCreateUnlimitedOrganization: boolean;
  email: string;
} {
  return {
    identityUserId: principal.identityUserId,
    canCreateUnlimitedOrganization: principal.canCreateUnlimitedOrganization,
    email: principal.email,
  };
}

type PrincipalInit = Pick<ConsolePrincipal, 'identityUserId' | 'canCreateUnlimitedOrganization'> &
  Partial<Pick<ConsolePrincipal, 'email'>>;

/**
 * Validates a console action body: unknown `type`, unknown fields and schema violations are 400 invalid_action.
 * `where` names the body in messages (`body` over REST, `input` over GraphQL).
 */
export function validateAction(body: unknown, where = 'body'): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('invalid_action', 'The body must be one action object.');
  }
  const type = (body as { type?: unknown }).type;
  if (type === undefined) throw new AppError('invalid_action', 'body.type is required');
  const validate = typeof type === 'string' ? actionValidators.get(type) : undefined;
  if (!validate) {
    throw new AppError('invalid_action', `body.type must be one of ${CONSOLE_ACTION_TYPES.join(', ')}`);
  }
  if (!validate(body)) throw new AppError('invalid_action', describeAjvError(validate.errors, where));
  return body as Record<string, unknown>;
}

export interface RecordsQuery {
  kind: 'players' | 'events';
  organizationId?: string;
  projectId?: string;
  gameId?: string;
  cursor?: string;
  limit: number;
}

/**
 * Validates a records query given as an object of its parameters (`limit` a number when well-formed): schema
 * violations, unknown parameters and `limit` outside 1..100 are 400 INVALID_RECORD_QUERY.
 */
export function validateRecordsQuery(query: Record<string, unknown>, where = 'query'): RecordsQuery {
  if (!recordsQueryValidator(query)) {
    throw new AppError('INVALID_RECORD_QUERY', describeAjvError(recordsQueryValidator.errors, where));
  }
  return {
    ...(query as Omit<RecordsQuery, 'limit'>),
    limit: (query.limit as number | undefined) ?? RECORDS_LIMIT_DEFAULT,
  };
}

/** An audit query (GET /api/developer/v1/audit, GraphQL auditLog) as the ledger takes it. */
export type AuditQuery = Omit<MessageInitShape<typeof ListAuditEntriesRequestSchema>, 'principal' | '$typeName'> & {
  organizationId: string;
  limit: number;
};

/** An RFC 3339 date-time (checked) as epoch microseconds, its fraction kept to the microsecond. */
export function epochMicros(value: string): bigint {
  const match = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(value);
  if (!match) throw new AppError('INVALID_RECORD_QUERY', 'not an RFC 3339 date-time');
  const fraction = (match[2] ?? '').padEnd(6, '0').slice(0, 6);
  return BigInt(Date.parse(`${match[1]}${match[3]}`)) * 1000n + BigInt(fraction);
}

/**
 * Validates an audit query given as an object of its parameters (`limit` a number when well-formed): schema
 * violations, unknown or missing parameters, `limit` outside 1..100 and `to` not after `from` are 400
 * INVALID_RECORD_QUERY (the records' rules). `where` names the query in messages.
 */
export function validateAuditQuery(query: Record<string, unknown>, where = 'query'): AuditQuery {
  const invalid = (message: string) => new AppError('INVALID_RECORD_QUERY', message);
  if (!auditQueryValidator(query)) throw invalid(describeAjvError(auditQueryValidator.errors, where));
  const { from, to, limit, ...filters } = query as Record<string, string | undefined> & { limit?: number };
  for (const [bound, value] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (value !== undefined && !isStorableDateTime(value)) {
      throw invalid(`${where}.${bound} must lie in years 0001 to 9999 (UTC).`);
    }
  }
  const fromMicros = from === undefined ? undefined : epochMicros(from);
  const toMicros = to === undefined ? undefined : epochMicros(to);
  if (fromMicros !== undefined && toMicros !== undefined && toMicros <= fromMicros) {
    throw invalid(`${where}.to must be after ${where}.from.`);
  }
  return {
    ...(filters as { organizationId: string }),
    fromMicros,
    toMicros,
    limit: limit ?? RECORDS_LIMIT_DEFAULT,
  };
}

/** One page of an organization's audit trail: one ledger call (the ledger checks the role and the cursor). */
export async function readAudit(transport: Transport, principal: PrincipalInit, query: AuditQuery, call: CallContext) {
  return callLedger(transport, ledgerOps.listAuditEntries, { principal, ...query }, call);
}

/** Runs one validated action as one ledger transaction. */
export async function runAction(
  transport: Transport,
  principal: PrincipalInit,
  body: Record<string, unknown>,
  call: CallContext,
) {
  return callLedger(transport, ledgerOps.consoleAction, { principal, action: actionMessage(body) }, call);
}

/** The caller's snapshot: one ledger call. */
export async function readSnapshot(transport: Transport, principal: PrincipalInit, call: CallContext) {
  return callLedger(transport, ledgerOps.getSnapshot, { principal }, call);
}

/** One page of records: one ledger call (the ledger checks the cursor and the filters' visibility). */
export async function readRecords(
  transport: Transport,
  principal: PrincipalInit,
  query: RecordsQuery,
  call: CallContext,
) {
  return callLedger(transport, ledgerOps.listRecords, { principal, ...query }, call);
}

/** Decision search: one page of decisions, one ledger call (the ledger checks the cursor and the filters' visibility). */
export async function readDecisions(
  transport: Transport,
  principal: PrincipalInit,
  query: Omit<MessageInitShape<typeof ListDecisionsRequestSchema>, 'principal' | '$typeName'>,
  call: CallContext,
) {
  return callLedger(transport, ledgerOps.listDecisions, { principal, ...query }, call);
}

/** The console's search box: one ledger call (the ledger checks the text and scopes every read to the caller). */
export async function readSearch(transport: Transport, principal: PrincipalInit, text: string, call: CallContext) {
  return callLedger(transport, ledgerOps.searchConsole, { principal, text }, call);
}

/** One page of a decision export, oldest first: one ledger call (the ledger checks the window and visibility). */
export async function readDecisionExportPage(
  transport: Transport,
  principal: PrincipalInit,
  query: Omit<MessageInitShape<typeof ExportDecisionsRequestSchema>, 'principal' | '$typeName'>,
  call: CallContext,
) {
  return callLedger(transport, ledgerOps.exportDecisions, { principal, ...query }, call);
}

/** Decisions of one game per bucket: one ledger call (the ledger checks the window and the game's visibility). */
export async function readDecisionStats(
  transport: Transport,
  principal: PrincipalInit,
  query: { gameId: string; fromMs: bigint; toMs: bigint; bucketSeconds: number },
  call: CallContext,
) {
  return callLedger(transport, ledgerOps.decisionStats, { principal, ...query }, call);
}

/** One page of a game's link intents: one ledger call (the ledger checks the cursor and the game's visibility). */
export async function readLinkIntents(
  transport: Transport,
  principal: PrincipalInit,
  query: { gameId: string; cursor?: string; limit: number },
  call: CallContext,
) {
  return callLedger(transport, ledgerOps.listLinkIntents, { principal, ...query }, call);
}

/** A game's webhook endpoints: one ledger call (the ledger checks the game's visibility). */
export async function readWebhookEndpoints(
  transport: Transport,
  principal: PrincipalInit,
  query: { gameId: string },
  call: CallContext,
) {
  return callLedger(transport, ledgerOps.listWebhookEndpoints, { principal, ...query }, call);
}

/** One page of an endpoint's deliveries: one ledger call (the ledger checks the cursor and visibility). */
export async function readWebhookDeliveries(
  transport: Transport,
  principal: PrincipalInit,
  query: {
    webhookEndpointId: string;
    cursor?: string;
    limit: number;
    state?: string;
    eventType?: string;
    fromMicros?: bigint;
    toMicros?: bigint;
    webhookId?: string;
  },
  call: CallContext,
) {
  return callLedger(transport, ledgerOps.listWebhookDeliveries, { principal, ...query }, call);
}

/** The rule dry-run: one ledger call (the ledger checks the input again, the caller's role and the event bound). */
export async function readRuleSimulation(
  transport: Transport,
  principal: PrincipalInit,
  query: {
    gameId: string;
    eventType: string;
    rewardCredits: bigint;
    dailyPlayerCapCredits: bigint;
    active: boolean;
    fromMs: bigint;
    toMs: bigint;
  },
  call: CallContext,
) {
  return callLedger(transport, ledgerOps.simulateRule, { principal, ...query }, call);
}
