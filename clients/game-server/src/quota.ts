// The quota fields of a fresh decision (IETF httpapi rate-limit fields, structured-field syntax, plus two of the
// service's): `RateLimit-Policy: "minute";q=120;w=60`, `RateLimit: "minute";r=37;t=12`, `Rewards-Daily-Remaining`
// and `Rewards-Budget-Remaining`. Replays and errors carry none; a batch carries those of its last fresh decision.

/** The figures of the last answer that carried them. */
export interface Quota {
  /** `RateLimit-Policy` q: fresh events of the game per window. */
  limit: number | undefined;
  /** `RateLimit-Policy` w: the window, in seconds (60). */
  windowSeconds: number | undefined;
  /** `RateLimit` r: fresh events of the game left in this window (across every server sending for the game). */
  remaining: number;
  /** `RateLimit` t: seconds until the window ends. */
  resetSeconds: number;
  /** Credits the decided event's player may still be awarded in this game today. */
  dailyRemainingCredits: number | undefined;
  /** Credits left in the game's budget. */
  budgetRemainingCredits: number | undefined;
  /** When the answer arrived (epoch milliseconds, this machine's clock). */
  receivedAtMs: number;
}

export interface HeaderReader {
  get(name: string): string | null;
}

/** The parameters of a structured-field list's first item (`"minute";r=37;t=12` gives {r: 37, t: 12}). */
export function structuredParameters(value: string): Map<string, number> {
  const parameters = new Map<string, number>();
  const [first = ''] = value.split(',');
  for (const part of first.split(';').slice(1)) {
    const [name, raw] = part.trim().split('=');
    if (name === undefined || raw === undefined || !/^\d+$/.test(raw)) continue;
    parameters.set(name, Number(raw));
  }
  return parameters;
}

function integer(value: string | null): number | undefined {
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value.trim()) : undefined;
}

/** The quota of an answer, or undefined when it carries no `RateLimit` (a replay, an error). */
export function parseQuota(headers: HeaderReader, receivedAtMs: number): Quota | undefined {
  const rateLimit = headers.get('RateLimit');
  if (rateLimit === null) return undefined;
  const current = structuredParameters(rateLimit);
  const remaining = current.get('r');
  const resetSeconds = current.get('t');
  if (remaining === undefined || resetSeconds === undefined) return undefined;
  const policy = structuredParameters(headers.get('RateLimit-Policy') ?? '');
  return {
    limit: policy.get('q'),
    windowSeconds: policy.get('w'),
    remaining,
    resetSeconds,
    dailyRemainingCredits: integer(headers.get('Rewards-Daily-Remaining')),
    budgetRemainingCredits: integer(headers.get('Rewards-Budget-Remaining')),
    receivedAtMs,
  };
}

/** `Retry-After` in milliseconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterMs(headers: HeaderReader, nowMs: number): number | undefined {
  const value = headers.get('Retry-After');
  if (value === null) return undefined;
  const seconds = integer(value);
  if (seconds !== undefined) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
