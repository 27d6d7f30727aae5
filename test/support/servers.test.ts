// The servers the global setup gives the tests answer: a NATS request reaches a subscriber and comes back, and
// PostgreSQL runs a query. And the free ports the launcher hands out to programs are never the same twice.
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { sql } from './database.ts';
import { freePort, freePorts } from './servers.ts';

describe('test servers', () => {
  it('exposes a reachable NATS server to the tests: a request gets its reply', async () => {
    const nc = await connect({ servers: process.env.TEST_NATS_URL });
    try {
      const subject = `test.servers.${randomUUID()}`;
      nc.subscribe(subject, {
        callback: (_error, message) => {
          message.respond(`pong ${message.string()}`);
        },
      });
      await nc.flush();
      const reply = await nc.request(subject, 'ping', { timeout: 5000 });
      expect(reply.string()).toBe('pong ping');
    } finally {
      await nc.close();
    }
  });

  it('exposes a reachable PostgreSQL server to the tests', async () => {
    expect(await sql<{ answer: number }>(process.env.TEST_DATABASE_URL!, 'select 6 * 7 as answer')).toEqual([
      { answer: 42 },
    ]);
  });

  it('never hands out the same free port twice, even once it is free again', async () => {
    // The fault suite starts replicas one after the other; a port handed out to one still starting (not bound yet) is
    // what the kernel may give the next bind(0), and two programs on one port fail one of them (EADDRINUSE).
    const ports: number[] = [];
    for (let i = 0; i < 200; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    // Below the kernel's ephemeral range (no outgoing connection takes one), in this jest worker's slice of it (no
    // other test file running at once is handed the same one).
    const slice = Math.floor((32_768 - 20_000) / 8);
    const from = 20_000 + (Number(process.env.JEST_WORKER_ID) - 1) * slice;
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(from);
      expect(port).toBeLessThan(from + slice);
    }
    // A launcher's consecutive ports: all free, none handed out before, none handed out again.
    const base = await freePorts(5);
    const run = [0, 1, 2, 3, 4].map((i) => base + i);
    expect(run.filter((port) => ports.includes(port))).toEqual([]);
    for (let i = 0; i < 50; i++) expect(run).not.toContain(await freePort());
  });
});
