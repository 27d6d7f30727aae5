// REST adapters of the developer console (spec: POST and GET /api/developer/v1/console, GET
// /api/developer/v1/records; CONTRACT section 8). Checks in order: platform switch, developer admission (the
// invitation is rechecked on every request, immediately before the ledger locks anything) within the developer's
// limits (auth/developer-limits.ts: 429 TOO_MANY_REQUESTS, before admission for a token admitted earlier), then the
// request's own shape, then one call to the ledger (console/service.ts, shared with the GraphQL console). Every
// rule about organizations, funding and membership lives in the ledger.
import type Router from '@koa/router';
import type Koa from 'koa';
import { AppError } from '#runtime/errors.ts';
import { readJsonBody } from '#runtime/http/body.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import { DEVELOPER_COSTS, type DeveloperLimits } from '../auth/developer-limits.ts';
import { admittedWithinLimits, developerOf } from '../auth/developer-session.ts';
import {
  type AuditQuery,
  consolePrincipal,
  type RecordsQuery,
  readAudit,
  readRecords,
  readSnapshot,
  runAction,
  validateAction,
  validateAuditQuery,
  validateRecordsQuery,
} from '../console/service.ts';
import { actionResultJson, auditPageJson, recordPageJson, snapshotJson } from '../console/shapes.ts';
import { auditQueryParameters, recordsQueryParameters } from '../schemas/console.ts';
import { DECISION_EXPORT_PATH, decisionExportHandler } from './decision-export.ts';

export { consoleSchemaSet, type RecordsQuery, validateAction } from '../console/service.ts';

const LIMIT_TEXT = /^(?:0|[1-9][0-9]{0,3})$/;

/** A query string as an object of its parameters: unknown or repeated ones are 400 INVALID_RECORD_QUERY. */
function queryParameters(querystring: string, known: Record<string, unknown>): Record<string, unknown> {
  const invalid = (message: string) => new AppError('INVALID_RECORD_QUERY', message);
  const query: Record<string, unknown> = {};
  for (const [parameter, value] of new URLSearchParams(querystring)) {
    if (!Object.hasOwn(known, parameter)) {
      throw invalid(`unknown query parameter ${JSON.stringify(parameter.slice(0, 64))}`);
    }
    if (Object.hasOwn(query, parameter)) throw invalid(`query parameter ${parameter} is repeated`);
    // Query values are text; `limit` is an integer in its canonical decimal spelling or malformed.
    query[parameter] = parameter === 'limit' && LIMIT_TEXT.test(value) ? Number(value) : value;
  }
  return query;
}

/** Parses the records query string: unknown, repeated or malformed parameters are 400 INVALID_RECORD_QUERY. */
export function parseRecordsQuery(querystring: string): RecordsQuery {
  return validateRecordsQuery(queryParameters(querystring, recordsQueryParameters));
}

/** Parses the audit query string (CONTRACT section 11.2) with the records' rules and codes. */
export function parseAuditQuery(querystring: string): AuditQuery {
  return validateAuditQuery(queryParameters(querystring, auditQueryParameters));
}

export interface ConsoleRouteDeps {
  transport: Transport;
  platform: PlatformSwitch;
  limits: DeveloperLimits;
  /** DECISION_EXPORT_PAGE_SIZE: decisions per ledger request of a decision export. */
  decisionExportPageSize: number;
}

export function addConsoleRoutes(router: Router, deps: ConsoleRouteDeps): void {
  const { transport } = deps;
  // The platform switch lives in the identity store: while it cannot be read, answer like admission would.
  const gate = platformGate(deps.platform, 'AUTH_UNAVAILABLE');
  // Admission within the developer's limits (429 TOO_MANY_REQUESTS past them), before the request's own shape.
  const admitted = (cost: number) => admittedWithinLimits(transport, deps.limits, cost);
  const principalOf = (ctx: Koa.Context) => consolePrincipal(developerOf(ctx).principal);

  router.post('/api/developer/v1/console', gate, admitted(DEVELOPER_COSTS.request), async (ctx) => {
    const principal = principalOf(ctx);
    const body = validateAction(await readJsonBody(ctx));
    const reply = await runAction(transport, principal, body, ctx.state.call);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: actionResultJson(reply) };
  });

  router.get('/api/developer/v1/console', gate, admitted(DEVELOPER_COSTS.snapshot), async (ctx) => {
    const principal = principalOf(ctx);
    const reply = await readSnapshot(transport, principal, ctx.state.call);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: snapshotJson(reply) };
  });

  router.get('/api/developer/v1/records', gate, admitted(DEVELOPER_COSTS.recordPage), async (ctx) => {
    const principal = principalOf(ctx);
    const query = parseRecordsQuery(ctx.querystring);
    const reply = await readRecords(transport, principal, query, ctx.state.call);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: recordPageJson(reply) };
  });

  // The audit trail (CONTRACT section 11.2): a records page's cost, paging and errors.
  router.get('/api/developer/v1/audit', gate, admitted(DEVELOPER_COSTS.recordPage), async (ctx) => {
    const principal = principalOf(ctx);
    const query = parseAuditQuery(ctx.querystring);
    const reply = await readAudit(transport, principal, query, ctx.state.call);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: auditPageJson(reply) };
  });

  router.get(
    DECISION_EXPORT_PATH,
    gate,
    admitted(DEVELOPER_COSTS.export),
    decisionExportHandler({ transport, pageSize: deps.decisionExportPageSize }),
  );
}
