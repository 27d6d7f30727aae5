// A page's filters in its address's query (`#/<path>?name=value&…`), read and written the same way by every page that
// keeps them there (the Activity page, a game's Webhooks tab): a filtered view is a link, a reload shows it again, and
// Back and Forward move between filters. The router reads them from the hash before the page's code is loaded, so
// this module and the pages' own address modules stay small and free of React.

/** The query of an address's hash (what follows its first `?`). */
export function hashQuery(hash: string): URLSearchParams {
  return new URLSearchParams(hash.includes('?') ? hash.slice(hash.indexOf('?') + 1) : '');
}

/** A parameter that is an instant, as an RFC 3339 instant (UTC); undefined when absent or not a time. */
export function instantParam(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  return value && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : undefined;
}

/** The address `path` with these parameters, in this order; the absent and empty ones left out. */
export function hashWith(path: string, params: Array<[string, string | undefined]>): string {
  const query = new URLSearchParams();
  for (const [name, value] of params) if (value) query.set(name, value);
  const text = query.toString();
  return `${path}${text ? `?${text}` : ''}`;
}
