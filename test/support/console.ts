// Shared steps of the console tests: actions over HTTP, strict checks of every response body against the schemas the
// gateway serves in /openapi.json, and fixtures written with SQL for what other programs own (players, events).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { consoleSchemaSet } from '../../gateway/src/rest/console.ts';
import { dataEnvelope } from '../../gateway/src/schemas/common.ts';
import { sql } from './database.ts';
import { type ApiResponse, api, invitedDeveloper, type TestSystem } from './system.ts';

export const CONSOLE = '/api/developer/v1/console';
export const RECORDS = '/api/developer/v1/records';

const envelopes = new Map<string, ReturnType<typeof consoleSchemaSet.compile>>();

/** Asserts a 200 whose body is exactly `{ data: <schemaName> }` (strict: no extra fields anywhere). */
export function expectData<T = any>(response: ApiResponse, schemaName: string): T {
  if (response.status !== 200) {
    throw new Error(`expected 200 ${schemaName}, got ${response.status} ${JSON.stringify(response.body)}`);
  }
  let validate = envelopes.get(schemaName);
  if (!validate) {
    validate = consoleSchemaSet.compile(dataEnvelope(schemaName));
    envelopes.set(schemaName, validate);
  }
  if (!validate(response.body)) {
    throw new Error(
      `${schemaName} body does not match its schema: ${JSON.stringify(validate.errors)} in ${JSON.stringify(response.body)}`,
    );
  }
  return (response.body as { data: T }).data;
}

/** Asserts an error answer with exactly the envelope `{ error: { code, message } }`. */
export function expectError(response: ApiResponse, status: number, code: string): void {
  const validate = consoleSchemaSet.named('ErrorEnvelope');
  if (
    response.status !== status ||
    !validate(response.body) ||
    (response.body as { error: { code: string } }).error.code !== code
  ) {
    throw new Error(`expected ${status} ${code}, got ${response.status} ${JSON.stringify(response.body)}`);
  }
}

export function act(system: TestSystem, token: string, action: Record<string, unknown>): Promise<ApiResponse> {
  return api(system.url, 'POST', CONSOLE, { token, body: action });
}

/** Runs an action that must succeed; returns its result. */
export async function ok(
  system: TestSystem,
  token: string,
  action: Record<string, unknown>,
): Promise<{ id: string; mode: 'sandbox'; issuedKey?: string; kind?: string; secret?: string }> {
  return expectData(await act(system, token, action), 'DeveloperActionResult');
}

export async function snapshot(system: TestSystem, token: string): Promise<any> {
  return expectData(await api(system.url, 'GET', CONSOLE, { token }), 'DeveloperSnapshot');
}

/** The identity subject `developerToken` gives an e-mail by default. */
export function subjectOf(email: string): string {
  return `dev|${createHash('sha256').update(email.toLowerCase()).digest('hex').slice(0, 24)}`;
}

export interface Developer {
  email: string;
  token: string;
  sub: string;
}

export async function developer(
  system: TestSystem,
  options: { canCreateUnlimitedOrganization?: boolean } = {},
): Promise<Developer> {
  const { email, token } = await invitedDeveloper(system, undefined, options);
  return { email, token, sub: subjectOf(email) };
}

export interface World {
  organizationId: string;
  projectId: string;
  gameId: string;
}

/** An organization funded with `fund`, a project with `projectBudget` of it, a game with `gameBudget`. */
export async function world(
  system: TestSystem,
  token: string,
  options: { fund?: number; projectBudget?: number; gameBudget?: number; ceiling?: number } = {},
): Promise<World> {
  const fund = options.fund ?? 10_000;
  const projectBudget = options.projectBudget ?? 5_000;
  const gameBudget = options.gameBudget ?? 1_000;
  const ceiling = options.ceiling ?? 100_000;
  const organizationId = (await ok(system, token, { type: 'createOrganization', name: 'Org' })).id;
  if (fund > 0) await ok(system, token, { type: 'fundOrganization', organizationId, amountCredits: fund });
  const projectId = (
    await ok(system, token, { type: 'createProject', organizationId, name: 'Project', maxPayoutCredits: ceiling })
  ).id;
  if (projectBudget > 0) {
    await ok(system, token, { type: 'allocateProject', projectId, amountCredits: projectBudget });
  }
  const gameId = (
    await ok(system, token, {
      type: 'createGame',
      projectId,
      name: 'Game',
      platform: 'web',
      maxPayoutCredits: ceiling,
      dailyPlayerCapCredits: 100,
    })
  ).id;
  if (gameBudget > 0) await ok(system, token, { type: 'allocateGame', gameId, amountCredits: gameBudget });
  return { organizationId, projectId, gameId };
}

/** Adds `member` to the organization with a role (via the owner's addMember). */
export async function addMember(
  system: TestSystem,
  ownerToken: string,
  organizationId: string,
  member: Developer,
  role: 'admin' | 'viewer',
): Promise<string> {
  return (await ok(system, ownerToken, { type: 'addMember', organizationId, identityUserId: member.sub, role })).id;
}

// ---- rows other programs write (links, ingest), inserted directly ----

export async function insertPlayer(
  system: TestSystem,
  gameId: string,
  options: { linked?: boolean; createdAt?: string; externalPlayerId?: string } = {},
): Promise<string> {
  const id = randomUUID();
  const linked = options.linked ?? true;
  await sql(
    system.databaseUrl!,
    `insert into ledger.players (id, game_id, organization_id, external_player_id, credits_user_id, username, linked_at,
                                 created_at)
     select $1, g.id, g.organization_id, $2, $3, $4, case when $3::uuid is null then null else now() end,
            coalesce($5::timestamptz, clock_timestamp())
       from ledger.games g where g.id = $6`,
    [
      id,
      options.externalPlayerId ?? `player-${id.slice(0, 8)}`,
      linked ? randomUUID() : null,
      linked ? 'someone' : null,
      options.createdAt ?? null,
      gameId,
    ],
  );
  return id;
}

/** Inserts `count` event decisions of one player (a key is created with SQL for their key_id). */
export async function insertEvents(
  system: TestSystem,
  gameId: string,
  playerId: string,
  count: number,
  options: { sameCreatedAt?: boolean } = {},
): Promise<void> {
  const url = system.databaseUrl!;
  const keyId = randomUUID();
  await sql(
    url,
    `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, public_key, key_hash)
     select $1, g.id, g.organization_id, 'secret', 'fixture', 'cr_sk_sandbox_AAAAAA', null, $2
       from ledger.games g where g.id = $3`,
    [keyId, randomBytes(32), gameId],
  );
  // created_at: distinct microseconds by default (one per row), or one shared instant to exercise the id tiebreak.
  await sql(
    url,
    `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                occurred_at, status, reason, reward_credits, payload_hash, created_at)
     select gen_random_uuid(), g.id, g.project_id, g.organization_id, gen_random_uuid(), $1, $2, 'level.up',
            now(), case when i % 2 = 0 then 'accepted' else 'rejected' end,
            case when i % 2 = 0 then null else 'daily_player_cap' end,
            case when i % 2 = 0 then 5 else 0 end, sha256(i::text::bytea),
            case when $5 then now() else now() - make_interval(secs => i / 1000.0) end
       from ledger.games g, generate_series(1, $3) i where g.id = $4`,
    [playerId, keyId, count, gameId, options.sameCreatedAt ?? false],
  );
}

let fixtureClockMs = 0;

/**
 * The next window of `count` milliseconds for time-ordered fixture rows: it starts now or after the previous window,
 * whichever is later, so that batches inserted one after another never interleave, whatever their games.
 */
export function nextFixtureWindow(count: number): Date {
  const start = Math.max(Date.now(), fixtureClockMs + 1);
  fixtureClockMs = start + count;
  return new Date(start);
}

/**
 * Inserts `count` players of one game in one statement, with explicit creation times: `from`, then one millisecond
 * apart (`from` defaults to the next fixture window). Ids in creation order.
 */
export async function insertPlayers(
  system: TestSystem,
  gameId: string,
  count: number,
  options: { linked?: boolean; from?: Date } = {},
): Promise<string[]> {
  const linked = options.linked ?? true;
  const from = options.from ?? nextFixtureWindow(count);
  const rows = await sql<{ id: string; i: number }>(
    system.databaseUrl!,
    `insert into ledger.players (id, game_id, organization_id, external_player_id, credits_user_id, username, linked_at,
                                 created_at)
     select gen_random_uuid(), g.id, g.organization_id, 'bulk-' || i || '-' || gen_random_uuid(),
            case when $2 then gen_random_uuid() end, case when $2 then 'player ' || i end,
            case when $2 then now() end, $4::timestamptz + make_interval(secs => i / 1000.0)
       from ledger.games g, generate_series(0, $3 - 1) i
      where g.id = $1
     returning id::text as id, extract(epoch from created_at) as at`,
    [gameId, linked, count, from.toISOString()],
  );
  return rows.sort((a: any, b: any) => Number(a.at) - Number(b.at)).map((r) => r.id);
}
