// Following a PostgreSQL failover with libpq's rules (a multi-host DATABASE_URL, url.ts), for node-postgres, which
// knows one host. MikroORM gives its `pg` pool our Client class (driverOptions.Client, see connectionSettings):
//
//   - a new connection goes to the last server known to suit `target_session_attrs` and checks it again on itself
//     (`any`: no check). Unknown (at start, or after a loss): the hosts are tried in the URL's order with short-lived
//     probe connections, one search at a time for the whole process, and the first that suits is remembered.
//   - a connection that meets SQLSTATE 25006 (read_only_sql_transaction: its server became a standby, or read-only)
//     or loses its server is not given back to the pool, and the server is forgotten, so the next new connection
//     searches again. On 25006 every other connection to that server goes too: the idle ones at once, the ones in use
//     when they are released. So after a switchover a unit of work fails at most once per connection that was busy
//     on the old primary at that moment, with a failure the classifier (failures.ts) calls `unavailable` (25006:
//     nothing was committed) or `connection_lost`, and the next one reaches the new primary.
//   - nothing outlives a transaction on the server: the checks are plain statements, so this works behind a
//     transaction pooler too.
//
// A single host with `target_session_attrs=any` (the usual URL) connects as plain node-postgres does, with no check
// and no probe; it still drops connections after a 25006, which is what a Service or pooler that follows the primary
// needs (its connections to the demoted server would otherwise fail one by one).
import type { Socket } from 'node:net';
import pg from 'pg';
import { invariant } from '../invariant.ts';
import { classifyDatabaseFailure, sqlStateOf } from './failures.ts';
import { connectionUser, type DatabaseHost, type DatabaseUrl, describeHosts, type TargetSessionAttrs } from './url.ts';

/** SQLSTATE read_only_sql_transaction: a write in a read-only transaction (a standby, or read-only by default). */
export const READ_ONLY_SQL_TRANSACTION = '25006';
/** Connect timeout of every connection when DATABASE_URL has no connect_timeout (libpq would wait for ever). */
export const CONNECT_TIMEOUT_DEFAULT_MS = 10_000;
/** How long the check of a new connection (and of a probe) may take before the server is deemed unsuitable. */
export const SESSION_CHECK_TIMEOUT_MS = 5_000;
/** The wait before a search after one that found no server, doubling with each such search up to the most. */
export const SEARCH_BACKOFF_MIN_MS = 50;
export const SEARCH_BACKOFF_MAX_MS = 1_000;

/** No host of the list could be used: nothing was sent. The classifier (failures.ts) reads `databaseFailure`. */
export class NoSuitableServerError extends Error {
  readonly databaseFailure = 'unavailable';

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'NoSuitableServerError';
  }
}

/** What a selector reports (Database logs it). */
export type SelectorEvent =
  | { kind: 'found'; host: string; target: TargetSessionAttrs }
  | { kind: 'lost'; host: string; reason: 'read_only' | 'connection_lost' | 'connect_failed' | 'unsuitable' };

const SESSION_CHECK_SQL = `select pg_catalog.pg_is_in_recovery()::text as recovery,
  pg_catalog.current_setting('transaction_read_only') as read_only`;

/** Why a checked session does not suit `target`, or undefined when it does (libpq's checks). */
async function unsuitability(client: pg.Client, target: TargetSessionAttrs): Promise<string | undefined> {
  if (target === 'any') return undefined;
  const result = await client.query<{ recovery: string; read_only: string }>({
    text: SESSION_CHECK_SQL,
    query_timeout: SESSION_CHECK_TIMEOUT_MS,
  } as pg.QueryConfig);
  const row = result.rows[0];
  if (!row) throw new Error('the session check returned no row');
  if (row.recovery === 'true') return 'is a standby (in recovery)';
  if (target === 'read-write' && row.read_only === 'on') return 'is read-only (default_transaction_read_only)';
  return undefined;
}

/** The pool's release function that pg-pool assigns to a client it hands out. */
type PoolRelease = (error?: Error | boolean) => void;

/** node-postgres's Client fields this module sets (not in its type declarations). */
interface ClientInternals {
  connectionParameters: { host: string; port: number };
}

/** The listener of an abandoned connection's socket errors (FailoverClient.abandon). */
function ignoreSocketError(): void {}

/**
 * A node-postgres Client that connects where its selector says and reports what it meets. Not used directly: each
 * ServerSelector makes its own subclass (`selector.Client`), which is what the pool is given.
 */
export class FailoverClient extends pg.Client {
  /** Set by the subclass a selector makes. */
  static selector: ServerSelector | undefined;
  /** The selector's index of this connection's server, once connected. */
  #server: number | undefined;
  #poolRelease: PoolRelease | undefined;
  /** Set when the connection must not go back to the pool (given to pg-pool's release, which then closes it). */
  #discard: Error | undefined;
  /** Released to the pool and not handed out since. */
  #idle = false;
  /** Who gave it back to the pool since it was last lent out: its holder, or #giveBack when its connection ended. */
  #returnedBy: 'holder' | 'ended' | undefined;

  constructor(config?: pg.ClientConfig) {
    const selector = (new.target as typeof FailoverClient).selector;
    if (!selector) throw new Error('FailoverClient is used through a ServerSelector');
    super({
      ...config,
      // pg-pool keeps the password out of its options' enumerable fields.
      password: config?.password,
      connectionTimeoutMillis: config?.connectionTimeoutMillis || selector.connectTimeoutMs,
    });
    // A broken socket is reported as an 'error' event (pg marks the client unusable); a listener also keeps such an
    // event from being fatal while the pool has lent the client out.
    this.on('error', (error: Error) => this.#met(error));
    this.once('end', () => {
      selector.untrack(this);
      this.#giveBack();
    });
  }

  /**
   * A connection that ended while lent out goes back to the pool now, to be removed from it: nothing can run on it any
   * more, and a holder that never gives it back would take one of the pool's places for good. Kysely (0.29, under
   * MikroORM) is such a holder when its BEGIN or ROLLBACK fails, as they do on a lost connection: it releases the
   * connection only after they succeed (kysely-org/kysely#1990). The holder's own release later does nothing.
   */
  #giveBack(): void {
    const poolRelease = this.#poolRelease;
    if (!poolRelease || this.#returnedBy) return;
    this.#returnedBy = 'ended';
    this.#selector.returned();
    this.#discard ??= new Error('the connection ended while lent out');
    poolRelease(this.#discard);
  }

  get #selector(): ServerSelector {
    return (this.constructor as typeof FailoverClient).selector as ServerSelector;
  }

  /** The server this connection reached (undefined before it is connected). */
  get server(): DatabaseHost | undefined {
    return this.#server === undefined ? undefined : this.#selector.hosts[this.#server];
  }

  get serverIndex(): number | undefined {
    return this.#server;
  }

  // The overloads of pg's Client.connect: a promise, or a callback (pg-pool's form).
  override connect(): Promise<pg.Client>;
  override connect(callback: (error: Error | null, client?: pg.Client) => void): void;
  override connect(callback?: (error: Error | null, client?: pg.Client) => void): Promise<pg.Client> | undefined {
    const connected = this.#connect();
    if (!callback) return connected;
    connected.then(
      (client) => callback(null, client),
      (error: Error) => callback(error),
    );
    return undefined;
  }

  async #connect(): Promise<pg.Client> {
    const selector = this.#selector;
    const index = await selector.current();
    const server = selector.hosts[index] as DatabaseHost;
    this.host = server.host;
    this.port = server.port;
    const internals = this as unknown as ClientInternals;
    internals.connectionParameters.host = server.host;
    internals.connectionParameters.port = server.port;
    try {
      await super.connect();
    } catch (error) {
      selector.forget(index, 'connect_failed');
      throw error;
    }
    let problem: string | undefined;
    try {
      problem = await unsuitability(this, selector.target);
    } catch (error) {
      selector.forget(index, 'connect_failed');
      await this.end().catch(() => undefined);
      throw error;
    }
    if (problem) {
      // It was the primary when last seen. The next connection searches again.
      selector.forget(index, 'unsuitable');
      await this.end().catch(() => undefined);
      throw new NoSuitableServerError(
        `the database server ${describeHosts([server])} ${problem} (target_session_attrs=${selector.target})`,
      );
    }
    this.#server = index;
    selector.track(this);
    return this;
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query has many overloads; each is passed through unchanged.
  override query(...args: any[]): any {
    const last = args.length > 0 ? args[args.length - 1] : undefined;
    const base = super.query as (...a: unknown[]) => unknown;
    if (typeof last === 'function') {
      args[args.length - 1] = (error: Error | null, result: unknown) => {
        if (error) this.#met(error);
        last(error, result);
      };
      return base.apply(this, args);
    }
    const result = base.apply(this, args) as { then?: unknown } | undefined;
    if (result && typeof result.then === 'function') {
      (result as Promise<unknown>).then(undefined, (error: unknown) => this.#met(error));
    }
    return result;
  }

  /**
   * pg-pool assigns `release` when it lends the client out; the function read back passes this connection's discard
   * reason, if any, so that pg-pool closes it instead of keeping it idle (pg-pool's documented `release(error)`).
   */
  get release(): PoolRelease | undefined {
    const poolRelease = this.#poolRelease;
    if (!poolRelease) return undefined;
    return (error?: Error | boolean) => {
      // A second release by the holder still fails in pg-pool, as it should.
      if (this.#returnedBy === 'ended') return;
      if (this.#returnedBy === undefined) this.#selector.returned();
      this.#returnedBy = 'holder';
      const discard = error || this.#discard;
      this.#idle = !discard;
      poolRelease(discard);
    };
  }

  set release(poolRelease: PoolRelease | undefined) {
    // pg-pool lends a connection it was given back, never one still out.
    invariant(this.#poolRelease === undefined || this.#returnedBy !== undefined, 'failover_client_lent_twice', () => ({
      server: this.#server,
    }));
    if (poolRelease !== undefined) this.#selector.lent();
    this.#poolRelease = poolRelease;
    this.#idle = false;
    this.#returnedBy = undefined;
  }

  /**
   * The server of this connection is no longer to be used: an idle connection leaves the pool now (pg-pool removes
   * an idle client that reports an error), one in use when it is released.
   */
  retire(reason: Error): void {
    if (this.#discard) return;
    this.#discard = reason;
    if (this.#idle) this.emit('error', reason);
  }

  /** Lent out by the pool (a unit of work holds it), not idle in it nor connecting. */
  get inUse(): boolean {
    return !this.#idle && this.#server !== undefined;
  }

  /**
   * Closes this connection now, whatever it is doing (the health check found the database unreachable: queries and
   * connects through a cut path would wait out TCP's retransmissions, seconds after the path heals). Idle: it leaves
   * the pool (retire). Connecting: its connect fails. In use: its socket is reset (RST, the unsent bytes discarded: a
   * plain close would still deliver a statement stuck in the send queue after the heal, and the server would run it
   * then, long after its deadline), so the statement in flight fails as a lost connection (outcome unknown) and the
   * connection is not given back. A transaction left open on the server ends by its idle_in_transaction timeout
   * (Database.transaction).
   */
  abandon(reason: Error): void {
    if (this.#idle) {
      this.retire(reason);
      return;
    }
    this.#discard ??= reason;
    const stream = (this as unknown as { connection?: { stream?: Partial<Socket> } }).connection?.stream;
    // resetAndDestroy waits for a connecting socket to connect: that one is only destroyed. On a socket that is not
    // open (its connection still looking for a server) it emits ERR_SOCKET_CLOSED as an 'error' event, which pg does
    // not listen to before it connects: unheard, it would end the process. The connection is abandoned: its socket's
    // errors say nothing more.
    stream?.on?.('error', ignoreSocketError);
    try {
      if (stream?.resetAndDestroy && stream.connecting === false) {
        stream.resetAndDestroy();
        return;
      }
    } catch {
      // A socket that cannot be reset (TLS on some Node versions) is closed.
    }
    stream?.destroy?.();
  }

  /** A query's error or the connection's: a read-only server or a lost connection retires this connection. */
  #met(error: unknown): void {
    const index = this.#server;
    if (index === undefined || this.#discard) return;
    if (sqlStateOf(error) === READ_ONLY_SQL_TRANSACTION) {
      this.#discard = error as Error;
      this.#selector.readOnly(index);
    } else if (classifyDatabaseFailure(error) === 'connection_lost') {
      this.#discard = error as Error;
      this.#selector.forget(index, 'connection_lost');
    }
  }
}

/**
 * One host list's knowledge (process-wide, per DATABASE_URL, see selectorFor): which server suits, the search for
 * one, and the connections to each (so that a read-only server's connections can all be retired).
 */
export class ServerSelector {
  readonly hosts: DatabaseHost[];
  readonly target: TargetSessionAttrs;
  readonly connectTimeoutMs: number;
  /** The pool's Client class for this host list. */
  readonly Client: typeof FailoverClient;
  private readonly probeConfig: pg.ClientConfig;
  private known: number | undefined;
  private search: Promise<number> | undefined;
  /** Searches in a row that found no server, and the earliest time (performance.now()) the next one may start. */
  private failedSearches = 0;
  private searchNotBefore = 0;
  /** Connections the pool has lent out and not been given back. */
  private lentOut = 0;
  private readonly live = new Set<FailoverClient>();
  private readonly observers = new Set<(event: SelectorEvent) => void>();

  constructor(url: DatabaseUrl) {
    this.hosts = url.hosts;
    this.target = url.targetSessionAttrs;
    this.connectTimeoutMs = url.connectTimeoutMs ?? CONNECT_TIMEOUT_DEFAULT_MS;
    // One host that any session suits: nothing to search or check.
    this.known = url.hosts.length === 1 && url.targetSessionAttrs === 'any' ? 0 : undefined;
    this.probeConfig = {
      user: connectionUser(url),
      password: url.password,
      database: url.database,
      ssl: url.ssl,
      application_name: url.applicationName,
      connectionTimeoutMillis: this.connectTimeoutMs,
    };
    const selector = this;
    this.Client = class extends FailoverClient {
      static override selector: ServerSelector | undefined = selector;
    };
  }

  /** Sees what this selector learns (found, lost); returns the function that stops it. */
  observe(observer: (event: SelectorEvent) => void): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  private report(event: SelectorEvent): void {
    for (const observer of this.observers) observer(event);
  }

  /** The index of the server a new connection goes to: the known one, or the first that suits (one search). */
  current(): Promise<number> {
    if (this.known !== undefined) return Promise.resolve(this.known);
    this.search ??= this.find().finally(() => {
      this.search = undefined;
    });
    return this.search;
  }

  /** The wait before the next search, once searches in a row have found no server (tests). */
  get searchDelayMs(): number {
    return Math.max(0, this.searchNotBefore - performance.now());
  }

  /**
   * Tries the hosts in order with probe connections; the first that suits becomes the known server. After a search
   * that found none, the next one starts no sooner than SEARCH_BACKOFF_MIN_MS later, doubling with each failed
   * search up to SEARCH_BACKOFF_MAX_MS: while no server answers, the process probes a few times a second at most
   * instead of once per new connection asked for. The callers that ask meanwhile wait for that search together.
   */
  private async find(): Promise<number> {
    const wait = this.searchDelayMs;
    // Not unref'd: a caller may have nothing else keeping the process alive while it waits (a command-line tool).
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    try {
      const index = await this.probe();
      this.failedSearches = 0;
      this.searchNotBefore = 0;
      return index;
    } catch (error) {
      this.failedSearches++;
      const backoff = Math.min(SEARCH_BACKOFF_MIN_MS * 2 ** (this.failedSearches - 1), SEARCH_BACKOFF_MAX_MS);
      this.searchNotBefore = performance.now() + backoff;
      throw error;
    }
  }

  private async probe(): Promise<number> {
    const problems: string[] = [];
    let lastError: unknown;
    for (const [index, server] of this.hosts.entries()) {
      const probe = new pg.Client({ ...this.probeConfig, host: server.host, port: server.port });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        const problem = await unsuitability(probe, this.target);
        if (!problem) {
          this.known = index;
          this.report({ kind: 'found', host: describeHosts([server]), target: this.target });
          return index;
        }
        problems.push(`${describeHosts([server])} ${problem}`);
      } catch (error) {
        lastError = error;
        problems.push(`${describeHosts([server])}: ${(error as Error).message}`);
      } finally {
        await probe.end().catch(() => undefined);
      }
    }
    throw new NoSuitableServerError(
      `no database server suits target_session_attrs=${this.target}: ${problems.join('; ')}`,
      lastError,
    );
  }

  /** The server stopped suiting (or answering): the next new connection searches. */
  forget(index: number, reason: 'connection_lost' | 'connect_failed' | 'unsuitable'): void {
    if (this.hosts.length === 1 && this.target === 'any') return;
    if (this.known !== index) return;
    this.known = undefined;
    this.report({ kind: 'lost', host: describeHosts([this.hosts[index] as DatabaseHost]), reason });
  }

  /** The server refused a write (25006): forget it and retire every connection to it. */
  readOnly(index: number): void {
    const reason = new Error(
      `the database server ${describeHosts([this.hosts[index] as DatabaseHost])} is read-only; its connections close`,
    );
    for (const client of this.live) if (client.serverIndex === index) client.retire(reason);
    const multiple = !(this.hosts.length === 1 && this.target === 'any');
    if (multiple && this.known === index) this.known = undefined;
    this.report({ kind: 'lost', host: describeHosts([this.hosts[index] as DatabaseHost]), reason: 'read_only' });
  }

  track(client: FailoverClient): void {
    this.live.add(client);
  }

  /** The pool lent a connection out. */
  lent(): void {
    this.lentOut++;
  }

  /** A lent connection was given back (by its holder, or because it ended). */
  returned(): void {
    this.lentOut--;
    invariant(this.lentOut >= 0, 'failover_lent_not_negative', () => ({ lent: this.lentOut }));
  }

  /** Connections lent out by the pool now (tests). */
  get lentConnections(): number {
    return this.lentOut;
  }

  untrack(client: FailoverClient): void {
    this.live.delete(client);
  }

  /** Connections open now (tests). */
  get connections(): number {
    return this.live.size;
  }
}

/** Most selectors kept (one per distinct DATABASE_URL; tests open many databases). */
const SELECTORS_MAX = 256;
const selectors = new Map<string, ServerSelector>();

/** The process's selector of one DATABASE_URL (its exact text), made on first use. */
export function selectorFor(url: string, parsed: DatabaseUrl): ServerSelector {
  let selector = selectors.get(url);
  if (!selector) {
    if (selectors.size >= SELECTORS_MAX) {
      // The oldest without connections goes (Map keeps insertion order).
      for (const [key, candidate] of selectors) {
        if (candidate.connections === 0) {
          selectors.delete(key);
          break;
        }
      }
    }
    selector = new ServerSelector(parsed);
    selectors.set(url, selector);
  }
  return selector;
}
