// The decision search's export (CONTRACT section 11.1, docs/console.md "Decision export"): a search's filters as the
// query of GET /api/developer/v1/decisions/export, the file's name, the same request as a curl command, and what an
// NDJSON export's last line says when it was cut short. Pure: no React, no request (DecisionExport.tsx sends it).
import {
  DECISION_EXPORT_PATH,
  DECISION_EXPORT_WINDOW_DAYS_MAX as EXPORT_WINDOW_DAYS_MAX,
} from '../../../../services/runtime/src/contracts/decision-search.ts';
import type { Search } from './url-state.ts';

export { DECISION_EXPORT_PATH };

const DAY_MS = 86_400_000;

export type ExportFormat = 'ndjson' | 'csv';

/** An export to run (its query string and window), or why the search cannot be exported as it is. */
export type ExportPlan = { query: string; from: string; to: string } | { problem: string };

/**
 * The export of a search: its game (an export is of one game), its window (the search's; without a start, the 31 days
 * before its end; without an end, now) and its other filters. `playerId` is the search's player as a player id (the
 * caller looks a game's own player id up first).
 */
export function exportPlan(search: Search, format: ExportFormat, nowMs: number, playerId?: string): ExportPlan {
  if (!search.game) return { problem: 'Choose a game in the filters: an export holds the decisions of one game.' };
  const toMs = search.to ? Date.parse(search.to) : nowMs;
  const fromMs = search.from ? Date.parse(search.from) : toMs - EXPORT_WINDOW_DAYS_MAX * DAY_MS;
  if (toMs - fromMs > EXPORT_WINDOW_DAYS_MAX * DAY_MS) {
    return { problem: `An export covers at most ${EXPORT_WINDOW_DAYS_MAX} days: narrow the received window.` };
  }
  const from = new Date(fromMs).toISOString();
  const to = new Date(toMs).toISOString();
  const query = new URLSearchParams({ gameId: search.game, from, to, format });
  const filters: Array<[string, string | undefined]> = [
    ['organizationId', search.org],
    ['projectId', search.project],
    ['playerId', playerId ?? search.player],
    ['eventId', search.event],
    ['status', search.status],
    ['reason', search.reason],
    ['eventType', search.type],
  ];
  for (const [parameter, value] of filters) if (value) query.set(parameter, value);
  return { query: query.toString(), from, to };
}

/**
 * The saved file's name: the game's id and the window, its start and end to the minute in UTC,
 * `decisions-<game>-<yyyy-mm-ddThhmm>-to-<yyyy-mm-ddThhmm>.<format>`, so that two exports of one day differ.
 */
export function exportFileName(gameId: string, from: string, to: string, format: ExportFormat): string {
  const minute = (iso: string) => iso.slice(0, 16).replace(':', '');
  return `decisions-${gameId.slice(0, 8)}-${minute(from)}-to-${minute(to)}.${format}`;
}

/** "1 decision", "2,500 decisions". */
export const decisionsText = (count: number) =>
  `${count.toLocaleString('en-US')} ${count === 1 ? 'decision' : 'decisions'}`;

/** The same export with curl, for one too large for a browser tab: the token is the reader's to fill in. */
export function exportCurl(origin: string, query: string, fileName: string): string {
  return `curl -fsS -H "Authorization: Bearer $TOKEN" '${origin}${DECISION_EXPORT_PATH}?${query}' -o ${fileName}`;
}

/** The records an export's text holds: its lines, less CSV's header row and an NDJSON error line. */
export function exportedCount(text: string, format: ExportFormat): number {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const records = format === 'csv' ? lines.length - 1 : lines.length - (cutShortBy(text) ? 1 : 0);
  return Math.max(0, records);
}

/** The failure an NDJSON export ended with (`{"error": {code, message}}` as its last line), if it was cut short. */
export function cutShortBy(text: string): { code: string; message: string } | undefined {
  const last = text.trimEnd().split('\n').at(-1) ?? '';
  if (!last.startsWith('{"error"')) return undefined;
  try {
    const error = (JSON.parse(last) as { error?: { code?: unknown; message?: unknown } }).error;
    return typeof error?.code === 'string' && typeof error.message === 'string'
      ? { code: error.code, message: error.message }
      : undefined;
  } catch {
    return undefined;
  }
}
