// DATABASE_URL as libpq reads it, including its multi-host form (PostgreSQL docs, "Connection URIs"):
//
//   postgres://user:secret@h1:5432,h2:5433/rewards?target_session_attrs=read-write&sslmode=require
//
// node-postgres (and MikroORM, which hands it host, port, user, password and database taken from a WHATWG URL) reads
// one host and ignores the query. This module turns such a URL into the host list, the session kind wanted and the
// node-postgres settings of every host; multi-host.ts tries the hosts the way libpq does. Nothing here loads the
// driver: programs import it to check their configuration before they decide to open a database.
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { ConnectionOptions } from 'node:tls';
import type { EnvReader } from '../config.ts';

export interface DatabaseHost {
  host: string;
  port: number;
}

/**
 * libpq's `target_session_attrs`, the values this service supports: `any` (the first host that accepts a connection),
 * `read-write` (one whose sessions accept writes by default: not a hot standby, `default_transaction_read_only`
 * off; libpq checks `SHOW transaction_read_only`) and `primary` (not a hot standby, whatever
 * `default_transaction_read_only` says). The others (`read-only`, `standby`, `prefer-standby`) are for readers,
 * which this service does not have.
 */
export type TargetSessionAttrs = 'any' | 'read-write' | 'primary';
export const TARGET_SESSION_ATTRS: readonly TargetSessionAttrs[] = ['any', 'read-write', 'primary'];

export interface DatabaseUrl {
  /** In the URL's order, at least one. */
  hosts: DatabaseHost[];
  targetSessionAttrs: TargetSessionAttrs;
  /** Undefined: node-postgres's default (PGUSER, else the operating system's user), as before. */
  user: string | undefined;
  password: string | undefined;
  /** Empty when the URL names none (MikroORM then refuses it, as before). */
  database: string;
  /** node-postgres's `ssl` setting for `sslmode` (see sslSetting). */
  ssl: boolean | ConnectionOptions;
  /** `connect_timeout` (seconds in the URL), in milliseconds; undefined: none given. */
  connectTimeoutMs: number | undefined;
  applicationName: string | undefined;
}

/** The port of a host the URL gives none for (libpq's default). */
const DEFAULT_PORT = 5432;
/** Most hosts in one URL: a limit on everything. */
export const DATABASE_HOSTS_MAX = 16;

/**
 * Query parameters read here. Other libpq parameters are ignored, as MikroORM always ignored the whole query (they
 * are accepted so that a URL written for libpq tools keeps working).
 */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

export class DatabaseUrlError extends Error {
  constructor(problem: string) {
    super(problem);
    this.name = 'DatabaseUrlError';
  }
}

/** Splits `h1:p1,[::1]:p2,h3` into hosts; an empty host or port takes the default. */
function parseHosts(hostspec: string, defaultPort: number): DatabaseHost[] {
  const hosts: DatabaseHost[] = [];
  for (const item of hostspec.split(',')) {
    const match = /^(\[[^\]]*\]|[^:[\]]*)(?::([^:]*))?$/.exec(item);
    if (!match) throw new DatabaseUrlError(`has a host it cannot read (${JSON.stringify(item)})`);
    const [, rawHost = '', rawPort] = match;
    let host = rawHost.startsWith('[') ? rawHost.slice(1, -1) : decodeURIComponent(rawHost);
    if (host === '') host = '127.0.0.1';
    if (rawPort !== undefined && rawPort !== '' && !/^\d{1,5}$/.test(rawPort)) {
      throw new DatabaseUrlError(`has a port that is not a number (${JSON.stringify(rawPort)})`);
    }
    const port = rawPort ? Number(rawPort) : defaultPort;
    if (port < 1 || port > 65535) throw new DatabaseUrlError(`has a port out of range (${port})`);
    hosts.push({ host, port });
  }
  return hosts;
}

/**
 * node-postgres's `ssl` for libpq's `sslmode`. node-postgres cannot fall back from TLS to plain text on one
 * connection, so `allow` and `prefer` (libpq: plain text or TLS, whichever the server takes, without checking the
 * server's certificate) connect in plain text, as every mode did before this module (MikroORM ignored the query).
 * `require` encrypts without checking the certificate, `verify-ca` checks it against `sslrootcert` (required),
 * `verify-full` checks it and the host name (against `sslrootcert`, or the system's CAs without one).
 */
function sslSetting(params: URLSearchParams): boolean | ConnectionOptions {
  const mode = params.get('sslmode') ?? 'prefer';
  if (!(SSL_MODES as readonly string[]).includes(mode)) {
    throw new DatabaseUrlError(`has sslmode=${mode}; one of ${SSL_MODES.join(', ')} is expected`);
  }
  if (mode === 'disable' || mode === 'allow' || mode === 'prefer') return false;
  const read = (name: string) => {
    const file = params.get(name);
    if (!file) return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new DatabaseUrlError(`names ${name}=${file}, which cannot be read (${(error as Error).message})`);
    }
  };
  const ca = read('sslrootcert');
  const cert = read('sslcert');
  const key = read('sslkey');
  const files = { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
  if (mode === 'require') return { ...files, rejectUnauthorized: false };
  if (mode === 'verify-ca') {
    if (!ca) throw new DatabaseUrlError('has sslmode=verify-ca without sslrootcert (the CA to check against)');
    return { ...files, checkServerIdentity: () => undefined };
  }
  return files;
}

/**
 * Reads a `postgres:` or `postgresql:` URL with one or more comma-separated hosts. Throws DatabaseUrlError (its
 * message never contains the password) when the URL cannot be used.
 */
export function parseDatabaseUrl(url: string): DatabaseUrl {
  const match = /^(postgres(?:ql)?):\/\/(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?(?:#.*)?$/.exec(url.trim());
  if (!match) throw new DatabaseUrlError('is not a postgres:// or postgresql:// URL');
  const [, , userinfo, hostspec = '', path = '', query = ''] = match;
  const params = new URLSearchParams(query);

  const target = params.get('target_session_attrs') ?? 'any';
  if (!(TARGET_SESSION_ATTRS as readonly string[]).includes(target)) {
    throw new DatabaseUrlError(
      `has target_session_attrs=${target}; this service supports ${TARGET_SESSION_ATTRS.join(', ')}`,
    );
  }
  const portParam = params.get('port');
  if (portParam !== null && !/^\d{1,5}$/.test(portParam)) {
    throw new DatabaseUrlError('has a port parameter that is not one number (write the ports beside the hosts)');
  }
  if (params.has('host') || params.has('hostaddr')) {
    throw new DatabaseUrlError('has a host or hostaddr parameter; write the hosts before the path instead');
  }
  const hosts = parseHosts(hostspec, portParam ? Number(portParam) : DEFAULT_PORT);
  if (hosts.length > DATABASE_HOSTS_MAX) {
    throw new DatabaseUrlError(`has ${hosts.length} hosts; at most ${DATABASE_HOSTS_MAX}`);
  }

  let user: string | undefined;
  let password: string | undefined;
  try {
    if (userinfo !== undefined) {
      const colon = userinfo.indexOf(':');
      const rawUser = colon === -1 ? userinfo : userinfo.slice(0, colon);
      if (rawUser !== '') user = decodeURIComponent(rawUser);
      if (colon !== -1) password = decodeURIComponent(userinfo.slice(colon + 1));
    }
  } catch {
    throw new DatabaseUrlError('has a user or password with a broken percent-encoding');
  }
  user = params.get('user') ?? user;
  password = params.get('password') ?? password;

  let database: string;
  try {
    database = decodeURIComponent(path.replace(/^\//, ''));
  } catch {
    throw new DatabaseUrlError('has a database name with a broken percent-encoding');
  }
  database = params.get('dbname') ?? database;

  const timeout = params.get('connect_timeout');
  if (timeout !== null && !/^\d{1,6}$/.test(timeout)) {
    throw new DatabaseUrlError('has a connect_timeout that is not a whole number of seconds');
  }
  // libpq: zero, negative or absent means wait indefinitely; values under 2 s are taken as 2 s.
  const connectTimeoutMs = timeout && Number(timeout) > 0 ? Math.max(2, Number(timeout)) * 1000 : undefined;

  return {
    hosts,
    targetSessionAttrs: target as TargetSessionAttrs,
    user,
    password,
    database,
    ssl: sslSetting(params),
    connectTimeoutMs,
    applicationName: params.get('application_name') ?? undefined,
  };
}

/**
 * A URL of one host of the list, with the user, password and database and no query: the form node-postgres and
 * MikroORM read correctly (their `new URL` refuses a host list).
 */
export function singleHostUrl(parsed: DatabaseUrl, index = 0): string {
  const host = parsed.hosts[index];
  if (!host) throw new Error(`no host ${index} in a list of ${parsed.hosts.length}`);
  const user = parsed.user === undefined ? '' : encodeURIComponent(parsed.user);
  const secret = parsed.password === undefined ? '' : `:${encodeURIComponent(parsed.password)}`;
  const userinfo = user || secret ? `${user}${secret}@` : '';
  const name = host.host.includes(':') ? `[${host.host}]` : host.host;
  return `postgres://${userinfo}${name}:${host.port}/${encodeURIComponent(parsed.database)}`;
}

/**
 * The URL as it may be shown (logs, start-up banner): the password replaced by `***`, any number of hosts; a URL
 * that cannot be read is not shown at all.
 */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = parseDatabaseUrl(url);
    const user = parsed.user === undefined ? '' : encodeURIComponent(parsed.user);
    const secret = parsed.password === undefined ? '' : ':***';
    const userinfo = user || secret ? `${user}${secret}@` : '';
    const scheme = url.trim().startsWith('postgresql:') ? 'postgresql' : 'postgres';
    const at = url.indexOf('?');
    const query = at === -1 ? '' : url.slice(at).replace(/([?&]password=)[^&#]*/, '$1***');
    return `${scheme}://${userinfo}${describeHosts(parsed.hosts)}/${encodeURIComponent(parsed.database)}${query}`;
  } catch {
    return '(a DATABASE_URL that cannot be read)';
  }
}

/**
 * The user name of a URL without one, as libpq takes it: PGUSER, else the operating system's user (node-postgres
 * would read USER, which a container may not set, and then send no user name at all).
 */
export function connectionUser(parsed: DatabaseUrl): string | undefined {
  if (parsed.user !== undefined) return parsed.user;
  if (process.env.PGUSER) return process.env.PGUSER;
  try {
    return userInfo().username;
  } catch {
    return process.env.USER;
  }
}

/** `h1:p1,h2:p2` (for logs and error messages: no user, no password). */
export function describeHosts(hosts: DatabaseHost[]): string {
  return hosts.map((h) => `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`).join(',');
}

/**
 * DATABASE_URL through the program's EnvReader: undefined when unset; a problem of the reader (reported with every
 * other at start-up) when the URL cannot be used. Replaces `reader.url('DATABASE_URL', ...)`, which splits a value
 * at its commas (right for NATS_URL's list of URLs, wrong for libpq's host list).
 */
export function readDatabaseUrl(reader: EnvReader, name = 'DATABASE_URL'): string | undefined {
  const value = reader.string(name);
  if (value === undefined) return undefined;
  try {
    parseDatabaseUrl(value);
  } catch (error) {
    reader.check(false, `${name} ${(error as Error).message}`);
  }
  return value;
}
