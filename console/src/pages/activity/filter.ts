// The Activity page's filters in its address (#/org/<id>/activity?actor=…&action=…&game=…&from=…&to=…), read by the
// router before the page's code is loaded (hash-query.ts, as a game's Webhooks tab keeps its delivery filters).
import type { AuditFilter } from '../../api.ts';
import { hashQuery, hashWith, instantParam } from '../../hash-query.ts';

/** The filters of the address's query (#/org/<id>/activity?actor=…&action=…&game=…&from=…&to=…). */
export function activityFilterOf(hash: string): AuditFilter {
  const query = hashQuery(hash);
  const filter: AuditFilter = {};
  const actor = query.get('actor');
  const action = query.get('action');
  const game = query.get('game');
  const from = instantParam(query, 'from');
  const to = instantParam(query, 'to');
  if (actor) filter.actor = actor;
  if (action) filter.action = action;
  if (game) filter.gameId = game;
  if (from) filter.from = from;
  if (to) filter.to = to;
  return filter;
}

/** The Activity page's address with these filters. */
export function activityAddress(organizationId: string, filter: AuditFilter): string {
  return hashWith(`#/org/${organizationId}/activity`, [
    ['actor', filter.actor],
    ['action', filter.action],
    ['game', filter.gameId],
    ['from', filter.from],
    ['to', filter.to],
  ]);
}
