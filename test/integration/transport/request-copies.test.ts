// A member of a queue group that swallows requests (a state owner cut from NATS, which nats-server keeps routing to
// until its own pings notice, 2 min x 2 on its defaults): a repeatable request (a read) is sent again
// after NATS_TRY_TIMEOUT_PERCENT of its timeout without an answer, the first copy still awaited, so nearly every one
// is answered by the live member; a request that is not safe to repeat is never sent twice.
import { pino } from 'pino';
import {
  GetPlatformStateRequestSchema,
  GetPlatformStateResponseSchema,
} from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import { identityOps } from '#runtime/contracts/operations.ts';
import { createMetrics, type Metrics } from '#runtime/metrics.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import { bind, defineOperation, type EndpointBinding } from '#runtime/transport/operation.ts';
import { type StartedNats, startNats } from '../../support/servers.ts';

const logger = pino({ level: 'silent' });
const ctx = { requestId: 'copies-test' };
const REQUESTS = 40;

describe('copies of repeatable requests', () => {
  let nats: StartedNats;
  const opened: NatsTransport[] = [];
  const open = async (name: string, metrics: Metrics = createMetrics()) => {
    const transport = await NatsTransport.connect({
      url: nats.url,
      connectionName: name,
      requestTimeoutMs: 2000,
      undeliveredWaitMs: 0,
      logger,
      metrics,
    });
    opened.push(transport);
    return transport;
  };
  /** A live member that answers, and a member that receives its share and never answers. */
  const serveBoth = async (endpoints: (live: boolean) => EndpointBinding[]) => {
    for (const live of [true, false]) {
      await (await open(live ? 'live' : 'swallowing')).serve({
        service: 'identity',
        version: '1.0.0',
        description: 'test',
        endpoints: endpoints(live),
      });
    }
  };
  /** Held until the end of the file (a transport's close waits for its handlers), then answered too late. */
  const held: Array<() => void> = [];
  const never = () =>
    new Promise<{ enabled: boolean }>((resolve) => {
      held.push(() => resolve({ enabled: false }));
    });

  beforeAll(async () => {
    nats = await startNats();
  });
  afterAll(async () => {
    for (const release of held) release();
    for (const transport of opened.splice(0)) await transport.close().catch(() => undefined);
    await nats?.stop();
  });

  it('answers nearly every repeatable request although half of the first copies are swallowed', async () => {
    const swallowed: number[] = [];
    await serveBoth((live) => [
      bind(identityOps.getPlatformState, async () => {
        if (live) return { enabled: true };
        swallowed.push(1);
        return never();
      }),
    ]);
    const metrics = createMetrics();
    const client = await open('client', metrics);
    const answers = await Promise.allSettled(
      Array.from({ length: REQUESTS }, () => client.call(identityOps.getPlatformState, {}, ctx)),
    );
    const answered = answers.filter((a) => a.status === 'fulfilled' && a.value.enabled).length;
    // Seven copies each at most, each swallowed with probability 1/2: a request fails with probability 1/128.
    expect(answered).toBeGreaterThanOrEqual(REQUESTS - 4);
    expect(swallowed.length).toBeGreaterThan(0);
    const copies = await metrics.registry.getSingleMetricAsString('transport_request_copies_total');
    expect(copies).toMatch(/outcome="sent"\} [1-9]/);
  });

  it('never sends a request that is not safe to repeat twice', async () => {
    const operation = defineOperation(
      'identity',
      'CopiesTestWrite',
      GetPlatformStateRequestSchema,
      GetPlatformStateResponseSchema,
    );
    let received = 0;
    await serveBoth((live) => [
      bind(operation, async () => {
        received++;
        return live ? { enabled: true } : never();
      }),
    ]);
    const metrics = createMetrics();
    const client = await open('writer', metrics);
    await Promise.allSettled(Array.from({ length: 10 }, () => client.call(operation, {}, ctx)));
    expect(received).toBe(10);
    const copies = await metrics.registry.getSingleMetricAsString('transport_request_copies_total');
    expect(copies).not.toMatch(/CopiesTestWrite/);
  });
});
