// ingest: the game SDK's edge for events and public configuration, the product's hot path. Stateless: it checks
// shapes and limits, and asks the ledger over the transport.
import type Router from '@koa/router';
import { Counter, Gauge, Histogram } from 'prom-client';
import { EVENT_LIMITS } from '#runtime/contracts/event-limits.ts';
import type { ProgramModule } from '#runtime/program.ts';
import { addConfigRoutes } from './routes/config.ts';
import {
  EDGE_BATCH_MAX_DEFAULT,
  EDGE_FLOOD_PACING_TARGET_DEFAULT,
  EDGE_IN_FLIGHT_MAX_DEFAULT,
  EDGE_KEY_IN_FLIGHT_MAX_DEFAULT,
  EDGE_KEYS_MAX_DEFAULT,
  edgeFloodPacer,
} from './routes/event-batcher.ts';
import { FALLBACK_MS } from './routes/event-write-route.ts';
import { addEventRoutes, eventAdmission } from './routes/events.ts';
import { KeyTenants } from './routes/key-tenants.ts';

export interface IngestConfig {
  /** Most events in one RecordEvents request to the ledger; 1 sends one RecordEvent per event. */
  eventBatchMax: number;
  /** RecordEvents requests in flight at once; events arriving while all are taken form the next batch. */
  eventInFlightMax: number;
  /** Most keys (their whole waiting queues) in one RecordEvents request. */
  eventKeysMax: number;
  /** Most events of one key (one game) in RecordEvents requests at once; the rest wait at the edge (fair ingest). */
  eventKeyInFlightMax: number;
  /** Most event requests of one game handled at once; the rest wait in front of the app (routes/events.ts). */
  eventKeyRequestsMax: number;
  /** Most event requests of one organization's games handled at once (routes/events.ts). */
  eventOrganizationRequestsMax: number;
  /** Leave a key's own connections unread while it is at that bound (routes/key-admission.ts). */
  eventHoldConnections: boolean;
  /** Flood pacing's target, other keys' round trip over the quiet one (0: off; event-batcher.ts). */
  floodPacingTarget: number;
}

export const ingest: ProgramModule<IngestConfig> = {
  name: 'ingest',
  readConfig: (reader) => {
    const eventKeyInFlightMax = reader.int('INGEST_EVENT_KEY_IN_FLIGHT_MAX', EDGE_KEY_IN_FLIGHT_MAX_DEFAULT, {
      min: 1,
      max: 100_000,
    });
    const eventKeyRequestsMax = reader.int('INGEST_EVENT_KEY_REQUESTS_MAX', 2 * eventKeyInFlightMax, {
      min: 1,
      max: 1_000_000,
    });
    return {
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
      eventKeyInFlightMax,
      eventKeyRequestsMax,
      eventOrganizationRequestsMax: reader.int('INGEST_EVENT_ORGANIZATION_REQUESTS_MAX', 2 * eventKeyRequestsMax, {
        min: 1,
        max: 1_000_000,
      }),
      eventHoldConnections: reader.bool('INGEST_EVENT_HOLD_CONNECTIONS', true),
      floodPacingTarget:
        reader.int('INGEST_FLOOD_PACING_TARGET_PERCENT', EDGE_FLOOD_PACING_TARGET_DEFAULT * 100, {
          min: 0,
          max: 10_000,
        }) / 100,
    };
  },
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
    const fallbacks = new Counter({
      name: 'ingest_event_write_fallbacks_total',
      help: 'Times no ledger served the proposed-id event subjects, so that event writes went uncopied to RecordEvent(s) for 5 s (a ledger of an earlier release only: a rollback)',
      registers: [deps.metrics.registry],
    });
    const floodPauses = new Counter({
      name: 'ingest_flood_pauses_total',
      help: "Calls of a flooding game after which its next waited, other games' requests being slow (flood pacing)",
      registers: [deps.metrics.registry],
    });
    const pacer = edgeFloodPacer(config.floodPacingTarget, config.eventKeyInFlightMax, {
      paused: () => floodPauses.inc(),
    });
    new Gauge({
      name: 'ingest_flood_pace',
      help: "A flooding game's wait after each of its calls, in that call's durations (0: not paced)",
      registers: [deps.metrics.registry],
      collect() {
        this.set(pacer?.currentPace(performance.now()) ?? 0);
      },
    });
    const tenants = new KeyTenants();
    const admission = eventAdmission({
      gameInAppMax: config.eventKeyRequestsMax,
      organizationInAppMax: config.eventOrganizationRequestsMax,
      holdConnections: config.eventHoldConnections,
      tenants,
    });
    new Gauge({
      name: 'ingest_key_tenants',
      help: 'Secret keys whose game and organization this edge knows (fair ingest per game, at most 10,000)',
      registers: [deps.metrics.registry],
      collect() {
        this.set(tenants.size);
      },
    });
    new Gauge({
      name: 'ingest_event_requests_waiting',
      help: 'Event requests of games or organizations at their bound waiting, parsed, in front of the app',
      registers: [deps.metrics.registry],
      collect() {
        this.set(admission.waiting);
      },
    });
    new Gauge({
      name: 'ingest_event_connections_held',
      help: "Connections of games or organizations at their bound left unread, their clients' next requests in the kernel (INGEST_EVENT_HOLD_CONNECTIONS)",
      registers: [deps.metrics.registry],
      collect() {
        this.set(admission.held);
      },
    });
    const batching = {
      batchMax: config.eventBatchMax,
      inFlightMax: config.eventInFlightMax,
      keysMax: config.eventKeysMax,
      keyInFlightMax: config.eventKeyInFlightMax,
      pacer,
      observer: {
        batch: (size: number) => batchSizes.observe(size),
        queued: (depth: number) => queueDepth.set(depth),
        fallback: () => {
          fallbacks.inc();
          deps.logger.warn(
            { fallbackMs: FALLBACK_MS },
            'no ledger serves the proposed-id event subjects (only ledgers of an earlier release): event writes go uncopied to RecordEvent(s)',
          );
        },
      },
    };
    let events: ReturnType<typeof addEventRoutes> | undefined;
    // Every map keyed by a credential, game or organization, and the edge's queue (runtime_collection_entries).
    deps.metrics.collections.track('ingest', {
      key_tenants: () => tenants.size,
      admission_games: () => admission.keysKept.game,
      admission_organizations: () => admission.keysKept.organization,
      batcher_keys_in_line: () => events?.batcher.sizes.line ?? 0,
      batcher_keys_in_flight: () => events?.batcher.sizes.keyInFlight ?? 0,
      batcher_events_queued: () => events?.batcher.sizes.queued ?? 0,
      flood_pacer_resume_at: () => pacer?.sizes.resumeAt ?? 0,
      flood_pacer_flood_runs: () => pacer?.sizes.floodRuns ?? 0,
    });
    return {
      name: 'ingest',
      admission,
      routes: (router: Router) => {
        events = addEventRoutes(router, { transport, platform, tenants, decisions, batching });
        addConfigRoutes(router, { transport, platform });
      },
      close: async () => events?.close(),
    };
  },
};
