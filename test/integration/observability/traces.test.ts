// OpenTelemetry traces across processes: the five programs run alone (as in Kubernetes) on real NATS and
// PostgreSQL, exporting OTLP/HTTP (JSON) to a receiver of the test. One request is one trace: the edge's HTTP
// server span, the NATS request span under it, the state owner's handler span under that (W3C traceparent in the
// message headers) and the owner's PostgreSQL statements under the handler. The trace id is the request id the
// edge answers with and appears on the request's log lines; no span carries a key, a bearer token or a link token.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createTestDatabase } from '../../support/database.ts';
import { createEventWorld } from '../../support/ledger-fixtures.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../../support/otlp.ts';
import { PROGRAM_NODE_OPTIONS, type ProgramProcess, startProgram } from '../../support/processes.ts';
import { startNats } from '../../support/servers.ts';
import { api } from '../../support/system.ts';

const ADMIN_TOKEN = 'traces-admin-token-0123456789abcdef0123456789';
const ISSUER = 'https://idp.example';
const AUDIENCE = 'rewards';
const SERVER = 2;
const PRODUCER = 4;
const CONSUMER = 5;
const STATE_OWNERS = ['ledger', 'identity-admission'];

/** The spans of one trace, and a way up the parent links. */
function traceOf(spans: ReceivedSpan[], traceId: string) {
  const own = spans.filter((s) => s.traceId === traceId);
  const byId = new Map(own.map((s) => [s.spanId, s]));
  const ancestors = (span: ReceivedSpan): ReceivedSpan[] => {
    const chain: ReceivedSpan[] = [];
    for (let parent = byId.get(span.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) chain.push(parent);
    return chain;
  };
  return { spans: own, ancestors };
}

/**
 * Checks the shape of one request's trace: the edge's HTTP server span is the root, each NATS request span of the
 * edge descends from it, each owner handler span is the child of a request span, and the owner's statements descend
 * from a handler span of the same owner, the main operation's among them. `owners` must all have handled a part.
 */
function expectRequestTrace(
  spans: ReceivedSpan[],
  traceId: string,
  edge: string,
  owners: string[],
  subject: string,
  { system = 'nats', ownerServices = STATE_OWNERS } = {},
) {
  const { spans: own, ancestors } = traceOf(spans, traceId);
  const roots = own.filter((s) => !s.parentSpanId);
  expect(roots.map((s) => [s.service, s.kind])).toEqual([[edge, SERVER]]);
  const root = roots[0]!;

  const sends = own.filter((s) => s.kind === PRODUCER);
  expect(sends.length).toBeGreaterThan(0);
  for (const send of sends) {
    expect(send.service).toBe(edge);
    expect(send.name).toBe(`send ${send.attributes['messaging.destination.name']}`);
    expect(send.attributes['messaging.system']).toBe(system);
    expect(ancestors(send)).toContain(root);
  }
  const handlers = own.filter((s) => s.kind === CONSUMER);
  for (const handler of handlers) {
    // Besides the owners the request is for, the edge's platform switch may ask identity-admission (cached 1 s).
    expect(ownerServices).toContain(handler.service);
    const parent = sends.find((s) => s.spanId === handler.parentSpanId);
    expect(parent?.attributes['messaging.destination.name']).toBe(handler.attributes['messaging.destination.name']);
    expect(handler.name).toBe(`process ${handler.attributes['messaging.destination.name']}`);
  }
  for (const owner of owners) expect(handlers.map((s) => s.service)).toContain(owner);
  const main = handlers.find((s) => s.attributes['messaging.destination.name'] === subject);
  expect(main).toBeDefined();

  const statements = own.filter(
    (s) => s.attributes['db.system.name'] === 'postgresql' || s.attributes['db.system'] === 'postgresql',
  );
  expect(statements.length).toBeGreaterThan(0);
  for (const statement of statements) {
    expect(ownerServices).toContain(statement.service);
    expect(ancestors(statement).some((a) => a.kind === CONSUMER && a.service === statement.service)).toBe(true);
  }
  expect(statements.some((s) => ancestors(s).includes(main!))).toBe(true);
  // Every span of the trace is reachable from the root: nothing dangles.
  for (const span of own) if (span !== root) expect(ancestors(span)).toContain(root);
  return own;
}

/**
 * The JSON log lines of a program's output carrying `requestId`, once at least one has arrived: the access line is
 * written before the answer leaves, but reaches this process through a pipe, possibly after the answer.
 */
async function requestLines(program: { output(): string }, requestId: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lines = logLines(program.output()).filter((l) => l.requestId === requestId);
    if (lines.length > 0 || Date.now() > deadline) return lines;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The JSON log lines of a program's output. */
function logLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('OpenTelemetry traces across the five programs', () => {
  let receiver: OtlpReceiver;
  let nats: Awaited<ReturnType<typeof startNats>>;
  const programs: Record<string, ProgramProcess> = {};
  let databaseUrl: string;
  let signingKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    nats = await startNats();
    databaseUrl = await createTestDatabase();
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    signingKey = privateKey;
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'test', alg: 'ES256' }] });
    const common = {
      NATS_URL: nats.url,
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    const owners = await Promise.all([
      startProgram('ledger', { ...common, DATABASE_URL: databaseUrl }),
      startProgram('identity-admission', {
        ...common,
        DATABASE_URL: databaseUrl,
        DEVELOPER_JWKS: jwks,
        DEVELOPER_JWT_ISSUER: ISSUER,
        DEVELOPER_JWT_AUDIENCE: AUDIENCE,
      }),
    ]);
    programs.ledger = owners[0];
    programs['identity-admission'] = owners[1];
    const edges = await Promise.all([
      startProgram('gateway', { ...common, ADMIN_TOKEN }),
      startProgram('ingest', common),
      startProgram('links', common),
    ]);
    programs.gateway = edges[0];
    programs.ingest = edges[1];
    programs.links = edges[2];
  }, 180_000);

  afterAll(async () => {
    for (const program of Object.values(programs)) await program.stop();
    await nats?.stop();
    await receiver?.stop();
  });

  it('an event is one trace: ingest HTTP, NATS request, ledger handler, its statements; the request id is the trace id', async () => {
    const world = await createEventWorld(databaseUrl);
    const event = await api(programs.ingest!.url, 'POST', '/api/game-sdk/v2/events', {
      token: world.key.value,
      body: {
        eventId: randomUUID(),
        playerId: world.player.id,
        eventType: world.eventType,
        occurredAt: new Date().toISOString(),
      },
    });
    expect(event.status).toBe(200);
    const traceId = event.headers.get('x-request-id') ?? '';
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    await receiver.waitFor(
      (spans) =>
        spans.some((s) => s.traceId === traceId && s.kind === SERVER) &&
        spans.some((s) => s.traceId === traceId && s.kind === CONSUMER && s.service === 'ledger') &&
        spans.some(
          (s) => s.traceId === traceId && s.service === 'ledger' && s.attributes['db.query.text'] !== undefined,
        ),
      'event trace',
    );
    // The edge sends events as RecordEventsWithProposedIds batches (event-batcher.ts); a lone event is a batch of one.
    expectRequestTrace(receiver.spans, traceId, 'ingest', ['ledger'], 'rewards.v1.ledger.RecordEventsWithProposedIds');

    // The edge's access line (and any line of the request) carries the trace id.
    const lines = await requestLines(programs.ingest!, traceId);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.trace_id).toBe(traceId);
  });

  it('a console action is one trace: gateway HTTP, identity-admission and ledger handlers, their statements', async () => {
    const email = `dev-${randomUUID().slice(0, 8)}@example.com`;
    const invited = await api(programs.gateway!.url, 'POST', '/api/admin/v1/invitations', {
      token: ADMIN_TOKEN,
      body: { email },
    });
    expect(invited.status).toBe(200);
    const session = await new SignJWT({ email, email_verified: true })
      .setProtectedHeader({ alg: 'ES256', kid: 'test' })
      .setSubject(`dev|${randomUUID()}`)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(signingKey);
    const action = await api(programs.gateway!.url, 'POST', '/api/developer/v1/console', {
      token: session,
      body: { type: 'createOrganization', name: 'Traced org' },
    });
    expect(action.status).toBe(200);
    const traceId = action.headers.get('x-request-id') ?? '';
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    await receiver.waitFor(
      (spans) =>
        spans.some((s) => s.traceId === traceId && s.kind === SERVER) &&
        spans.some((s) => s.traceId === traceId && s.kind === CONSUMER && s.service === 'identity-admission') &&
        spans.some((s) => s.traceId === traceId && s.kind === CONSUMER && s.service === 'ledger') &&
        spans.some(
          (s) => s.traceId === traceId && s.service === 'ledger' && s.attributes['db.query.text'] !== undefined,
        ),
      'console action trace',
    );
    expectRequestTrace(
      receiver.spans,
      traceId,
      'gateway',
      ['identity-admission', 'ledger'],
      'rewards.v1.ledger.ConsoleAction',
    );
    const lines = await requestLines(programs.gateway!, traceId);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.trace_id).toBe(traceId);

    // A client's own X-Request-Id is kept; the log lines still carry the trace id.
    const own = await api(programs.gateway!.url, 'GET', '/api/developer/v1/access', {
      token: session,
      headers: { 'X-Request-Id': 'client-chosen-id-42' },
    });
    expect(own.status).toBe(200);
    expect(own.headers.get('x-request-id')).toBe('client-chosen-id-42');
    const [line] = await requestLines(programs.gateway!, 'client-chosen-id-42');
    expect(line?.trace_id).toMatch(/^[0-9a-f]{32}$/);

    // Secrets: none of the credentials of these requests, nor a link token, is in anything exported.
    const world = await createEventWorld(databaseUrl);
    const link = await api(programs.links!.url, 'POST', '/api/game-sdk/v2/link-intents', {
      token: world.key.value,
      body: { externalPlayerId: `player-${randomUUID().slice(0, 8)}` },
    });
    expect(link.status).toBe(200);
    const linkToken = link.body.data.linkToken as string;
    const linkTrace = link.headers.get('x-request-id') ?? '';
    await receiver.waitFor(
      (spans) =>
        spans.some((s) => s.traceId === linkTrace && s.kind === SERVER && s.service === 'links') &&
        spans.some((s) => s.traceId === linkTrace && s.kind === CONSUMER && s.service === 'ledger'),
      'link intent trace',
    );
    expectRequestTrace(receiver.spans, linkTrace, 'links', ['ledger'], 'rewards.v1.ledger.CreateLinkIntent');
    const exported = receiver.bodies.join('\n');
    for (const secret of [ADMIN_TOKEN, session, world.key.value, linkToken]) {
      expect(exported.includes(secret)).toBe(false);
    }
    expect(exported).not.toMatch(/Bearer /i);
    // All five programs exported spans.
    expect(new Set(receiver.spans.map((s) => s.service))).toEqual(
      new Set(['gateway', 'ingest', 'links', 'ledger', 'identity-admission']),
    );
  });

  it('npm start on the in-process transport joins the same spans in one trace', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'aio', alg: 'ES256' }] });
    const dataDir = mkdtempSync(join(tmpdir(), 'rewards-traces-'));
    const system = await startProgram('all-in-one', {
      DATA_DIR: dataDir,
      DATABASE_URL: await createTestDatabase(),
      ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      DEVELOPER_JWKS: jwks,
      DEVELOPER_JWT_ISSUER: ISSUER,
      DEVELOPER_JWT_AUDIENCE: AUDIENCE,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    try {
      const email = `dev-${randomUUID().slice(0, 8)}@example.com`;
      expect(
        (await api(system.url, 'POST', '/api/admin/v1/invitations', { token: ADMIN_TOKEN, body: { email } })).status,
      ).toBe(200);
      const session = await new SignJWT({ email, email_verified: true })
        .setProtectedHeader({ alg: 'ES256', kid: 'aio' })
        .setSubject(`dev|${randomUUID()}`)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('10m')
        .sign(privateKey);
      const action = await api(system.url, 'POST', '/api/developer/v1/console', {
        token: session,
        body: { type: 'createOrganization', name: 'Traced org' },
      });
      expect(action.status).toBe(200);
      const traceId = action.headers.get('x-request-id') ?? '';
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      await receiver.waitFor(
        (spans) =>
          spans.some(
            (s) =>
              s.traceId === traceId &&
              s.kind === CONSUMER &&
              s.attributes['messaging.destination.name'] === 'rewards.v1.ledger.ConsoleAction',
          ) &&
          spans.some((s) => s.traceId === traceId && s.kind === SERVER) &&
          spans.some((s) => s.traceId === traceId && s.attributes['db.query.text'] !== undefined),
        'in-process console action trace',
      );
      expectRequestTrace(receiver.spans, traceId, 'all-in-one', ['all-in-one'], 'rewards.v1.ledger.ConsoleAction', {
        system: 'in-process',
        ownerServices: ['all-in-one'],
      });
      const lines = await requestLines(system, traceId);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line.trace_id).toBe(traceId);
    } finally {
      expect(await system.stop()).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('the register file loads nothing without an endpoint, or with OTEL_SDK_DISABLED=true', async () => {
    // Whether the SDK started: it leaves its shutdown behind for the programs' graceful stop.
    const probe = `process.stdout.write(String(typeof globalThis[Symbol.for('sandbox-rewards.tracing.shutdown')]))`;
    const started = async (env: Record<string, string>) => {
      const child = spawn(process.execPath, [...PROGRAM_NODE_OPTIONS, '--input-type=module', '-e', probe], {
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => {
        output += chunk;
      });
      await new Promise((resolve) => child.once('exit', resolve));
      return output;
    };
    expect(await started({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBe('undefined');
    expect(await started({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SDK_DISABLED: 'true' })).toBe(
      'undefined',
    );
    expect(await started({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces` })).toBe('function');
  }, 120_000);
});
