// Decision search's filter rules (GraphQL decisions, the web console's records page), one spelling for the gateway
// (which refuses before calling) and the ledger (which checks again, for callers on the transport), and the canonical
// form of the filters a cursor is bound to.
import { isUuid } from '../validation/uuid.ts';
import { DECISION_REASONS, EVENT_STATUSES, EVENT_TYPE_REGEX } from './vocabulary.ts';

export interface DecisionSearchFilters {
  organizationId?: string | undefined;
  projectId?: string | undefined;
  gameId?: string | undefined;
  playerId?: string | undefined;
  eventId?: string | undefined;
  status?: string | undefined;
  reason?: string | undefined;
  eventType?: string | undefined;
  /** The decision's createdAt in [fromMs, toMs), epoch milliseconds. */
  fromMs?: number | undefined;
  toMs?: number | undefined;
}

const UUID_FILTERS = ['organizationId', 'projectId', 'gameId', 'playerId', 'eventId'] as const;

/** The first problem of the filters, named as `${prefix}.<argument>`, or undefined when they are well-formed. */
export function decisionFiltersProblem(f: DecisionSearchFilters, prefix: string): string | undefined {
  for (const name of UUID_FILTERS) {
    const value = f[name];
    if (value !== undefined && !isUuid(value)) return `${prefix}.${name} must be a valid uuid.`;
  }
  if (f.status !== undefined && !(EVENT_STATUSES as readonly string[]).includes(f.status)) {
    return `${prefix}.status must be one of ${EVENT_STATUSES.join(', ')}.`;
  }
  if (f.reason !== undefined && !(DECISION_REASONS as readonly string[]).includes(f.reason)) {
    return `${prefix}.reason must be a rejection reason.`;
  }
  if (f.eventType !== undefined && !EVENT_TYPE_REGEX.test(f.eventType)) {
    return `${prefix}.eventType must match ${EVENT_TYPE_REGEX.source}.`;
  }
  for (const name of ['fromMs', 'toMs'] as const) {
    const value = f[name];
    if (value !== undefined && !Number.isSafeInteger(value)) return `${prefix}.${name.slice(0, -2)} must be a time.`;
  }
  if (f.fromMs !== undefined && f.toMs !== undefined && f.toMs <= f.fromMs) return `${prefix}.to must be after from.`;
  return undefined;
}

/** The longest window one decision export may read (CONTRACT section 11.1). */
export const DECISION_EXPORT_WINDOW_DAYS_MAX = 31;
/** The export's path (REST, GET), served by the gateway and fetched by the web console. */
export const DECISION_EXPORT_PATH = '/api/developer/v1/decisions/export';
/** The most decisions of one ExportDecisions page (one NATS reply). */
export const DECISION_EXPORT_PAGE_MAX = 1000;
/** Default of DECISION_EXPORT_PAGE_SIZE: decisions the gateway asks the ledger for per page. */
export const DECISION_EXPORT_PAGE_DEFAULT = 500;
const DAY_MS = 86_400_000;

/**
 * The first problem of a decision export's filters (a decision search's, with the game and the window required,
 * the window at most DECISION_EXPORT_WINDOW_DAYS_MAX days), or undefined.
 */
export function decisionExportProblem(f: DecisionSearchFilters, prefix: string): string | undefined {
  if (f.gameId === undefined) return `${prefix}.gameId is required.`;
  if (f.fromMs === undefined) return `${prefix}.from is required.`;
  if (f.toMs === undefined) return `${prefix}.to is required.`;
  const problem = decisionFiltersProblem(f, prefix);
  if (problem) return problem;
  if (f.toMs - f.fromMs > DECISION_EXPORT_WINDOW_DAYS_MAX * DAY_MS) {
    return `${prefix}: the window may span at most ${DECISION_EXPORT_WINDOW_DAYS_MAX} days.`;
  }
  return undefined;
}

/** The filters a decision cursor is bound to, in one canonical spelling (ids lower-case, times in milliseconds). */
export function decisionSearchScope(f: DecisionSearchFilters): string {
  const part = (value: string | number | undefined) => (value === undefined ? '' : String(value).toLowerCase());
  return [
    `org=${part(f.organizationId)}`,
    `project=${part(f.projectId)}`,
    `game=${part(f.gameId)}`,
    `player=${part(f.playerId)}`,
    `event=${part(f.eventId)}`,
    `status=${part(f.status)}`,
    `reason=${part(f.reason)}`,
    `type=${part(f.eventType)}`,
    `from=${part(f.fromMs)}`,
    `to=${part(f.toMs)}`,
  ].join(';');
}
