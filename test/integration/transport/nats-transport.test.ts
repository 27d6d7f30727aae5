// The NATS transport on a real nats-server: queue groups share requests, an absent or stuck service becomes a
// 503 within the request timeout, and a stop drains in-flight requests instead of dropping them.
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import {
  GetPlatformStateRequestSchema,
  GetPlatformStateResponseSchema,
} from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import type { MembershipChanged } from '#runtime/contracts/gen/rewards/v1/notices_pb.ts';
import { MEMBERSHIP_SUBJECT, membershipTopic } from '#runtime/contracts/subjects.ts';
import { AppError, DependencyUnavailableError } from '#runtime/errors.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { currentDeadline } from '#runtime/transport/deadline.ts';
import { InProcessTransport } from '#runtime/transport/in-process.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import { bind, defineOperation, type EndpointBinding, type Transport } from '#runtime/transport/operation.ts';

const logger = pino({ level: 'silent' });
const ctx = { requestId: 'test-request' };
let counter = 0;

/** A test-only operation on its own subject, so that tests do not disturb each other. */
function testOperation() {
  counter += 1;
  return defineOperation(
    'ledger',
    `TransportTest${counter}${Date.now()}`,
    GetPlatformStateRequestSchema,
    GetPlatformStateResponseSchema,
  );
}

async function natsTransport(name: string, requestTimeoutMs = 2000): Promise<NatsTransport> {
  return NatsTransport.connect({
    url: process.env.TEST_NATS_URL as string,
    connectionName: name,
    requestTimeoutMs,
    logger,
    metrics: createMetrics(),
  });
}

/** Serves the endpoints as a test service (the queue group `ledger`). */
function serveTest(transport: Transport, endpoints: EndpointBinding[]) {
  return transport.serve({ service: 'ledger', version: '1.0.0', description: 'test', endpoints });
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('NATS transport', () => {
  const opened: Transport[] = [];
  afterEach(async () => {
    for (const transport of opened.splice(0)) await transport.close();
  });
  const open = async (name: string, timeoutMs?: number) => {
    const transport = await natsTransport(name, timeoutMs);
    opened.push(transport);
    return transport;
  };

  it('carries a protobuf request and reply, with the request id in the headers', async () => {
    const op = testOperation();
    const server = await open('server');
    const client = await open('client');
    const seen: string[] = [];
    await serveTest(server, [
      bind(op, async (_request, callCtx) => {
        seen.push(callCtx.requestId);
        return { enabled: true };
      }),
    ]);
    const reply = await client.call(op, {}, { requestId: 'abc-123' });
    expect(reply.enabled).toBe(true);
    expect(seen).toEqual(['abc-123']);
  });

  it('carries errors with status, code, message and extra fields', async () => {
    const op = testOperation();
    const server = await open('server');
    const client = await open('client');
    await serveTest(server, [
      bind(op, async () => {
        throw new AppError('CLIENT_UPDATE_REQUIRED', 'Update the app.', { minBuild: 42 });
      }),
    ]);
    const error = await client.call(op, {}, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).toEnvelope()).toEqual({
      error: { code: 'CLIENT_UPDATE_REQUIRED', message: 'Update the app.', minBuild: 42 },
    });
    expect((error as AppError).status).toBe(403);
  });

  it('shares requests between two replicas of a service (queue group)', async () => {
    const op = testOperation();
    const replicas = [await open('replica-a'), await open('replica-b')];
    const handled = [0, 0];
    for (const [index, replica] of replicas.entries()) {
      await serveTest(replica, [
        bind(op, async () => {
          handled[index] = (handled[index] ?? 0) + 1;
          return { enabled: true };
        }),
      ]);
    }
    const client = await open('client');
    await Promise.all(Array.from({ length: 200 }, () => client.call(op, {}, ctx)));
    // Each request is handled exactly once, and both replicas take a share.
    expect(handled[0]! + handled[1]!).toBe(200);
    expect(handled[0]).toBeGreaterThan(0);
    expect(handled[1]).toBeGreaterThan(0);
  });

  it('sends a request that found no responders again, with back-off, until a replica serves (within the wait)', async () => {
    const op = testOperation();
    const metrics = createMetrics();
    const client = await NatsTransport.connect({
      url: process.env.TEST_NATS_URL as string,
      connectionName: 'client',
      requestTimeoutMs: 2000,
      undeliveredWaitMs: 3000,
      logger,
      metrics,
    });
    opened.push(client);
    const server = await open('server');
    // The state owner is missing when the request leaves (a restart), and back once the request has found no
    // responders and been sent again.
    const answered = client.call(op, {}, ctx);
    const retried = async () =>
      ((await metrics.registry.getSingleMetric('transport_undelivered_retries_total')?.get())?.values ?? []).some(
        (value) => value.labels.subject === op.subject && value.value >= 1,
      );
    while (!(await retried())) await delay(5);
    await serveTest(server, [bind(op, async () => ({ enabled: true }))]);
    expect((await answered).enabled).toBe(true);
  });

  it('gives up on an undelivered request after the wait, as not delivered (nothing was sent to anyone)', async () => {
    const op = testOperation();
    const client = await NatsTransport.connect({
      url: process.env.TEST_NATS_URL as string,
      connectionName: 'client',
      requestTimeoutMs: 2000,
      undeliveredWaitMs: 200,
      logger,
      metrics: createMetrics(),
    });
    opened.push(client);
    const error = await client.call(op, {}, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect((error as DependencyUnavailableError).outcome).toBe('not_delivered');
  });

  it('answers 503 when no service listens', async () => {
    const client = await open('client');
    const error = await client.call(testOperation(), {}, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect((error as AppError).status).toBe(503);
  });

  it('answers 503 when the service does not reply within the request timeout', async () => {
    const op = testOperation();
    const server = await open('server');
    const client = await open('client', 300);
    let release: () => void = () => {};
    await serveTest(server, [
      bind(op, async () => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return { enabled: true };
      }),
    ]);
    const error = await client.call(op, {}, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect(String((error as DependencyUnavailableError).cause)).toMatch(/timed out/);
    release();
  });

  it('drains on stop: in-flight requests are answered, later ones find no responder', async () => {
    const op = testOperation();
    const server = await natsTransport('draining-server');
    const client = await open('client');
    let started = 0;
    await serveTest(server, [
      bind(op, async () => {
        started += 1;
        await delay(300);
        return { enabled: true };
      }),
    ]);
    const inFlight = Array.from({ length: 5 }, () => client.call(op, {}, ctx));
    while (started < 5) await delay(10);
    await server.close();
    const replies = await Promise.all(inFlight);
    expect(replies.map((r) => r.enabled)).toEqual([true, true, true, true, true]);
    await expect(client.call(op, {}, ctx)).rejects.toBeInstanceOf(DependencyUnavailableError);
  });

  it("delivers a handler's notice before its reply (both written at the turn's end); one published just before close too", async () => {
    const op = testOperation();
    const server = await natsTransport('notifying-server');
    const client = await open('client');
    const subject = `${MEMBERSHIP_SUBJECT}.test-${randomUUID()}`;
    const notices: MembershipChanged[] = [];
    await client.subscribe(membershipTopic, subject, (notice) => notices.push(notice));
    await serveTest(server, [
      bind(op, async () => {
        server.publish(membershipTopic, subject, { organizationId: `org-${notices.length}` });
        return { enabled: true };
      }),
    ]);
    // One connection delivers in the order the server got them: the notice is there when the reply is.
    expect((await client.call(op, {}, ctx)).enabled).toBe(true);
    expect(notices.map((n) => n.organizationId)).toEqual(['org-0']);
    expect((await client.call(op, {}, ctx)).enabled).toBe(true);
    expect(notices.map((n) => n.organizationId)).toEqual(['org-0', 'org-1']);
    server.publish(membershipTopic, subject, { organizationId: 'last' });
    await server.close();
    while (notices.length < 3) await delay(10);
    expect(notices.map((n) => n.organizationId)).toEqual(['org-0', 'org-1', 'last']);
  });
});

describe('in-process transport', () => {
  it('carries the same operations and errors, and answers 503 without a server', async () => {
    const transport = new InProcessTransport(logger, createMetrics());
    const op = testOperation();
    await expect(transport.call(op, {}, ctx)).rejects.toBeInstanceOf(DependencyUnavailableError);
    await serveTest(transport, [bind(op, async () => ({ enabled: true }))]);
    expect((await transport.call(op, {}, ctx)).enabled).toBe(true);
    await transport.close();
    await expect(transport.call(op, {}, ctx)).rejects.toBeInstanceOf(DependencyUnavailableError);
  });
});

describe('deadlines, the same on both transports', () => {
  const opened: Transport[] = [];
  afterEach(async () => {
    for (const transport of opened.splice(0)) await transport.close();
  });
  /** A caller and a server of one kind, both with a 1 s request timeout. */
  const pair = async (kind: 'nats' | 'in-process'): Promise<{ client: Transport; server: Transport }> => {
    if (kind === 'in-process') {
      const transport = new InProcessTransport(logger, createMetrics(), { requestTimeoutMs: 1000 });
      opened.push(transport);
      return { client: transport, server: transport };
    }
    const server = await natsTransport('deadline-server', 1000);
    const client = await natsTransport('deadline-client', 1000);
    opened.push(client, server);
    return { client, server };
  };

  for (const kind of ['nats', 'in-process'] as const) {
    it(`${kind}: the handler runs in the caller's budget (its timeout less the margin); a late request is not handled`, async () => {
      const { client, server } = await pair(kind);
      const op = testOperation();
      const seen: Array<{ remainingMs: number; same: boolean }> = [];
      await serveTest(server, [
        bind(op, async (_request, callCtx) => {
          const deadline = callCtx.deadline as number;
          seen.push({ remainingMs: deadline - performance.now(), same: currentDeadline() === deadline });
          return { enabled: true };
        }),
      ]);
      expect((await client.call(op, {}, ctx)).enabled).toBe(true);
      expect(seen).toHaveLength(1);
      // 1000 ms less the margin (a tenth: 100 ms); less again by the time it took to arrive.
      expect(seen[0]?.remainingMs).toBeLessThanOrEqual(900);
      expect(seen[0]?.same).toBe(true);
      // A caller whose own deadline has passed: the request arrives with no budget and is not handled.
      const late = await client.call(op, {}, { ...ctx, deadline: performance.now() - 1 }).catch((e: unknown) => e);
      expect(late).toBeInstanceOf(AppError);
      expect(late).toMatchObject({
        status: 503,
        code: 'retry_later',
        message: expect.stringMatching(/deadline passed/),
      });
      expect(seen).toHaveLength(1);
    });

    it(`${kind}: a handler that does not answer in time is a 503 whose outcome is unknown`, async () => {
      const { client, server } = await pair(kind);
      const op = testOperation();
      let release: () => void = () => undefined;
      await serveTest(server, [
        bind(op, async () => {
          await new Promise<void>((resolve) => (release = resolve));
          return { enabled: true };
        }),
      ]);
      const error = await client.call(op, {}, ctx).catch((e: unknown) => e);
      release();
      expect(error).toBeInstanceOf(DependencyUnavailableError);
      expect((error as DependencyUnavailableError).outcome).toBe('unknown');
    });
  }
});
