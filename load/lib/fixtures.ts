// The benches' fixtures (bench:ledger, bench:sql): one organization and project, GAMES games with one rule, one
// secret key and PLAYERS linked players each, named so that pgbench can compute them from a game and player number.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { CREDITS_MAX } from '#runtime/contracts/vocabulary.ts';
import { installSingleEventFunction, recordEventStatement } from './single-event.ts';

export const EVENT_TYPE = 'bench.play';
export const RATE_LIMIT = 1_000_000; // the largest EVENT_RATE_LIMIT_PER_MINUTE: the limiter counts, never refuses here

// Deterministic fixtures, so that pgbench can name them with arithmetic: game g's secret key hashes to
// sha256('bench-key-<g>'), player p of game g is 00000000-0000-4000-8000-<g * 10000 + p, 12 digits>.
const keyHashes = new Map<number, Buffer>();
export const keyHash = (g: number) => {
  let hash = keyHashes.get(g);
  if (!hash) {
    hash = createHash('sha256').update(`bench-key-${g}`).digest();
    keyHashes.set(g, hash);
  }
  return hash;
};
export const playerId = (g: number, p: number) => `00000000-0000-4000-8000-${String(g * 10_000 + p).padStart(12, '0')}`;

export async function createFixtures(url: string, options: { games: number; players: number }): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const big = CREDITS_MAX;
    await client.query('begin');
    await client.query(
      `insert into ledger.organizations (id, name, created_by) values ('00000000-0000-4000-8000-000000000001', 'Bench', 'bench')`,
    );
    await client.query(
      `insert into ledger.projects (id, organization_id, name, max_payout_credits, budget_credits, allocated_credits)
       values ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'Bench', $1, $1, $1)`,
      [big],
    );
    // Every game gets an equal share of the project budget: far more than a run can spend.
    const share = Math.floor(big / options.games);
    await client.query(
      `insert into ledger.games (id, project_id, organization_id, slug, name, platform, max_payout_credits,
         budget_credits, daily_player_cap_credits)
       select ('00000000-0000-4000-9000-' || lpad(g::text, 12, '0'))::uuid, '00000000-0000-4000-8000-000000000002',
         '00000000-0000-4000-8000-000000000001', gen_random_uuid(), 'Bench ' || g, 'web', $2, $2, $3
       from generate_series(1, $1::int) g`,
      [options.games, share, big],
    );
    await client.query(
      `insert into ledger.rules (id, game_id, organization_id, event_type, reward_credits)
       select gen_random_uuid(), ('00000000-0000-4000-9000-' || lpad(g::text, 12, '0'))::uuid,
         '00000000-0000-4000-8000-000000000001', $2, 1
       from generate_series(1, $1::int) g`,
      [options.games, EVENT_TYPE],
    );
    await client.query(
      `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, key_hash)
       select gen_random_uuid(), ('00000000-0000-4000-9000-' || lpad(g::text, 12, '0'))::uuid,
         '00000000-0000-4000-8000-000000000001', 'secret', 'bench', 'cr_sk_sandbox_bench',
         sha256(convert_to('bench-key-' || g, 'UTF8'))
       from generate_series(1, $1::int) g`,
      [options.games],
    );
    await client.query(
      `insert into ledger.players (id, game_id, organization_id, external_player_id, credits_user_id, username, linked_at)
       select ('00000000-0000-4000-8000-' || lpad((g * 10000 + p)::text, 12, '0'))::uuid,
         ('00000000-0000-4000-9000-' || lpad(g::text, 12, '0'))::uuid, '00000000-0000-4000-8000-000000000001',
         'player-' || p, gen_random_uuid(), 'bench', now()
       from generate_series(1, $1::int) g, generate_series(1, $2::int) p`,
      [options.games, options.players],
    );
    await client.query(
      `insert into identity.native_accounts (credits_user_id, status, username)
       select credits_user_id, 'active', 'bench' from ledger.players`,
    );
    await client.query('commit');
    await client.query('analyze');
  } finally {
    await client.end();
  }
  await installSingleEventFunction(url); // SINGLE_EVENT_SCRIPT's function
}

/**
 * One call of ledger.record_events (or `fn`, a function of the same arguments) with k fresh events, as one SQL
 * statement for a pgbench script: `keys` is the SQL of its key-hash array, `player` the SQL of event i's player id
 * (text; `i` is 0-based); each event a new id, the fixtures' event type, occurredAt = now, a random payload hash,
 * receipt = now() (null), the fixtures' rate limit.
 */
export function recordEventsCallSql(k: number, parts: { fn?: string; keys: string; player: string }): string {
  return `select count(*) from ${parts.fn ?? 'ledger.record_events'}(${parts.keys},
  array(select gen_random_uuid() from generate_series(1, ${k})),
  array(select (${parts.player})::uuid from generate_series(0, ${k - 1}) i),
  array_fill('${EVENT_TYPE}'::text, array[${k}]),
  array_fill((extract(epoch from clock_timestamp()) * 1000)::bigint, array[${k}]),
  (select string_agg(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), ''::bytea) from generate_series(1, ${k})),
  array_fill(null::timestamptz, array[${k}]),
  ${RATE_LIMIT}, null::text[], null::uuid[]);
`.replace(/\n\s+/g, ' ');
}

// The single-event statement (RECORD_EVENT_SQL, single-event.ts), its parameters replaced by SQL expressions of the
// same values: game g's key hash, a new event id, player p of game g, the event type, occurredAt = now in epoch
// milliseconds, a random payload hash, receipt = now() (null), the rate limit. pgbench turns :g and :p into
// parameters of the prepared statement.
const SINGLE_EVENT_ARGUMENTS = [
  `sha256(convert_to('bench-key-' || :g, 'UTF8'))`,
  'gen_random_uuid()',
  `('00000000-0000-4000-8000-' || lpad((:g * 10000 + :p)::text, 12, '0'))::uuid`,
  `'${EVENT_TYPE}'`,
  '(extract(epoch from clock_timestamp()) * 1000)::bigint',
  `sha256(convert_to(gen_random_uuid()::text, 'UTF8'))`,
  'null',
  String(RATE_LIMIT),
];

/**
 * pgbench's baseline in every bench: today's single-event statement (ledger.record_event, one event per
 * transaction) for a random player of a random game; run it with `-D games=N -D players=M`.
 */
export const SINGLE_EVENT_SCRIPT = `\\set g random(1, :games)
\\set p random(1, :players)
${recordEventStatement(SINGLE_EVENT_ARGUMENTS)}
`;

/** One enabled endpoint per game, subscribed to every event type (the secret: random bytes, never read here). */
export async function createWebhookEndpoints(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `insert into ledger.webhook_endpoints (id, game_id, organization_id, url, event_types, secret_ciphertext)
       select gen_random_uuid(), g.id, g.organization_id, 'https://hooks.example.com/in',
              array['decision.accepted', 'decision.rejected', 'game.budget_low', 'game.budget_exhausted',
                    'game.paused', 'game.resumed'], $1
         from ledger.games g`,
      [randomBytes(60)],
    );
  } finally {
    await client.end();
  }
}
