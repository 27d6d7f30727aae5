// The decision search's form as typed, and its translation to and from the search kept in the URL (url-state.ts):
// times as the browser's local datetime-local text, ids trimmed, a player id (UUID) in lower case. Pure: no React,
// no request; the unit tests read it.
import { type Search, UUID } from './url-state.ts';

/** The form's text: every field as typed (times as the browser's local datetime-local text). */
export type Form = Record<
  'org' | 'project' | 'game' | 'player' | 'event' | 'status' | 'reason' | 'type' | 'from' | 'to',
  string
> & {
  size: string;
};

const pad = (n: number) => String(n).padStart(2, '0');
/** An instant as a datetime-local value in the browser's time zone. */
export function localInput(iso: string | undefined): string {
  if (!iso || Number.isNaN(Date.parse(iso))) return iso ?? '';
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
/** A datetime-local value (local time) as a UTC instant; text that is no time stays as typed (and is refused). */
export function instant(local: string): string | undefined {
  const text = local.trim();
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? text : new Date(ms).toISOString();
}

export const formOf = (s: Search): Form => ({
  org: s.org ?? '',
  project: s.project ?? '',
  game: s.game ?? '',
  player: s.player ?? '',
  event: s.event ?? '',
  status: s.status ?? '',
  reason: s.reason ?? '',
  type: s.type ?? '',
  from: localInput(s.from),
  to: localInput(s.to),
  size: String(s.size),
});

/**
 * The count above the table. The search answers pages, not a total: a page with more beyond it says "25 shown",
 * never "25 decisions", which would read as the total.
 */
export function summaryOf(count: number, filtered: number, paged: boolean): string {
  const matching = filtered > 0 ? ` matching ${filtered} filter${filtered === 1 ? '' : 's'}` : '';
  if (count === 0) return `No decisions${matching}${paged ? ' on this page' : ''}.`;
  if (paged) return `${count} shown${matching}; more on other pages.`;
  return `${count} decision${count === 1 ? '' : 's'}${matching}.`;
}

const lowerIfUuid = (value: string | undefined) =>
  value !== undefined && UUID.test(value) ? value.toLowerCase() : value;

export const searchOf = (f: Form): Search => {
  const text = (value: string) => value.trim() || undefined;
  return {
    org: text(f.org),
    project: text(f.project),
    game: text(f.game),
    // A player id (UUID) in lower case; the game's own id exactly as typed.
    player: lowerIfUuid(text(f.player)),
    event: text(f.event)?.toLowerCase(),
    status: text(f.status),
    reason: text(f.reason),
    type: text(f.type),
    from: instant(f.from),
    to: instant(f.to),
    size: Number(f.size),
  };
};
