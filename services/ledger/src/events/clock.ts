// The receipt time of events. By default the ledger lets PostgreSQL stamp it (`now()` of the decision's
// transaction): one clock for every ledger replica, and the time the decision actually happened.
//
// Tests that need a given instant (the UTC day boundary of the daily cap, a minute rollover of the rate limit, the
// edges of the timestamp window) run the system in their own process and set `receiptClock.now` to return that
// instant; `resetReceiptClock()` restores the database clock. Nothing in the shipped programs sets it.

export const receiptClock: { now: () => Date | null } = { now: () => null };

export function resetReceiptClock(): void {
  receiptClock.now = () => null;
}
