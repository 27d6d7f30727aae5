// Shared steps of the linking tests: a funded game with keys made through the console, native sessions that pass
// admission (device permit included), the linking calls over HTTP, and strict checks of every response body against
// the schemas /openapi.json publishes.
import { randomUUID } from 'node:crypto';
import { commonSchemas, dataEnvelope } from '../../../gateway/src/schemas/common.ts';
import { SchemaSet } from '../../../gateway/src/schemas/json-schema.ts';
import { linksOpenApi } from '../../../gateway/src/schemas/links.ts';
import { developer, ok, world } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { type ApiResponse, admin, api, nativeToken, type TestSystem } from '../../support/system.ts';

export const LINK_INTENTS = '/api/game-sdk/v2/link-intents';
export const PLAYERS = '/api/game-sdk/v2/players';
export const INSPECT = '/api/native/v1/link-intents/inspect';
export const APPROVE = '/api/native/v1/link-intents/approve';

export const LINK_TOKEN = /^cr_link_sandbox_[A-Za-z0-9_-]{43}$/;

const schemas = new SchemaSet({ ...commonSchemas, ...linksOpenApi.schemas });
const envelopes = new Map<string, ReturnType<SchemaSet['compile']>>();

/** Asserts a 200 whose body is exactly `{ data: <schemaName> }` (strict: no extra fields). */
export function expectData<T = any>(response: ApiResponse, schemaName: string): T {
  if (response.status !== 200) {
    throw new Error(`expected 200 ${schemaName}, got ${response.status} ${JSON.stringify(response.body)}`);
  }
  let validate = envelopes.get(schemaName);
  if (!validate) {
    validate = schemas.compile(dataEnvelope(schemaName));
    envelopes.set(schemaName, validate);
  }
  if (!validate(response.body)) {
    throw new Error(
      `${schemaName} does not match: ${JSON.stringify(validate.errors)} in ${JSON.stringify(response.body)}`,
    );
  }
  return (response.body as { data: T }).data;
}

/** Asserts an error answer `{ error: { code, message } }` with this status and code (extra fields only if allowed). */
export function expectError(response: ApiResponse, status: number, code: string, options: { extra?: boolean } = {}) {
  const validate = schemas.named('ErrorEnvelope');
  const body = response.body as { error?: { code?: string; message?: unknown } };
  const shapeOk = options.extra ? typeof body?.error?.message === 'string' : validate(body);
  if (response.status !== status || !shapeOk || body.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${response.status} ${JSON.stringify(response.body)}`);
  }
}

export interface Game {
  organizationId: string;
  projectId: string;
  gameId: string;
  gameName: string;
  secretKey: string;
  secretKeyId: string;
  publicKey: string;
  /** The developer's session token (console). */
  token: string;
}

/** A funded game with an active rule `level.up` (reward 5), a secret and a public key. */
export async function gameWithKeys(system: TestSystem, options: { gameBudget?: number } = {}): Promise<Game> {
  const dev = await developer(system);
  const w = await world(system, dev.token, { gameBudget: options.gameBudget ?? 1_000 });
  await ok(system, dev.token, { type: 'createRule', gameId: w.gameId, eventType: 'level.up', rewardCredits: 5 });
  const secret = await ok(system, dev.token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'server' });
  const pub = await ok(system, dev.token, { type: 'issueKey', gameId: w.gameId, kind: 'public', name: 'client' });
  return {
    ...w,
    gameName: 'Game',
    secretKey: secret.issuedKey!,
    secretKeyId: secret.id,
    publicKey: pub.issuedKey!,
    token: dev.token,
  };
}

export function createIntent(system: TestSystem, key: string, body: unknown): Promise<ApiResponse> {
  return api(system.url, 'POST', LINK_INTENTS, { token: key, body });
}

/** Creates an intent that must succeed. */
export async function intent(
  system: TestSystem,
  game: Game,
  externalPlayerId = `player-${randomUUID().slice(0, 8)}`,
): Promise<{ playerId: string; linkToken: string; expiresAt: string; externalPlayerId: string }> {
  const data = expectData(await createIntent(system, game.secretKey, { externalPlayerId }), 'LinkIntentResult');
  return { ...data, externalPlayerId };
}

/** The native headers that pass admission on a system with SUPPORTED_COUNTRIES including DE and build 100. */
export const NATIVE_CLIENT = {
  'X-Client-Country': 'DE',
  'X-Client-Build': '100',
  'X-Client-Capabilities': 'challenge-v1',
};

export interface NativeSession {
  token: string;
  sub: string;
  sid: string;
  headers: Record<string, string>;
}

/** A native session that passes all five admission checks (a device permit for its sid in enforce mode). */
export async function nativeSession(system: TestSystem, options: { username?: string; sub?: string } = {}) {
  const session = await nativeToken(system, options);
  const permit = await admin(system, 'POST', '/device-permits', {
    sessionId: session.sid,
    creditsUserId: session.sub,
    expiresInSeconds: 3600,
  });
  if (permit.status !== 200) throw new Error(`device permit failed: ${permit.status} ${JSON.stringify(permit.body)}`);
  return { ...session, headers: { ...NATIVE_CLIENT } } satisfies NativeSession;
}

export function native(
  system: TestSystem,
  path: string,
  session: { token: string; headers: Record<string, string> },
  body: unknown,
): Promise<ApiResponse> {
  return api(system.url, 'POST', path, { token: session.token, headers: session.headers, body });
}

export async function playerRow(system: TestSystem, playerId: string) {
  const rows = await sql(
    system.databaseUrl!,
    `select external_player_id, credits_user_id::text as credits_user_id, username, linked_at from ledger.players
      where id = $1`,
    [playerId],
  );
  return rows[0];
}

export async function intentRows(system: TestSystem, playerId: string): Promise<any[]> {
  return sql(
    system.databaseUrl!,
    `select consumed_at, consumed_by::text as consumed_by, expires_at - created_at as lifetime, token_hash
       from ledger.link_intents where player_id = $1 order by created_at`,
    [playerId],
  );
}
