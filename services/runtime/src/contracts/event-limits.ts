// The event path's limits, in one place: how many events travel in one request from an edge to the ledger
// and in one call of ledger.record_events, how many keys (games) share one, the length of every hash, and the bounds
// of occurredAt. The edge, the ledger, the chart's values.schema.json and the SQL functions all take these numbers;
// `npm run check` (.ci/check-limits.ts) compares the chart's bounds and the SQL's literals with them, and the
// relations between them are asserted when this module loads: a wrong edit fails at once, not under load.

export const EVENT_LIMITS = {
  /** Events in one RecordEvents request from an edge (the ledger refuses a larger one). */
  eventsPerRequestMax: 256,
  /** INGEST_EVENT_BATCH_MAX's default: the edge fills a request up to the maximum. */
  edgeBatchDefault: 256,
  /** INGEST_EVENT_IN_FLIGHT_MAX's bound: RecordEvents requests one edge keeps in flight. */
  edgeInFlightMax: 256,
  /** INGEST_EVENT_KEYS_MAX's bound: keys (games) in one RecordEvents request. */
  keysPerRequestMax: 256,
  /** Events in one call of ledger.record_events (the SQL function refuses more: record_events.sql). */
  eventsPerCallMax: 1000,
  /** EVENT_BATCH_MAX's default: one key's events in one call. */
  ledgerBatchDefault: 256,
  /** EVENT_GROUP_KEYS_MAX's bound: keys (games) whose batches share one call of ledger.record_events. */
  keysPerCallMax: 64,
  /**
   * A key's batch of at least this many events (a flood's backlog) travels in a request, and a call of
   * ledger.record_events, of its own; other keys' short batches do not wait for it (fair ingest: keyed-batcher.ts).
   * A paced flood's calls are one such batch at a time (flood-pacer.ts, inFlightMax).
   */
  longBatchMin: 16,
  /** An event's metadata: its RFC 8785 canonical form's UTF-8 bytes at most (spec "Limits"; ledger.events' CHECK). */
  metadataBytesMax: 4096,
  /** SHA-256: key hashes, payload hashes and link-token hashes (the tables' CHECK constraints say the same). */
  hashBytes: 32,
  /** occurredAt more than this far from the receipt, either way, is `timestamp_out_of_window`. */
  occurredAtWindowMs: 300_000,
  /** The occurredAt grammar's range, years 0000 to 9999, in epoch milliseconds. */
  occurredAtMinMs: -62_167_219_200_000,
  occurredAtMaxMs: 253_402_300_799_999,
} as const;

function assertLimits(): void {
  const l = EVENT_LIMITS;
  const relations: Array<[boolean, string]> = [
    [l.edgeBatchDefault <= l.eventsPerRequestMax, 'the edge default batch fits in one request'],
    [l.eventsPerRequestMax <= l.eventsPerCallMax, 'one request fits in one call of ledger.record_events'],
    [l.ledgerBatchDefault <= l.eventsPerCallMax, "the ledger's default batch fits in one call"],
    [l.keysPerCallMax <= l.eventsPerCallMax, 'every key of a call has at least one event'],
    [l.longBatchMin <= l.ledgerBatchDefault, "a long batch fits in the ledger's default batch"],
    [l.occurredAtMinMs < 0 && l.occurredAtMaxMs > Date.UTC(9999, 11, 31), 'occurredAt spans years 0000 to 9999'],
  ];
  const broken = relations.filter(([holds]) => !holds).map(([, what]) => what);
  if (broken.length > 0) throw new Error(`EVENT_LIMITS are inconsistent: ${broken.join('; ')}`);
}
assertLimits();
