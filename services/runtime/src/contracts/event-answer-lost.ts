// The 503 of an event that its own request decided although the answer never reached the client: the ledger's
// connection broke (or its client stopped waiting) after the commit, and a look on a new connection found the
// decision made with the id the ledger had proposed for this request (ledger.record_events, p_decision_ids). The
// decision is stored, but the quota figures of a fresh decision were in the lost answer, and answering it as a
// replay would tell the client that an earlier request decided it (CONTRACT sections 7 and 11). The ledger answers
// this 503; a retry with the same eventId answers the stored decision (replayed: true). The batch endpoint does not
// turn a batch whose every event met a 503 into a whole-request 503 when one of them is this one: something of the
// batch was decided.
export const EVENT_ANSWER_LOST =
  'The event was decided, but the answer to its decision was lost. ' +
  'Retry with the same eventId: it answers the stored decision.';
