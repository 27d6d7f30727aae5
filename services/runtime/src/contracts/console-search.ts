// The console's search box (GraphQL search, the ledger's SearchConsole): the bound of its text, checked at the
// gateway and again in the ledger.

/** The longest text the search takes once trimmed: the longest id it finds, an external player id (200). */
export const SEARCH_TEXT_MAX = 200;
