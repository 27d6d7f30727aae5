// When did a PostgreSQL server accept writes? For the failover fault: a write is tried on every node every 50 ms
// over a connection of its own (made again whenever it breaks) and each attempt's outcome is recorded, so that the
// moment the new primary first committed a write can be read afterwards. The write is a one-row insert into a
// table in the `postgres` database, committed like the service's writes (synchronous_commit as the server says).
import pg from 'pg';

export interface WriteAttempt {
  port: number;
  /** When the attempt started and ended (ms since epoch). */
  startedAt: number;
  endedAt: number;
  ok: boolean;
}

export interface WritableWatch {
  attempts: WriteAttempt[];
  /** The first successful write on `port` (any port when not given) that started at or after `since`. */
  firstWriteAfter(since: number, port?: number): WriteAttempt | undefined;
  /** The first failed write on `port` that started at or after `since`. */
  firstFailureAfter(since: number, port: number): WriteAttempt | undefined;
  stop(): Promise<void>;
}

const ATTEMPT_INTERVAL_MS = 50;
/** An attempt that takes longer counts as failed (a primary that waits for a standby accepts no writes). */
const ATTEMPT_TIMEOUT_MS = 1_000;

export async function watchWritable(ports: number[]): Promise<WritableWatch> {
  const attempts: WriteAttempt[] = [];
  let stopped = false;
  // The probe table, made once on whichever node takes writes now (it is replicated to the other).
  for (const port of ports) {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('create table if not exists faults_write_probe (port int, at timestamptz)');
      break;
    } catch {
      // a standby: try the next node
    } finally {
      await client.end().catch(() => {});
    }
  }

  const loop = async (port: number) => {
    let client: pg.Client | undefined;
    while (!stopped) {
      const startedAt = Date.now();
      let ok = false;
      try {
        if (!client) {
          client = new pg.Client({
            host: '127.0.0.1',
            port,
            user: 'postgres',
            database: 'postgres',
            connectionTimeoutMillis: ATTEMPT_TIMEOUT_MS,
            query_timeout: ATTEMPT_TIMEOUT_MS,
          });
          client.on('error', () => {});
          await client.connect();
        }
        await client.query('insert into faults_write_probe values ($1, now())', [port]);
        ok = true;
      } catch {
        const broken = client;
        client = undefined;
        void broken?.end().catch(() => {});
      }
      const endedAt = Date.now();
      attempts.push({ port, startedAt, endedAt, ok });
      await new Promise((r) => setTimeout(r, Math.max(0, ATTEMPT_INTERVAL_MS - (endedAt - startedAt))));
    }
    await client?.end().catch(() => {});
  };
  const loops = ports.map((port) => loop(port));

  return {
    attempts,
    firstWriteAfter: (since, port) =>
      attempts.find((a) => a.ok && a.startedAt >= since && (port === undefined || a.port === port)),
    firstFailureAfter: (since, port) => attempts.find((a) => !a.ok && a.startedAt >= since && a.port === port),
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
