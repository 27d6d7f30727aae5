import { randomUUID } from 'node:crypto';
import { adminSchemas } from '../../../gateway/src/schemas/admin.ts';
import { commonSchemas, dataEnvelope } from '../../../gateway/src/schemas/common.ts';
import { SchemaSet } from '../../../gateway/src/schemas/json-schema.ts';
import { type CommandResult, runScript } from '../../support/cli.ts';
import { sql } from '../../support/database.ts';
import { freePort } from '../../support/servers.ts';
import type { ApiResponse } from '../../support/system.ts';
import { admin, api, startTestSystem, TEST_ADMIN_TOKEN, type TestSystem } from '../../support/system.ts';
import { errorBody } from './support.ts';

const shapes = new SchemaSet({ ...commonSchemas, ...adminSchemas });
const envelopes = new Map<string, ReturnType<SchemaSet['compile']>>();
/** The answer is 200 and exactly `{ data: <schemaName> }` (strict: no extra fields). */
function expectShape(response: ApiResponse, schemaName: string): void {
  expect(response.status).toBe(200);
  let validate = envelopes.get(schemaName);
  if (!validate) {
    validate = shapes.compile(dataEnvelope(schemaName));
    envelopes.set(schemaName, validate);
  }
  expect({ valid: validate(response.body), errors: validate.errors ?? null }).toEqual({ valid: true, errors: null });
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('operator API (CONTRACT section 3)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startTestSystem();
  });
  afterAll(async () => {
    await system?.stop();
  });

  describe('credential', () => {
    it('answers 401 UNAUTHORIZED without the bearer ADMIN_TOKEN, on every operator route', async () => {
      const routes: Array<[string, string, unknown]> = [
        ['POST', '/invitations', { email: 'a@example.com' }],
        ['GET', '/invitations', undefined],
        ['POST', `/invitations/${randomUUID()}/revoke`, undefined],
        ['PUT', `/native-accounts/${randomUUID()}`, { status: 'active' }],
        ['POST', '/device-permits', { sessionId: 's', creditsUserId: randomUUID(), expiresInSeconds: 60 }],
        ['PUT', '/platform', { enabled: false }],
        ['GET', '/audit', undefined],
      ];
      const credentials: Array<Record<string, string>> = [
        {},
        { Authorization: `Bearer ${TEST_ADMIN_TOKEN}x` },
        { Authorization: `Bearer ${TEST_ADMIN_TOKEN.slice(0, -1)}` },
        { Authorization: TEST_ADMIN_TOKEN },
        { Authorization: `Basic ${TEST_ADMIN_TOKEN}` },
      ];
      for (const [method, path, body] of routes) {
        for (const headers of credentials) {
          const response = await api(system.url, method, `/api/admin/v1${path}`, { body, headers });
          expect({ method, path, headers, status: response.status, body: response.body }).toEqual({
            method,
            path,
            headers,
            status: 401,
            body: errorBody('UNAUTHORIZED'),
          });
        }
      }
      // Nothing was changed by the refused calls.
      expect((await admin(system, 'GET', '/invitations')).body).toEqual({ data: { records: [] } });
      expect((await api(system.url, 'GET', '/api/developer/v1/access')).body).toEqual(errorBody('UNAUTHORIZED'));
    });
  });

  describe('invitations', () => {
    it('creates (200), lists and revokes invitations in the contract shapes', async () => {
      const created = await admin(system, 'POST', '/invitations', { email: 'Operator.Test@Example.com' });
      expectShape(created, 'Invitation');
      expect(created.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          email: 'Operator.Test@Example.com',
          status: 'active',
          identityUserId: null,
          canCreateUnlimitedOrganization: false,
          createdAt: expect.stringMatching(RFC3339),
          boundAt: null,
        },
      });
      const unlimited = await admin(system, 'POST', '/invitations', {
        email: 'unlimited@example.com',
        canCreateUnlimitedOrganization: true,
      });
      expect(unlimited.body.data.canCreateUnlimitedOrganization).toBe(true);

      const listed = await admin(system, 'GET', '/invitations');
      expectShape(listed, 'InvitationList');
      expect(listed.body.data.records).toEqual(expect.arrayContaining([created.body.data, unlimited.body.data]));

      const revoked = await admin(system, 'POST', `/invitations/${created.body.data.id}/revoke`);
      expectShape(revoked, 'Invitation');
      expect(revoked.body).toEqual({ data: { ...created.body.data, status: 'revoked' } });
      // Revoking again is harmless.
      expect((await admin(system, 'POST', `/invitations/${created.body.data.id}/revoke`)).body).toEqual(revoked.body);
    });

    it('answers 409 conflict for a second active invitation of an e-mail (any case), allows one after revocation', async () => {
      const first = await admin(system, 'POST', '/invitations', { email: 'twice@example.com' });
      const again = await admin(system, 'POST', '/invitations', { email: 'TWICE@example.com' });
      expect(again.status).toBe(409);
      expect(again.body).toEqual(errorBody('conflict'));
      await admin(system, 'POST', `/invitations/${first.body.data.id}/revoke`);
      const third = await admin(system, 'POST', '/invitations', { email: 'twice@example.com' });
      expect(third.status).toBe(200);
      expect(third.body.data.id).not.toBe(first.body.data.id);
    });

    it('answers 400 INVALID_REQUEST for an e-mail with a control character or a lone surrogate; nothing is stored', async () => {
      const tag = randomUUID().slice(0, 8);
      const raws = [
        // A NUL used to reach PostgreSQL (503 PLATFORM_UNAVAILABLE and a logged database error).
        `{"email":"nul-${tag}\\u0000@example.com"}`,
        `{"email":"bell-${tag}\\u0007@example.com"}`,
        `{"email":"del-${tag}@example.com\\u007f"}`,
        `{"email":"tab-${tag}\\t@example.com"}`,
        // A lone surrogate used to be stored as U+FFFD.
        `{"email":"lone-${tag}\\ud800@example.com"}`,
        `{"email":"lone-${tag}@example.com\\udfff"}`,
        // Duplicated member names used to be accepted, the last one winning.
        `{"email":"first-${tag}@example.com","email":"second-${tag}@example.com"}`,
      ];
      for (const raw of raws) {
        const response = await api(system.url, 'POST', '/api/admin/v1/invitations', {
          token: TEST_ADMIN_TOKEN,
          rawBody: raw,
          headers: { 'Content-Type': 'application/json' },
        });
        expect({ raw, status: response.status, body: response.body }).toEqual({
          raw,
          status: 400,
          body: errorBody('INVALID_REQUEST'),
        });
      }
      const listed = await admin(system, 'GET', '/invitations');
      expect(listed.body.data.records.filter((i: { email: string }) => i.email.includes(tag))).toEqual([]);
    });

    it('revoking an unknown or malformed id answers 404 not_found', async () => {
      for (const id of [randomUUID(), 'not-a-uuid']) {
        const response = await admin(system, 'POST', `/invitations/${id}/revoke`);
        expect(response.status).toBe(404);
        expect(response.body).toEqual(errorBody('not_found'));
      }
    });
  });

  describe('native accounts', () => {
    it('creates and updates an account: status, username kept when omitted, cleared with null', async () => {
      const id = randomUUID();
      const created = await admin(system, 'PUT', `/native-accounts/${id}`, {
        status: 'active',
        username: 'Player One',
      });
      expect(created.status).toBe(200);
      expect(created.body).toEqual({
        data: {
          creditsUserId: id,
          status: 'active',
          username: 'Player One',
          createdAt: expect.stringMatching(RFC3339),
        },
      });
      const disabled = await admin(system, 'PUT', `/native-accounts/${id}`, { status: 'disabled' });
      expect(disabled.body).toEqual({ data: { ...created.body.data, status: 'disabled' } });
      const renamed = await admin(system, 'PUT', `/native-accounts/${id}`, { status: 'active', username: 'P2' });
      expect(renamed.body).toEqual({ data: { ...created.body.data, username: 'P2' } });
      const cleared = await admin(system, 'PUT', `/native-accounts/${id}`, { status: 'active', username: null });
      expect(cleared.body).toEqual({ data: { ...created.body.data, username: null } });
      const plain = await admin(system, 'PUT', `/native-accounts/${randomUUID()}`, { status: 'disabled' });
      expectShape(plain, 'NativeAccount');
      expect(plain.body.data).toMatchObject({ status: 'disabled', username: null });
    });

    it('answers 400 INVALID_REQUEST for a malformed id or body', async () => {
      const cases: Array<[string, unknown]> = [
        ['not-a-uuid', { status: 'active' }],
        [randomUUID(), { status: 'banned' }],
        [randomUUID(), {}],
        [randomUUID(), { status: 'active', extra: 1 }],
        [randomUUID(), { status: 'active', username: '' }],
        [randomUUID(), { status: 'active', username: 'x'.repeat(101) }],
        [randomUUID(), { status: 'active', username: 'bell\u0007' }],
        [randomUUID(), { status: 'active', username: '   ' }],
        [randomUUID(), [{ status: 'active' }]],
      ];
      for (const [id, body] of cases) {
        const response = await admin(system, 'PUT', `/native-accounts/${id}`, body);
        expect({ id, body, status: response.status, error: response.body }).toEqual({
          id,
          body,
          status: 400,
          error: errorBody('INVALID_REQUEST'),
        });
      }
    });
  });

  describe('device permits', () => {
    it('creates a permit bound to a session id and an account, expiring after expiresInSeconds', async () => {
      const creditsUserId = randomUUID();
      const before = Date.now();
      const response = await admin(system, 'POST', '/device-permits', {
        sessionId: 'session-1',
        creditsUserId,
        expiresInSeconds: 600,
      });
      expectShape(response, 'DevicePermit');
      expect(response.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          sessionId: 'session-1',
          creditsUserId,
          expiresAt: expect.stringMatching(RFC3339),
        },
      });
      const expiresAt = Date.parse(response.body.data.expiresAt);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 600_000 - 5_000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 600_000 + 5_000);
      const longest = await admin(system, 'POST', '/device-permits', {
        sessionId: 'session-2',
        creditsUserId,
        expiresInSeconds: 86_400,
      });
      expect(longest.status).toBe(200);
    });

    it('answers 400 INVALID_REQUEST outside 1..86400 seconds, for a malformed account or session, unknown fields', async () => {
      const valid = { sessionId: 'session-x', creditsUserId: randomUUID(), expiresInSeconds: 60 };
      const bodies: unknown[] = [
        { ...valid, expiresInSeconds: 0 },
        { ...valid, expiresInSeconds: 86_401 },
        { ...valid, expiresInSeconds: 1.5 },
        { ...valid, expiresInSeconds: '60' },
        { ...valid, creditsUserId: 'someone' },
        { ...valid, sessionId: '' },
        { ...valid, sessionId: 's'.repeat(201) },
        // A NUL used to reach PostgreSQL (503 PLATFORM_UNAVAILABLE and a logged database error).
        { ...valid, sessionId: 'session\u0000x' },
        { ...valid, sessionId: 'session\u001fx' },
        { ...valid, sessionId: 'session\u007f' },
        { ...valid, extra: true },
        { sessionId: 'session-x', creditsUserId: randomUUID() },
      ];
      for (const body of bodies) {
        const response = await admin(system, 'POST', '/device-permits', body);
        expect({ body, status: response.status, error: response.body }).toEqual({
          body,
          status: 400,
          error: errorBody('INVALID_REQUEST'),
        });
      }
    });
  });

  describe("the operator's audit trail", () => {
    it('logs each invitation created or revoked and each platform switch, newest first, with the request id', async () => {
      const email = `audit-${randomUUID()}@example.com`;
      const created = await admin(system, 'POST', '/invitations', { email, canCreateUnlimitedOrganization: true });
      expect(created.status).toBe(200);
      // Refused (a second active invitation): no entry.
      expect((await admin(system, 'POST', '/invitations', { email })).status).toBe(409);
      const id = created.body.data.id as string;
      const revoked = await admin(system, 'POST', `/invitations/${id}/revoke`);
      const off = await admin(system, 'PUT', '/platform', { enabled: false });
      const on = await admin(system, 'PUT', '/platform', { enabled: true });

      const page = await admin(system, 'GET', '/audit?limit=4');
      expectShape(page, 'OperatorAuditPage');
      const requestId = (response: ApiResponse) => response.headers.get('x-request-id');
      expect(page.body.data.records.map((r: Record<string, unknown>) => ({ ...r, id: 'x', createdAt: 'x' }))).toEqual([
        {
          id: 'x',
          action: 'setPlatformState',
          targetKind: 'platform',
          targetId: null,
          changes: { enabled: { from: false, to: true } },
          requestId: requestId(on),
          createdAt: 'x',
        },
        {
          id: 'x',
          action: 'setPlatformState',
          targetKind: 'platform',
          targetId: null,
          changes: { enabled: { from: true, to: false } },
          requestId: requestId(off),
          createdAt: 'x',
        },
        {
          id: 'x',
          action: 'revokeInvitation',
          targetKind: 'invitation',
          targetId: id,
          changes: { status: { from: 'active', to: 'revoked' } },
          requestId: requestId(revoked),
          createdAt: 'x',
        },
        {
          id: 'x',
          action: 'createInvitation',
          targetKind: 'invitation',
          targetId: id,
          changes: { email: { from: null, to: email }, canCreateUnlimitedOrganization: { from: null, to: true } },
          requestId: requestId(created),
          createdAt: 'x',
        },
      ]);
      for (const r of page.body.data.records) expect(r.createdAt).toMatch(RFC3339);

      // Pages of two follow each other without a gap or a repeat.
      const first = await admin(system, 'GET', '/audit?limit=2');
      const second = await admin(system, 'GET', `/audit?limit=2&cursor=${first.body.data.nextCursor}`);
      expect([...first.body.data.records, ...second.body.data.records].map((r: { id: string }) => r.id)).toEqual(
        page.body.data.records.map((r: { id: string }) => r.id),
      );
    });

    it('answers 400 for a limit outside 1..999 or a cursor it did not give', async () => {
      for (const limit of ['0', '1000', 'x', '1.5']) {
        expect((await admin(system, 'GET', `/audit?limit=${limit}`)).body).toEqual(errorBody('INVALID_REQUEST'));
      }
      for (const cursor of ['x', Buffer.from('2026-01-01T00:00:00.000000Z|nope').toString('base64url')]) {
        expect((await admin(system, 'GET', `/audit?cursor=${cursor}`)).body).toEqual(errorBody('INVALID_CURSOR'));
      }
    });

    it('refuses to update or delete an entry (the database)', async () => {
      await admin(system, 'PUT', '/platform', { enabled: true });
      const db = system.databaseUrl!;
      await expect(sql(db, `update identity.operator_audit_log set request_id = 'x'`)).rejects.toThrow(
        'never updated or deleted',
      );
      await expect(sql(db, `delete from identity.operator_audit_log`)).rejects.toThrow('never updated or deleted');
    });
  });

  describe('platform and OpenAPI', () => {
    it('PUT /platform answers the new state', async () => {
      const off = await admin(system, 'PUT', '/platform', { enabled: false });
      expectShape(off, 'PlatformState');
      expect(off.body).toEqual({ data: { enabled: false } });
      const on = await admin(system, 'PUT', '/platform', { enabled: true });
      expect(on.body).toEqual({ data: { enabled: true } });
    });

    it('/openapi.json describes the operator API with the schemas the gateway validates with', async () => {
      const doc = (await api(system.url, 'GET', '/openapi.json')).body;
      expect(
        Object.keys(doc.paths)
          .filter((path: string) => path.startsWith('/api/admin/v1'))
          .sort(),
      ).toEqual([
        '/api/admin/v1/audit',
        '/api/admin/v1/device-permits',
        '/api/admin/v1/invitations',
        '/api/admin/v1/invitations/{id}/revoke',
        '/api/admin/v1/native-accounts/{creditsUserId}',
        '/api/admin/v1/platform',
      ]);
      expect(doc.paths['/api/admin/v1/invitations'].post.security).toEqual([{ adminToken: [] }]);
      for (const [name, schema] of Object.entries(adminSchemas)) {
        expect(doc.components.schemas[name]).toEqual(JSON.parse(JSON.stringify(schema)));
      }
    });
  });

  describe('bodies', () => {
    it('415 INVALID_CONTENT_TYPE without a JSON content type, 400 INVALID_REQUEST for invalid JSON or fields', async () => {
      const base = `${system.url}/api/admin/v1`;
      const auth = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
      const textPlain = await fetch(`${base}/invitations`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'text/plain' },
        body: '{"email":"a@example.com"}',
      });
      expect(textPlain.status).toBe(415);
      expect(await textPlain.json()).toEqual(errorBody('INVALID_CONTENT_TYPE'));
      for (const [path, method, raw] of [
        ['/invitations', 'POST', '{"email":'],
        ['/platform', 'PUT', 'enabled=false'],
        ['/invitations', 'POST', '{"email":"x@example.com","role":"admin"}'],
        ['/invitations', 'POST', '{"email":"not an e-mail"}'],
        ['/invitations', 'POST', '{"email":"a@example.com","canCreateUnlimitedOrganization":"yes"}'],
        ['/platform', 'PUT', '{"enabled":"false"}'],
        ['/platform', 'PUT', '{}'],
      ] as const) {
        const response = await fetch(`${base}${path}`, {
          method,
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: raw,
        });
        expect({ raw, status: response.status, body: await response.json() }).toEqual({
          raw,
          status: 400,
          body: errorBody('INVALID_REQUEST'),
        });
      }
    });
  });
});

describe('operator API without ADMIN_TOKEN', () => {
  it('is hidden: 404 not_found, whatever the credential', async () => {
    const system = await startTestSystem({ env: { ADMIN_TOKEN: undefined } });
    try {
      for (const token of [undefined, TEST_ADMIN_TOKEN, '']) {
        const response = await api(system.url, 'GET', '/api/admin/v1/invitations', { token });
        expect(response.status).toBe(404);
        expect(response.body).toEqual(errorBody('not_found'));
      }
    } finally {
      await system.stop();
    }
  }, 120_000);
});

type CliResult = CommandResult;

function runAdminCli(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  return runScript('gateway/src/cli/admin.ts', args, env);
}

describe('npm run admin', () => {
  let system: TestSystem;
  let env: Record<string, string>;
  beforeAll(async () => {
    system = await startTestSystem();
    env = { ADMIN_TOKEN: TEST_ADMIN_TOKEN, API_URL: system.url };
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('prints help and exits 0', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const result = await runAdminCli(args, {});
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/Usage: npm run admin -- <command>/);
      for (const command of [
        'invite',
        'invitations',
        'revoke-invitation',
        'native-account',
        'device-permit',
        'platform',
      ]) {
        expect(result.stdout).toContain(command);
      }
    }
  });

  it('invites, lists and revokes; manages native accounts, device permits and the platform switch', async () => {
    const invited = await runAdminCli(['invite', 'cli@example.com', '--unlimited', '--json'], env);
    expect(invited).toMatchObject({ code: 0, stderr: '' });
    const invitation = JSON.parse(invited.stdout);
    expect(invitation).toMatchObject({
      email: 'cli@example.com',
      status: 'active',
      canCreateUnlimitedOrganization: true,
    });

    const listed = await runAdminCli(['invitations'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(invitation.id);
    expect(listed.stdout).toContain('cli@example.com');

    const revoked = await runAdminCli(['revoke-invitation', invitation.id], env);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: invitation.id, status: 'revoked' });

    const accountId = randomUUID();
    const account = await runAdminCli(['native-account', accountId, '--status', 'disabled', '--username', 'Ada'], env);
    expect(account.code).toBe(0);
    expect(JSON.parse(account.stdout)).toMatchObject({ creditsUserId: accountId, status: 'disabled', username: 'Ada' });

    const permit = await runAdminCli(
      ['device-permit', '--session', 'sid-cli', '--account', accountId, '--expires-in', '120'],
      env,
    );
    expect(permit.code).toBe(0);
    expect(JSON.parse(permit.stdout)).toMatchObject({ sessionId: 'sid-cli', creditsUserId: accountId });

    const off = await runAdminCli(['platform', 'off'], env);
    expect(off).toMatchObject({ code: 0, stdout: 'platform disabled\n' });
    const blocked = await api(system.url, 'GET', '/api/developer/v1/access');
    expect(blocked.body).toEqual(errorBody('PLATFORM_DISABLED'));
    const on = await runAdminCli(['platform', 'on'], env);
    expect(on).toMatchObject({ code: 0, stdout: 'platform enabled\n' });
    expect((await api(system.url, 'GET', '/api/developer/v1/access')).body).toEqual(errorBody('UNAUTHORIZED'));

    // The audit trail: the two switches, the revocation, then (on the next page) the invitation.
    const audit = await runAdminCli(['audit', '--limit', '3'], env);
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/setPlatformState {2}platform\s+enabled false -> true/);
    expect(audit.stdout).toContain(`revokeInvitation  ${invitation.id}  status "active" -> "revoked"`);
    const cursor = /more: npm run admin -- audit --cursor (\S+)/.exec(audit.stdout)?.[1];
    expect(cursor).toBeDefined();
    const next = await runAdminCli(['audit', '--cursor', cursor!], env);
    expect(next.stdout).toContain(`createInvitation  ${invitation.id}  email null -> "cli@example.com"`);
  });

  it('explains usage errors with exit code 2', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [[], env, /a command is required/],
      [['frobnicate'], env, /unknown command "frobnicate"/],
      [['invite'], env, /invite takes one argument: EMAIL/],
      [['platform', 'maybe'], env, /platform takes on or off/],
      [['native-account', randomUUID()], env, /--status active or --status disabled/],
      [['device-permit', '--session', 's'], env, /--account UUID/],
      [
        ['device-permit', '--session', 's', '--account', randomUUID(), '--expires-in', '0'],
        env,
        /--expires-in must be/,
      ],
      [['invitations', '--bogus'], env, /Unknown option '--bogus'/],
      [['invitations'], { API_URL: system.url }, /ADMIN_TOKEN is not set/],
    ];
    for (const [args, environment, message] of cases) {
      const result = await runAdminCli(args, environment);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toMatch(/npm run admin -- --help/);
    }
  });

  it('reports API errors with their status, code and message, and an unreachable server, with exit code 1', async () => {
    const conflict = await runAdminCli(['invite', 'dup@example.com'], env);
    expect(conflict.code).toBe(0);
    const again = await runAdminCli(['invite', 'dup@example.com'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^admin: 409 conflict: .+/);

    const invalid = await runAdminCli(['native-account', 'not-a-uuid', '--status', 'active'], env);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/400 INVALID_REQUEST/);

    const wrongToken = await runAdminCli(['invitations'], { ...env, ADMIN_TOKEN: 'wrong-token' });
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.stderr).toMatch(/401 UNAUTHORIZED/);
    expect(wrongToken.stderr).toMatch(/ADMIN_TOKEN does not match/);

    const closedPort = await freePort();
    const unreachable = await runAdminCli(['invitations'], { ...env, API_URL: `http://127.0.0.1:${closedPort}` });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/cannot reach the API at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  });
});
