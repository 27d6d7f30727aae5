// Prometheus metrics. One registry per process; in the all-in-one process the programs share it and are told apart
// by the `program` label.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'program' | 'method' | 'route' | 'status'>;
  httpDuration: Histogram<'program' | 'method' | 'route' | 'status'>;
  transportRequests: Counter<'subject' | 'outcome'>;
  transportDuration: Histogram<'subject' | 'outcome'>;
  transportPublishes: Counter<'topic' | 'outcome'>;
  transportUndeliveredRetries: Counter<'subject'>;
  transportRefusedRequests: Counter<'subject' | 'reason'>;
  transportRequestCopies: Counter<'subject' | 'outcome'>;
  databaseContention: Counter<'sqlstate' | 'outcome'>;
  lateWorkDropped: Counter<'stage'>;
  queueGroupMember: Gauge<'service'>;
  invariantViolations: Counter<'name'>;
  /** The sizes of the programs' in-memory collections (trackCollections). */
  collections: CollectionSizes;
}

/**
 * The entries of each program's in-memory collections whose keys come from tenants' input (credentials, games,
 * organizations, developers) and of its queues, read when /metrics is scraped: a collection that only grows shows as
 * a line that only rises (`npm run bench:soak` prints them at the end of an hour).
 */
export class CollectionSizes {
  /** By program and collection name: a fixed set, registered once each (again: replaced). */
  private readonly sources = new Map<string, { program: string; collection: string; size: () => number }>();

  constructor(registry: Registry) {
    const sources = this.sources;
    new Gauge({
      name: 'runtime_collection_entries',
      help:
        "Entries of a program's in-memory maps and queues keyed by tenants' input (keys, games, organizations, " +
        'developers), by program and collection: each is bounded or forgets idle keys',
      labelNames: ['program', 'collection'],
      registers: [registry],
      collect() {
        for (const { program, collection, size } of sources.values()) this.set({ program, collection }, size());
      },
    });
  }

  /** Reports `sizes` (collection name to its current entries) as the program's. */
  track(program: string, sizes: Record<string, () => number>): void {
    for (const [collection, size] of Object.entries(sizes)) {
      this.sources.set(`${program} ${collection}`, { program, collection, size });
    }
  }
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by program, method, route and status',
      labelNames: ['program', 'method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration in seconds',
      labelNames: ['program', 'method', 'route', 'status'],
      buckets,
      registers: [registry],
    }),
    transportRequests: new Counter({
      name: 'transport_requests_total',
      help: 'Requests sent to state owners, by subject and outcome (ok, error, unavailable)',
      labelNames: ['subject', 'outcome'],
      registers: [registry],
    }),
    transportDuration: new Histogram({
      name: 'transport_request_duration_seconds',
      help: 'Duration of requests to state owners in seconds',
      labelNames: ['subject', 'outcome'],
      buckets,
      registers: [registry],
    }),
    transportPublishes: new Counter({
      name: 'transport_publishes_total',
      help: 'Notices published (fire-and-forget), by topic and outcome (ok, failed)',
      labelNames: ['topic', 'outcome'],
      registers: [registry],
    }),
    transportUndeliveredRetries: new Counter({
      name: 'transport_undelivered_retries_total',
      help: 'Requests sent again because they were never delivered (no responders: no state owner subscribed yet)',
      labelNames: ['subject'],
      registers: [registry],
    }),
    transportRefusedRequests: new Counter({
      name: 'transport_refused_requests_total',
      help:
        'Messages on a served subject dropped unanswered because they are not requests (reply subject outside an ' +
        'inbox, or a reply steered there): by subject and reason. Any is an attempt worth an alert.',
      labelNames: ['subject', 'reason'],
      registers: [registry],
    }),
    transportRequestCopies: new Counter({
      name: 'transport_request_copies_total',
      help:
        'Copies of repeatable requests (reads, event writes) sent because the earlier copy had no answer after ' +
        'NATS_TRY_TIMEOUT_PERCENT of its timeout (sent), or not sent because the copy budget was spent (not_sent)',
      labelNames: ['subject', 'outcome'],
      registers: [registry],
    }),
    databaseContention: new Counter({
      name: 'database_contention_failures_total',
      help:
        'Units of work PostgreSQL rolled back for contention (40001 serialization failure, 40P01 deadlock), by ' +
        'SQLSTATE and outcome: retried, or gave_up (the bound reached: a 503, or for a batch of events each event ' +
        'decided again alone)',
      labelNames: ['sqlstate', 'outcome'],
      registers: [registry],
    }),
    lateWorkDropped: new Counter({
      name: 'late_work_dropped_total',
      help:
        "Work a state owner dropped because its request's deadline had passed before it started (nothing done), by " +
        'stage: received (before the handler), transaction (before BEGIN), batch (taken from the ledger batch queue)',
      labelNames: ['stage'],
      registers: [registry],
    }),
    queueGroupMember: new Gauge({
      name: 'queue_group_member',
      help:
        'Whether this process is in the queue group of a service it owns (1) or has left it (0: its database or ' +
        'NATS connection failing its checks, or stopping), by service',
      labelNames: ['service'],
      registers: [registry],
    }),
    invariantViolations: new Counter({
      name: 'invariant_violations_total',
      help:
        'Invariants of shipped code found broken (logged as errors; a bug, the process went on), by invariant ' +
        '(services/runtime/src/invariant.ts)',
      labelNames: ['name'],
      registers: [registry],
    }),
    collections: new CollectionSizes(registry),
  };
}
