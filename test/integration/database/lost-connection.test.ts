// A connection lost in the middle of a transaction gives its place in the pool back (FailoverClient's give-back,
// services/runtime/src/db/failover.ts). The transaction's ROLLBACK fails on the dead connection, and Kysely (under
// MikroORM) releases a connection only after its ROLLBACK succeeds (kysely-org/kysely#1990): without the give-back,
// a pool of one would wait for that connection for ever, and closing the database would hang.
import { pino } from 'pino';
import { Database } from '#runtime/db/database.ts';
import { selectorFor } from '#runtime/db/failover.ts';
import { parseDatabaseUrl } from '#runtime/db/url.ts';
import { createTestDatabase, sql } from '../../support/database.ts';

const logger = pino({ level: 'silent' });

/** `promise`, or a failure saying what never happened (a hang is the defect under test, not slowness). */
function within<T>(promise: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen`)), ms);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

describe('a connection lost inside a transaction', () => {
  let url: string;
  beforeAll(async () => {
    url = await createTestDatabase();
  });

  it('leaves the pool whole: with a pool of one the next unit of work runs, and the pool closes', async () => {
    const database = await Database.open({ url, poolMax: 1, logger });
    try {
      for (let round = 0; round < 3; round++) {
        const failed = database.transaction(async (em) => {
          const [row] = (await em.execute('select pg_backend_pid() as pid')) as Array<{ pid: number }>;
          // The server ends this session: the statement after it fails, and so does the ROLLBACK.
          await sql(url, 'select pg_terminate_backend($1)', [row?.pid]);
          await new Promise((resolve) => setTimeout(resolve, 100));
          return em.execute('select 1');
        });
        await expect(within(failed, 'the transaction failing')).rejects.toThrow();
        const [answer] = await within(database.query<{ one: number }>('select 1 as one'), 'the next query');
        expect(answer?.one).toBe(1);
        // The lost connection was given back once (its holder's later release counts nothing): none is out now.
        expect(selectorFor(url, parseDatabaseUrl(url)).lentConnections).toBe(0);
      }
    } finally {
      await within(database.close(), 'the pool closing');
    }
  });
});
