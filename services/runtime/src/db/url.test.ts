import { EnvReader } from '../config.ts';
import {
  DatabaseUrlError,
  describeHosts,
  parseDatabaseUrl,
  readDatabaseUrl,
  redactDatabaseUrl,
  singleHostUrl,
} from './url.ts';

describe('parseDatabaseUrl', () => {
  it('one host: the usual URL, as node-postgres read it', () => {
    expect(parseDatabaseUrl('postgres://rewards:s3cret@db.internal:6432/rewards')).toEqual({
      hosts: [{ host: 'db.internal', port: 6432 }],
      targetSessionAttrs: 'any',
      user: 'rewards',
      password: 's3cret',
      database: 'rewards',
      ssl: false,
      connectTimeoutMs: undefined,
      applicationName: undefined,
    });
  });

  it("libpq's multi-host form: hosts in order, each with its port or the default", () => {
    const parsed = parseDatabaseUrl(
      'postgresql://u@10.0.0.1:5433,10.0.0.2,db3:5435/app?target_session_attrs=read-write',
    );
    expect(parsed.hosts).toEqual([
      { host: '10.0.0.1', port: 5433 },
      { host: '10.0.0.2', port: 5432 },
      { host: 'db3', port: 5435 },
    ]);
    expect(parsed.targetSessionAttrs).toBe('read-write');
    expect(parsed.database).toBe('app');
    expect(describeHosts(parsed.hosts)).toBe('10.0.0.1:5433,10.0.0.2:5432,db3:5435');
  });

  it("pg_auto_failover's URI (pg_autoctl show uri)", () => {
    const parsed = parseDatabaseUrl(
      'postgres://127.0.0.1:6010,127.0.0.1:6011/postgres?target_session_attrs=read-write&sslmode=prefer',
    );
    expect(parsed).toMatchObject({
      hosts: [
        { host: '127.0.0.1', port: 6010 },
        { host: '127.0.0.1', port: 6011 },
      ],
      targetSessionAttrs: 'read-write',
      user: undefined,
      password: undefined,
      database: 'postgres',
      // node-postgres cannot fall back from TLS to plain text: prefer connects in plain text, as before.
      ssl: false,
    });
  });

  it('target_session_attrs: any (the default), read-write and primary; the reader-only values are refused', () => {
    expect(parseDatabaseUrl('postgres://h/d').targetSessionAttrs).toBe('any');
    expect(parseDatabaseUrl('postgres://h/d?target_session_attrs=any').targetSessionAttrs).toBe('any');
    expect(parseDatabaseUrl('postgres://h/d?target_session_attrs=primary').targetSessionAttrs).toBe('primary');
    for (const value of ['read-only', 'standby', 'prefer-standby', 'readwrite', '']) {
      expect(() => parseDatabaseUrl(`postgres://h/d?target_session_attrs=${value}`)).toThrow(DatabaseUrlError);
    }
  });

  it('IPv6 hosts in brackets, percent-encoded user, password and database', () => {
    const parsed = parseDatabaseUrl('postgres://us%40er:p%3Ass%2Cw@[::1]:5433,[fd00::2]/my%20db');
    expect(parsed.hosts).toEqual([
      { host: '::1', port: 5433 },
      { host: 'fd00::2', port: 5432 },
    ]);
    expect(parsed).toMatchObject({ user: 'us@er', password: 'p:ss,w', database: 'my db' });
    expect(describeHosts(parsed.hosts)).toBe('[::1]:5433,[fd00::2]:5432');
  });

  it('user, password, dbname and a single port as query parameters (libpq allows them)', () => {
    const parsed = parseDatabaseUrl('postgres://h1,h2/?user=a&password=b&dbname=c&port=6000');
    expect(parsed).toMatchObject({
      hosts: [
        { host: 'h1', port: 6000 },
        { host: 'h2', port: 6000 },
      ],
      user: 'a',
      password: 'b',
      database: 'c',
    });
  });

  it('connect_timeout in seconds (at least 2, as libpq), application_name', () => {
    expect(parseDatabaseUrl('postgres://h/d?connect_timeout=5&application_name=ledger')).toMatchObject({
      connectTimeoutMs: 5000,
      applicationName: 'ledger',
    });
    expect(parseDatabaseUrl('postgres://h/d?connect_timeout=1').connectTimeoutMs).toBe(2000);
    expect(parseDatabaseUrl('postgres://h/d?connect_timeout=0').connectTimeoutMs).toBeUndefined();
    expect(() => parseDatabaseUrl('postgres://h/d?connect_timeout=soon')).toThrow(DatabaseUrlError);
  });

  it('sslmode: plain text for disable, allow and prefer; TLS without checks for require', () => {
    for (const mode of ['disable', 'allow', 'prefer']) {
      expect(parseDatabaseUrl(`postgres://h/d?sslmode=${mode}`).ssl).toBe(false);
    }
    expect(parseDatabaseUrl('postgres://h/d?sslmode=require').ssl).toEqual({ rejectUnauthorized: false });
    expect(parseDatabaseUrl('postgres://h/d?sslmode=verify-full').ssl).toEqual({});
    expect(() => parseDatabaseUrl('postgres://h/d?sslmode=verify-ca')).toThrow(/sslrootcert/);
    expect(() => parseDatabaseUrl('postgres://h/d?sslmode=maybe')).toThrow(DatabaseUrlError);
  });

  it('refuses what it cannot read, without repeating the password', () => {
    for (const url of [
      'mysql://h/d',
      'postgres://h:port/d',
      'postgres://h:70000/d',
      'postgres://h1:1:2/d',
      'postgres://h/d?host=other',
      'postgres://h/d?port=1,2',
      `postgres://${Array.from({ length: 17 }, (_, i) => `h${i}`).join(',')}/d`,
    ]) {
      expect(() => parseDatabaseUrl(url)).toThrow(DatabaseUrlError);
    }
    try {
      parseDatabaseUrl('postgres://u:topsecret@h:x/d');
    } catch (error) {
      expect((error as Error).message).not.toContain('topsecret');
    }
  });
});

describe('singleHostUrl', () => {
  it('one host of the list with the credentials and database, no query: what MikroORM and node-postgres read', () => {
    const parsed = parseDatabaseUrl(
      'postgres://us%40er:p%3Ass@h1:5433,[::1]:5434/my%20db?target_session_attrs=primary',
    );
    expect(singleHostUrl(parsed)).toBe('postgres://us%40er:p%3Ass@h1:5433/my%20db');
    expect(singleHostUrl(parsed, 1)).toBe('postgres://us%40er:p%3Ass@[::1]:5434/my%20db');
    const url = new URL(singleHostUrl(parsed, 1));
    expect([decodeURIComponent(url.username), decodeURIComponent(url.password), url.port]).toEqual([
      'us@er',
      'p:ss',
      '5434',
    ]);
    expect(singleHostUrl(parseDatabaseUrl('postgres://h/d'))).toBe('postgres://h:5432/d');
  });
});

describe('readDatabaseUrl', () => {
  it('accepts a host list (EnvReader.url would split it at the commas) and reports what it cannot use', () => {
    const ok = new EnvReader({ DATABASE_URL: 'postgres://a:1,b:2/d?target_session_attrs=read-write' });
    expect(readDatabaseUrl(ok)).toBe('postgres://a:1,b:2/d?target_session_attrs=read-write');
    expect(() => ok.done()).not.toThrow();

    expect(readDatabaseUrl(new EnvReader({}))).toBeUndefined();

    const bad = new EnvReader({ DATABASE_URL: 'postgres://a/d?target_session_attrs=standby' });
    readDatabaseUrl(bad);
    expect(() => bad.done()).toThrow(/DATABASE_URL has target_session_attrs=standby/);
  });
});

describe('redactDatabaseUrl', () => {
  it('hides the password, keeps every host and the query', () => {
    expect(redactDatabaseUrl('postgres://u:secret@h1:5433,h2/db?target_session_attrs=read-write')).toBe(
      'postgres://u:***@h1:5433,h2:5432/db?target_session_attrs=read-write',
    );
    expect(redactDatabaseUrl('postgresql://h/db?user=u&password=secret')).toBe(
      'postgresql://u:***@h:5432/db?user=u&password=***',
    );
    expect(redactDatabaseUrl('postgres://127.0.0.1:1,127.0.0.1:2/postgres')).toBe(
      'postgres://127.0.0.1:1,127.0.0.1:2/postgres',
    );
    expect(redactDatabaseUrl('postgres://u:secret@h:port/db')).not.toContain('secret');
  });
});
