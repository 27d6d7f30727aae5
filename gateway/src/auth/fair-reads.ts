// Fair console reads: the gateway's calls to the ledger for a developer's reads (consoleReadOperations: the
// snapshot, record pages, decision search and figures, link intents, export pages, the search box, webhook endpoints
// and deliveries, the audit log) go out at most CONSOLE_READS_IN_FLIGHT_MAX at once in this process, at most
// CONSOLE_READS_PER_DEVELOPER_MAX of one developer; the rest wait here, one queue per developer, served in turns (the
// developer served least recently first). One developer's admitted reads therefore never hold more than their share
// of the ledger's database connections, and another developer's read waits for at most the reads already out, not
// behind the first developer's queue. A waiting read keeps its in-flight slot of the developer limits
// (developer-limits.ts), so a queue is never longer than DEVELOPER_IN_FLIGHT_MAX. The ledger bounds the developers
// of one organization together (services/ledger/src/console/organization-turns.ts).
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import { Gauge } from 'prom-client';
import { consoleReadOperations } from '#runtime/contracts/operations.ts';
import type { Metrics } from '#runtime/metrics.ts';
import type { CallContext, CallOptions, Operation, Transport } from '#runtime/transport/operation.ts';

export interface FairReadSettings {
  /** CONSOLE_READS_IN_FLIGHT_MAX: console reads of everyone out to the ledger at once from this process. */
  inFlightMax: number;
  /** CONSOLE_READS_PER_DEVELOPER_MAX: console reads of one developer out at once. */
  perDeveloperMax: number;
}

export const FAIR_READ_DEFAULTS: FairReadSettings = { inFlightMax: 8, perDeveloperMax: 4 };

interface Lane {
  running: number;
  waiting: Array<() => void>;
  /** When this key last started work (a sequence number; 0: never since it came). */
  servedAt: number;
}

/** Bounded concurrency with one FIFO queue per key, the keys served in turns. */
export class FairScheduler {
  readonly settings: FairReadSettings;
  /** Keys with work running or waiting. */
  private readonly lanes = new Map<string, Lane>();
  private served = 0;
  private running = 0;
  private queued = 0;

  constructor(settings: FairReadSettings) {
    this.settings = settings;
  }

  /** Work running and waiting (tests and metrics). */
  get counts(): { running: number; waiting: number; keys: number } {
    return { running: this.running, waiting: this.queued, keys: this.lanes.size };
  }

  /** Runs `work` when `key` has its turn and a slot is free. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    await this.enter(key);
    try {
      return await work();
    } finally {
      this.leave(key);
    }
  }

  private enter(key: string): Promise<void> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { running: 0, waiting: [], servedAt: 0 };
      this.lanes.set(key, lane);
    }
    // Nobody of this key waits (FIFO within a key) and both bounds leave room: at once, in this turn.
    if (lane.waiting.length === 0 && this.admits(lane)) {
      this.start(lane);
      return Promise.resolve();
    }
    const waiting = lane;
    this.queued += 1;
    return new Promise((resolve) => waiting.waiting.push(resolve));
  }

  private leave(key: string): void {
    const lane = this.lanes.get(key);
    if (lane) lane.running -= 1;
    this.running -= 1;
    if (lane && lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(key);
    this.dispatch();
  }

  /** Starts waiting work while slots are free: each time of the key served least recently that may run one more. */
  private dispatch(): void {
    while (this.running < this.settings.inFlightMax && this.queued > 0) {
      let next: Lane | undefined;
      for (const lane of this.lanes.values()) {
        if (lane.waiting.length === 0 || lane.running >= this.settings.perDeveloperMax) continue;
        if (!next || lane.servedAt < next.servedAt) next = lane;
      }
      if (!next) return;
      const resume = next.waiting.shift();
      this.queued -= 1;
      this.start(next);
      resume?.();
    }
  }

  private admits(lane: Lane): boolean {
    return this.running < this.settings.inFlightMax && lane.running < this.settings.perDeveloperMax;
  }

  private start(lane: Lane): void {
    lane.running += 1;
    this.running += 1;
    this.served += 1;
    lane.servedAt = this.served;
  }
}

/**
 * `transport` with its console reads scheduled by a FairScheduler keyed by the developer (the request's
 * `principal.identityUserId`); every other call goes straight through.
 */
export function fairReadsTransport(transport: Transport, settings: FairReadSettings, metrics?: Metrics): Transport {
  const scheduler = new FairScheduler(settings);
  metrics?.collections.track('gateway', { fair_reads_developers: () => scheduler.counts.keys });
  if (metrics && !metrics.registry.getSingleMetric('console_reads')) {
    new Gauge({
      name: 'console_reads',
      help: 'Console reads of this gateway process out to the ledger (running) and waiting for their turn (waiting)',
      labelNames: ['state'],
      registers: [metrics.registry],
      collect() {
        const { running, waiting } = scheduler.counts;
        this.set({ state: 'running' }, running);
        this.set({ state: 'waiting' }, waiting);
      },
    });
  }
  return {
    kind: transport.kind,
    call<I extends DescMessage, O extends DescMessage>(
      operation: Operation<I, O>,
      request: MessageInitShape<I>,
      ctx: CallContext,
      options?: CallOptions,
    ): Promise<MessageShape<O>> {
      const developer = (request as { principal?: { identityUserId?: string } }).principal?.identityUserId;
      if (developer === undefined || !consoleReadOperations.has(operation as unknown as Operation)) {
        return transport.call(operation, request, ctx, options);
      }
      return scheduler.run(developer, () => transport.call(operation, request, ctx, options));
    },
    serve: (definition) => transport.serve(definition),
    publish: (topic, subject, message) => transport.publish(topic, subject, message),
    subscribe: (topic, subject, handler) => transport.subscribe(topic, subject, handler),
    isReady: () => transport.isReady(),
    close: () => transport.close(),
  };
}
