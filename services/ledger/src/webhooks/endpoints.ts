// Transport handlers of the webhook reads (GraphQL webhookEndpoints, webhookDeliveries): membership checked as for
// every console read (any role), then one statement each. They translate rows to messages, nothing else.
import { ledgerOps } from '#runtime/contracts/operations.ts';
import type { Database } from '#runtime/db/database.ts';
import { AppError } from '#runtime/errors.ts';
import type { Logger } from '#runtime/logger.ts';
import { bind, type EndpointBinding } from '#runtime/transport/operation.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import { WEBHOOK_EVENT_TYPES } from '../console/action-service.ts';
import { principalOf, translateStoreError } from '../console/endpoints.ts';
import { canSee } from '../console/read-repository.ts';
import { messageBody } from './body.ts';
import { type DeliveryFilter, WebhookRepository } from './repository.ts';

const DELIVERIES_LIMIT_MAX = 100;
const DELIVERY_STATES = new Set(['pending', 'delivered', 'failed']);
const DELIVERY_TYPES = new Set<string>([...WEBHOOK_EVENT_TYPES, 'webhook.test']);
// Years 0001 to 9999 (UTC), as the audit trail's window.
const MICROS_MIN = BigInt(Date.parse('0001-01-01T00:00:00Z')) * 1000n;
const MICROS_MAX = BigInt(Date.parse('9999-12-31T23:59:59.999Z')) * 1000n + 999n;
const invalidQuery = (message: string) => new AppError('INVALID_RECORD_QUERY', message);

/** The deliveries read's filters, checked: 400 INVALID_RECORD_QUERY naming the one at fault. */
export function deliveryFilter(request: {
  state?: string | undefined;
  eventType?: string | undefined;
  fromMicros?: bigint | undefined;
  toMicros?: bigint | undefined;
  webhookId?: string | undefined;
}): DeliveryFilter {
  if (request.state !== undefined && !DELIVERY_STATES.has(request.state)) {
    throw invalidQuery('filter.state must be one of pending, delivered, failed.');
  }
  if (request.eventType !== undefined && !DELIVERY_TYPES.has(request.eventType)) {
    throw invalidQuery(`filter.eventType must be one of ${[...DELIVERY_TYPES].join(', ')}.`);
  }
  for (const [name, value] of [
    ['from', request.fromMicros],
    ['to', request.toMicros],
  ] as const) {
    if (value !== undefined && (value < MICROS_MIN || value > MICROS_MAX)) {
      throw invalidQuery(`filter.${name} must lie in years 0001 to 9999 (UTC).`);
    }
  }
  if (request.fromMicros !== undefined && request.toMicros !== undefined && request.toMicros <= request.fromMicros) {
    throw invalidQuery('filter.to must be after filter.from.');
  }
  if (request.webhookId !== undefined && !isUuid(request.webhookId)) {
    throw invalidQuery('filter.webhookId must be a webhook-id: the UUID of a delivery.');
  }
  return {
    state: request.state,
    eventType: request.eventType,
    fromMicros: request.fromMicros,
    toMicros: request.toMicros,
    webhookId: request.webhookId?.toLowerCase(),
  };
}

const notFound = () => new AppError('not_found', 'No such object in an organization you are a member of.');
const badCursor = () => new AppError('INVALID_CURSOR', 'The cursor is not one this endpoint issued for this endpoint.');

function encodeCursor(endpointId: string, createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([endpointId, createdAt, id])).toString('base64url');
}

function decodeCursor(endpointId: string, cursor: string): { createdAt: string; id: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 3 &&
      value[0] === endpointId &&
      typeof value[1] === 'string' &&
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(value[1]) &&
      typeof value[2] === 'string' &&
      isUuid(value[2])
    ) {
      return { createdAt: value[1], id: value[2] };
    }
  } catch {
    // fall through
  }
  throw badCursor();
}

export function webhookReadEndpoints(deps: { database: Database; logger: Logger }): EndpointBinding[] {
  const repository = new WebhookRepository(deps.database);
  const fail = (error: unknown) => translateStoreError(error, deps.logger);
  const visible = (identityUserId: string, table: 'games' | 'webhook_endpoints', id: string) =>
    deps.database.transaction((em) => canSee(em, identityUserId, table, id), { readOnly: true });

  return [
    bind(ledgerOps.listWebhookEndpoints, async (request) => {
      const principal = principalOf(request.principal);
      if (!isUuid(request.gameId)) throw notFound();
      try {
        if (!(await visible(principal.identityUserId, 'games', request.gameId))) throw notFound();
        const endpoints = await repository.listEndpoints(request.gameId);
        return { endpoints };
      } catch (error) {
        return fail(error);
      }
    }),
    bind(ledgerOps.listWebhookDeliveries, async (request) => {
      const principal = principalOf(request.principal);
      const endpointId = request.webhookEndpointId;
      if (!isUuid(endpointId)) throw notFound();
      if (!Number.isInteger(request.limit) || request.limit < 1 || request.limit > DELIVERIES_LIMIT_MAX) {
        throw new AppError('INVALID_RECORD_QUERY', `first must be an integer from 1 to ${DELIVERIES_LIMIT_MAX}.`);
      }
      const filter = deliveryFilter(request);
      const after = request.cursor === undefined ? undefined : decodeCursor(endpointId, request.cursor);
      try {
        if (!(await visible(principal.identityUserId, 'webhook_endpoints', endpointId))) throw notFound();
        const rows = await repository.listDeliveries(endpointId, after, request.limit + 1, filter);
        const page = rows.slice(0, request.limit);
        const last = page.at(-1);
        return {
          deliveries: page.map((row) => ({
            id: row.id,
            webhookEndpointId: row.endpointId,
            eventType: row.eventType,
            state: row.state,
            createdAt: row.createdAt,
            nextAttemptAt: row.nextAttemptAt,
            finishedAt: row.finishedAt,
            payload: messageBody(row),
            attempts: row.attempts.map((a) => ({
              attempt: a.attempt,
              startedAt: a.startedAt,
              latencyMs: a.latencyMs,
              statusCode: a.statusCode,
              error: a.error,
              responseExcerpt: a.responseExcerpt,
            })),
          })),
          nextCursor:
            rows.length > request.limit && last ? encodeCursor(endpointId, last.positionAt, last.id) : undefined,
        };
      } catch (error) {
        return fail(error);
      }
    }),
  ];
}
