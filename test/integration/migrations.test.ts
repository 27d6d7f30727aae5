// The committed migrations create both schemas, on real PostgreSQL and on PGlite, and the database itself refuses
// an overspend written by hand.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { EVENT_TYPE_PATTERN, GAME_STATUSES, PLATFORMS } from '#runtime/contracts/vocabulary.ts';
import { migrate } from '#runtime/db/database.ts';
import { startEmbeddedPostgres } from '#runtime/db/embedded.ts';
import { applyRepeatables, repeatableSql } from '#runtime/db/repeatable.ts';
import { identityMigrations } from '../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../services/ledger/src/migrations/index.ts';
import { createTestDatabase, sql } from '../support/database.ts';

const logger = pino({ level: 'silent' });

const pools: pg.Pool[] = [];
async function poolOf(url: string): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pools.push(pool);
  return pool;
}
async function closePools() {
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
}
const sets = [identityMigrations, ledgerMigrations];

async function expectSchemas(url: string) {
  const schemas = await sql<{ nspname: string }>(
    url,
    `select nspname from pg_namespace where nspname in ('ledger','identity') order by 1`,
  );
  expect(schemas.map((r) => r.nspname)).toEqual(['identity', 'ledger']);
  const applied = await sql<{ name: string }>(url, 'select name from ledger.mikro_orm_migrations order by id');
  expect(applied.map((r) => r.name)).toEqual(ledgerMigrations.migrations.map((m) => m.name));
  await expectFunctionsAsInFiles(url);
  await expectConstraintsAsVocabulary(url);
}

/** The database's CHECK constraints spell the vocabulary's rules (the one other spelling; migrations are history). */
async function expectConstraintsAsVocabulary(url: string) {
  const checks = await sql<{ table: string; def: string }>(
    url,
    `select c.conrelid::regclass::text as table, pg_get_constraintdef(c.oid) as def
     from pg_constraint c join pg_namespace n on n.oid = c.connamespace
     where n.nspname = 'ledger' and c.contype = 'c'`,
  );
  const quoted = (def: string) => [...def.matchAll(/'([^']*)'::text/g)].map((m) => m[1]).sort();
  const on = (table: string, column: string) =>
    checks.filter((c) => c.table === table && new RegExp(`\\(?${column}\\b`).test(c.def)).map((c) => c.def);
  expect(on('ledger.games', 'platform').map(quoted)).toEqual([[...PLATFORMS].sort()]);
  expect(on('ledger.games', 'status').map(quoted)).toEqual([[...GAME_STATUSES].sort()]);
  const eventTypeChecks = checks.filter((c) => c.def.includes('event_type ~'));
  expect(eventTypeChecks.map((c) => c.table).sort()).toEqual(['ledger.events', 'ledger.rules']);
  for (const check of eventTypeChecks) expect(quoted(check.def)).toEqual([EVENT_TYPE_PATTERN]);
}

/**
 * Each repeatable migration's file is what the database runs: its recorded checksum is the file's, and the body of
 * the function it defines (between the `$fn$` quotes) is the function's source in pg_proc, with the file's settings.
 */
async function expectFunctionsAsInFiles(url: string) {
  const repeatables = ledgerMigrations.repeatables ?? [];
  expect(repeatables.map((r) => r.name)).toEqual(['decision_reason', 'record_events', 'simulate_rule']);
  // The single-event ledger.record_event (the benchmarks' baseline, load/sql/record_event.sql) is no program's: 0003
  // created it, 0011 drops it, and its repeatable migration's record goes with it.
  const singleEvent = await sql<{ n: number }>(
    url,
    `select count(*)::int as n from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = 'ledger' and p.proname = 'record_event'`,
  );
  expect(singleEvent).toEqual([{ n: 0 }]);
  expect(await sql(url, `select name from ledger.repeatable_migrations where name = 'record_event'`)).toEqual([]);
  for (const repeatable of repeatables) {
    const { text, checksum } = repeatableSql(repeatable);
    const [recorded] = await sql<{ checksum: string }>(
      url,
      'select checksum from ledger.repeatable_migrations where name = $1',
      [repeatable.name],
    );
    expect(recorded?.checksum).toBe(checksum);
    const [header, body] = text.split('$fn$');
    // The function's settings (its `set name = value` clauses, e.g. record_events' plan_cache_mode) are the file's.
    const settings = [...(header ?? '').matchAll(/^\s*set (\w+) = (\S+)\s*$/gm)].map(
      ([, name, value]) => `${name}=${value}`,
    );
    // A file may also keep previous signatures as SQL functions calling the current one ($compat$ quotes).
    const compats = text.split('$compat$').filter((_, index) => index % 2 === 1);
    const functions = await sql<{ prosrc: string; proconfig: string[] | null }>(
      url,
      `select p.prosrc, p.proconfig from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'ledger' and p.proname = $1`,
      [repeatable.name],
    );
    const bySource = (a: { prosrc: string }, b: { prosrc: string }) => a.prosrc.localeCompare(b.prosrc);
    const expected = [{ prosrc: body ?? '', proconfig: settings }];
    for (const compat of compats) expected.push({ prosrc: compat, proconfig: [] });
    expect(functions.map((f) => ({ prosrc: f.prosrc, proconfig: f.proconfig ?? [] })).sort(bySource)).toEqual(
      expected.sort(bySource),
    );
  }
}

async function insertGame(url: string) {
  const org = '11111111-1111-4111-8111-111111111111';
  const project = '22222222-2222-4222-8222-222222222222';
  const game = '33333333-3333-4333-8333-333333333333';
  await sql(url, `insert into ledger.organizations (id, name, created_by) values ($1, 'Org', 'sub')`, [org]);
  await sql(
    url,
    `insert into ledger.projects (id, organization_id, name, max_payout_credits, budget_credits, allocated_credits)
                  values ($1, $2, 'P', 1000, 500, 100)`,
    [project, org],
  );
  await sql(
    url,
    `insert into ledger.games (id, project_id, organization_id, slug, name, platform, max_payout_credits,
                  budget_credits, spent_credits, daily_player_cap_credits)
                  values ($1, $2, $3, gen_random_uuid(), 'G', 'web', 1000, 100, 0, 50)`,
    [game, project, org],
  );
  return { org, project, game };
}

describe('migrations on real PostgreSQL', () => {
  let url: string;
  beforeAll(async () => {
    url = await createTestDatabase();
    await migrate(url, sets, logger);
  });

  it('create the ledger and identity schemas and record the applied migrations', async () => {
    await expectSchemas(url);
  });

  it('are idempotent: a second run applies nothing and keeps the data', async () => {
    await sql(url, `update identity.platform_state set enabled = false`);
    await migrate(url, sets, logger);
    expect(await sql(url, 'select enabled from identity.platform_state')).toEqual([{ enabled: false }]);
  }, 120_000);

  it('apply a repeatable migration again when its file changes, and only then', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rewards-repeatable-'));
    try {
      const file = join(dir, 'probe.sql');
      const set = {
        schema: 'ledger' as const,
        migrations: ledgerMigrations.migrations,
        repeatables: [{ name: 'probe', file: new URL(`file://${file}`) }],
      };
      const probe = async () => (await sql<{ v: number }>(url, 'select ledger.repeatable_probe() as v'))[0]?.v;
      writeFileSync(
        file,
        'create or replace function ledger.repeatable_probe() returns int language sql as $$ select 1 $$;',
      );
      expect(await applyRepeatables(await poolOf(url), set, logger)).toEqual(['probe']);
      expect(await probe()).toBe(1);
      expect(await applyRepeatables(await poolOf(url), set, logger)).toEqual([]);
      writeFileSync(
        file,
        'create or replace function ledger.repeatable_probe() returns int language sql as $$ select 2 $$;',
      );
      expect(await applyRepeatables(await poolOf(url), set, logger)).toEqual(['probe']);
      expect(await probe()).toBe(2);
      // A failing file changes nothing: its transaction is rolled back and its old checksum stays.
      writeFileSync(file, 'drop function ledger.repeatable_probe(); select no_such_function();');
      await expect(applyRepeatables(await poolOf(url), set, logger)).rejects.toThrow(/ledger\/probe failed/);
      expect(await probe()).toBe(2);
      // A program older than the schema (it lacks the newest versioned migration: a pod of the previous release)
      // leaves the newer body in place.
      writeFileSync(
        file,
        'create or replace function ledger.repeatable_probe() returns int language sql as $$ select 1 $$;',
      );
      const older = { ...set, migrations: ledgerMigrations.migrations.slice(0, -1) };
      expect(await applyRepeatables(await poolOf(url), older, logger)).toEqual([]);
      expect(await probe()).toBe(2);
      await sql(url, 'drop function ledger.repeatable_probe()');
      await sql(url, `delete from ledger.repeatable_migrations where name = 'probe'`);
    } finally {
      await closePools();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('let a CHECK constraint refuse an overspend written by hand', async () => {
    const { game, org, project } = await insertGame(url);
    await expect(sql(url, `update ledger.games set spent_credits = 101 where id = $1`, [game])).rejects.toThrow(
      /game_spent_within_budget/,
    );
    await expect(sql(url, `update ledger.organizations set balance_credits = -1 where id = $1`, [org])).rejects.toThrow(
      /balance_credits_check/,
    );
    await expect(sql(url, `update ledger.projects set budget_credits = 1001 where id = $1`, [project])).rejects.toThrow(
      /project_budget_within_ceiling/,
    );
    await expect(sql(url, `update ledger.games set spent_credits = 100 where id = $1`, [game])).resolves.toEqual([]);
  });

  it('drop the single-event record_event of a database of an earlier release (0011)', async () => {
    // An earlier release: migrations up to 0010, with record_event kept current by a repeatable migration.
    const before = ledgerMigrations.migrations.findIndex((m) => m.name === '0011-drop-single-event');
    expect(before).toBeGreaterThan(0);
    const old = await createTestDatabase();
    const singleEvent = { name: 'record_event', file: new URL('../../load/sql/record_event.sql', import.meta.url) };
    await migrate(
      old,
      [
        identityMigrations,
        {
          ...ledgerMigrations,
          migrations: ledgerMigrations.migrations.slice(0, before),
          repeatables: [...(ledgerMigrations.repeatables ?? []), singleEvent],
        },
      ],
      logger,
    );
    expect(await sql(old, `select name from ledger.repeatable_migrations where name = 'record_event'`)).toHaveLength(1);
    await migrate(old, sets, logger);
    await expectSchemas(old);
  }, 120_000);

  it('give existing daily totals the game of their player (0008) and refuse a player of another game', async () => {
    // A database of the previous version, with a daily total, then this version's migrations on it.
    const before = ledgerMigrations.migrations.findIndex((m) => m.name === '0008-distributable-by-game');
    expect(before).toBeGreaterThan(0);
    const old = await createTestDatabase();
    await migrate(
      old,
      [identityMigrations, { ...ledgerMigrations, migrations: ledgerMigrations.migrations.slice(0, before) }],
      logger,
    );
    const { game, org, project } = await insertGame(old);
    const player = '44444444-4444-4444-8444-444444444444';
    await sql(
      old,
      `insert into ledger.players (id, game_id, organization_id, external_player_id) values ($1, $2, $3, 'p')`,
      [player, game, org],
    );
    await sql(old, `insert into ledger.player_daily_totals (player_id, day, credits) values ($1, '2026-01-02', 7)`, [
      player,
    ]);

    await migrate(old, sets, logger);
    await expectSchemas(old);
    expect(
      await sql(old, 'select game_id, player_id, day::text, credits::int from ledger.player_daily_totals'),
    ).toEqual([{ game_id: game, player_id: player, day: '2026-01-02', credits: 7 }]);

    // Another game of the project: rows of that game cannot name the first game's player.
    const other = '55555555-5555-4555-8555-555555555555';
    await sql(
      old,
      `insert into ledger.games (id, project_id, organization_id, slug, name, platform, max_payout_credits,
                    daily_player_cap_credits) values ($1, $2, $3, gen_random_uuid(), 'H', 'web', 10, 5)`,
      [other, project, org],
    );
    await expect(
      sql(
        old,
        `insert into ledger.player_daily_totals (game_id, player_id, day, credits) values ($1, $2, '2026-01-02', 1)`,
        [other, player],
      ),
    ).rejects.toThrow(/player_daily_totals_player_of_game/);
    await expect(
      sql(
        old,
        `insert into ledger.link_intents (id, game_id, player_id, token_hash, expires_at)
         values (gen_random_uuid(), $1, $2, sha256('t'), now())`,
        [other, player],
      ),
    ).rejects.toThrow(/link_intents_player_of_game/);
    await expect(
      sql(
        old,
        `insert into ledger.link_intents (id, game_id, player_id, token_hash, expires_at)
         values (gen_random_uuid(), $1, $2, sha256('t'), now())`,
        [game, player],
      ),
    ).resolves.toEqual([]);
  }, 120_000);
});

describe('migrations on PGlite (the embedded default)', () => {
  it('create both schemas and enforce the same constraints', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rewards-pglite-'));
    const embedded = await startEmbeddedPostgres(dir);
    try {
      await migrate(embedded.url, sets, logger);
      await expectSchemas(embedded.url);
      const { game } = await insertGame(embedded.url);
      await expect(
        sql(embedded.url, `update ledger.games set spent_credits = 101 where id = $1`, [game]),
      ).rejects.toThrow(/game_spent_within_budget/);
    } finally {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
