// A program whose event loop is busy for longer than nats-server's pings allow (loading its code on a loaded
// machine, with the recommended `ping_interval: 250ms`, `ping_max: 2`) is dropped by the server while it starts; its
// subscriptions still become live once the client has reconnected, instead of failing the start.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { identityOps } from '#runtime/contracts/operations.ts';
import { MEMBERSHIP_SUBJECT, membershipTopic } from '#runtime/contracts/subjects.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import { bind } from '#runtime/transport/operation.ts';
import { type StartedNats, startNats } from '../../support/servers.ts';

const logger = pino({ level: 'silent' });

/** Keeps the event loop busy (no I/O, no timers) for `ms`. */
function busy(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // spin
  }
}

describe('a start busy past the server pings', () => {
  let nats: StartedNats;
  const opened: NatsTransport[] = [];
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rewards-busy-start-'));
    const config = join(dir, 'nats.conf');
    writeFileSync(config, 'ping_interval: "250ms"\nping_max: 2\n');
    nats = await startNats(undefined, { configFile: config });
  });
  afterAll(async () => {
    for (const transport of opened) await transport.close().catch(() => undefined);
    await nats?.stop();
  });

  it('serves and subscribes once the dropped connection is back', async () => {
    const open = async (name: string) => {
      const transport = await NatsTransport.connect({
        url: nats.url,
        connectionName: name,
        requestTimeoutMs: 2000,
        logger,
        metrics: createMetrics(),
      });
      opened.push(transport);
      return transport;
    };
    const server = await open('busy');
    // The server pings after 250 ms of silence and drops the client after 2 unanswered: 2 s busy is well past it.
    busy(2000);
    await server.serve({
      service: 'identity',
      version: '1.0.0',
      description: 'test',
      endpoints: [bind(identityOps.getPlatformState, async () => ({ enabled: true }))],
    });
    const received: unknown[] = [];
    busy(2000);
    await server.subscribe(membershipTopic, MEMBERSHIP_SUBJECT, (message) => received.push(message));
    const client = await open('client');
    await expect(client.call(identityOps.getPlatformState, {}, { requestId: 'busy' })).resolves.toMatchObject({
      enabled: true,
    });
  });
});
