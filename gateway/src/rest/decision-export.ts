// Decision export (CONTRACT section 11.1): GET /api/developer/v1/decisions/export streams every decision of one game
// in a window of at most 31 days that matches the decision search's filters, oldest first by (createdAt, id), as
// NDJSON or as CSV with a header row. The gateway pages through the ledger (ExportDecisions, DECISION_EXPORT_PAGE_SIZE
// decisions a request, a keyset cursor) and writes each page as it arrives, asking for the next one only when the
// client has read the previous: memory is bounded by a page, and no NATS reply is large. Everything refused before the
// first page (query, visibility, the ledger unavailable) answers with the envelope; a failure after the first bytes
// ends NDJSON with a line {"error": {code, message}} and aborts CSV (the chunked body never ends), so that a client
// can tell a cut export from a whole one (docs/console.md, docs/decisions.md). The stream holds its developer's
// in-flight slot until it ends.
import { pipeline, Readable } from 'node:stream';
import type Koa from 'koa';
import { DECISION_EXPORT_PATH, decisionExportProblem } from '#runtime/contracts/decision-search.ts';
import { EVENT_RECORD_FIELDS } from '#runtime/contracts/event-record.ts';
import type { DeveloperEvent } from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import { AppError } from '#runtime/errors.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import { describeAjvError } from '#runtime/validation/ajv.ts';
import { developerOf } from '../auth/developer-session.ts';
import { consolePrincipal, consoleSchemaSet, readDecisionExportPage } from '../console/service.ts';
import { eventGraphqlJson } from '../console/shapes.ts';
import { isStorableDateTime } from '../graphql/scalars.ts';
import { decisionExportQueryParameters } from '../schemas/console.ts';

export { DECISION_EXPORT_PATH };

/** The CSV columns, in order: DeveloperEvent's fields, gameTime, then externalPlayerId (the NDJSON lines' keys, in order). */
export const DECISION_EXPORT_COLUMNS = [...EVENT_RECORD_FIELDS, 'gameTime', 'externalPlayerId'] as const;

export interface DecisionExportQuery {
  gameId: string;
  fromMs: number;
  toMs: number;
  format: 'ndjson' | 'csv';
  organizationId?: string;
  projectId?: string;
  playerId?: string;
  eventId?: string;
  status?: string;
  reason?: string;
  eventType?: string;
}

const exportQueryValidator = consoleSchemaSet.named('DecisionExportQuery');
const invalid = (message: string) => new AppError('INVALID_RECORD_QUERY', message);

/**
 * Parses the export's query string: unknown, repeated, missing or malformed parameters, `to` not after `from` and a
 * window over 31 days are 400 INVALID_RECORD_QUERY.
 */
export function parseDecisionExportQuery(querystring: string): DecisionExportQuery {
  const query: Record<string, string> = {};
  for (const [parameter, value] of new URLSearchParams(querystring)) {
    if (!Object.hasOwn(decisionExportQueryParameters, parameter)) {
      throw invalid(`unknown query parameter ${JSON.stringify(parameter.slice(0, 64))}`);
    }
    if (Object.hasOwn(query, parameter)) throw invalid(`query parameter ${parameter} is repeated`);
    query[parameter] = value;
  }
  if (!exportQueryValidator(query)) throw invalid(describeAjvError(exportQueryValidator.errors, 'query'));
  for (const bound of ['from', 'to'] as const) {
    if (!isStorableDateTime(query[bound]!)) throw invalid(`query.${bound} must lie in years 0001 to 9999 (UTC).`);
  }
  const { from, to, format, ...filters } = query;
  const parsed: DecisionExportQuery = {
    ...filters,
    gameId: query.gameId!,
    fromMs: Date.parse(from!),
    toMs: Date.parse(to!),
    format: format === 'csv' ? 'csv' : 'ndjson',
  };
  const problem = decisionExportProblem(parsed, 'query');
  if (problem) throw invalid(problem);
  return parsed;
}

/** One exported decision: the DeveloperEvent's fields, gameTime (CONTRACT section 11.2), then externalPlayerId. */
function exportedDecision(event: DeveloperEvent, externalPlayerId: string) {
  return { ...eventGraphqlJson(event), externalPlayerId };
}

/** What a spreadsheet may take for the start of a formula (OWASP, CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field (RFC 4180): quoted, quotes doubled, when it holds a comma, a quote or a line break. A text value that
 * begins with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (OWASP's rule against CSV injection):
 * external player ids and event types come from game servers, and a spreadsheet would run such a cell as a formula.
 * Numbers are written as they are.
 */
export function csvField(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value);
  const neutral = typeof value === 'string' && FORMULA_START.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(neutral) ? `"${neutral.replaceAll('"', '""')}"` : neutral;
}

const CSV_HEADER = `${DECISION_EXPORT_COLUMNS.join(',')}\r\n`;

/** A page as text: NDJSON lines, or CSV records (CRLF line ends). */
function pageText(page: { events: DeveloperEvent[]; externalPlayerIds: string[] }, format: 'ndjson' | 'csv'): string {
  let text = '';
  page.events.forEach((event, i) => {
    const decision = exportedDecision(event, page.externalPlayerIds[i] ?? '');
    if (format === 'ndjson') {
      text += `${JSON.stringify(decision)}\n`;
    } else {
      text += `${DECISION_EXPORT_COLUMNS.map((column) => csvField(decision[column])).join(',')}\r\n`;
    }
  });
  return text;
}

export interface DecisionExportDeps {
  transport: Transport;
  /** DECISION_EXPORT_PAGE_SIZE: decisions asked of the ledger per request (1..DECISION_EXPORT_PAGE_MAX). */
  pageSize: number;
}

/** The route's handler, after the platform gate and admission within the developer's limits. */
export function decisionExportHandler(deps: DecisionExportDeps): Koa.Middleware {
  return async (ctx) => {
    const developer = developerOf(ctx);
    const principal = consolePrincipal(developer.principal);
    const query = parseDecisionExportQuery(ctx.querystring);
    const { format, ...filters } = query;
    const call = ctx.state.call;
    const pageOf = (cursor: string | undefined) =>
      readDecisionExportPage(
        deps.transport,
        principal,
        {
          ...filters,
          fromMs: BigInt(filters.fromMs),
          toMs: BigInt(filters.toMs),
          limit: deps.pageSize,
          ...(cursor === undefined ? {} : { cursor }),
        },
        call,
      );
    // The first page before any byte: whatever refuses the export answers with the envelope and its status.
    const first = await pageOf(undefined);
    async function* body(): AsyncGenerator<string> {
      if (format === 'csv') yield CSV_HEADER;
      let page = first;
      for (;;) {
        const text = pageText(page, format);
        if (text !== '') yield text;
        if (page.nextCursor === undefined) return;
        try {
          page = await pageOf(page.nextCursor);
        } catch (error) {
          ctx.state.log?.warn({ err: error }, 'decision export cut short');
          if (format === 'csv') {
            // CSV has no room for an error: the connection is cut before the chunked body's end.
            ctx.res.destroy();
            return;
          }
          const known = error instanceof AppError;
          yield `${JSON.stringify({
            error: {
              code: known ? error.code : 'internal_error',
              message: known ? error.message : 'The export was cut short; export again from the last createdAt.',
            },
          })}\n`;
          return;
        }
      }
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.set(
      'Content-Type',
      format === 'csv' ? 'text/csv; charset=utf-8; header=present' : 'application/x-ndjson; charset=utf-8',
    );
    ctx.status = 200;
    // Written here rather than as ctx.body: a client that leaves mid-export (or a CSV cut short) is no error of Koa's.
    ctx.respond = false;
    // The stream is one of the developer's requests in flight for as long as it runs, not only until this handler
    // returns: the slot is given back when the pipeline ends (whole, cut short, or the client gone).
    const streamEnded = developer.lease.handOver();
    pipeline(Readable.from(body(), { objectMode: false }), ctx.res, (error) => {
      streamEnded();
      if (error && (error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        ctx.state.log?.warn({ err: error }, 'decision export not sent whole');
      }
    });
  };
}
