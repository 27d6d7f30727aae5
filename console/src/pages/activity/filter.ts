// The Activity page's filters in its address (#/org/<id>/activity?actor=…&action=…&game=…&from=…&to=…), read by the
// router before the page's code is loaded.
import type { AuditFilter } from '../../api.ts';

/** The filters of the address's query (#/org/<id>/activity?actor=…&action=…&game=…&from=…&to=…). */
export function activityFilterOf(hash: string): AuditFilter {
  const query = new URLSearchParams(hash.includes('?') ? hash.slice(hash.indexOf('?') + 1) : '');
  const filter: AuditFilter = {};
  const actor = query.get('actor');
  const action = query.get('action');
  const game = query.get('game');
  const from = query.get('from');
  const to = query.get('to');
  if (actor) filter.actor = actor;
  if (action) filter.action = action;
  if (game) filter.gameId = game;
  if (from && !Number.isNaN(Date.parse(from))) filter.from = new Date(from).toISOString();
  if (to && !Number.isNaN(Date.parse(to))) filter.to = new Date(to).toISOString();
  return filter;
}

/** The Activity page's address with these filters. */
export function activityAddress(organizationId: string, filter: AuditFilter): string {
  const query = new URLSearchParams();
  if (filter.actor) query.set('actor', filter.actor);
  if (filter.action) query.set('action', filter.action);
  if (filter.gameId) query.set('game', filter.gameId);
  if (filter.from) query.set('from', filter.from);
  if (filter.to) query.set('to', filter.to);
  const text = query.toString();
  return `#/org/${organizationId}/activity${text ? `?${text}` : ''}`;
}
