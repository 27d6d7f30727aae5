// A state owner's queue groups, kept only while it is healthy: every HEALTH_CHECK_INTERVAL_MS it checks its NATS
// connection and probes its database (`select 1` within DATABASE_PROBE_TIMEOUT_MS); failing, it leaves the queue groups
// of its services, so that NATS sends their requests to a healthy replica (or, with none, answers "no responders":
// the edges' 503 that says nothing was stored); healthy again, it joins them again. /readyz and the
// `queue_group_member` gauge say which it is (docs/reliability.md, "A sick replica steps aside").
import type { Database } from './db/database.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { type ServedService, type ServiceDefinition, serviceNames, type Transport } from './transport/operation.ts';

/** How often a state owner checks its NATS connection and its database. */
export const HEALTH_CHECK_INTERVAL_MS = 500;
/**
 * How long the database probe waits for `select 1`. A check is skipped when a unit of work succeeded since the one
 * before, so a replica whose database stops answering has left its queue groups within two intervals and a probe:
 * 2 x HEALTH_CHECK_INTERVAL_MS + DATABASE_PROBE_TIMEOUT_MS = 1.75 s.
 */
export const DATABASE_PROBE_TIMEOUT_MS = 750;
/**
 * How often a state owner out of its queue groups starts a probe, each on a fresh connection, without waiting for the
 * ones still out: a probe made while the path is cut fails only at its timeout (its SYN or query lost), so the first
 * to pass after the heal starts within this. At most REJOIN_PROBES_MAX are out at once.
 */
export const REJOIN_CHECK_INTERVAL_MS = 100;
const REJOIN_PROBES_MAX = 8;

export interface QueueGroupsOptions {
  transport: Transport;
  definitions: ServiceDefinition[];
  /** The state owner's database, probed at every check; none where there is nothing to probe (PGlite in-process). */
  database?: Database;
  logger: Logger;
  metrics: Metrics;
  intervalMs?: number;
  probeTimeoutMs?: number;
}

export class QueueGroups {
  private readonly options: QueueGroupsOptions;
  private served: ServedService[] = [];
  private member = false;
  private reason: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Queue groups left whose operations in flight are still being answered. */
  private readonly leaving = new Set<Promise<void>>();
  /** When the previous database check began (performance.now() time). */
  private lastCheckMs = performance.now();
  /** The check running now (stop waits for it before it leaves). */
  private checking: Promise<void> = Promise.resolve();
  /** The probes out while out of the queue groups (startRejoinProbe; stop waits for them too). */
  private readonly rejoinProbes = new Set<Promise<void>>();
  /** Set while joining again: two probes that pass at once join once. */
  private entering = false;

  private constructor(options: QueueGroupsOptions) {
    this.options = options;
  }

  /** Joins the services' queue groups (the caller has just checked its connections) and starts checking. */
  static async join(options: QueueGroupsOptions): Promise<QueueGroups> {
    const groups = new QueueGroups(options);
    await groups.enter();
    groups.schedule();
    return groups;
  }

  /** Whether this process is in its queue groups; when not, why. */
  status(): { member: boolean; reason?: string } {
    if (this.served.length === 0) return { member: false, reason: this.reason ?? 'not joined' };
    // The connection's state now, not at the last check: back in the group as soon as the client has subscribed again.
    if (!this.options.transport.isReady()) return { member: false, reason: 'NATS connection down' };
    return this.reason === undefined ? { member: true } : { member: false, reason: this.reason };
  }

  /** Stops checking and leaves the queue groups; the requests in flight are answered first. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.checking;
    await Promise.all([...this.rejoinProbes]);
    this.reason = 'stopping';
    void this.leave();
    await Promise.all([...this.leaving]);
  }

  private schedule(): void {
    if (this.stopped) return;
    const intervalMs = this.options.intervalMs ?? HEALTH_CHECK_INTERVAL_MS;
    const out = this.isOut();
    this.timer = setTimeout(
      () => {
        this.checking = this.check().finally(() => this.schedule());
      },
      out ? Math.min(intervalMs, REJOIN_CHECK_INTERVAL_MS) : intervalMs,
    );
    this.timer.unref();
  }

  private async check(): Promise<void> {
    try {
      // NATS down: its subscriptions are gone from the server with the connection, so there is nothing to leave; the
      // reconnecting client sends them again, and the check after that leaves them if the database is failing.
      if (!this.options.transport.isReady()) {
        this.report();
        return;
      }
      const database = this.options.database;
      if (database && this.isOut()) {
        this.startRejoinProbe(database);
        return;
      }
      const failure = await this.probeDatabase();
      if (this.stopped) return;
      await this.act(failure);
    } catch (error) {
      this.options.logger.error({ err: error }, 'queue group health check failed');
    }
  }

  /** Out of the queue groups because a check failed (not stopped, not before the first join). */
  private isOut(): boolean {
    return this.served.length === 0 && this.reason !== undefined && this.reason !== 'stopping';
  }

  /** Acts on a check's finding: `failure` undefined when the database answers. */
  private async act(failure: string | undefined): Promise<void> {
    if (failure === undefined) {
      if (this.served.length === 0) {
        if (this.entering) return;
        this.entering = true;
        try {
          // Back: the pool's connections made or used while the database was unreachable go before new work comes.
          this.abandonConnections('the database answers again', true);
          await this.enter();
        } finally {
          this.entering = false;
        }
      } else {
        this.reason = undefined;
        this.report();
      }
    } else {
      // Every failed check: what waits on the pool's connections fails now, not seconds after the heal. The work in
      // flight only from the second failure in a row on (a probe that waited behind a saturated pooler is no proof).
      this.abandonConnections(failure, this.served.length === 0);
      if (this.served.length > 0) {
        this.options.logger.warn({ reason: failure }, 'unhealthy: leaving the queue groups');
        this.reason = failure;
        void this.leave();
      } else {
        this.reason = failure;
        this.report();
      }
    }
  }

  /** One probe of the database on a fresh connection while out (REJOIN_CHECK_INTERVAL_MS); its finding is acted on. */
  private startRejoinProbe(database: Database): void {
    if (this.rejoinProbes.size >= REJOIN_PROBES_MAX) return;
    const probe = database
      .probe(this.options.probeTimeoutMs ?? DATABASE_PROBE_TIMEOUT_MS, { fresh: true })
      .then(async (failure) => {
        // Another probe may have brought it back meanwhile: an older probe's failure is no news then.
        if (this.stopped || !this.isOut()) return;
        await this.act(failure === undefined ? undefined : `database probe failed: ${failure}`);
      })
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'queue group health check failed'))
      .finally(() => this.rejoinProbes.delete(probe));
    this.rejoinProbes.add(probe);
  }

  /**
   * Undefined when the database answers: a unit of work of the program's own succeeded since the previous check (no
   * probe needed, and none that would wait behind a saturated pooler and leave a busy but healthy replica), or the
   * probe did.
   */
  private async probeDatabase(): Promise<string | undefined> {
    const database = this.options.database;
    const since = this.lastCheckMs;
    this.lastCheckMs = performance.now();
    if (!database || database.lastAnswerAtMs > since) return undefined;
    const failure = await database.probe(this.options.probeTimeoutMs ?? DATABASE_PROBE_TIMEOUT_MS);
    return failure === undefined ? undefined : `database probe failed: ${failure}`;
  }

  /** Closes the database pool's connections (Database.abandonConnections), logging how many there were. */
  private abandonConnections(why: string, inUse: boolean): void {
    const closed = this.options.database?.abandonConnections(why, { inUse }) ?? 0;
    if (closed > 0) this.options.logger.warn({ closed, why }, "closed the database pool's connections");
  }

  /** Sets the gauge from status() and logs a change of membership. */
  private report(): void {
    const { member, reason } = this.status();
    if (member !== this.member) {
      if (member) this.options.logger.info('in the queue groups');
      else this.options.logger.warn({ reason }, 'not in the queue groups');
    }
    this.member = member;
    for (const definition of this.options.definitions) {
      this.options.metrics.queueGroupMember.set({ service: serviceNames[definition.service] }, member ? 1 : 0);
    }
  }

  private async enter(): Promise<void> {
    const { transport, definitions } = this.options;
    try {
      for (const definition of definitions) this.served.push(await transport.serve(definition));
    } catch (error) {
      await this.leave();
      throw error;
    }
    this.reason = undefined;
    this.report();
  }

  /**
   * Leaves every queue group at once: NATS sends no new request here from then on (the drain's UNSUB goes out now);
   * the requests already delivered are answered (ServedService.stop waits for them). The checks do not wait for
   * those: an operation stuck on an unreachable database must not keep the replica out once the database is back.
   * stop() waits for them.
   */
  private leave(): Promise<void> {
    const served = this.served;
    this.served = [];
    this.report();
    const left = Promise.allSettled(served.map((s) => s.stop())).then((results) => {
      for (const result of results) {
        if (result.status === 'rejected') {
          this.options.logger.warn({ err: result.reason }, 'leaving a queue group failed');
        }
      }
      this.leaving.delete(left);
    });
    this.leaving.add(left);
    return left;
  }
}
