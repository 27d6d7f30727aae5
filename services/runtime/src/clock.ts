// The time a state owner stamps on what it records: an event's receipt, a link intent's creation, expiry and
// inspection. `now()` answers null to let PostgreSQL stamp it (`now()` of the operation's transaction): one clock for
// every replica, the time the operation actually happened. That is the clock the programs ship with
// (`databaseClock`); tests hand the programs a settable clock (test/support/clock.ts) to reach a given instant (a UTC
// day boundary, a minute rollover, an intent's expiry) without waiting.

export interface Clock {
  /** The instant to record, or null for the database's `now()`. */
  now(): Date | null;
}

export const databaseClock: Clock = { now: () => null };
