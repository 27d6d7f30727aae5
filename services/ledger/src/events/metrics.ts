// The metrics of the ledger's event batching (docs/ingest.md, "Batched decisions"): what the batcher reports, as
// Prometheus histograms and a gauge on the program's registry.
import { Gauge, Histogram } from 'prom-client';
import type { Metrics } from '#runtime/metrics.ts';
import type { BatchObserver } from './batcher.ts';

/** The batcher's observer: ledger_event_batch_size, ledger_event_transaction_keys, ledger_event_queue_depth. */
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
  return {
    batch: (size) => batchSizes.observe(size),
    group: (keys) => groupSizes.observe(keys),
    queued: (depth) => queueDepth.set(depth),
  };
}
