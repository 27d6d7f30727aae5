// Many tenants and their decisions, written in SQL with generate_series (the tenant-reads test and bench:reads):
// organization n (from 1) has one member (the identity `tenantIdentity(n)`, its owner), one project, GAMES games and
// PLAYERS players per game; each game one secret key and one rule. Every other player is linked (an account id and a
// linking time). Decisions go to a range of games, round-robin over the games and their players, half accepted,
// half rejected, each 1 ms older than the one before (so that every tenant's decisions interleave in time, the case
// where a read over the whole table finds other tenants' rows first). Ids are deterministic and ascending, so the
// primary keys and indexes are appended to, not split at random places: a million decisions take seconds.
// The rows satisfy every constraint (the foreign keys, decision_shape, one decision per event id and game); they
// are not a ledger's history (no spending, no daily totals): they are for reads.
import type pg from 'pg';

export const GAMES_PER_ORGANIZATION = 2;
export const PLAYERS_PER_GAME = 10;
export const TENANT_EVENT_TYPE = 'level.complete';

/** The identity that is organization n's member. */
export const tenantIdentity = (n: number) => `tenant-${n}`;

/** A deterministic uuid: the kind's first digit, the number in the last group (hex). */
const id = (kind: number | string, n: string) =>
  `('${kind}0000000-0000-4000-8000-' || lpad(to_hex(${n}), 12, '0'))::uuid`;
const ORGANIZATION = (n: string) => id(1, n);
const PROJECT = (n: string) => id(2, n);
const GAME = (g: string) => id(3, g);
const KEY = (g: string) => id(4, g);
const PLAYER = (g: string, p: string) => id(6, `(${g}) * ${PLAYERS_PER_GAME} + (${p})`);

/** Organization n's id, and its games' (games n*G-G+1 .. n*G). */
export function tenantIds(n: number): { organizationId: string; projectId: string; gameIds: string[] } {
  const uuid = (kind: number, value: number) => `${kind}0000000-0000-4000-8000-${value.toString(16).padStart(12, '0')}`;
  const first = (n - 1) * GAMES_PER_ORGANIZATION + 1;
  return {
    organizationId: uuid(1, n),
    projectId: uuid(2, n),
    gameIds: Array.from({ length: GAMES_PER_ORGANIZATION }, (_, k) => uuid(3, first + k)),
  };
}

/** Organizations first .. first + count - 1 with their member, project, games, keys, rules and players. */
export async function createTenants(client: pg.ClientBase, first: number, count: number): Promise<void> {
  const last = first + count - 1;
  const G = GAMES_PER_ORGANIZATION;
  await client.query('begin');
  await client.query(
    `insert into ledger.organizations (id, name, unlimited_funding, created_by)
     select ${ORGANIZATION('n')}, 'tenant ' || n, true, 'tenants' from generate_series($1::int, $2::int) n`,
    [first, last],
  );
  await client.query(
    `insert into ledger.members (id, organization_id, identity_user_id, role, joined_at)
     select ${id(7, 'n')}, ${ORGANIZATION('n')}, 'tenant-' || n, 'owner', now() from generate_series($1::int, $2::int) n`,
    [first, last],
  );
  await client.query(
    `insert into ledger.projects (id, organization_id, name, max_payout_credits)
     select ${PROJECT('n')}, ${ORGANIZATION('n')}, 'project', 1000000 from generate_series($1::int, $2::int) n`,
    [first, last],
  );
  // Game g belongs to organization (g - 1) / G + 1.
  const games = `generate_series(($1::int - 1) * ${G} + 1, $2::int * ${G}) g`;
  const organizationOfGame = ORGANIZATION(`(g - 1) / ${G} + 1`);
  await client.query(
    `insert into ledger.games (id, project_id, organization_id, slug, name, platform, max_payout_credits,
                               daily_player_cap_credits)
     select ${GAME('g')}, ${PROJECT(`(g - 1) / ${G} + 1`)}, ${organizationOfGame}, ${id(5, 'g')}, 'game ' || g, 'web',
            1000000, 100
       from ${games}`,
    [first, last],
  );
  await client.query(
    `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, key_hash)
     select ${KEY('g')}, ${GAME('g')}, ${organizationOfGame}, 'secret', 'key', 'cr_sk_sandbox_AAAAAA',
            sha256(('key ' || g)::bytea)
       from ${games}`,
    [first, last],
  );
  await client.query(
    `insert into ledger.rules (id, game_id, organization_id, event_type, reward_credits)
     select ${id(8, 'g')}, ${GAME('g')}, ${organizationOfGame}, '${TENANT_EVENT_TYPE}', 5 from ${games}`,
    [first, last],
  );
  await client.query(
    `insert into ledger.players (id, game_id, organization_id, external_player_id, credits_user_id, linked_at,
                                 created_at)
     select ${PLAYER('g', 'p')}, ${GAME('g')}, ${organizationOfGame}, 'player-' || p,
            case when p % 2 = 0 then ${id(9, `g * ${PLAYERS_PER_GAME} + p`)} end,
            case when p % 2 = 0 then now() end, now() - make_interval(secs => g * ${PLAYERS_PER_GAME} + p)
       from ${games}, generate_series(0, ${PLAYERS_PER_GAME - 1}) p`,
    [first, last],
  );
  await client.query('commit');
}

/**
 * `count` decisions numbered first .. first + count - 1 (their ids), spread round-robin over the games of
 * organizations `organizations.first` .. `organizations.last`, the newest received at `newest`, each next one 1 ms
 * older. One statement.
 */
export async function insertDecisions(
  client: pg.ClientBase,
  q: { first: number; count: number; organizations: { first: number; last: number }; newest: Date },
): Promise<void> {
  const G = GAMES_PER_ORGANIZATION;
  const firstGame = (q.organizations.first - 1) * G + 1;
  const gameCount = (q.organizations.last - q.organizations.first + 1) * G;
  // Row i (from 0): game firstGame + i mod games, player (i / games) mod PLAYERS.
  const game = `($3::int + i % $4::int)`;
  // The rows are built to satisfy the foreign keys: their checks (triggers) are skipped, a third of the time.
  await client.query('begin');
  await client.query(`set local session_replication_role = replica`);
  await client.query(
    `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                occurred_at, status, reason, reward_credits, payload_hash, created_at)
     select ${id('a', '$1::bigint + i')}, ${GAME(game)}, ${PROJECT(`(${game} - 1) / ${G} + 1`)},
            ${ORGANIZATION(`(${game} - 1) / ${G} + 1`)}, ${id('b', '$1::bigint + i')},
            ${PLAYER(game, `(i / $4::int) % ${PLAYERS_PER_GAME}`)}, ${KEY(game)}, '${TENANT_EVENT_TYPE}',
            $5::timestamptz - make_interval(secs => i / 1000.0),
            case when i % 2 = 0 then 'accepted' else 'rejected' end,
            case when i % 2 = 0 then null else 'daily_player_cap' end,
            case when i % 2 = 0 then 5 else 0 end, sha256(int8send(i)),
            $5::timestamptz - make_interval(secs => i / 1000.0)
       from generate_series(0::bigint, $2::bigint - 1) i`,
    [q.first, q.count, firstGame, gameCount, q.newest.toISOString()],
  );
  await client.query('commit');
}
