// The ledger's schema stays distributable by game (docs/deploy.md, "Writes past one PostgreSQL: distributing the
// ledger by game (Citus)"; DESIGN.md "Growth beyond one machine"). Citus can distribute a table by a column only if
// every primary key, unique constraint and unique index of it includes that column, and can keep a foreign key
// between two distributed tables only if both are distributed by the columns it pairs (co-located). This reads the
// migrated schema's catalog (pg_constraint, pg_index) and names every constraint or index that would stop
// `create_distributed_table` / `create_reference_table` in the documented plan. Every table of the schema must be in
// one of the lists below: a new table is a decision (and a line in the docs), not an accident.
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../../services/identity-admission/src/migrations/index.ts';
import { ledgerMigrations } from '../../services/ledger/src/migrations/index.ts';
import { createTestDatabase, sql } from '../support/database.ts';

interface Layout {
  /** Distributed by game, co-located with games: each table and its game column (games: its id). */
  distributed: Record<string, string>;
  /** Reference tables (a copy on every node). */
  reference: string[];
  /** Left on the coordinator (Citus local tables). */
  coordinator: string[];
  /** Foreign keys from a reference table to a distributed one (`table.constraint`), which Citus cannot keep. */
  droppedWhenDistributing: string[];
  /**
   * Tables that are not distributable yet, each with why: listed so that every other table stays checked. Each is a
   * gap of the plan (docs/deploy.md) to close with a migration, not a place of its own.
   */
  notYetDistributable?: Record<string, string>;
}

/** The plan of docs/deploy.md, table by table. */
const LEDGER: Layout = {
  distributed: {
    games: 'id',
    rules: 'game_id',
    players: 'game_id',
    link_intents: 'game_id',
    events: 'game_id',
    player_daily_totals: 'game_id',
    game_minute_counters: 'game_id',
  },
  // keys: the event path finds a key by its hash alone (the request carries no game), so the table is replicated and
  // its key_hash stays unique across all games. The tombstones answer a token by its hash alone too.
  reference: ['settings', 'organizations', 'members', 'projects', 'keys', 'link_intent_tombstones'],
  coordinator: ['audit_log', 'mikro_orm_migrations', 'repeatable_migrations'],
  droppedWhenDistributing: ['keys.keys_game_id_fkey'],
  // The webhook tables (migrations 0014, 0015) hold game_id, but their keys do not lead with it yet: endpoints and messages
  // are keyed by id alone, attempts by (message_id, attempt) without a game column. To distribute them: primary keys
  // (id, game_id), game_id in webhook_attempts and in its foreign key to webhook_messages.
  notYetDistributable: {
    webhook_endpoints: 'primary key (id) without game_id',
    webhook_messages: 'primary key (id) without game_id',
    webhook_attempts: 'no game_id column',
    webhook_budget_notices: 'distributable by game_id, listed with the other webhook tables until they are',
    webhook_decision_batches: "no game_id column: one row holds a call's pairs, of several games (migration 0015)",
  },
};

interface TableRow {
  name: string;
}
interface ColumnRow {
  table: string;
  column: string;
  not_null: boolean;
}
interface IndexRow {
  table: string;
  index: string;
  constraint: string | null;
  contype: string | null;
  columns: string[] | null;
  definition: string;
}
interface ForeignKeyRow {
  table: string;
  constraint: string;
  target_schema: string;
  target: string;
  columns: string[];
  target_columns: string[];
  definition: string;
}

const KIND: Record<string, string> = { p: 'primary key', u: 'unique constraint', x: 'exclusion constraint' };

async function catalog(url: string, schema: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = (
      await client.query<TableRow>(
        `select c.relname as name from pg_class c
          where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p') order by 1`,
        [schema],
      )
    ).rows;
    const columns = (
      await client.query<ColumnRow>(
        `select c.relname as table, a.attname as column, a.attnotnull as not_null
           from pg_attribute a join pg_class c on c.oid = a.attrelid
          where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped`,
        [schema],
      )
    ).rows;
    // Unique and exclusion indexes with the constraint each one backs (if any); `columns`: the key columns only
    // (INCLUDE columns do not count), a null element for an expression.
    const indexes = (
      await client.query<IndexRow>(
        `select t.relname as table, ic.relname as index, con.conname as constraint, con.contype::text as contype,
                (select array_agg(a.attname::text order by k.n)
                   from unnest(i.indkey::int2[]) with ordinality as k(attnum, n)
                   left join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
                  where k.n <= i.indnkeyatts) as columns,
                pg_get_indexdef(i.indexrelid) as definition
           from pg_index i
           join pg_class t on t.oid = i.indrelid
           join pg_class ic on ic.oid = i.indexrelid
           left join pg_constraint con on con.conindid = i.indexrelid and con.conrelid = i.indrelid
                                        and con.contype in ('p', 'u', 'x')
          where t.relnamespace = $1::regnamespace and (i.indisunique or i.indisexclusion)
          order by 1, 2`,
        [schema],
      )
    ).rows;
    const foreignKeys = (
      await client.query<ForeignKeyRow>(
        `select t.relname as table, con.conname as constraint, tn.nspname as target_schema, tt.relname as target,
                (select array_agg(a.attname::text order by k.n) from unnest(con.conkey) with ordinality as k(attnum, n)
                   join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum) as columns,
                (select array_agg(a.attname::text order by k.n) from unnest(con.confkey) with ordinality as k(attnum, n)
                   join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.attnum) as target_columns,
                pg_get_constraintdef(con.oid) as definition
           from pg_constraint con
           join pg_class t on t.oid = con.conrelid
           join pg_class tt on tt.oid = con.confrelid
           join pg_namespace tn on tn.oid = tt.relnamespace
          where con.contype = 'f' and t.relnamespace = $1::regnamespace
          order by 1, 2`,
        [schema],
      )
    ).rows;
    return { tables, columns, indexes, foreignKeys };
  } finally {
    await client.end();
  }
}

/** What stops the layout in `schema`: one message per offending table, constraint or index (empty: none). */
async function distributionProblems(url: string, schema: string, layout: Layout): Promise<string[]> {
  const { tables, columns, indexes, foreignKeys } = await catalog(url, schema);
  const problems: string[] = [];
  const distributed = new Map(Object.entries(layout.distributed));
  const reference = new Set(layout.reference);
  const listed = [
    ...distributed.keys(),
    ...layout.reference,
    ...layout.coordinator,
    ...Object.keys(layout.notYetDistributable ?? {}),
  ];
  const present = new Set(tables.map((t) => t.name));

  for (const table of present) {
    const times = listed.filter((name) => name === table).length;
    if (times !== 1) {
      problems.push(
        `${schema}.${table}: listed ${times} times; say once whether it is distributed by game, a reference table or left on the coordinator`,
      );
    }
  }
  for (const table of new Set(listed)) {
    if (!present.has(table)) problems.push(`${schema}.${table}: listed, but there is no such table`);
  }

  for (const [table, gameColumn] of distributed) {
    if (!present.has(table)) continue;
    const column = columns.find((c) => c.table === table && c.column === gameColumn);
    if (!column) problems.push(`${schema}.${table}: has no game column ${gameColumn}`);
    else if (!column.not_null) problems.push(`${schema}.${table}: its game column ${gameColumn} may be null`);
  }

  for (const index of indexes) {
    const gameColumn = distributed.get(index.table);
    if (gameColumn === undefined || index.columns?.includes(gameColumn)) continue;
    const what = index.contype ? `${KIND[index.contype]} ${index.constraint}` : `unique index ${index.index}`;
    problems.push(
      `${schema}.${index.table}: ${what} does not include the game column ${gameColumn} (${index.definition})`,
    );
  }

  for (const fk of foreignKeys) {
    const what = `${schema}.${fk.table}: foreign key ${fk.constraint} (${fk.definition})`;
    const sameSchema = fk.target_schema === schema;
    const fromGame = distributed.get(fk.table);
    const toGame = sameSchema ? distributed.get(fk.target) : undefined;
    if (fromGame !== undefined) {
      if (toGame !== undefined) {
        // Co-located rows: the game column on this side must be paired with the game column on the other.
        const paired = fk.columns.some((column, i) => column === fromGame && fk.target_columns[i] === toGame);
        if (!paired) problems.push(`${what} does not pair ${fk.table}.${fromGame} with ${fk.target}.${toGame}`);
      } else if (!(sameSchema && reference.has(fk.target))) {
        problems.push(`${what} references a table that is neither distributed by game nor a reference table`);
      }
    } else if (reference.has(fk.table) && toGame !== undefined) {
      if (!layout.droppedWhenDistributing.includes(`${fk.table}.${fk.constraint}`)) {
        problems.push(`${what} goes from a reference table to a distributed one, which Citus cannot keep`);
      }
    }
  }
  for (const name of layout.droppedWhenDistributing) {
    const [table, constraint] = name.split('.');
    const found = foreignKeys.find((fk) => fk.table === table && fk.constraint === constraint);
    if (!found || !distributed.has(found.target)) {
      problems.push(`${schema}.${name}: listed as a foreign key to drop when distributing, but there is none`);
    }
  }
  return problems;
}

describe('the ledger schema, distributable by game', () => {
  let url: string;
  beforeAll(async () => {
    url = await createTestDatabase();
    await migrate(url, [identityMigrations, ledgerMigrations], pino({ level: 'silent' }));
  });

  it('has the game column in every key of the distributed tables and in both sides of their foreign keys', async () => {
    expect(await distributionProblems(url, 'ledger', LEDGER)).toEqual([]);
  });

  it('names each offending table, constraint and index (a schema made to break every rule)', async () => {
    await sql(url, 'create schema probe');
    try {
      await sql(
        url,
        `create table probe.games (id uuid primary key, slug uuid not null constraint games_slug_key unique);
         create table probe.players (id uuid primary key, game_id uuid references probe.games (id));
         create table probe.events (
           id uuid, game_id uuid references probe.games (id), player_id uuid,
           constraint events_pkey primary key (id, game_id),
           constraint events_player foreign key (player_id) references probe.players (id));
         create unique index events_one_per_player on probe.events (player_id) include (game_id);
         create table probe.keys (id uuid primary key, game_id uuid not null references probe.games (id));
         create table probe.audit (id int primary key);
         create table probe.rules (id uuid primary key, audit_id int not null references probe.audit (id));
         create table probe.unlisted (id int)`,
      );
      const problems = await distributionProblems(url, 'probe', {
        distributed: { games: 'id', players: 'game_id', events: 'game_id', rules: 'game_id' },
        reference: ['keys', 'gone'],
        coordinator: ['audit', 'audit'],
        droppedWhenDistributing: ['keys.keys_not_there'],
      });
      const expected = [
        'probe.audit: listed 2 times',
        'probe.unlisted: listed 0 times',
        'probe.gone: listed, but there is no such table',
        'probe.players: its game column game_id may be null',
        'probe.rules: has no game column game_id',
        'probe.games: unique constraint games_slug_key does not include the game column id',
        'probe.players: primary key players_pkey does not include the game column game_id',
        'probe.rules: primary key rules_pkey does not include the game column game_id',
        'probe.events: unique index events_one_per_player does not include the game column game_id',
        'probe.events: foreign key events_player (FOREIGN KEY (player_id) REFERENCES probe.players(id)) does not pair',
        'probe.rules: foreign key rules_audit_id_fkey (FOREIGN KEY (audit_id) REFERENCES probe.audit(id)) references a table',
        'probe.keys: foreign key keys_game_id_fkey (FOREIGN KEY (game_id) REFERENCES probe.games(id)) goes from a reference table',
        'probe.keys.keys_not_there: listed as a foreign key to drop when distributing, but there is none',
      ];
      for (const start of expected) {
        expect(problems.filter((problem) => problem.startsWith(start))).toHaveLength(1);
      }
      expect(problems).toHaveLength(expected.length);
    } finally {
      await sql(url, 'drop schema probe cascade');
    }
  });
});
