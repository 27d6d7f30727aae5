// Configuration from environment variables. Every program declares what it reads; a missing or malformed variable
// stops start-up with a message that names it (all problems at once, not one per restart).

import { DEFAULT_TRY_TIMEOUT_PERCENT } from './transport/deadline.ts';
import { type NatsSecurity, readNatsSecurity } from './transport/nats-security.ts';

export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;

/** Collects typed values and problems; `done()` throws one ConfigError listing every problem. */
export class EnvReader {
  private readonly env: Env;
  private readonly problems: string[] = [];

  constructor(env: Env = process.env) {
    this.env = env;
  }

  private raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string;
  string(name: string): string | undefined;
  string(name: string, fallback?: string): string | undefined {
    return this.raw(name) ?? fallback;
  }

  required(name: string, why: string): string {
    const value = this.raw(name);
    if (value === undefined) {
      this.problems.push(`${name} is required (${why})`);
      return '';
    }
    return value;
  }

  int(name: string, fallback: number, { min, max }: { min: number; max: number }): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return Number(value);
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    this.problems.push(`${name} must be true or false, got ${JSON.stringify(value)}`);
    return fallback;
  }

  oneOf<T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!(choices as readonly string[]).includes(value)) {
      this.problems.push(`${name} must be one of ${choices.join(', ')}, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return value as T;
  }

  list(name: string, itemPattern?: RegExp, describe?: string): string[] {
    const value = this.raw(name);
    if (value === undefined) return [];
    const items = value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    for (const item of items) {
      if (itemPattern && !itemPattern.test(item)) {
        this.problems.push(`${name} has an invalid entry ${JSON.stringify(item)}${describe ? ` (${describe})` : ''}`);
      }
    }
    return items;
  }

  url(name: string, protocols: string[]): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    for (const part of value.split(',')) {
      try {
        const parsed = new URL(part.trim());
        if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
      } catch {
        this.problems.push(`${name} must be a URL with scheme ${protocols.join(' or ')}, got ${JSON.stringify(part)}`);
      }
    }
    return value;
  }

  check(condition: boolean, problem: string): void {
    if (!condition) this.problems.push(problem);
  }

  done(): void {
    // Programs composed in one process may read the same variable: report each problem once.
    if (this.problems.length > 0) throw new ConfigError([...new Set(this.problems)]);
  }
}

/** Settings every program shares. */
export interface CommonConfig {
  logLevel: string;
  natsUrl: string | undefined;
  natsRequestTimeoutMs: number;
  /** NATS_EVENT_REQUEST_TIMEOUT_MS: the timeout of the ledger's event operations (transport/nats.ts). */
  natsEventRequestTimeoutMs: number;
  /** NATS_UNDELIVERED_WAIT_MS: how long an undelivered request is tried again before its 503 (transport/nats.ts). */
  natsUndeliveredWaitMs: number;
  /** NATS_TRY_TIMEOUT_PERCENT: when a repeatable request is sent again without an answer (transport/nats.ts). */
  natsTryTimeoutPercent: number;
  /** NATS credentials and TLS files (NATS_USER, NATS_TOKEN, NATS_CREDS_FILE, NATS_TLS_*; transport/nats-security.ts). */
  natsSecurity: NatsSecurity;
  /**
   * HOST: the address the HTTP server listens on. Unset: every interface, except on the local development default
   * (the all-in-one process on its embedded database), which listens on loopback (docs/identity.md).
   */
  host: string | undefined;
  /**
   * TRUST_PROXY: the program runs behind a reverse proxy or ingress that sets X-Forwarded-For/-Proto/-Host, so those
   * headers are believed (client address, scheme and host, and so the same-origin check). Off by default: a client
   * could otherwise claim any host. The chart sets it (config.trustProxy).
   */
  trustProxy: boolean;
}

export function readCommonConfig(reader: EnvReader): CommonConfig {
  const natsRequestTimeoutMs = reader.int('NATS_REQUEST_TIMEOUT_MS', 5000, { min: 100, max: 60000 });
  return {
    logLevel: reader.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    natsUrl: reader.url('NATS_URL', ['nats:', 'tls:', 'ws:', 'wss:']),
    natsRequestTimeoutMs,
    // Twice the longest stall of the ledger seen under the benches (about 1 s, docs/benchmarks.md), 40 times its p99.
    natsEventRequestTimeoutMs: Math.min(
      natsRequestTimeoutMs,
      reader.int('NATS_EVENT_REQUEST_TIMEOUT_MS', 2000, { min: 100, max: 60000 }),
    ),
    natsUndeliveredWaitMs: reader.int('NATS_UNDELIVERED_WAIT_MS', 1000, { min: 0, max: 30000 }),
    natsTryTimeoutPercent: reader.int('NATS_TRY_TIMEOUT_PERCENT', DEFAULT_TRY_TIMEOUT_PERCENT, { min: 0, max: 90 }),
    natsSecurity: readNatsSecurity(reader),
    host: reader.string('HOST'),
    trustProxy: reader.bool('TRUST_PROXY', false),
  };
}

/** Default DATABASE_STATEMENT_TIMEOUT_MS: no request of the service runs a statement this long. */
export const DATABASE_STATEMENT_TIMEOUT_MS_DEFAULT = 30_000;
/** Default DATABASE_LOCK_TIMEOUT_MS: a transaction waits this long at most for a row another transaction holds. */
export const DATABASE_LOCK_TIMEOUT_MS_DEFAULT = 10_000;

/**
 * DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_LOCK_TIMEOUT_MS: a state owner's transactions' statement_timeout and
 * lock_timeout where the request has no deadline, and their bound where it has one (db/database.ts; 0: none).
 */
export function readDatabaseTimeouts(reader: EnvReader): { statementTimeoutMs: number; lockTimeoutMs: number } {
  return {
    statementTimeoutMs: reader.int('DATABASE_STATEMENT_TIMEOUT_MS', DATABASE_STATEMENT_TIMEOUT_MS_DEFAULT, {
      min: 0,
      max: 3_600_000,
    }),
    lockTimeoutMs: reader.int('DATABASE_LOCK_TIMEOUT_MS', DATABASE_LOCK_TIMEOUT_MS_DEFAULT, { min: 0, max: 3_600_000 }),
  };
}
