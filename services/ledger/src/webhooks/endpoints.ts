// Transport handlers of the webhook reads (GraphQL webhookEndpoints, webhookDeliveries): membership checked as for
// every console read (any role), then one statement each. They translate rows to messages, nothing else.
import { ledgerOps } from '#runtime/contracts/operations.ts';
import type { Database } from '#runtime/db/database.ts';
import { AppError } from '#runtime/errors.ts';
import type { Logger } from '#runtime/logger.ts';
import { bind, type EndpointBinding } from '#runtime/transport/operation.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import { principalOf, translateStoreError } from '../console/endpoints.ts';
import { canSee } from '../console/read-repository.ts';
import { messageBody } from './body.ts';
import { WebhookRepository } from './repository.ts';

const DELIVERIES_LIMIT_MAX = 100;

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
      const after = request.cursor === undefined ? undefined : decodeCursor(endpointId, request.cursor);
      try {
        if (!(await visible(principal.identityUserId, 'webhook_endpoints', endpointId))) throw notFound();
        const rows = await repository.listDeliveries(endpointId, after, request.limit + 1);
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
