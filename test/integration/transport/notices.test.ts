// Publish-subscribe on both transports: a notice reaches every plain subscriber once (no queue group), decoded from
// the same protobuf bytes; nothing arrives after unsubscribe or on another subject; a publish never throws, and a
// publish on a closed transport is counted as failed.
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { MembershipChanged } from '#runtime/contracts/gen/rewards/v1/notices_pb.ts';
import { MEMBERSHIP_SUBJECT, membershipTopic } from '#runtime/contracts/subjects.ts';
import { createMetrics, type Metrics } from '#runtime/metrics.ts';
import { InProcessTransport } from '#runtime/transport/in-process.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import type { Transport } from '#runtime/transport/operation.ts';

const logger = pino({ level: 'silent' });

async function until(condition: () => boolean, what: string, deadlineMs = 5000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function publishCount(metrics: Metrics, outcome: string): Promise<number> {
  const metric = await metrics.transportPublishes.get();
  return metric.values.find((v) => v.labels.topic === 'membership' && v.labels.outcome === outcome)?.value ?? 0;
}

type Pair = { publisher: Transport; subscribers: Transport[]; metrics: Metrics };

const kinds: Array<[string, () => Promise<Pair>]> = [
  [
    'in-process',
    async () => {
      const metrics = createMetrics();
      const transport = new InProcessTransport(logger, metrics);
      return { publisher: transport, subscribers: [transport, transport], metrics };
    },
  ],
  [
    'NATS',
    async () => {
      const open = (name: string, metrics = createMetrics()) =>
        NatsTransport.connect({
          url: process.env.TEST_NATS_URL as string,
          connectionName: name,
          requestTimeoutMs: 2000,
          logger,
          metrics,
        });
      const metrics = createMetrics();
      return { publisher: await open('publisher', metrics), subscribers: [await open('a'), await open('b')], metrics };
    },
  ],
];

describe.each(kinds)('notices on the %s transport', (_kind, make) => {
  let pair: Pair;
  beforeEach(async () => {
    pair = await make();
  });
  afterEach(async () => {
    for (const transport of new Set([pair.publisher, ...pair.subscribers])) await transport.close();
  });

  it('delivers each notice once to every subscriber of its subject, until unsubscribed', async () => {
    const subject = `${MEMBERSHIP_SUBJECT}.test-${randomUUID()}`;
    const received: MembershipChanged[][] = [[], []];
    const subscriptions = await Promise.all(
      pair.subscribers.map((transport, index) =>
        transport.subscribe(membershipTopic, subject, (message) => received[index]!.push(message)),
      ),
    );
    pair.publisher.publish(membershipTopic, subject, { organizationId: 'org-1', identityUserId: 'user-1' });
    await until(() => received.every((list) => list.length === 1), 'both subscribers');
    for (const list of received) {
      expect(list.map((m) => [m.organizationId, m.identityUserId])).toEqual([['org-1', 'user-1']]);
    }

    subscriptions[0]!.unsubscribe();
    subscriptions[0]!.unsubscribe();
    // Subscribed on the same connection after the unsubscribe (the server has both once this resolves): notices of
    // one publisher arrive in order, so the unsubscribed one would have had `org-2` before this one's `org-3`.
    const other: MembershipChanged[] = [];
    await pair.subscribers[0]!.subscribe(membershipTopic, `${subject}.other`, (message) => other.push(message));
    pair.publisher.publish(membershipTopic, subject, { organizationId: 'org-2', identityUserId: 'user-2' });
    pair.publisher.publish(membershipTopic, `${subject}.other`, { organizationId: 'org-3' });
    await until(() => received[1]!.length === 2 && other.length === 1, 'the remaining subscribers');
    expect(received[0]).toHaveLength(1);
    expect(other.map((m) => m.organizationId)).toEqual(['org-3']);
    expect(await publishCount(pair.metrics, 'ok')).toBe(3);
  });

  it('never throws from publish: a closed transport counts the notice as failed', async () => {
    await pair.publisher.close();
    expect(() =>
      pair.publisher.publish(membershipTopic, MEMBERSHIP_SUBJECT, { organizationId: 'x', identityUserId: 'y' }),
    ).not.toThrow();
    expect(await publishCount(pair.metrics, 'failed')).toBe(1);
  });
});
