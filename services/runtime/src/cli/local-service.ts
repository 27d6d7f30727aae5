// How the command-line clients (`npm run admin`, `npm run demo`) find the service `npm start` runs on this machine,
// and the operator token it generated: one rule for every client, so that the quick start works on any port.
//   - the service: API_URL when set, otherwise http://localhost:<PORT>, PORT defaulting to 8080 like `npm start`;
//   - the operator token: ADMIN_TOKEN when set, otherwise the token `npm start` generated under DATA_DIR.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const DEFAULT_PORT = 8080;
export const DEFAULT_DATA_DIR = './.data';
/** The file, under DATA_DIR, holding the operator token `npm start` generated (owner-only permissions). */
export const ADMIN_TOKEN_FILE = 'admin-token';

type Env = Record<string, string | undefined>;

/** The folder of the embedded data and development keys, as `npm start` resolves it. */
export function dataDirOf(env: Env): string {
  return resolve(env.DATA_DIR?.trim() || DEFAULT_DATA_DIR);
}

/** The service's base URL without a trailing slash: API_URL, or http://localhost:<PORT or 8080>. */
export function serviceUrl(env: Env): string {
  const explicit = env.API_URL?.trim();
  if (explicit) return explicit.replace(/\/+$/, '');
  return `http://localhost:${env.PORT?.trim() || DEFAULT_PORT}`;
}

export interface FoundAdminToken {
  token: string;
  /** `ADMIN_TOKEN`, or the file it was read from. */
  source: string;
}

/** ADMIN_TOKEN, or the token `npm start` stored under DATA_DIR; undefined when there is neither. */
export function findAdminToken(env: Env): FoundAdminToken | undefined {
  const explicit = env.ADMIN_TOKEN?.trim();
  if (explicit) return { token: explicit, source: 'ADMIN_TOKEN' };
  const file = join(dataDirOf(env), ADMIN_TOKEN_FILE);
  if (!existsSync(file)) return undefined;
  const stored = readFileSync(file, 'utf8').trim();
  return stored ? { token: stored, source: file } : undefined;
}

/**
 * The operator token of the embedded default when ADMIN_TOKEN is unset: read from DATA_DIR, or generated (32 random
 * bytes, base64url: 43 characters) and stored there readable by the owner only. `created` tells whether it is new.
 */
export function loadOrCreateAdminToken(dataDir: string): { token: string; file: string; created: boolean } {
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored.length >= 32) {
      chmodSync(file, 0o600);
      return { token: stored, file, created: false };
    }
  }
  mkdirSync(dataDir, { recursive: true });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { token, file, created: true };
}

/** Where `npm run dev:split` keeps the WEBHOOK_SECRET_KEY of its ledger (made once, owner-only). */
export const WEBHOOK_SECRET_KEY_FILE = 'webhook-secret-key';

/**
 * The WEBHOOK_SECRET_KEY of programs run apart on one machine (`npm run dev:split`): a ledger with DATABASE_URL needs
 * one, and the key must stay the same across restarts, so it is made once (32 random bytes, base64) under DATA_DIR.
 */
export function loadOrCreateWebhookSecretKey(dataDir: string): string {
  const file = join(dataDir, WEBHOOK_SECRET_KEY_FILE);
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim();
    if (Buffer.from(stored, 'base64').length === 32) {
      chmodSync(file, 0o600);
      return stored;
    }
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return key;
}

/**
 * The environment prefix a person types before a client command so that it reaches the service started with `env`
 * (`PORT=18080 DATA_DIR=/tmp/x `), empty for the defaults.
 */
export function clientEnvPrefix(env: Env, options: { dataDir?: boolean } = {}): string {
  const parts: string[] = [];
  if (env.API_URL?.trim()) parts.push(`API_URL=${env.API_URL.trim()}`);
  else if (env.PORT?.trim() && env.PORT.trim() !== String(DEFAULT_PORT)) parts.push(`PORT=${env.PORT.trim()}`);
  if (options.dataDir !== false && env.DATA_DIR?.trim() && resolve(env.DATA_DIR.trim()) !== resolve(DEFAULT_DATA_DIR)) {
    parts.push(`DATA_DIR=${env.DATA_DIR.trim()}`);
  }
  return parts.map((part) => `${part} `).join('');
}
