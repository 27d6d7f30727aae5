// A real failover manager: pg_auto_failover (a monitor and two PostgreSQL 15 nodes on loopback, streaming
// replication), reached only through the formation's multi-host URI (`pg_autoctl show uri`, target_session_attrs=
// read-write). Migrations and writes go to the primary; after a switchover and after the primary's postgres is
// killed, writes continue on whichever node is primary, with only classified failures in between. Forming takes
// about 30 s. Skipped, with a message, where pg_autoctl is not installed.
import pg from 'pg';
import { pino } from 'pino';
import { Database, migrate } from '#runtime/db/database.ts';
import { classifyDatabaseFailure } from '#runtime/db/failures.ts';
import { parseDatabaseUrl } from '#runtime/db/url.ts';
import { ledgerMigrations } from '../../../services/ledger/src/migrations/index.ts';
import { autoFailoverInstalled, type StartedAutoFailover, startAutoFailover } from '../../support/servers.ts';

const logger = pino({ level: 'silent' });
const installed = autoFailoverInstalled();
const describeIfInstalled = installed ? describe : describe.skip;

/** The formation's URI with another database. */
function withDatabase(url: string, database: string): string {
  return url.replace(/\/[^/?]*(\?|$)/, `/${database}$1`);
}

describeIfInstalled(
  installed
    ? 'pg_auto_failover: writes through the formation URI follow the primary'
    : 'pg_auto_failover (SKIPPED: pg_autoctl is not installed; apt-get install postgresql-15-auto-failover pg-auto-failover-cli)',
  () => {
    let formation: StartedAutoFailover;
    let database: Database;

    beforeAll(async () => {
      formation = await startAutoFailover();
      const primary = await formation.waitForPrimary();
      const admin = new pg.Client({ host: '127.0.0.1', port: primary.port, user: 'postgres', database: 'postgres' });
      await admin.connect();
      try {
        await admin.query('create database rewards');
      } finally {
        await admin.end();
      }
    }, 240_000);

    afterAll(async () => {
      await database?.close();
      await formation?.stop();
    }, 120_000);

    /** One write; the port of the server that took it, or the error. */
    const write = async (): Promise<number | Error> => {
      try {
        const rows = await database.query<{ port: number }>(
          `insert into failover_writes (port) select current_setting('port')::int returning port`,
        );
        return rows[0]!.port;
      } catch (error) {
        return error as Error;
      }
    };

    /** Writes until `count` have succeeded (bounded); every failure on the way must be a classified one. */
    const writesContinue = async (count: number, timeoutMs = 60_000): Promise<number[]> => {
      const ports: number[] = [];
      const deadline = Date.now() + timeoutMs;
      while (ports.length < count) {
        if (Date.now() > deadline) throw new Error(`only ${ports.length} of ${count} writes within ${timeoutMs} ms`);
        const result = await write();
        if (result instanceof Error) {
          expect([result.message, classifyDatabaseFailure(result)]).toEqual([result.message, expect.any(String)]);
          await new Promise((r) => setTimeout(r, 100));
        } else {
          ports.push(result);
        }
      }
      return ports;
    };

    it('the formation is up and its URI is a multi-host read-write URL; migrations reach the primary', async () => {
      const parsed = parseDatabaseUrl(formation.url);
      expect(parsed.targetSessionAttrs).toBe('read-write');
      expect(parsed.hosts.map((h) => h.port).sort()).toEqual([...formation.ports].sort());
      const nodes = await formation.state();
      expect(nodes.map((n) => n.reportedState).sort()).toEqual(['primary', 'secondary']);

      const url = withDatabase(formation.url, 'rewards');
      await migrate(url, [ledgerMigrations], logger);
      database = await Database.open({ url, poolMax: 4, logger });
      await database.query('create table failover_writes (port int not null)');
      const primary = await formation.waitForPrimary();
      expect(await writesContinue(5)).toEqual(Array(5).fill(primary.port));
    }, 120_000);

    /**
     * Writes every 20 ms while `during` runs (a switchover, a crash), then until 5 more have succeeded; every failure
     * on the way must be classified (failures.ts). Returns what was acknowledged where, and the failures.
     */
    const writeThrough = async (during: () => Promise<unknown>, timeoutMs: number) => {
      const acknowledged: number[] = [];
      const failures: Error[] = [];
      let running = true;
      const loop = (async () => {
        while (running) {
          const result = await write();
          if (result instanceof Error) failures.push(result);
          else acknowledged.push(result);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      try {
        await during();
      } finally {
        running = false;
        await loop;
      }
      const after = await writesContinue(5, timeoutMs);
      for (const failure of failures) {
        expect([failure.message, classifyDatabaseFailure(failure)]).toEqual([failure.message, expect.any(String)]);
      }
      return { acknowledged, failures, after };
    };

    /** Rows written so far, against what was acknowledged (a lost connection's write may have committed). */
    const expectNothingLost = async (acknowledged: number, unknown: number) => {
      const [row] = await database.query<{ n: number }>('select count(*)::int as n from failover_writes');
      expect(row!.n).toBeGreaterThanOrEqual(acknowledged);
      expect(row!.n).toBeLessThanOrEqual(acknowledged + unknown);
    };
    /** Writes acknowledged so far, and failures whose write may have committed (connection lost). */
    let written = 5;
    let unknown = 0;

    it('switchover with writes in flight: only classified failures, then every write on the new primary', async () => {
      const before = await formation.waitForPrimary();
      let promoted: Awaited<ReturnType<StartedAutoFailover['switchover']>> | undefined;
      const { acknowledged, failures, after } = await writeThrough(async () => {
        promoted = await formation.switchover();
      }, 60_000);
      expect(promoted!.port).not.toBe(before.port);
      expect(after).toEqual(Array(5).fill(promoted!.port));
      expect(acknowledged.every((port) => port === before.port || port === promoted!.port)).toBe(true);
      written += acknowledged.length + 5;
      unknown += failures.filter((f) => classifyDatabaseFailure(f) === 'connection_lost').length;
      await expectNothingLost(written, unknown);
    }, 120_000);

    it("the primary's postgres killed with writes in flight: writes continue once a primary is back", async () => {
      const { acknowledged, failures, after } = await writeThrough(async () => {
        await formation.killPrimary();
        await formation.waitForPrimary(120_000);
      }, 120_000);
      const primary = await formation.waitForPrimary();
      expect(after).toEqual(Array(5).fill(primary.port));
      written += acknowledged.length + 5;
      // Nothing acknowledged is lost (pg_auto_failover replicates synchronously between the two nodes by default).
      unknown += failures.filter((f) => classifyDatabaseFailure(f) === 'connection_lost').length;
      await expectNothingLost(written, unknown);
    }, 180_000);
  },
);
