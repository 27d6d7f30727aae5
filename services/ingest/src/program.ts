// ingest: the game SDK's edge for events and public configuration, the product's hot path. Stateless: it checks
// shapes and limits, and asks the ledger over the transport.
import type Router from '@koa/router';
import { Counter, Gauge, Histogram } from 'prom-client';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import type { ProgramModule } from '#runtime/program.ts';
import { addConfigRoutes } from './routes/config.ts';
import {
  EDGE_BATCH_MAX_DEFAULT,
  EDGE_IN_FLIGHT_MAX_DEFAULT,
  EDGE_KEY_IN_FLIGHT_MAX_DEFAULT,
  EDGE_KEYS_MAX_DEFAULT,
} from './routes/event-batcher.ts';
import { addEventRoutes } from './routes/events.ts';

export interface IngestConfig {
  /** Most events in one RecordEvents request to the ledger; 1 sends one RecordEvent per event. */
  eventBatchMax: number;
  /** RecordEvents requests in flight at once; events arriving while all are taken form the next batch. */
  eventInFlightMax: number;
  /** Most keys (their whole waiting queues) in one RecordEvents request. */
  eventKeysMax: number;
  /** Most events of one key (one game) in RecordEvents requests at once; the rest wait at the edge (fair ingest). */
  eventKeyInFlightMax: number;
}

export const ingest: ProgramModule<IngestConfig> = {
  name: 'ingest',
  readConfig: (reader) => ({
    eventBatchMax: reader.int('INGEST_EVENT_BATCH_MAX', EDGE_BATCH_MAX_DEFAULT, {
      min: 1,
      max: EVENT_LIMITS.eventsPerRequestMax,
    }),
    eventInFlightMax: reader.int('INGEST_EVENT_IN_FLIGHT_MAX', EDGE_IN_FLIGHT_MAX_DEFAULT, {
      min: 1,
      max: EVENT_LIMITS.edgeInFlightMax,
    }),
    eventKeysMax: reader.int('INGEST_EVENT_KEYS_MAX', EDGE_KEYS_MAX_DEFAULT, {
      min: 1,
      max: EVENT_LIMITS.keysPerRequestMax,
    }),
    eventKeyInFlightMax: reader.int('INGEST_EVENT_KEY_IN_FLIGHT_MAX', EDGE_KEY_IN_FLIGHT_MAX_DEFAULT, {
      min: 1,
      max: 100_000,
    }),
  }),
  async create(deps, config) {
    const { transport, platform } = deps;
    const decisions = new Counter({
      name: 'event_decisions_total',
      help: 'Event decisions answered by ingest, by status, reason (none for acceptances) and replayed',
      labelNames: ['status', 'reason', 'replayed'],
      registers: [deps.metrics.registry],
    });
    const batchSizes = new Histogram({
      name: 'ingest_event_batch_size',
      help: 'Events per RecordEvents request sent to the ledger',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [deps.metrics.registry],
    });
    const queueDepth = new Gauge({
      name: 'ingest_event_queue_depth',
      help: 'Events waiting at the edge for a RecordEvents request',
      registers: [deps.metrics.registry],
    });
    const batching = {
      batchMax: config.eventBatchMax,
      inFlightMax: config.eventInFlightMax,
      keysMax: config.eventKeysMax,
      keyInFlightMax: config.eventKeyInFlightMax,
      observer: {
        batch: (size: number) => batchSizes.observe(size),
        queued: (depth: number) => queueDepth.set(depth),
      },
    };
    return {
      name: 'ingest',
      routes: (router: Router) => {
        addEventRoutes(router, { transport, platform, decisions, batching });
        addConfigRoutes(router, { transport, platform });
      },
    };
  },
};
