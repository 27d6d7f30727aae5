// A NATS connection that drops while a flush is out (nats-server dropping a client whose start-up kept it from
// answering pings) does not fail the step that flushed: subscribe() flushes again once the client has reconnected (it
// subscribes again on its own), and then the subscription receives. Before, the flush's "connection disconnected"
// failed the gateway's start, and the program exited (seen in the fault suite's `upgrade` phase). A TCP proxy between
// the client and nats-server cuts the connection instead of passing on the PONG that would answer the flush.
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { pino } from 'pino';
import type { MembershipChanged } from '#runtime/contracts/gen/rewards/v1/notices_pb.ts';
import { MEMBERSHIP_SUBJECT, membershipTopic } from '#runtime/contracts/subjects.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';

const logger = pino({ level: 'silent' });

/** A proxy to nats-server that, when armed, cuts the connection on the server's next PONG (not passed on). */
async function startCuttingProxy(upstream: URL): Promise<{ url: string; arm(): void; cuts(): number; close(): void }> {
  let armed = false;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const server = tcpConnect(Number(upstream.port), upstream.hostname);
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk) => server.write(chunk));
    server.on('data', (chunk: Buffer) => {
      if (armed && chunk.includes('PONG\r\n')) {
        armed = false;
        cuts++;
        client.destroy();
        server.destroy();
        return;
      }
      client.write(chunk);
    });
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `nats://127.0.0.1:${port}`,
    arm: () => {
      armed = true;
    },
    cuts: () => cuts,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

test('a subscription made while the connection drops mid-flush is live once subscribe() resolves', async () => {
  const proxy = await startCuttingProxy(new URL(process.env.TEST_NATS_URL as string));
  const open = (url: string, name: string) =>
    NatsTransport.connect({ url, connectionName: name, requestTimeoutMs: 2000, logger, metrics: createMetrics() });
  const subscriber = await open(proxy.url, 'subscriber');
  const publisher = await open(process.env.TEST_NATS_URL as string, 'publisher');
  try {
    const subject = `${MEMBERSHIP_SUBJECT}.${randomUUID()}`;
    const received: MembershipChanged[] = [];
    proxy.arm();
    const subscription = await subscriber.subscribe(membershipTopic, subject, (message) => received.push(message));
    expect(proxy.cuts()).toBe(1);
    publisher.publish(membershipTopic, subject, { organizationId: 'org-1', identityUserId: 'user-1' });
    const deadline = Date.now() + 5000;
    while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(received.map((m) => m.organizationId)).toEqual(['org-1']);
    subscription.unsubscribe();
  } finally {
    await subscriber.close();
    await publisher.close();
    proxy.close();
  }
});
