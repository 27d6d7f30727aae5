// PostgreSQL through MikroORM. Each state owner owns one schema (`ledger`, `identity`) with its own migrations;
// in the all-in-one process both share one Database (and, on PGlite, its single connection).

import { Migrator } from '@mikro-orm/migrations';
import type { EntityManager, PostgreSqlConnection, TransactionOptions } from '@mikro-orm/postgresql';
import { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { Gauge } from 'prom-client';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { currentDeadline, DeadlinePassedError, remainingMs } from '../transport/deadline.ts';
import { type FailoverClient, type SelectorEvent, type ServerSelector, selectorFor } from './failover.ts';
import { type ContentionObserver, retryOnContention } from './failures.ts';
import type { MigrationSet } from './migrations.ts';
import { applyRepeatables } from './repeatable.ts';
import { connectionUser, type DatabaseUrl, parseDatabaseUrl, singleHostUrl } from './url.ts';

export interface DatabaseOptions {
  url: string;
  /** Connection pool size; exactly 1 on PGlite, which serves one session at a time. */
  poolMax: number;
  /**
   * DATABASE_NAMED_STATEMENTS: the ledger's hot statements as named prepared statements, prepared once per pooled
   * connection (no parse and plan per call). Off by default: a named statement lives in one server session, which a
   * transaction pooler (PgBouncer before 1.21, or without max_prepared_statements) shares out per transaction, and
   * PGlite's connections share one session. Turn it on only for a direct connection (docs/deploy.md, "PostgreSQL:
   * pooler and failover").
   */
  namedStatements?: boolean;
  logger: Logger;
  /**
   * DATABASE_STATEMENT_TIMEOUT_MS and DATABASE_LOCK_TIMEOUT_MS: each transaction's statement_timeout and lock_timeout
   * (SET LOCAL) when its request has no deadline, and their upper bound when it has one (the deadline's remaining
   * time then sets them). 0 or unset: none of this service's own (the server's setting stays). Read by
   * readDatabaseTimeouts (config.ts).
   */
  statementTimeoutMs?: number | undefined;
  lockTimeoutMs?: number | undefined;
  /**
   * Registers `database_pool_connections{state}` (total, idle, waiting) in this registry (the first Database opened
   * with it; the test harness opens two on one registry) and counts contention in `database_contention_failures_total`.
   */
  metrics?: Metrics;
}

/** A transaction's statement_timeout and lock_timeout in ms (undefined: the server's setting stays). */
export interface TransactionTimeouts {
  statementMs: number | undefined;
  lockMs: number | undefined;
}

/**
 * The timeouts of a transaction that starts now: the settings, capped by what is left of `deadline` (at least 1 ms:
 * 0 would turn a timeout off). Throws DeadlinePassedError when the deadline has passed: the transaction must not
 * start.
 */
export function timeoutsWithin(
  deadline: number | undefined,
  settings: { statementTimeoutMs?: number | undefined; lockTimeoutMs?: number | undefined },
): TransactionTimeouts {
  const setting = (ms: number | undefined) => (ms && ms > 0 ? ms : undefined);
  const statementMs = setting(settings.statementTimeoutMs);
  const lockMs = setting(settings.lockTimeoutMs);
  if (deadline === undefined) return { statementMs, lockMs };
  const left = remainingMs(deadline);
  if (left <= 0) throw new DeadlinePassedError('its transaction started');
  const capped = (ms: number | undefined) => Math.max(1, Math.ceil(Math.min(left, ms ?? left)));
  return { statementMs: capped(statementMs), lockMs: capped(lockMs) };
}

/**
 * SET LOCAL of both timeouts in one statement; a null keeps the server's setting. The statement timeout also bounds
 * the transaction's idle time (idle_in_transaction_session_timeout): a transaction whose client vanished (its
 * connection reset while the path was cut, FailoverClient.abandon) ends then instead of holding its locks until the
 * server's TCP notices.
 */
const SET_TIMEOUTS_SQL = `select set_config('statement_timeout', coalesce(?::text, current_setting('statement_timeout')), true),
  set_config('lock_timeout', coalesce(?::text, current_setting('lock_timeout')), true),
  set_config('idle_in_transaction_session_timeout',
    coalesce(?::text, current_setting('idle_in_transaction_session_timeout')), true)`;

/** The counts of the `pg` pool behind MikroORM. */
interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * MikroORM's connection options for DATABASE_URL, whatever its form (url.ts): MikroORM reads the first host's URL
 * (user, password, database), and its `pg` pool gets the failover Client of the URL's host list (failover.ts), which
 * connects to the server that suits, with the URL's TLS settings. The pool's connections keep nothing on the server
 * beyond a transaction (no session SET, no prepared statement), so a transaction pooler may stand in between.
 */
function connectionSettings(url: string): {
  clientUrl: string;
  driverOptions: pg.PoolConfig;
  selector: ServerSelector;
  connections: Set<FailoverClient>;
} {
  const parsed: DatabaseUrl = parseDatabaseUrl(url);
  const selector = selectorFor(url, parsed);
  // This pool's connections, connecting or open, until they end (Database.abandonConnections).
  const connections = new Set<FailoverClient>();
  const PoolClient = class extends selector.Client {
    constructor(config?: pg.ClientConfig) {
      super(config);
      connections.add(this);
      this.once('end', () => connections.delete(this));
    }
  };
  return {
    clientUrl: singleHostUrl(parsed),
    connections,
    driverOptions: {
      Client: PoolClient as unknown as pg.PoolConfig['Client'],
      user: connectionUser(parsed),
      ssl: parsed.ssl,
      ...(parsed.applicationName ? { application_name: parsed.applicationName } : {}),
    },
    selector,
  };
}

/** Logs what a selector learns of the servers (a primary found, a server lost). */
function logSelectorEvents(logger: Logger): (event: SelectorEvent) => void {
  return (event) => {
    if (event.kind === 'found') {
      logger.info({ server: event.host, target: event.target }, 'database server found');
    } else {
      logger.warn({ server: event.host, reason: event.reason }, 'database server lost: connections to it close');
    }
  };
}

export class Database {
  // biome-ignore lint/suspicious/noExplicitAny: the ORM is shared by programs with different entity sets.
  readonly orm: MikroORM<any, any>;
  /** DatabaseOptions.namedStatements. */
  readonly namedStatements: boolean;
  private readonly logger: Logger;
  /** Counts and logs each contention failure met by this database's units of work (retried or given up). */
  private readonly contention: ContentionObserver;
  /** The pool's Client class (failover.ts), for connections of one's own (newClient). */
  private readonly selector: ServerSelector;
  private readonly stopObserving: () => void;
  /** The pool's connections, connecting or open (abandonConnections). */
  private readonly connections: Set<FailoverClient>;
  private readonly timeoutSettings: { statementTimeoutMs?: number | undefined; lockTimeoutMs?: number | undefined };
  private readonly metrics: Metrics | undefined;
  /** The probe's own connection (probe()), connected or connecting; none until the first probe or after a failure. */
  private probeClient: Promise<pg.Client> | undefined;
  private lastAnswerMs = 0;

  private constructor(
    // biome-ignore lint/suspicious/noExplicitAny: see above.
    orm: MikroORM<any, any>,
    logger: Logger,
    metrics: Metrics | undefined,
    selector: ServerSelector,
    connections: Set<FailoverClient>,
    stopObserving: () => void,
    namedStatements: boolean,
    timeoutSettings: { statementTimeoutMs?: number | undefined; lockTimeoutMs?: number | undefined },
  ) {
    this.timeoutSettings = timeoutSettings;
    this.metrics = metrics;
    this.orm = orm;
    this.namedStatements = namedStatements;
    this.logger = logger;
    this.selector = selector;
    this.connections = connections;
    this.stopObserving = stopObserving;
    this.contention = (sqlstate, attempt, outcome) => {
      metrics?.databaseContention.inc({ sqlstate, outcome });
      logger.warn(
        { sqlstate, attempt, outcome },
        outcome === 'retried'
          ? 'database contention: the transaction was rolled back, running it again'
          : 'database contention: rolled back again, giving up (503)',
      );
    };
  }

  static async open(options: DatabaseOptions): Promise<Database> {
    const { orm, selector, stopObserving, connections } = await initOrm(options.url, options.poolMax, options.logger);
    if (options.metrics && !options.metrics.registry.getSingleMetric('database_pool_connections')) {
      const connection = orm.em.getConnection() as unknown as { getNativeClient(): Promise<PoolCounts> };
      new Gauge({
        name: 'database_pool_connections',
        help: 'Connections of the PostgreSQL pool: total open, idle, and queries waiting for one',
        labelNames: ['state'],
        registers: [options.metrics.registry],
        async collect() {
          const pool = await connection.getNativeClient();
          this.set({ state: 'total' }, pool.totalCount);
          this.set({ state: 'idle' }, pool.idleCount);
          this.set({ state: 'waiting' }, pool.waitingCount);
        },
      });
    }
    return new Database(
      orm,
      options.logger,
      options.metrics,
      selector,
      connections,
      stopObserving,
      options.namedStatements ?? false,
      { statementTimeoutMs: options.statementTimeoutMs, lockTimeoutMs: options.lockTimeoutMs },
    );
  }

  /**
   * The timeouts of a transaction that starts now for work of this deadline (undefined: none), on this database's
   * settings (timeoutsWithin); throws DeadlinePassedError once the deadline has passed.
   */
  timeouts(deadline: number | undefined): TransactionTimeouts {
    return timeoutsWithin(deadline, this.timeoutSettings);
  }

  /**
   * A connection outside the pool (not connected yet), to the server the pool's connections go to, with the same
   * settings: for a look-up that must not wait for, or trust, the pool's connections (the ledger's stored decision
   * after a lost connection). The caller ends it.
   */
  async newClient(): Promise<pg.Client> {
    const pool = await (this.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    return new this.selector.Client(pool.options);
  }

  /** A fresh entity manager for one unit of work (one request). */
  em(): EntityManager {
    return this.orm.em.fork() as EntityManager;
  }

  /**
   * Raw SQL with positional `?` parameters, outside any transaction (one statement, its own transaction): run again
   * on a serialization failure or deadlock (db/failures.ts).
   */
  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.retrying(async () => (await this.em().execute(sql, params)) as T[]);
  }

  /**
   * Runs `work` (a statement or transaction of a repository's own, from scratch each time) again when PostgreSQL
   * rolled it back for contention (db/failures.ts), counting and logging each such failure.
   */
  retrying<T>(work: () => Promise<T>): Promise<T> {
    return retryOnContention(work, undefined, this.contention).then((value) => {
      this.lastAnswerMs = performance.now();
      return value;
    });
  }

  /**
   * When a unit of work (retrying, query, transaction) last succeeded, in performance.now() time (0: never): proof
   * that the database answers, even while a probe waits behind busy connections (queue-groups.ts).
   */
  get lastAnswerAtMs(): number {
    return this.lastAnswerMs;
  }

  /**
   * One transaction on a fresh entity manager, run again from the start when PostgreSQL rolled it back for a
   * serialization failure or deadlock (db/failures.ts): `work` must do nothing outside the database that a second run
   * would repeat. Its statement_timeout and lock_timeout (SET LOCAL) are `timeouts` of the current request's deadline
   * (transport/deadline.ts): a lock wait or a statement past it fails (55P03, 57014: 503, nothing stored).
   */
  transaction<T>(work: (em: EntityManager) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    return this.retrying(() => {
      // Before BEGIN: a request whose deadline has passed starts no transaction (DeadlinePassedError).
      this.timeoutsNow();
      return this.em().transactional(async (em) => {
        // Again once the transaction has its connection (the wait for one may have been long): past the deadline,
        // nothing is done and the empty transaction is rolled back.
        const { statementMs, lockMs } = this.timeoutsNow();
        if (statementMs !== undefined || lockMs !== undefined) {
          await em.execute(SET_TIMEOUTS_SQL, [statementMs ?? null, lockMs ?? null, statementMs ?? null]);
        }
        return work(em);
      }, options);
    });
  }

  /** timeouts() of the current request's deadline; a passed deadline is counted as late work dropped, and thrown. */
  private timeoutsNow(): TransactionTimeouts {
    try {
      return this.timeouts(currentDeadline());
    } catch (error) {
      this.countLateWork(error);
      throw error;
    }
  }

  /** Counts `error` in late_work_dropped_total{stage="transaction"} when it is a DeadlinePassedError. */
  countLateWork(error: unknown, count = 1): void {
    if (error instanceof DeadlinePassedError) this.metrics?.lateWorkDropped.inc({ stage: 'transaction' }, count);
  }

  /**
   * Closes the pool's connections now (FailoverClient.abandon): the connecting and idle ones, and with `inUse` the ones
   * a unit of work holds too. The health check calls it when the database stops answering and when it answers again,
   * so that no unit of work waits on a connection made or used while the path was cut (TCP retransmits with back-off:
   * such a connection stays stuck for seconds after the heal) and the work after the heal gets fresh ones. A statement
   * in flight on a closed connection fails as a lost connection (outcome unknown). Answers how many were closed.
   */
  abandonConnections(why: string, options: { inUse: boolean }): number {
    const reason = new Error(`the pool's connections were closed: ${why}`);
    const abandoned = [...this.connections].filter((client) => options.inUse || !client.inUse);
    for (const client of abandoned) client.abandon(reason);
    return abandoned.length;
  }

  async ping(): Promise<boolean> {
    try {
      await this.query('select 1');
      return true;
    } catch (error) {
      this.logger.warn({ err: error }, 'database ping failed');
      return false;
    }
  }

  /**
   * The health check's probe (queue-groups.ts): one `select 1` on a connection of its own, kept between probes, that
   * fails after `timeoutMs`. Not on the pool: a probe must neither wait behind busy connections nor hold one when the
   * server stops answering. Resolves undefined when the server answered, else why not; a failed probe's connection
   * is dropped (the next probe connects anew). `fresh`: on a connection of its own, made for this probe and closed
   * after it, so that several probes may be out at once (queue-groups.ts, while out of the queue groups).
   */
  async probe(timeoutMs: number, options: { fresh?: boolean } = {}): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      // Resolved in the loop's check phase, after its poll phase: an answer that arrived while the loop was busy (a
      // late timer) is read first and wins.
      timer = setTimeout(() => setImmediate(() => resolve(`no answer to select 1 within ${timeoutMs} ms`)), timeoutMs);
    });
    const run = async () => {
      if (options.fresh) {
        const client = this.connectProbeClient(timeoutMs);
        try {
          await (await client).query('select 1');
        } finally {
          void client.then((c) => c.end()).catch(() => undefined);
        }
        return undefined;
      }
      this.probeClient ??= this.connectProbeClient(timeoutMs);
      await (await this.probeClient).query('select 1');
      return undefined;
    };
    const reason = await Promise.race([run().catch((error: Error) => error.message || String(error)), timeout]);
    clearTimeout(timer);
    if (reason !== undefined && !options.fresh) this.dropProbeClient();
    return reason;
  }

  /** A probe's connection, outside the pool, that gives up connecting after `timeoutMs`. */
  private async connectProbeClient(timeoutMs: number): Promise<pg.Client> {
    const pool = await (this.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    const client = new this.selector.Client({ ...pool.options, connectionTimeoutMillis: timeoutMs });
    // An idle probe connection the server closes must not crash the process: the next probe fails and reconnects.
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  private dropProbeClient(): void {
    const client = this.probeClient;
    this.probeClient = undefined;
    void client?.then((c) => c.end()).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.dropProbeClient();
    this.stopObserving();
    await this.orm.close(true);
  }
}

/**
 * MikroORM on DATABASE_URL (connectionSettings), as a pool of `poolMax` connections; the failover selector's events are
 * logged until `stopObserving` (called here when the start fails).
 */
async function initOrm(url: string, poolMax: number, logger: Logger) {
  const { clientUrl, driverOptions, selector, connections } = connectionSettings(url);
  const stopObserving = selector.observe(logSelectorEvents(logger));
  try {
    const orm = await MikroORM.init({
      clientUrl,
      driverOptions,
      entities: [],
      pool: { min: 0, max: poolMax },
      allowGlobalContext: false,
      debug: false,
      discovery: { warnWhenNoEntities: false },
      ensureDatabase: false,
      // Credits are bigint columns; values up to 1e12 are exact as numbers.
      forceUtcTimezone: true,
      // MikroORM's default, said here because it matters: with 'connection' every connection reserve would run
      // `reset all` and session set_config statements, session state that a transaction pooler does not keep.
      sessionContext: 'transaction',
    });
    return { orm, selector, stopObserving, connections };
  } catch (error) {
    stopObserving();
    throw error;
  }
}

/** How long one DDL statement of a migration waits for a lock before it gives up (55P03) and is tried again. */
export const MIGRATION_LOCK_TIMEOUT_MS = 300;
/** How long the migrator goes on trying a migration that keeps timing out on locks (or is a deadlock's victim). */
export const MIGRATION_RETRY_FOR_MS = 10 * 60_000;

/** A failure that trying again can cure: a lock not taken within the lock timeout, or a deadlock's victim. */
function isLockContention(error: unknown): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (code === '55P03' || code === '40P01') return true;
  }
  return false;
}

async function tryAdvisoryLock(
  connection: { execute(sql: string, params?: unknown[]): Promise<unknown> },
  key: string,
) {
  const rows = (await connection.execute('select pg_try_advisory_lock(hashtext(?)) as locked', [key])) as Array<{
    locked: boolean;
  }>;
  return rows[0]?.locked === true;
}

export interface MigrateOptions {
  /** MIGRATION_LOCK_TIMEOUT_MS: a DDL statement's wait for a lock (default 300 ms, below deadlock_timeout's 1 s). */
  lockTimeoutMs?: number;
  /** How long to go on trying a migration that is refused its locks (default 10 min). */
  retryForMs?: number;
}

/**
 * Applies the committed migrations of each set, in order, each set tracked in its own schema's table, then the set's
 * repeatable migrations (repeatable.ts) whose files changed. Uses one connection for all sets (PGlite serves one at a
 * time). Each migration commits on its own (a transaction each, or none for a ConcurrentIndexMigration), never all
 * pending ones together. Every statement waits at most `lockTimeoutMs` for a lock: shorter than PostgreSQL's
 * deadlock_timeout, so in a lock cycle with live traffic the migration is the one that gives up, never a decision.
 * A migration that gave up is tried again (with back-off, for `retryForMs`); the ones before it stay applied.
 */
export async function migrate(
  url: string,
  sets: MigrationSet[],
  logger: Logger,
  options: MigrateOptions = {},
): Promise<void> {
  const lockTimeoutMs = options.lockTimeoutMs ?? MIGRATION_LOCK_TIMEOUT_MS;
  const retryForMs = options.retryForMs ?? MIGRATION_RETRY_FOR_MS;
  // One connection for all sets (PGlite serves one at a time).
  const { orm, stopObserving } = await initOrm(url, 1, logger);
  try {
    for (const set of sets) {
      orm.config.set('migrations', {
        ...orm.config.get('migrations'),
        tableName: `${set.schema}.mikro_orm_migrations`,
        migrationsList: set.migrations,
        transactional: true,
        allOrNothing: false,
        snapshot: false,
        silent: true,
      });
      const connection = orm.em.getConnection();
      // One migrator per schema at a time (the hook Job and state owners starting beside it): a session lock, tried
      // without waiting in a statement (a statement left waiting would hold a snapshot that the other migrator's
      // concurrent index build waits for). Taken before the schema is made: two `create schema if not exists` at once
      // can both try to insert it.
      const lockKey = `${set.schema}.mikro_orm_migrations`;
      while (!(await tryAdvisoryLock(connection, lockKey))) {
        logger.info({ schema: set.schema }, 'another process is migrating this schema: waiting for it');
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      await connection.execute(`create schema if not exists ${set.schema}`);
      const applied: string[] = [];
      const giveUpAt = performance.now() + retryForMs;
      for (let attempt = 0; ; attempt++) {
        // Session-wide on the one connection: the transactional migrations and the concurrent index builds alike.
        await connection.execute(`set lock_timeout = ${Math.max(1, Math.trunc(lockTimeoutMs))}`);
        try {
          const done = await new Migrator(orm.em).up();
          applied.push(...done.map((m) => m.name));
          break;
        } catch (error) {
          if (!isLockContention(error) || performance.now() >= giveUpAt) throw error;
          const pause = Math.min(5000, 100 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random() / 2);
          logger.warn(
            { schema: set.schema, attempt: attempt + 1, pauseMs: Math.round(pause), err: error },
            'a migration did not get its locks in time: trying it again',
          );
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      }
      await connection.execute('set lock_timeout = 0');
      await connection.execute('select pg_advisory_unlock(hashtext(?))', [lockKey]);
      logger.info({ schema: set.schema, applied }, 'migrations applied');
      await applyRepeatables(await (connection as PostgreSqlConnection).getNativeClient(), set, logger);
    }
  } finally {
    stopObserving();
    await orm.close(true);
  }
}
