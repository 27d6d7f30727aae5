// npm run bench:reads: what a developer's console reads cost as other tenants' and its own decisions pile up
// (issue 44 item 2). A developer (organization 1: two games, twenty players, ten of them linked) reads its snapshot
// and its records pages through the ledger's operation (ConsoleQueries, what the ledger's NATS handler calls) on a
// database that holds (1) nothing else, (2) 5,000,000 decisions of 1,000 other organizations, (3) those and 200,000
// of its own; p50/p95 over N calls each, and the ratio to (1). Beside it, the snapshot's decisions statement over one
// connection without the ledger (the SQL alone), and, for reference, that list read as one statement over the whole
// table (`organization_id in (...) order by created_at desc, id desc limit 200`). The data is written in SQL
// (load/lib/tenants.ts); it starts its own PostgreSQL cluster (fsync off: reads are measured) and drops it.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { databaseClock } from '#runtime/clock.ts';
import { Database, migrate } from '#runtime/db/database.ts';
import { identityMigrations } from '../services/identity-admission/src/migrations/index.ts';
import { startPostgres } from '../services/launcher/src/servers.ts';
import { ConsoleQueries, SNAPSHOT_LIMITS } from '../services/ledger/src/console/queries.ts';
import { type Statement, snapshotEventsStatement } from '../services/ledger/src/console/reads.ts';
import { ConsoleRepository } from '../services/ledger/src/console/repository.ts';
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

interface Figures {
  p50: number;
  p95: number;
}

async function measure(call: () => Promise<unknown>): Promise<Figures> {
  for (let i = 0; i < WARMUP_CALLS; i++) await call();
  const times = new Float64Array(CALLS);
  for (let i = 0; i < CALLS; i++) {
    const started = process.hrtime.bigint();
    await call();
    times[i] = Number(process.hrtime.bigint() - started) / 1e6;
  }
  times.sort();
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const postgres = await startPostgres();
const logger = pino({ level: 'silent' });
let database: Database | undefined;
const client = new pg.Client({ connectionString: postgres.url });
try {
  await migrate(postgres.url, [identityMigrations, ledgerMigrations], logger);
  await client.connect();
  await createTenants(client, DEVELOPER, 1 + ORGANIZATIONS);
  await client.query('analyze');
  database = await Database.open({ url: postgres.url, poolMax: 2, logger });
  const queries = new ConsoleQueries(new ConsoleRepository(database), databaseClock);
  const reads: Array<[string, () => Promise<unknown>]> = [
    ['snapshot (ledger operation)', () => queries.snapshot(developer.identity)],
    [
      'records: decisions, first page',
      () => queries.records({ identityUserId: developer.identity, kind: 'events', limit: 50 }),
    ],
    [
      "records: a game's decisions, first page",
      () =>
        queries.records({
          identityUserId: developer.identity,
          kind: 'events',
          gameId: developer.gameIds[0],
          limit: 50,
        }),
    ],
    [
      'records: players, first page',
      () => queries.records({ identityUserId: developer.identity, kind: 'players', limit: 50 }),
    ],
    [
      "the snapshot's decisions statement alone (one connection)",
      () => {
        const statement = snapshotEventsStatement(developer.identity, SNAPSHOT_LIMITS.events);
        let n = 0;
        return client.query(
          statement.sql.replace(/\?/g, () => `$${++n}`),
          statement.params,
        );
      },
    ],
    [
      'reference: that list as one statement over the whole table',
      () => {
        const statement = wholeTableStatement(developer.identity);
        return client.query(statement.sql, statement.params);
      },
    ],
  ];
  const phases: Array<[string, () => Promise<void>]> = [
    ['empty', async () => {}],
    [
      `+${OTHERS.toLocaleString('en')} other tenants' decisions`,
      async () => {
        for (let first = 0; first < OTHERS; first += STEP) {
          await insertDecisions(client, {
            first,
            count: Math.min(STEP, OTHERS - first),
            organizations: { first: DEVELOPER + 1, last: DEVELOPER + ORGANIZATIONS },
            newest: new Date(Date.now() - first),
          });
          log(`others: ${Math.min(OTHERS, first + STEP).toLocaleString('en')}`);
        }
      },
    ],
    [
      `+${OWN.toLocaleString('en')} of its own`,
      () =>
        insertDecisions(client, {
          first: OTHERS,
          count: OWN,
          organizations: { first: DEVELOPER, last: DEVELOPER },
          newest: new Date(),
        }),
    ],
  ];
  const results = new Map<string, Figures[]>(reads.map(([name]) => [name, []]));
  for (const [phase, fill] of phases) {
    const started = Date.now();
    await fill();
    await client.query('vacuum analyze');
    log(
      `${phase}: data written in ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${loadavg()[0]!.toFixed(2)}`,
    );
    for (const [name, call] of reads) results.get(name)!.push(await measure(call));
  }
  const ms = (value: number) => value.toFixed(2).padStart(8);
  process.stdout.write(
    `bench:reads: ${CALLS} calls per read and phase; phases: ${phases.map(([name]) => name).join(' / ')}\n` +
      `${'read'.padEnd(60)}${phases.map(() => '     p50      p95').join('   ')}   p95 ratios to empty\n`,
  );
  for (const [name, figures] of results) {
    const empty = figures[0]!;
    const ratios = figures.slice(1).map((f) => `${(f.p95 / empty.p95).toFixed(2)} x`);
    process.stdout.write(
      `${name.padEnd(60)}${figures.map((f) => `${ms(f.p50)} ${ms(f.p95)}`).join('   ')}   ${ratios.join(', ')}\n`,
    );
  }
  process.stdout.write(
    `load average (1, 5, 15 min) at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}\n`,
  );
} finally {
  await client.end().catch(() => {});
  await database?.close();
  await postgres.stop();
}
