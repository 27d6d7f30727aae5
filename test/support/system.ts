// The whole service for HTTP tests: the all-in-one process in this test process, on real PostgreSQL (a fresh
// database per system) and real NATS by default, or on the embedded default (PGlite + in-process transport).

import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Logger, pino } from 'pino';
import { loadDevProvider } from '#runtime/identity/dev-identity-provider.ts';
import { type RunningSystem, startSystem } from '../../services/all-in-one/src/system.ts';
import { SettableClock } from './clock.ts';
import { createTestDatabase } from './database.ts';
import { startNats } from './servers.ts';
import { TEST_WEBHOOK_SECRET_KEY } from './webhook-key.ts';

/**
 * Hook timeout of a beforeAll that starts an embedded system: it may wait for the run's PGlite template (initdb takes
 * seconds on an idle machine, a minute or more on a loaded one). A deadline, not a measurement.
 */
export const EMBEDDED_START_TIMEOUT_MS = 300_000;

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

export interface TestSystem {
  url: string;
  databaseUrl: string | undefined;
  /** The system's private nats-server (undefined in embedded mode). */
  natsUrl: string | undefined;
  dataDir: string;
  /** The state owners' clock: `set` fixes the instant the ledger records, `reset` gives it back to the database. */
  clock: SettableClock;
  running: RunningSystem;
  stop(): Promise<void>;
}

export interface TestSystemOptions {
  /** `real` (default): a fresh PostgreSQL database and NATS; `embedded`: PGlite and the in-process transport. */
  mode?: 'real' | 'embedded';
  env?: Record<string, string | undefined>;
  /** The system's logger; silent by default. */
  logger?: Logger;
  /** The address to listen on: 127.0.0.1 by default; null lets the system choose as `npm start` would (HOST). */
  host?: string | null;
}

export async function startTestSystem(options: TestSystemOptions = {}): Promise<TestSystem> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rewards-system-'));
  const databaseUrl = options.mode === 'embedded' ? undefined : await createTestDatabase();
  // Each system gets its own nats-server: systems of test files running in parallel would otherwise serve the same
  // subjects in the same queue groups and answer each other's requests (another database, another identity key).
  const nats = options.mode === 'embedded' ? undefined : await startNats();
  const env: Record<string, string | undefined> = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    // On real PostgreSQL the development identity provider is trusted only when a variable says it is unsafe: the
    // tests sign their sessions with it (docs/identity.md).
    // With DATABASE_URL the ledger needs WEBHOOK_SECRET_KEY (a fixed test key).
    ...(nats
      ? {
          DATABASE_URL: databaseUrl,
          NATS_URL: nats.url,
          UNSAFE_DEV_IDENTITY_PROVIDER: 'true',
          WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY,
        }
      : {}),
    // A test sends its requests as fast as they are answered, often with one session (paging to the end, races):
    // the developer's request limits are lifted unless a test sets them (test/integration/console/
    // developer-limits.test.ts tests them, and the defaults, by setting or unsetting these).
    DEVELOPER_RATE_PER_SECOND: '1000000',
    DEVELOPER_BURST: '1000000',
    DEVELOPER_IN_FLIGHT_MAX: '10000',
    ...options.env,
  };
  const clock = new SettableClock();
  let running: RunningSystem;
  try {
    running = await startSystem({
      env,
      clock,
      port: 0,
      ...(options.host === null ? {} : { host: options.host ?? '127.0.0.1' }),
      logger: options.logger ?? pino({ level: 'silent' }),
    });
  } catch (error) {
    await nats?.stop();
    throw error;
  }
  return {
    url: running.url,
    databaseUrl,
    natsUrl: nats?.url,
    dataDir,
    clock,
    running,
    async stop() {
      try {
        await running.stop();
      } finally {
        await nats?.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (no JSON encoding). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

/** One HTTP request; JSON bodies are encoded and decoded. */
export async function api<T = any>(
  base: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const response = await fetch(`${base}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** Operator API call with the test admin token. */
export function admin<T = any>(system: TestSystem, method: string, path: string, body?: unknown) {
  return api<T>(system.url, method, `/api/admin/v1${path}`, { token: TEST_ADMIN_TOKEN, body });
}

/** A developer session token of the system's development identity provider. */
export async function developerToken(
  system: TestSystem,
  email: string,
  options: { sub?: string; emailVerified?: boolean; expiresIn?: string } = {},
): Promise<string> {
  const provider = await loadDevProvider(system.dataDir, 'developer');
  const sub = options.sub ?? `dev|${createHash('sha256').update(email.toLowerCase()).digest('hex').slice(0, 24)}`;
  return provider.sign(
    { email, email_verified: options.emailVerified ?? true },
    { subject: sub, expiresIn: options.expiresIn },
  );
}

/** A native session token: sub is the platform account's creditsUserId (UUID), sid the session id. */
export async function nativeToken(
  system: TestSystem,
  options: { sub?: string; sid?: string; username?: string; expiresIn?: string } = {},
): Promise<{ token: string; sub: string; sid: string }> {
  const provider = await loadDevProvider(system.dataDir, 'native');
  const sub = options.sub ?? randomUUID();
  const sid = options.sid ?? `sid-${randomUUID()}`;
  const claims: Record<string, unknown> = { sid };
  if (options.username) claims.preferred_username = options.username;
  return { token: await provider.sign(claims, { subject: sub, expiresIn: options.expiresIn }), sub, sid };
}

/** Invites an e-mail and returns a developer token for it (the usual first step of a console test). */
export async function invitedDeveloper(
  system: TestSystem,
  email = `dev-${randomUUID().slice(0, 8)}@example.com`,
  options: { canCreateUnlimitedOrganization?: boolean } = {},
): Promise<{ email: string; token: string }> {
  const invited = await admin(system, 'POST', '/invitations', { email, ...options });
  if (invited.status !== 200) throw new Error(`invitation failed: ${invited.status} ${JSON.stringify(invited.body)}`);
  return { email, token: await developerToken(system, email) };
}
