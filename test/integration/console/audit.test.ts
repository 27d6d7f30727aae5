// The audit trail (CONTRACT section 11.2) on real PostgreSQL and NATS: one entry per successful console action of
// every type, written in its transaction with the contract's shape (target, project and game, changes {from, to},
// the response's X-Request-Id, the actor's e-mail), never a key value or a secret; none for a refused action. Reads:
// REST GET /api/developer/v1/audit and GraphQL auditLog with the records' paging, filters, limits and errors; owner
// and admins only (viewer 403, outsider 404). Entries are immutable: the database refuses UPDATE and DELETE.

import { randomUUID } from 'node:crypto';
import { act, addMember, type Developer, developer, expectData, expectError, ok } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { type ApiResponse, api, startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql } from '../graphql/helpers.ts';

const AUDIT = '/api/developer/v1/audit';

let system: TestSystem;
let owner: Developer;
let adminDev: Developer;
let viewer: Developer;
let outsider: Developer;
let organizationId: string;
let projectId: string;
let gameId: string;

const db = (text: string, params: unknown[] = []) => sql(system.databaseUrl!, text, params);

interface Entry {
  id: string;
  organizationId: string;
  projectId: string | null;
  gameId: string | null;
  actor: { identityUserId: string; email: string | null };
  action: string;
  targetKind: string | null;
  targetId: string;
  changes: Record<string, { from: unknown; to: unknown }>;
  requestId: string | null;
  createdAt: string;
}

function audit(token: string, query: Record<string, string | number>): Promise<ApiResponse> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return api(system.url, 'GET', `${AUDIT}?${search}`, { token });
}

/** Every entry of the organization matching the query, page after page (limit 100). */
async function allEntries(query: Record<string, string | number> = {}, token = owner.token): Promise<Entry[]> {
  const entries: Entry[] = [];
  let cursor: string | null = null;
  do {
    const page: { records: Entry[]; nextCursor: string | null } = expectData(
      await audit(token, { organizationId, limit: 100, ...query, ...(cursor ? { cursor } : {}) }),
      'AuditPage',
    );
    entries.push(...page.records);
    cursor = page.nextCursor;
  } while (cursor);
  return entries;
}

/** Runs an action that must succeed; returns its result and the response's X-Request-Id. */
async function acted(token: string, action: Record<string, unknown>) {
  const response = await act(system, token, action);
  const result = expectData<{ id: string; issuedKey?: string; secret?: string }>(response, 'DeveloperActionResult');
  return { result, requestId: response.headers.get('X-Request-Id') };
}

/** The one entry written by the response with this request id. */
async function entryOf(requestId: string | null): Promise<Entry> {
  expect(requestId).toBeTruthy();
  const matching = (await allEntries()).filter((e) => e.requestId === requestId);
  expect(matching).toHaveLength(1);
  return matching[0]!;
}

beforeAll(async () => {
  system = await startTestSystem({ env: { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' } });
  owner = await developer(system);
  adminDev = await developer(system);
  viewer = await developer(system);
  outsider = await developer(system);
});

afterAll(async () => {
  await system?.stop();
});

describe('one entry per successful action', () => {
  const seen = new Set<string>();
  const actor = () => ({ identityUserId: owner.sub, email: owner.email });

  it('createOrganization, fundOrganization', async () => {
    const created = await acted(owner.token, { type: 'createOrganization', name: 'Audited' });
    organizationId = created.result.id;
    expect(await entryOf(created.requestId)).toEqual({
      id: expect.any(String),
      organizationId,
      projectId: null,
      gameId: null,
      actor: actor(),
      action: 'createOrganization',
      targetKind: 'organization',
      targetId: organizationId,
      changes: { name: { from: null, to: 'Audited' } },
      requestId: created.requestId,
      createdAt: expect.stringMatching(/Z$/),
    });
    const funded = await acted(owner.token, { type: 'fundOrganization', organizationId, amountCredits: 10_000 });
    expect(await entryOf(funded.requestId)).toMatchObject({
      action: 'fundOrganization',
      targetKind: 'organization',
      targetId: organizationId,
      projectId: null,
      gameId: null,
      changes: { amountCredits: { from: null, to: 10_000 } },
    });
    seen.add('createOrganization').add('fundOrganization');
  });

  it('createProject, updateProject, allocateProject', async () => {
    const created = await acted(owner.token, {
      type: 'createProject',
      organizationId,
      name: 'P',
      maxPayoutCredits: 50_000,
    });
    projectId = created.result.id;
    expect(await entryOf(created.requestId)).toMatchObject({
      action: 'createProject',
      targetKind: 'project',
      targetId: projectId,
      projectId,
      gameId: null,
      changes: {
        organizationId: { from: null, to: organizationId },
        name: { from: null, to: 'P' },
        maxPayoutCredits: { from: null, to: 50_000 },
      },
    });
    const updated = await acted(owner.token, { type: 'updateProject', projectId, name: 'P2' });
    expect((await entryOf(updated.requestId)).changes).toEqual({ name: { from: 'P', to: 'P2' } });
    const allocated = await acted(owner.token, { type: 'allocateProject', projectId, amountCredits: 5_000 });
    expect(await entryOf(allocated.requestId)).toMatchObject({
      targetKind: 'project',
      targetId: projectId,
      projectId,
      gameId: null,
      changes: { amountCredits: { from: null, to: 5_000 } },
    });
    seen.add('createProject').add('updateProject').add('allocateProject');
  });

  it('createGame, updateGame, allocateGame', async () => {
    const created = await acted(owner.token, {
      type: 'createGame',
      projectId,
      name: 'G',
      platform: 'web',
      maxPayoutCredits: 20_000,
      dailyPlayerCapCredits: 100,
    });
    gameId = created.result.id;
    expect(await entryOf(created.requestId)).toMatchObject({
      action: 'createGame',
      targetKind: 'game',
      targetId: gameId,
      projectId,
      gameId,
      changes: {
        projectId: { from: null, to: projectId },
        name: { from: null, to: 'G' },
        platform: { from: null, to: 'web' },
        maxPayoutCredits: { from: null, to: 20_000 },
        dailyPlayerCapCredits: { from: null, to: 100 },
      },
    });
    const updated = await acted(owner.token, {
      type: 'updateGame',
      gameId,
      status: 'paused',
      dailyPlayerCapCredits: 50,
    });
    expect((await entryOf(updated.requestId)).changes).toEqual({
      status: { from: 'active', to: 'paused' },
      dailyPlayerCapCredits: { from: 100, to: 50 },
    });
    const allocated = await acted(owner.token, { type: 'allocateGame', gameId, amountCredits: 1_000 });
    expect(await entryOf(allocated.requestId)).toMatchObject({
      targetKind: 'game',
      targetId: gameId,
      projectId,
      gameId,
      changes: { amountCredits: { from: null, to: 1_000 } },
    });
    seen.add('createGame').add('updateGame').add('allocateGame');
  });

  it('createRule, updateRule', async () => {
    const created = await acted(owner.token, { type: 'createRule', gameId, eventType: 'level_up', rewardCredits: 5 });
    const ruleId = created.result.id;
    expect(await entryOf(created.requestId)).toMatchObject({
      targetKind: 'rule',
      targetId: ruleId,
      projectId,
      gameId,
      changes: {
        gameId: { from: null, to: gameId },
        eventType: { from: null, to: 'level_up' },
        rewardCredits: { from: null, to: 5 },
      },
    });
    const updated = await acted(owner.token, { type: 'updateRule', ruleId, rewardCredits: 7, active: false });
    expect(await entryOf(updated.requestId)).toMatchObject({
      targetKind: 'rule',
      targetId: ruleId,
      projectId,
      gameId,
      changes: { rewardCredits: { from: 5, to: 7 }, active: { from: true, to: false } },
    });
    seen.add('createRule').add('updateRule');
  });

  it('advanceGameClock records its seconds from null; createTestPlayer its game and external id', async () => {
    const advanced = await acted(owner.token, { type: 'advanceGameClock', gameId, seconds: 86_400 });
    expect(await entryOf(advanced.requestId)).toMatchObject({
      action: 'advanceGameClock',
      targetKind: 'game',
      targetId: gameId,
      projectId,
      gameId,
      changes: { seconds: { from: null, to: 86_400 } },
    });
    const player = await acted(owner.token, { type: 'createTestPlayer', gameId, externalPlayerId: 'audit-tester' });
    expect(await entryOf(player.requestId)).toMatchObject({
      action: 'createTestPlayer',
      targetKind: 'player',
      targetId: player.result.id,
      projectId,
      gameId,
      changes: { gameId: { from: null, to: gameId }, externalPlayerId: { from: null, to: 'audit-tester' } },
    });
    seen.add('advanceGameClock').add('createTestPlayer');
  });

  it('issueKey records name, kind and prefix, never the key; revokeKey', async () => {
    for (const kind of ['secret', 'public'] as const) {
      const issued = await acted(owner.token, { type: 'issueKey', gameId, kind, name: `k-${kind}` });
      const entry = await entryOf(issued.requestId);
      const prefix = issued.result.issuedKey!.slice(0, `cr_xk_sandbox_`.length + 6);
      expect(entry).toMatchObject({
        targetKind: 'key',
        targetId: issued.result.id,
        projectId,
        gameId,
        changes: {
          gameId: { from: null, to: gameId },
          kind: { from: null, to: kind },
          name: { from: null, to: `k-${kind}` },
          prefix: { from: null, to: prefix },
        },
      });
      expect(JSON.stringify(entry)).not.toContain(issued.result.issuedKey!);
      const revoked = await acted(owner.token, { type: 'revokeKey', keyId: issued.result.id });
      expect(await entryOf(revoked.requestId)).toMatchObject({
        action: 'revokeKey',
        targetKind: 'key',
        targetId: issued.result.id,
        projectId,
        gameId,
        changes: {},
      });
    }
    seen.add('issueKey').add('revokeKey');
  });

  it('addMember, updateMember, acceptMembership, removeMember', async () => {
    const added = await acted(owner.token, {
      type: 'addMember',
      organizationId,
      identityUserId: adminDev.sub,
      role: 'viewer',
    });
    const memberId = added.result.id;
    expect(await entryOf(added.requestId)).toEqual(
      expect.objectContaining({
        targetKind: 'member',
        targetId: memberId,
        projectId: null,
        gameId: null,
        changes: {
          organizationId: { from: null, to: organizationId },
          identityUserId: { from: null, to: adminDev.sub },
          role: { from: null, to: 'viewer' },
        },
      }),
    );
    const updated = await acted(owner.token, { type: 'updateMember', memberId, role: 'admin' });
    expect(await entryOf(updated.requestId)).toMatchObject({
      targetKind: 'member',
      targetId: memberId,
      changes: { role: { from: 'viewer', to: 'admin' } },
    });
    const accepted = await acted(adminDev.token, { type: 'acceptMembership', organizationId });
    expect(await entryOf(accepted.requestId)).toMatchObject({
      actor: { identityUserId: adminDev.sub, email: adminDev.email },
      action: 'acceptMembership',
      targetKind: 'organization',
      targetId: organizationId,
      projectId: null,
      gameId: null,
      changes: {},
    });
    const other = await developer(system);
    const otherId = await addMember(system, owner.token, organizationId, other, 'viewer');
    const removed = await acted(owner.token, { type: 'removeMember', memberId: otherId });
    expect(await entryOf(removed.requestId)).toMatchObject({
      targetKind: 'member',
      targetId: otherId,
      projectId: null,
      gameId: null,
      changes: {},
    });
    await addMember(system, owner.token, organizationId, viewer, 'viewer');
    seen.add('addMember').add('updateMember').add('acceptMembership').add('removeMember');
  });

  it('the webhook actions never record a secret', async () => {
    const url = 'http://127.0.0.1:9/hook';
    const created = await acted(owner.token, {
      type: 'createWebhookEndpoint',
      gameId,
      url,
      eventTypes: ['decision.accepted'],
    });
    const endpointId = created.result.id;
    const onEndpoint = { targetKind: 'webhookEndpoint', targetId: endpointId, projectId, gameId };
    const createdEntry = await entryOf(created.requestId);
    expect(createdEntry).toMatchObject({
      ...onEndpoint,
      changes: {
        gameId: { from: null, to: gameId },
        url: { from: null, to: url },
        eventTypes: { from: null, to: ['decision.accepted'] },
      },
    });
    expect(JSON.stringify(createdEntry)).not.toContain(created.result.secret!.slice(6));
    const updated = await acted(owner.token, {
      type: 'updateWebhookEndpoint',
      webhookEndpointId: endpointId,
      eventTypes: ['decision.accepted', 'game.paused'],
      enabled: false,
    });
    expect(await entryOf(updated.requestId)).toMatchObject({
      ...onEndpoint,
      changes: {
        eventTypes: { from: ['decision.accepted'], to: ['decision.accepted', 'game.paused'] },
        enabled: { from: true, to: false },
      },
    });
    const rotated = await acted(owner.token, { type: 'rotateWebhookSecret', webhookEndpointId: endpointId });
    const rotatedEntry = await entryOf(rotated.requestId);
    expect(rotatedEntry).toMatchObject({ ...onEndpoint, action: 'rotateWebhookSecret', changes: {} });
    expect(JSON.stringify(rotatedEntry)).not.toContain(rotated.result.secret!.slice(6));
    const tested = await acted(owner.token, { type: 'sendTestWebhook', webhookEndpointId: endpointId });
    expect(await entryOf(tested.requestId)).toMatchObject({ ...onEndpoint, action: 'sendTestWebhook', changes: {} });
    const redelivered = await acted(owner.token, { type: 'redeliverWebhook', webhookDeliveryId: tested.result.id });
    expect(await entryOf(redelivered.requestId)).toMatchObject({
      ...onEndpoint,
      action: 'redeliverWebhook',
      changes: { webhookDeliveryId: { from: null, to: tested.result.id } },
    });
    const since = '2026-01-01T00:00:00.000Z';
    const recovered = await acted(owner.token, {
      type: 'recoverWebhookDeliveries',
      webhookEndpointId: endpointId,
      since,
    });
    expect(await entryOf(recovered.requestId)).toMatchObject({
      ...onEndpoint,
      action: 'recoverWebhookDeliveries',
      changes: { since: { from: null, to: since } },
    });
    const deleted = await acted(owner.token, { type: 'deleteWebhookEndpoint', webhookEndpointId: endpointId });
    expect(await entryOf(deleted.requestId)).toMatchObject({ ...onEndpoint, changes: {} });
    // No secret of the endpoint anywhere in the stored rows either.
    const stored = await db(`select row_to_json(a)::text as row from ledger.audit_log a where organization_id = $1`, [
      organizationId,
    ]);
    for (const { row } of stored) {
      expect(row).not.toContain(created.result.secret!.slice(6));
      expect(row).not.toContain(rotated.result.secret!.slice(6));
      expect(row).not.toMatch(/cr_sk_sandbox_[A-Za-z0-9_-]{43}/);
    }
    for (const type of [
      'createWebhookEndpoint',
      'updateWebhookEndpoint',
      'rotateWebhookSecret',
      'sendTestWebhook',
      'redeliverWebhook',
      'recoverWebhookDeliveries',
      'deleteWebhookEndpoint',
    ]) {
      seen.add(type);
    }
  });

  it('covered every action type, each entry with the actor and a request id', async () => {
    const { CONSOLE_ACTION_TYPES } = await import('../../../gateway/src/schemas/console.ts');
    expect([...seen].sort()).toEqual([...CONSOLE_ACTION_TYPES].sort());
    const entries = await allEntries();
    expect(new Set(entries.map((e) => e.action))).toEqual(seen);
    for (const entry of entries) {
      expect(entry.requestId).toBeTruthy();
      // Every actor so far had joined (the owner; the admin's only action is its acceptMembership).
      expect(entry.actor.email).toMatch(/@/);
    }
  });

  it('a GraphQL mutation writes its entry with its request id', async () => {
    const requestId = randomUUID();
    const result = await gql(
      system,
      owner.token,
      `mutation($input: UpdateProjectInput!) { updateProject(input: $input) { id } }`,
      { input: { projectId, name: 'P3' } },
      { 'X-Request-Id': requestId },
    );
    expect(result.body.errors).toBeUndefined();
    expect(await entryOf(requestId)).toMatchObject({
      action: 'updateProject',
      targetKind: 'project',
      targetId: projectId,
      changes: { name: { from: 'P2', to: 'P3' } },
    });
  });
});

describe('the e-mail of an actor who has not joined', () => {
  it('is not recorded until the member accepted (docs/identity.md, "Member e-mails")', async () => {
    const added = await developer(system);
    await addMember(system, owner.token, organizationId, added, 'admin');
    const before = await acted(added.token, { type: 'updateGame', gameId, name: 'G2' });
    expect(await entryOf(before.requestId)).toMatchObject({
      actor: { identityUserId: added.sub, email: null },
      changes: { name: { from: 'G', to: 'G2' } },
    });
    await ok(system, added.token, { type: 'acceptMembership', organizationId });
    const after = await acted(added.token, { type: 'updateGame', gameId, name: 'G3' });
    expect((await entryOf(after.requestId)).actor).toEqual({ identityUserId: added.sub, email: added.email });
  });
});

describe('refused actions write nothing', () => {
  it('a rule refusal, a role refusal and an outsider leave the trail as it was', async () => {
    const before = await allEntries();
    expectError(
      await act(system, owner.token, { type: 'allocateGame', gameId, amountCredits: 1_000_000 }),
      400,
      'insufficient_funds',
    );
    expectError(await act(system, viewer.token, { type: 'updateProject', projectId, name: 'nope' }), 403, 'forbidden');
    expectError(
      await act(system, outsider.token, { type: 'fundOrganization', organizationId, amountCredits: 1 }),
      404,
      'not_found',
    );
    expectError(
      await act(system, owner.token, { type: 'createRule', gameId, eventType: 'level_up', rewardCredits: 5 }),
      409,
      'conflict',
    );
    expect(await allEntries()).toEqual(before);
  });
});

describe('reads', () => {
  it('pages newest first by (createdAt, id) with the records paging', async () => {
    const everything = await allEntries();
    const paged = await allEntries({ limit: 3 });
    expect(paged).toEqual(everything);
    for (let i = 1; i < everything.length; i++) {
      const [a, b] = [everything[i - 1]!, everything[i]!];
      expect(a.createdAt >= b.createdAt).toBe(true);
      if (a.createdAt === b.createdAt) expect(BigInt(a.id) > BigInt(b.id)).toBe(true);
    }
    const first = expectData(await audit(owner.token, { organizationId, limit: 2 }), 'AuditPage');
    expect(first.records).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
  });

  it('filters by project, game, actor, action and time window', async () => {
    const everything = await allEntries();
    expect(await allEntries({ projectId })).toEqual(everything.filter((e) => e.projectId === projectId));
    expect(await allEntries({ gameId })).toEqual(everything.filter((e) => e.gameId === gameId));
    expect(await allEntries({ actor: adminDev.sub })).toEqual(
      everything.filter((e) => e.actor.identityUserId === adminDev.sub),
    );
    expect((await allEntries({ actor: adminDev.sub })).map((e) => e.action)).toEqual(['acceptMembership']);
    expect(await allEntries({ action: 'issueKey' })).toEqual(everything.filter((e) => e.action === 'issueKey'));
    expect(await allEntries({ action: 'issueKey' })).toHaveLength(2);
    // from inclusive, to exclusive, at the entries' own instants (microseconds in the database).
    const [row] = await db(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at from ledger.audit_log
        where organization_id = $1 and action = 'createGame'`,
      [organizationId],
    );
    const at = row!.at as string;
    const createGame = everything.find((e) => e.action === 'createGame')!;
    expect((await allEntries({ from: at })).map((e) => e.id)).toContain(createGame.id);
    expect((await allEntries({ to: at })).map((e) => e.id)).not.toContain(createGame.id);
    const window = await allEntries({ from: at, to: '9999-01-01T00:00:00Z' });
    expect(window).toEqual(everything.filter((e) => BigInt(e.id) >= BigInt(createGame.id)));
  });

  it('refuses malformed queries and foreign cursors like the records', async () => {
    expectError(await audit(owner.token, {}), 400, 'INVALID_RECORD_QUERY');
    expectError(await audit(owner.token, { organizationId: 'nope' }), 400, 'INVALID_RECORD_QUERY');
    expectError(await audit(owner.token, { organizationId, limit: 0 }), 400, 'INVALID_RECORD_QUERY');
    expectError(await audit(owner.token, { organizationId, limit: 101 }), 400, 'INVALID_RECORD_QUERY');
    expectError(await audit(owner.token, { organizationId, kind: 'events' }), 400, 'INVALID_RECORD_QUERY');
    expectError(await audit(owner.token, { organizationId, from: 'yesterday' }), 400, 'INVALID_RECORD_QUERY');
    expectError(
      await audit(owner.token, { organizationId, from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }),
      400,
      'INVALID_RECORD_QUERY',
    );
    const page = expectData(await audit(owner.token, { organizationId, limit: 1 }), 'AuditPage');
    expectError(
      await audit(owner.token, { organizationId, limit: 1, action: 'issueKey', cursor: page.nextCursor }),
      400,
      'INVALID_CURSOR',
    );
    expectError(await audit(owner.token, { organizationId, cursor: `${page.nextCursor}x` }), 400, 'INVALID_CURSOR');
  });

  it('owner and admins read; a viewer 403 forbidden; an outsider 404 not_found', async () => {
    expectData(await audit(adminDev.token, { organizationId }), 'AuditPage');
    expectError(await audit(viewer.token, { organizationId }), 403, 'forbidden');
    expectError(await audit(outsider.token, { organizationId }), 404, 'not_found');
    expectError(await audit(outsider.token, { organizationId: randomUUID() }), 404, 'not_found');
  });

  it('GraphQL auditLog: a connection with the REST filters and errors', async () => {
    const QUERY = `query($o: ID!, $f: AuditFilter, $n: Int, $a: String) {
      auditLog(organizationId: $o, filter: $f, first: $n, after: $a) {
        edges { cursor node { id organizationId projectId gameId actor { identityUserId email } action targetKind
                              targetId changes requestId createdAt } }
        pageInfo { endCursor hasNextPage startCursor hasPreviousPage } } }`;
    const everything = await allEntries({ action: 'issueKey' });
    const first = await gql(system, owner.token, QUERY, { o: organizationId, f: { action: 'issueKey' }, n: 1 });
    expect(first.body.errors).toBeUndefined();
    const connection = first.body.data.auditLog;
    expect(connection.edges.map((e: any) => e.node)).toEqual([everything[0]]);
    expect(connection.pageInfo.hasNextPage).toBe(true);
    const second = await gql(system, owner.token, QUERY, {
      o: organizationId,
      f: { action: 'issueKey' },
      n: 1,
      a: connection.pageInfo.endCursor,
    });
    expect(second.body.data.auditLog.edges.map((e: any) => e.node)).toEqual([everything[1]]);
    expect(second.body.data.auditLog.pageInfo.hasNextPage).toBe(false);
    const viewerRead = await gql(system, viewer.token, QUERY, { o: organizationId });
    expect(viewerRead.body.errors?.[0]?.extensions?.code).toBe('forbidden');
    const outsiderRead = await gql(system, outsider.token, QUERY, { o: organizationId });
    expect(outsiderRead.body.errors?.[0]?.extensions?.code).toBe('not_found');
    const badLimit = await gql(system, owner.token, QUERY, { o: organizationId, n: 0 });
    expect(badLimit.body.errors?.[0]?.extensions?.code).toBe('INVALID_RECORD_QUERY');
    const badFilter = await gql(system, owner.token, QUERY, { o: organizationId, f: { projectId: 'nope' } });
    expect(badFilter.body.errors?.[0]?.extensions?.code).toBe('INVALID_RECORD_QUERY');
    const badTime = await gql(system, owner.token, QUERY, { o: organizationId, f: { from: 'yesterday' } });
    expect(badTime.body.errors?.[0]?.extensions?.code).toBe('INVALID_RECORD_QUERY');
    const badOrganization = await gql(system, owner.token, QUERY, { o: 'nope' });
    expect(badOrganization.body.errors?.[0]?.extensions?.code).toBe('INVALID_RECORD_QUERY');
    const badCursor = await gql(system, owner.token, QUERY, { o: organizationId, a: 'nope' });
    expect(badCursor.body.errors?.[0]?.extensions?.code).toBe('INVALID_CURSOR');
  });
});

describe('immutability', () => {
  it('the database refuses UPDATE and DELETE of entries', async () => {
    await expect(
      db(`update ledger.audit_log set action = 'forged' where organization_id = $1`, [organizationId]),
    ).rejects.toThrow(/never updated or deleted/);
    await expect(db(`delete from ledger.audit_log where organization_id = $1`, [organizationId])).rejects.toThrow(
      /never updated or deleted/,
    );
    const [count] = await db(`select count(*)::int as n from ledger.audit_log where action = 'forged'`);
    expect(count!.n).toBe(0);
  });

  it('an entry of the previous release (no new columns) reads with nulls and changes {}', async () => {
    await db(
      `insert into ledger.audit_log (organization_id, actor, action, target_id, details)
       values ($1, 'old|actor', 'createProject', $2, '{"name": "old"}')`,
      [organizationId, projectId],
    );
    const [entry] = await allEntries({ actor: 'old|actor' });
    expect(entry).toEqual({
      id: expect.any(String),
      organizationId,
      projectId: null,
      gameId: null,
      actor: { identityUserId: 'old|actor', email: null },
      action: 'createProject',
      targetKind: null,
      targetId: projectId,
      changes: {},
      requestId: null,
      createdAt: expect.any(String),
    });
  });
});
