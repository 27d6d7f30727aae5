// The metrics of the ledger's event batching (docs/ingest.md, "Batched decisions"): what the batcher reports, as
// Prometheus histograms and a gauge on the program's registry.
import { Gauge, Histogram } from 'prom-client';
import type { Metrics } from '#runtime/metrics.ts';
import type { BatchObserver } from './batcher.ts';

/**
 * The batcher's observer: ledger_event_batch_size, ledger_event_transaction_keys, ledger_event_queue_depth,
 * ledger_event_call_duration_seconds; the events dropped at their deadline count in late_work_dropped_total{stage="batch"}.
 */
export function decisionBatchMetrics(metrics: Metrics | undefined): BatchObserver | undefined {
  if (!metrics) return undefined;
  const registers = [metrics.registry];
  const batchSizes = new Histogram({
    name: 'ledger_event_batch_size',
    help: 'Events of one key decided together (its batch, in a call of ledger.record_events)',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000],
    registers,
  });
  const groupSizes = new Histogram({
    name: 'ledger_event_transaction_keys',
    help: 'Keys whose batches went to the database in one call (one transaction), when more than one',
    buckets: [2, 3, 4, 5, 6, 7, 8, 16, 32, 64],
    registers,
  });
  const queueDepth = new Gauge({
    name: 'ledger_event_queue_depth',
    help: 'Events waiting for a batch (not yet in the database)',
    registers,
  });
  const callDurations = new Histogram({
    name: 'ledger_event_call_duration_seconds',
    help: 'Round trip of one call of ledger.record_events (one transaction, its commit included), answered or failed',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  return {
    batch: (size) => batchSizes.observe(size),
    group: (keys) => groupSizes.observe(keys),
    queued: (depth) => queueDepth.set(depth),
    called: (seconds) => callDurations.observe(seconds),
    dropped: (count) => metrics.lateWorkDropped.inc({ stage: 'batch' }, count),
  };
}
