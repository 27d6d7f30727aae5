// REST adapters of the developer console (spec: POST and GET /api/developer/v1/console, GET
// /api/developer/v1/records; CONTRACT section 8). Checks in order: platform switch, developer admission (the
// invitation is rechecked on every request, immediately before the ledger locks anything), then the request's own
// shape, then one call to the ledger. Every rule about organizations, funding and membership lives in the ledger.
import type Router from '@koa/router';
import type Koa from 'koa';
import { ledgerOps } from '../../../services/runtime/src/contracts/operations.ts';
import { AppError, relabelUnavailable } from '../../../services/runtime/src/errors.ts';
import { readJsonBody } from '../../../services/runtime/src/http/body.ts';
import { platformGate } from '../../../services/runtime/src/http/platform-gate.ts';
import type { PlatformSwitch } from '../../../services/runtime/src/platform-switch.ts';
import type { Transport } from '../../../services/runtime/src/transport/operation.ts';
import { describeAjvError } from '../../../services/runtime/src/validation/ajv.ts';
import { admitDeveloper } from '../auth/developer-session.ts';
import { actionMessage, actionResultJson, recordPageJson, snapshotJson } from '../console/shapes.ts';
import { commonSchemas } from '../schemas/common.ts';
import {
  CONSOLE_ACTION_TYPES,
  consoleActionSchemaName,
  consoleSchemas,
  RECORDS_LIMIT_DEFAULT,
  recordsQueryParameters,
} from '../schemas/console.ts';
import { SchemaSet } from '../schemas/json-schema.ts';

export const consoleSchemaSet = new SchemaSet({ ...commonSchemas, ...consoleSchemas });

// Compiled once at start-up: one validator per action type.
const actionValidators = new Map(
  CONSOLE_ACTION_TYPES.map((type) => [type, consoleSchemaSet.named(consoleActionSchemaName(type))]),
);
const recordsQueryValidator = consoleSchemaSet.named('RecordsQuery');

const unavailable = (error: unknown) =>
  relabelUnavailable(error, 'DEVELOPER_ACCESS_UNAVAILABLE', 'The console is temporarily unavailable; retry later.');

/** Validates a console action body: unknown `type`, unknown fields and schema violations are 400 invalid_action. */
export function validateAction(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError(400, 'invalid_action', 'The body must be one action object.');
  }
  const type = (body as { type?: unknown }).type;
  if (type === undefined) throw new AppError(400, 'invalid_action', 'body.type is required');
  const validate = typeof type === 'string' ? actionValidators.get(type) : undefined;
  if (!validate) {
    throw new AppError(400, 'invalid_action', `body.type must be one of ${CONSOLE_ACTION_TYPES.join(', ')}`);
  }
  if (!validate(body)) throw new AppError(400, 'invalid_action', describeAjvError(validate.errors));
  return body as Record<string, unknown>;
}

const LIMIT_TEXT = /^(?:0|[1-9][0-9]{0,3})$/;

export interface RecordsQuery {
  kind: 'players' | 'events';
  organizationId?: string;
  projectId?: string;
  gameId?: string;
  cursor?: string;
  limit: number;
}

/** Parses the records query string: unknown, repeated or malformed parameters are 400 INVALID_RECORD_QUERY. */
export function parseRecordsQuery(querystring: string): RecordsQuery {
  const invalid = (message: string) => new AppError(400, 'INVALID_RECORD_QUERY', message);
  const query: Record<string, unknown> = {};
  for (const [parameter, value] of new URLSearchParams(querystring)) {
    if (!Object.hasOwn(recordsQueryParameters, parameter)) {
      throw invalid(`unknown query parameter ${JSON.stringify(parameter.slice(0, 64))}`);
    }
    if (Object.hasOwn(query, parameter)) throw invalid(`query parameter ${parameter} is repeated`);
    // Query values are text; `limit` is an integer in its canonical decimal spelling or malformed.
    query[parameter] = parameter === 'limit' && LIMIT_TEXT.test(value) ? Number(value) : value;
  }
  if (!recordsQueryValidator(query)) throw invalid(describeAjvError(recordsQueryValidator.errors, 'query'));
  return {
    ...(query as Omit<RecordsQuery, 'limit'>),
    limit: (query.limit as number | undefined) ?? RECORDS_LIMIT_DEFAULT,
  };
}

export interface ConsoleRouteDeps {
  transport: Transport;
  platform: PlatformSwitch;
}

export function addConsoleRoutes(router: Router, deps: ConsoleRouteDeps): void {
  const { transport } = deps;
  const gate = platformGate(deps.platform);
  const principalOf = async (ctx: Koa.Context) => {
    const principal = await admitDeveloper(transport, ctx);
    return {
      identityUserId: principal.identityUserId,
      canCreateUnlimitedOrganization: principal.canCreateUnlimitedOrganization,
    };
  };

  router.post('/api/developer/v1/console', gate, async (ctx) => {
    const principal = await principalOf(ctx);
    const body = validateAction(await readJsonBody(ctx));
    const reply = await transport
      .call(ledgerOps.consoleAction, { principal, action: actionMessage(body) }, ctx.state.call)
      .catch((error) => {
        throw unavailable(error);
      });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: actionResultJson(reply) };
  });

  router.get('/api/developer/v1/console', gate, async (ctx) => {
    const principal = await principalOf(ctx);
    const reply = await transport.call(ledgerOps.getSnapshot, { principal }, ctx.state.call).catch((error) => {
      throw unavailable(error);
    });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: snapshotJson(reply) };
  });

  router.get('/api/developer/v1/records', gate, async (ctx) => {
    const principal = await principalOf(ctx);
    const query = parseRecordsQuery(ctx.querystring);
    const reply = await transport
      .call(ledgerOps.listRecords, { principal, ...query }, ctx.state.call)
      .catch((error) => {
        throw unavailable(error);
      });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: recordPageJson(reply) };
  });
}
