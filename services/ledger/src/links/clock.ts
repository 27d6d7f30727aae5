// The time of link intents: when an intent is created (it expires 10 minutes later) and when it is inspected or
// approved. By default PostgreSQL stamps it (`now()` of the operation's transaction): one clock for every ledger
// replica, the same clock that wrote `expires_at`.
//
// Tests of the expiry run the system in their own process and set `linkClock.now` to return the instant they need
// (create at T, approve at T + 10 minutes) instead of waiting; `resetLinkClock()` restores the database clock.
// The same mechanism as the events' receipt clock. Nothing in the shipped programs sets it.

export const linkClock: { now: () => Date | null } = { now: () => null };

export function resetLinkClock(): void {
  linkClock.now = () => null;
}
