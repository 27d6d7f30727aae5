// Kept closed: NATS is a trust boundary. nats-server runs with the shipped authorization
// (charts/sandbox-rewards/nats-authorization.conf, one user per program) and:
// - a client without credentials, or with a wrong password, is refused at connect;
// - an edge's credentials (ingest) cannot call the operator's subjects nor the console's, cannot serve a state
//   owner's subjects (to read what others send it), cannot read another program's replies (`_INBOX.gateway.>`, or
//   `_INBOX.>`) and cannot publish notices, while the gateway's can call them;
// - the five programs, each run alone with its own user (NATS_USER/NATS_PASSWORD), still do their jobs: an operator
//   invitation, the console, a link approved from a native session, an event decided and its notice delivered,
//   with not one permission violation in the server's log;
// - with TLS that verifies clients (NATS_TLS_CA_FILE, NATS_TLS_CERT_FILE, NATS_TLS_KEY_FILE), a program connects and
//   is ready, while a client without a certificate, or that does not trust the server's CA, is refused.

import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { pino } from 'pino';
import { AuthenticateGameKeyRequestSchema } from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import { DecisionCommittedSchema } from '#runtime/contracts/gen/rewards/v1/notices_pb.ts';
import { identityOps, ledgerOps } from '#runtime/contracts/operations.ts';
import { decisionsSubject } from '#runtime/contracts/subjects.ts';
import { createMetrics } from '#runtime/metrics.ts';
import { NatsTransport } from '#runtime/transport/nats.ts';
import type { NatsSecurity } from '#runtime/transport/nats-security.ts';
import { type Programs, startPrograms } from '../../../services/launcher/tools/processes.ts';
import { createTestDatabase } from '../../support/database.ts';
import { until } from '../../support/ingest.ts';
import { startProgram } from '../../support/processes.ts';
import { type StartedNats, startNats } from '../../support/servers.ts';
import { api } from '../../support/system.ts';
import { TEST_WEBHOOK_SECRET_KEY } from '../../support/webhook-key.ts';

const CONFIG = fileURLToPath(new URL('../../../charts/sandbox-rewards/nats-authorization.conf', import.meta.url));
const USERS = ['gateway', 'ingest', 'links', 'ledger', 'identity-admission'] as const;
type User = (typeof USERS)[number];
const PASSWORDS = Object.fromEntries(USERS.map((user) => [user, `pw-${user}-${randomUUID()}`])) as Record<User, string>;
/** nats-server's environment: the passwords the configuration names (NATS_<PROGRAM>_PASSWORD). */
const SERVER_ENV = Object.fromEntries(
  USERS.map((user) => [`NATS_${user.toUpperCase().replace('-', '_')}_PASSWORD`, PASSWORDS[user]]),
);
const ADMIN_TOKEN = `admin-${randomUUID()}-${randomUUID()}`;
const ISSUER = 'https://idp.example';
const logger = pino({ level: 'silent' });
const call = { requestId: 'nats-authorization-test' };
type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

let nats: StartedNats;
let natsLog: string;
let programs: Programs | undefined;
const opened: Array<{ close(): Promise<void> }> = [];

function asUser(user: User): NatsSecurity {
  return { credentials: { kind: 'user', user, password: PASSWORDS[user] }, tls: undefined };
}

async function transportOf(user: User): Promise<NatsTransport> {
  const transport = await NatsTransport.connect({
    url: nats.url,
    connectionName: `test-as-${user}`,
    // The program's own reply inbox: its user may subscribe there only.
    inboxPrefix: `_INBOX.${user}`,
    requestTimeoutMs: 2000,
    undeliveredWaitMs: 0,
    logger,
    metrics: createMetrics(),
    security: asUser(user),
  });
  opened.push(transport);
  return transport;
}

/** The server's permission violations logged since `from` (a length of the log). */
function violationsSince(from: number): string[] {
  return readFileSync(natsLog, 'utf8')
    .slice(from)
    .split('\n')
    .filter((line) => /Violation/i.test(line));
}

beforeAll(async () => {
  natsLog = join(mkdtempSync(join(tmpdir(), 'rewards-nats-auth-')), 'nats.log');
  nats = await startNats(undefined, {
    configFile: CONFIG,
    logFile: natsLog,
    env: SERVER_ENV,
  });
});

afterAll(async () => {
  for (const connection of opened.splice(0)) await connection.close().catch(() => undefined);
  await programs?.stop();
  await nats?.stop();
});

describe('without credentials', () => {
  it('a client is refused at connect, as is a wrong password or another program name', async () => {
    const attempts: Array<Parameters<typeof connect>[0]> = [
      {},
      { user: 'ingest', pass: 'not-the-password' },
      { user: 'operator', pass: PASSWORDS.gateway },
    ];
    for (const options of attempts) {
      await expect(connect({ servers: nats.url, reconnect: false, ...options })).rejects.toThrow(
        /Authorization Violation/i,
      );
    }
    // The runtime's own transport, given no NATS_USER: the same refusal.
    await expect(
      NatsTransport.connect({
        url: nats.url,
        connectionName: 'anonymous',
        requestTimeoutMs: 2000,
        logger,
        metrics: createMetrics(),
      }),
    ).rejects.toThrow(/Authorization Violation/i);
  });
});

describe("an edge's credentials (ingest)", () => {
  let ingest: NatsTransport;
  let gateway: NatsTransport;
  beforeAll(async () => {
    ingest = await transportOf('ingest');
    gateway = await transportOf('gateway');
  });

  it("cannot call the operator's subjects", async () => {
    // No identity-admission is serving yet: the gateway's call gets "no responders" (delivered, nobody home), the
    // edge's is refused by the server before anything could be delivered.
    const before = readFileSync(natsLog, 'utf8').length;
    const email = `victim-${randomUUID()}@example.com`;
    await expect(
      ingest.call(identityOps.createInvitation, { email, canCreateUnlimitedOrganization: true }, call),
    ).rejects.toThrow();
    await expect(ingest.call(identityOps.setPlatformState, { enabled: false }, call)).rejects.toThrow();
    await expect(ingest.call(identityOps.listInvitations, {}, call)).rejects.toThrow();
    const refused = violationsSince(before).join('\n');
    for (const rpc of ['CreateInvitation', 'SetPlatformState', 'ListInvitations']) {
      expect(refused).toMatch(
        new RegExp(`User "ingest".*rewards\\.v1\\.identity\\.${rpc}|rewards\\.v1\\.identity\\.${rpc}.*ingest`),
      );
    }
    // The gateway's same call is not a violation (it may publish there).
    const between = readFileSync(natsLog, 'utf8').length;
    await expect(gateway.call(identityOps.listInvitations, {}, call)).rejects.toThrow();
    expect(violationsSince(between)).toEqual([]);
  });

  it("cannot call the console's subjects, nor pose as a state owner or publish notices", async () => {
    const before = readFileSync(natsLog, 'utf8').length;
    const principal = { identityUserId: 'victim', canCreateUnlimitedOrganization: true };
    await expect(ingest.call(ledgerOps.getSnapshot, { principal }, call)).rejects.toThrow();
    await expect(ingest.call(identityOps.admitDeveloper, {}, call)).rejects.toThrow();
    // Serving identity-admission's subjects would hand it every developer's session token.
    const raw = await connect({ servers: nats.url, user: 'ingest', pass: PASSWORDS.ingest, reconnect: false });
    opened.push({ close: () => raw.close() });
    const stolen = raw.subscribe('rewards.v1.identity.>');
    const refusedSubscription = (async () => {
      for await (const _ of stolen) return 'received';
      return 'ended';
    })();
    await expect(refusedSubscription).rejects.toThrow(/Permissions Violation/i);
    // Nor read the replies meant for another program (the gateway's: snapshots, invitations), or for every program.
    for (const inbox of ['_INBOX.gateway.>', '_INBOX.>']) {
      const other = await connect({ servers: nats.url, user: 'ingest', pass: PASSWORDS.ingest, reconnect: false });
      opened.push({ close: () => other.close() });
      const replies = other.subscribe(inbox);
      await expect(
        (async () => {
          for await (const _ of replies) return 'received';
          return 'ended';
        })(),
      ).rejects.toThrow(/Permissions Violation/i);
    }
    raw.publish(decisionsSubject(randomUUID()), new Uint8Array([1]));
    await raw.flush();
    const log = violationsSince(before).join('\n');
    for (const subject of [
      'rewards.v1.ledger.GetSnapshot',
      'rewards.v1.identity.AdmitDeveloper',
      'rewards.v1.identity.>',
      '_INBOX.gateway.>',
      'rewards.v1.notices.decisions.',
    ]) {
      expect(log).toContain(subject);
    }
  });
});

describe('the five programs, each with its own user', () => {
  let urls: Record<User, string>;
  let beforeStart: number;
  let developerKey: PrivateKey;
  let nativeKey: PrivateKey;

  beforeAll(async () => {
    const developerPair = await generateKeyPair('ES256');
    const nativePair = await generateKeyPair('ES256');
    developerKey = developerPair.privateKey;
    nativeKey = nativePair.privateKey;
    const jwks = async (key: Awaited<ReturnType<typeof generateKeyPair>>['publicKey']) =>
      JSON.stringify({ keys: [{ ...((await exportJWK(key)) as JWK), kid: 'test', alg: 'ES256' }] });
    const databaseUrl = await createTestDatabase();
    beforeStart = readFileSync(natsLog, 'utf8').length;
    programs = await startPrograms({
      programs: Object.fromEntries(
        USERS.map((user) => [user, { env: { NATS_USER: user, NATS_PASSWORD: PASSWORDS[user] } }]),
      ),
      env: {
        NATS_URL: nats.url,
        DATABASE_URL: databaseUrl,
        WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY,
        ADMIN_TOKEN,
        SHUTDOWN_DRAIN_MS: '0',
        DEVELOPER_JWKS: await jwks(developerPair.publicKey),
        DEVELOPER_JWT_ISSUER: ISSUER,
        DEVELOPER_JWT_AUDIENCE: 'rewards',
        NATIVE_JWKS: await jwks(nativePair.publicKey),
        NATIVE_JWT_ISSUER: ISSUER,
        NATIVE_JWT_AUDIENCE: 'rewards-native',
        NATIVE_ADMISSION_MODE: 'off',
      },
      logDir: mkdtempSync(join(tmpdir(), 'rewards-nats-auth-programs-')),
      startTimeoutMs: 120_000,
    });
    const started = programs;
    urls = Object.fromEntries(USERS.map((user) => [user, started.get(user).url])) as Record<User, string>;
  }, 180_000);

  const sign = (key: PrivateKey, audience: string, subject: string, claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'test' })
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(key);

  it('invite, console, link, event and its notice: no permission violation', async () => {
    // The gateway's live decisions subscribe to the ledger's notices with the gateway's user.
    const watcher: NatsConnection = await connect({ servers: nats.url, user: 'gateway', pass: PASSWORDS.gateway });
    opened.push({ close: () => watcher.close() });

    const email = `owner-${randomUUID()}@example.com`;
    const invited = await api(urls.gateway, 'POST', '/api/admin/v1/invitations', {
      token: ADMIN_TOKEN,
      body: { email },
    });
    expect(invited.status).toBe(200);
    const token = await sign(developerKey, 'rewards', `idp|${randomUUID()}`, { email, email_verified: true });
    const act = async (action: Record<string, unknown>) => {
      const answer = await api(urls.gateway, 'POST', '/api/developer/v1/console', { token, body: action });
      expect([answer.status, answer.body]).toEqual([200, expect.anything()]);
      return answer.body.data as { id: string; issuedKey?: string };
    };
    const organizationId = (await act({ type: 'createOrganization', name: 'Trusted' })).id;
    await act({ type: 'fundOrganization', organizationId, amountCredits: 10_000 });
    const projectId = (await act({ type: 'createProject', organizationId, name: 'P', maxPayoutCredits: 10_000 })).id;
    await act({ type: 'allocateProject', projectId, amountCredits: 5_000 });
    const gameId = (
      await act({
        type: 'createGame',
        projectId,
        name: 'G',
        platform: 'web',
        maxPayoutCredits: 5_000,
        dailyPlayerCapCredits: 1_000,
      })
    ).id;
    await act({ type: 'allocateGame', gameId, amountCredits: 1_000 });
    await act({ type: 'createRule', gameId, eventType: 'level.up', rewardCredits: 25 });
    const key = (await act({ type: 'issueKey', gameId, kind: 'secret', name: 'server' })).issuedKey!;
    const notices = watcher.subscribe(decisionsSubject(gameId), { max: 1 });

    // links: a link intent (game key), approved from a native session.
    const intent = await api(urls.links, 'POST', '/api/game-sdk/v2/link-intents', {
      token: key,
      body: { externalPlayerId: 'player-1' },
    });
    expect(intent.status).toBe(200);
    const nativeToken = await sign(nativeKey, 'rewards-native', randomUUID(), { sid: `sid-${randomUUID()}` });
    const approved = await api(urls.links, 'POST', '/api/native/v1/link-intents/approve', {
      token: nativeToken,
      body: { linkToken: intent.body.data.linkToken },
      headers: { 'X-Client-Country': 'DE', 'X-Client-Build': '1' },
    });
    expect([approved.status, approved.body.data?.linked]).toEqual([200, true]);

    // ingest: the event, decided by the ledger; its notice reaches the gateway's user.
    const event = await api(urls.ingest, 'POST', '/api/game-sdk/v2/events', {
      token: key,
      body: {
        eventId: randomUUID(),
        playerId: intent.body.data.playerId,
        eventType: 'level.up',
        occurredAt: new Date().toISOString(),
      },
    });
    expect(event.status).toBe(200);
    expect(event.body.data).toMatchObject({ status: 'accepted', rewardCredits: 25 });
    for await (const message of notices) {
      expect(fromBinary(DecisionCommittedSchema, message.data).decision?.gameId).toBe(gameId);
    }

    // The console reads it back (gateway -> ledger and identity-admission).
    const snapshot = await api(urls.gateway, 'GET', '/api/developer/v1/console', { token });
    expect(snapshot.status).toBe(200);
    expect(snapshot.body.data.events.map((e: { status: string }) => e.status)).toEqual(['accepted']);
    // Every program connected as its own user and, from its start on, none was refused anything.
    expect(violationsSince(beforeStart)).toEqual([]);
  }, 120_000);
});

describe("an edge cannot steer a state owner's reply onto another subject", () => {
  // Runs after the five programs started (jest runs describe blocks in order): the real ledger and identity-admission
  // serve, each with its own user.
  it('a reply the ledger would send to rewards.v1.identity.SetPlatformState is refused by the server', async () => {
    // The NATS layer alone: a responder with the ledger's user answers a request whose reply subject is the operator's
    // platform switch. nats-server refuses the publish (no allow_responses), so identity-admission never sees it.
    const ledger = await connect({ servers: nats.url, user: 'ledger', pass: PASSWORDS.ledger, reconnect: false });
    const edge = await connect({ servers: nats.url, user: 'ingest', pass: PASSWORDS.ingest, reconnect: false });
    opened.push({ close: () => ledger.close() }, { close: () => edge.close() });
    const received = ledger.subscribe(ledgerOps.getPublicConfig.subject, { max: 1 });
    await ledger.flush();
    const before = readFileSync(natsLog, 'utf8').length;
    edge.publish(ledgerOps.getPublicConfig.subject, new Uint8Array(), { reply: identityOps.setPlatformState.subject });
    for await (const message of received) message.respond(new Uint8Array());
    await ledger.flush();
    // The violation is logged once the server has read the publish; the log is written before the flush returns.
    await until(
      'the permissions violation logged',
      async () => violationsSince(before).some((line) => line.includes(identityOps.setPlatformState.subject)),
      10_000,
    );
    expect(violationsSince(before).join('\n')).toMatch(/ledger.*rewards\.v1\.identity\.SetPlatformState/);
  });

  it('the real ledger drops such a request, empty or malformed: the platform stays as the operator set it', async () => {
    const gatewayCalls = await transportOf('gateway');
    const state = async () => (await gatewayCalls.call(identityOps.getPlatformState, {}, call)).enabled;
    const edge = await connect({ servers: nats.url, user: 'ingest', pass: PASSWORDS.ingest, reconnect: false });
    opened.push({ close: () => edge.close() });
    const ledgerLog = () => programs!.get('ledger').output();
    const refusals = () => ledgerLog().split('NATS message refused').length - 1;
    /** ingest may send AuthenticateGameKey: it names the platform switch as the reply subject. */
    const steer = async (data: Uint8Array) => {
      const seen = refusals();
      edge.publish(ledgerOps.authenticateGameKey.subject, data, { reply: identityOps.setPlatformState.subject });
      await edge.flush();
      await until('the ledger refused the request', async () => refusals() > seen, 10_000);
    };
    const before = readFileSync(natsLog, 'utf8').length;
    expect(await state()).toBe(true);
    // A random key's reply is empty: read as a SetPlatformState request it would have meant "off".
    await steer(
      toBinary(
        AuthenticateGameKeyRequestSchema,
        create(AuthenticateGameKeyRequestSchema, { keyHash: new Uint8Array(32).fill(7) }),
      ),
    );
    expect(await state()).toBe(true);
    // The mirror: the operator switched the platform off; a malformed request's error reply must not turn it on.
    const off = await api(programs!.get('gateway').url, 'PUT', '/api/admin/v1/platform', {
      token: ADMIN_TOKEN,
      body: { enabled: false },
    });
    expect([off.status, off.body]).toEqual([200, { data: { enabled: false } }]);
    await steer(new TextEncoder().encode('garbage'));
    expect(await state()).toBe(false);
    const on = await api(programs!.get('gateway').url, 'PUT', '/api/admin/v1/platform', {
      token: ADMIN_TOKEN,
      body: { enabled: true },
    });
    expect([on.status, on.body]).toEqual([200, { data: { enabled: true } }]);
    // The ledger dropped both before answering: it did not even try to publish on the operator's subject.
    expect(violationsSince(before)).toEqual([]);
    expect(ledgerLog()).toMatch(/"reason":"reply_not_inbox"/);
  });

  it('identity-admission refuses a SetPlatformState that does not name its change', async () => {
    const gatewayCalls = await transportOf('gateway');
    await expect(gatewayCalls.call(identityOps.setPlatformState, { enabled: false }, call)).rejects.toMatchObject({
      status: 503,
      code: 'PLATFORM_UNAVAILABLE',
    });
    expect((await gatewayCalls.call(identityOps.getPlatformState, {}, call)).enabled).toBe(true);
  });
});

/** A CA, and a server (127.0.0.1) and a client certificate it signed, as PEM files in a new folder. */
function certificates(): Record<'ca' | 'serverCert' | 'serverKey' | 'clientCert' | 'clientKey', string> {
  const dir = mkdtempSync(join(tmpdir(), 'rewards-nats-tls-'));
  const path = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.crt'),
    '-subj',
    '/CN=test-ca',
    '-days',
    '1',
  );
  for (const [name, extension] of [
    ['server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'],
    ['client', 'extendedKeyUsage=clientAuth\n'],
  ] as const) {
    writeFileSync(path(`${name}.ext`), extension);
    openssl('req', ...ec, '-keyout', path(`${name}.key`), '-out', path(`${name}.csr`), '-subj', `/CN=${name}`);
    openssl(
      'x509',
      '-req',
      '-in',
      path(`${name}.csr`),
      '-CA',
      path('ca.crt'),
      '-CAkey',
      path('ca.key'),
      '-CAcreateserial',
      '-out',
      path(`${name}.crt`),
      '-days',
      '1',
      '-extfile',
      path(`${name}.ext`),
    );
  }
  return {
    ca: path('ca.crt'),
    serverCert: path('server.crt'),
    serverKey: path('server.key'),
    clientCert: path('client.crt'),
    clientKey: path('client.key'),
  };
}

describe('TLS with client certificates', () => {
  let tlsNats: StartedNats;
  let files: ReturnType<typeof certificates>;
  beforeAll(async () => {
    files = certificates();
    const dir = mkdtempSync(join(tmpdir(), 'rewards-nats-tls-conf-'));
    copyFileSync(CONFIG, join(dir, 'nats-authorization.conf'));
    writeFileSync(
      join(dir, 'nats.conf'),
      `include ./nats-authorization.conf\n` +
        `tls {\n  cert_file: "${files.serverCert}"\n  key_file: "${files.serverKey}"\n` +
        `  ca_file: "${files.ca}"\n  verify: true\n}\n`,
    );
    tlsNats = await startNats(undefined, {
      configFile: join(dir, 'nats.conf'),
      env: SERVER_ENV,
    });
  });
  afterAll(() => tlsNats?.stop());

  const tlsEnv = () => ({
    NATS_URL: tlsNats.url,
    NATS_USER: 'ingest',
    NATS_PASSWORD: PASSWORDS.ingest,
    NATS_TLS_CA_FILE: files.ca,
    NATS_TLS_CERT_FILE: files.clientCert,
    NATS_TLS_KEY_FILE: files.clientKey,
  });

  it('a program given the CA, its certificate and its user connects and is ready', async () => {
    const ingest = await startProgram('ingest', { ...tlsEnv(), SHUTDOWN_DRAIN_MS: '0' });
    opened.push({ close: async () => void (await ingest.stop()) });
    expect((await fetch(`${ingest.url}/readyz`)).status).toBe(200);
  }, 120_000);

  it("without a client certificate, or without trusting the server's CA, the connection is refused", async () => {
    const attempt = (tls: Record<string, string>) =>
      connect({ servers: tlsNats.url, reconnect: false, user: 'ingest', pass: PASSWORDS.ingest, tls });
    await expect(attempt({ caFile: files.ca })).rejects.toThrow();
    await expect(attempt({ certFile: files.clientCert, keyFile: files.clientKey })).rejects.toThrow();
    const trusted = await attempt({ caFile: files.ca, certFile: files.clientCert, keyFile: files.clientKey });
    expect(trusted.info?.tls_required).toBe(true);
    await trusted.close();
  });
});
