// npm run bench:reads: what a developer's console reads cost as other tenants' and its own decisions pile up.
// A developer (organization 1: two games, twenty players, ten of them linked, and its first 1,000
// decisions, so that every page it reads is full) reads its snapshot and its records pages through the ledger's
// operation (ConsoleQueries, what the ledger's NATS handler calls) on three databases: (1) nothing else, (2) plus
// 5,000,000 decisions of 1,000 other organizations, (3) plus 200,000 more of its own. Each read is called on the
// three in turns (the shared machine's changing load weighs on each alike); p50/p95 of N calls and the ratios to (1).
// Beside them, the snapshot's decisions statement over one plain connection (the SQL alone, without the ledger) and,
// for reference, that list read as one statement over the whole table (`organization_id in (...) order by
// created_at desc, id desc limit 200`). The data is written in SQL (load/lib/tenants.ts) into a PostgreSQL cluster
// the bench starts (fsync off: reads are measured) and removes.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { databaseClock } from '#runtime/clock.ts';
import { Database, migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../services/identity-admission/src/migrations/index.ts';
import { startPostgres } from '../services/launcher/tools/servers.ts';
import { type Statement, snapshotEventsStatement } from '../services/ledger/src/console/read-repository.ts';
import { ConsoleQueries, SNAPSHOT_LIMITS } from '../services/ledger/src/console/read-service.ts';
import { ConsoleRepository } from '../services/ledger/src/console/write-repository.ts';
import { ledgerMigrations } from '../services/ledger/src/migrations/index.ts';
import { percentile } from './lib/proc.ts';
import { createTenants, insertDecisions, tenantIdentity, tenantIds } from './lib/tenants.ts';

const HELP = `Usage: npm run bench:reads -- [options]

  --others N         other tenants' decisions                    default 5000000
  --organizations N  other tenants (organizations, 2 games each) default 1000
  --own N            the developer's own decisions               default 200000
  --calls N          calls of each read per phase (after 10 unmeasured) default 200
  --help             this text
`;

const { values } = parseArgs({
  options: {
    others: { type: 'string' },
    organizations: { type: 'string' },
    own: { type: 'string' },
    calls: { type: 'string' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const OTHERS = Number(values.others ?? 5_000_000);
const ORGANIZATIONS = Number(values.organizations ?? 1000);
const OWN = Number(values.own ?? 200_000);
const CALLS = Number(values.calls ?? 200);
const WARMUP_CALLS = 10;
/** The developer's decisions in every phase: its first pages full (the snapshot's 200, a records page's 50). */
const FIRST_PAGES = 1000;
const STEP = 500_000;

const DEVELOPER = 1;
const developer = { identity: tenantIdentity(DEVELOPER), ...tenantIds(DEVELOPER) };

/** The snapshot's decisions as one statement over the whole table (the reference line). */
const wholeTableStatement = (identity: string): Statement => ({
  sql: `select p.id from ledger.events p
         where p.organization_id in (select m.organization_id from ledger.members m where m.identity_user_id = $1)
         order by p.created_at desc, p.id desc limit $2`,
  params: [identity, SNAPSHOT_LIMITS.events],
});

const log = (line: string) => process.stderr.write(`${line}\n`);
const postgres = await startPostgres();
const logger = pino({ level: 'silent' });
const admin = new pg.Client({ connectionString: postgres.url });
const urlOf = (name: string) => {
  const url = new URL(postgres.url);
  url.pathname = `/${name}`;
  return url.toString();
};

/** One phase: a database of its own, the ledger's operation and a plain connection on it. */
interface Phase {
  name: string;
  queries: ConsoleQueries;
  database: Database;
  client: pg.Client;
}
const phases: Phase[] = [];

/** Writes a phase's data into `name` (a copy of `template`, if given) and vacuums it. */
async function build(name: string, template: string | undefined, fill: (client: pg.Client) => Promise<void>) {
  const started = Date.now();
  await admin.query(`create database ${name}${template ? ` template ${template} strategy file_copy` : ''}`);
  if (!template) await migrate(urlOf(name), [identityMigrations, ledgerMigrations], logger);
  const client = new pg.Client({ connectionString: urlOf(name) });
  await client.connect();
  try {
    await fill(client);
    await client.query('vacuum analyze');
  } finally {
    await client.end();
  }
  log(`${name}: written in ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${loadavg()[0]!.toFixed(2)}`);
}

try {
  await admin.connect();
  // The phases are databases built one from the other, then measured in turns (each read called on each database in
  // turn), so that the shared machine's changing load weighs on every phase alike.
  await build('reads_empty', undefined, async (client) => {
    await createTenants(client, DEVELOPER, 1 + ORGANIZATIONS);
    // Its first pages full: what every read shows from then on.
    await insertDecisions(client, {
      first: 0,
      count: FIRST_PAGES,
      organizations: { first: DEVELOPER, last: DEVELOPER },
      newest: new Date(),
    });
  });
  await build('reads_others', 'reads_empty', async (client) => {
    for (let first = FIRST_PAGES; first < FIRST_PAGES + OTHERS; first += STEP) {
      const count = Math.min(STEP, FIRST_PAGES + OTHERS - first);
      await insertDecisions(client, {
        first,
        count,
        organizations: { first: DEVELOPER + 1, last: DEVELOPER + ORGANIZATIONS },
        newest: new Date(Date.now() - (first - FIRST_PAGES)),
      });
      log(`others: ${(first + count - FIRST_PAGES).toLocaleString('en')}`);
    }
  });
  await build('reads_own', 'reads_others', (client) =>
    insertDecisions(client, {
      first: FIRST_PAGES + OTHERS,
      count: OWN,
      organizations: { first: DEVELOPER, last: DEVELOPER },
      newest: new Date(),
    }),
  );
  for (const [name, database] of [
    ['empty', 'reads_empty'],
    [`+${OTHERS.toLocaleString('en')} other tenants' decisions`, 'reads_others'],
    [`+${OWN.toLocaleString('en')} of its own`, 'reads_own'],
  ] as const) {
    const opened = await Database.open({ url: urlOf(database), poolMax: 1, logger });
    const client = new pg.Client({ connectionString: urlOf(database) });
    await client.connect();
    phases.push({
      name,
      database: opened,
      client,
      queries: new ConsoleQueries(new ConsoleRepository(opened), databaseClock),
    });
  }
  const numbered = (statement: Statement) => {
    let n = 0;
    return statement.sql.replace(/\?/g, () => `$${++n}`);
  };
  const reads: Array<[string, (phase: Phase) => Promise<unknown>]> = [
    ['snapshot (ledger operation)', (p) => p.queries.snapshot(developer.identity)],
    [
      'records: decisions, first page',
      (p) => p.queries.records({ identityUserId: developer.identity, kind: 'events', limit: 50 }),
    ],
    [
      "records: a game's decisions, first page",
      (p) =>
        p.queries.records({
          identityUserId: developer.identity,
          kind: 'events',
          gameId: developer.gameIds[0],
          limit: 50,
        }),
    ],
    [
      'records: players, first page',
      (p) => p.queries.records({ identityUserId: developer.identity, kind: 'players', limit: 50 }),
    ],
    [
      "the snapshot's decisions statement alone (one connection)",
      (p) => {
        const statement = snapshotEventsStatement(developer.identity, SNAPSHOT_LIMITS.events);
        return p.client.query(numbered(statement), statement.params);
      },
    ],
    [
      'reference: that list as one statement over the whole table',
      (p) => {
        const statement = wholeTableStatement(developer.identity);
        return p.client.query(statement.sql, statement.params);
      },
    ],
  ];
  const times = reads.map(() => phases.map(() => new Float64Array(CALLS)));
  for (let round = -WARMUP_CALLS; round < CALLS; round++) {
    for (const [r, [, call]] of reads.entries()) {
      for (const [p, phase] of phases.entries()) {
        const started = process.hrtime.bigint();
        await call(phase);
        if (round >= 0) times[r]![p]![round] = Number(process.hrtime.bigint() - started) / 1e6;
      }
    }
  }
  const ms = (value: number) => value.toFixed(2).padStart(8);
  process.stdout.write(
    `bench:reads: ${CALLS} calls per read and phase, in turns; the developer: ${FIRST_PAGES.toLocaleString('en')} decisions (empty), ` +
      `${ORGANIZATIONS.toLocaleString('en')} other organizations; phases: ${phases.map((p) => p.name).join(' / ')}\n` +
      `${'read'.padEnd(60)}${phases.map(() => '     p50      p95').join('   ')}   p50, p95 ratios to empty\n`,
  );
  for (const [r, [name]] of reads.entries()) {
    const figures = times[r]!.map((values) => {
      values.sort();
      return { p50: percentile(values, 50), p95: percentile(values, 95) };
    });
    const empty = figures[0]!;
    const ratios = figures
      .slice(1)
      .map((f) => `${(f.p50 / empty.p50).toFixed(2)}, ${(f.p95 / empty.p95).toFixed(2)} x`);
    process.stdout.write(
      `${name.padEnd(60)}${figures.map((f) => `${ms(f.p50)} ${ms(f.p95)}`).join('   ')}   ${ratios.join('; ')}\n`,
    );
  }
  process.stdout.write(
    `load average (1, 5, 15 min) at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}\n`,
  );
} finally {
  for (const phase of phases) {
    await phase.client.end().catch(() => {});
    await phase.database.close();
  }
  await admin.end().catch(() => {});
  await postgres.stop();
}
