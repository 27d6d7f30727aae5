// Each of the 15 console actions (and acceptMembership) once over REST and once over GraphQL against the same running system (real
// PostgreSQL and NATS), compared field by field: the action result, then its effect on the snapshot. Then every
// denied and invalid call, and every rule of the ledger, both ways with the same code and status.
import { randomUUID } from 'node:crypto';
import { addMember, type Developer, developer, ok, snapshot, type World, world } from '../../support/console.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';
import {
  canonical,
  gql,
  graphqlAction,
  graphqlOutcome,
  type Outcome,
  organizationView,
  restAction,
  restOutcome,
  withoutNulls,
} from './helpers.ts';

let system: TestSystem;
let owner: Developer;
let adminDev: Developer;
let viewer: Developer;
let outsider: Developer;
let newcomer: Developer;

beforeAll(async () => {
  system = await startTestSystem();
  owner = await developer(system);
  adminDev = await developer(system);
  viewer = await developer(system);
  outsider = await developer(system);
  newcomer = await developer(system);
});

afterAll(async () => {
  await system?.stop();
});

/** The same action by the same developer over REST and over GraphQL. */
async function both(token: string, rest: Record<string, unknown>, graphql = rest): Promise<[Outcome, Outcome]> {
  const restResult = restOutcome(await restAction(system, token, rest));
  const graphqlResult = graphqlOutcome(await graphqlAction(system, token, graphql), 'result');
  return [restResult, graphqlResult];
}

describe('every action succeeds alike over REST and GraphQL', () => {
  // Two worlds built by the same steps, one per view; `@label` in a step is the id of an earlier step's object.
  const ids: Record<'rest' | 'graphql', Record<string, string>> = { rest: {}, graphql: {} };
  const resolve = (side: 'rest' | 'graphql', action: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(action).map(([key, value]) => [
        key,
        typeof value === 'string' && value.startsWith('@') ? ids[side][value.slice(1)] : value,
      ]),
    );

  const steps: Array<[string, Record<string, unknown>]> = [
    ['org', { type: 'createOrganization', name: 'Parity organization' }],
    ['org', { type: 'fundOrganization', organizationId: '@org', amountCredits: 50_000 }],
    ['project', { type: 'createProject', organizationId: '@org', name: 'Parity project', maxPayoutCredits: 40_000 }],
    ['project', { type: 'updateProject', projectId: '@project', name: 'Renamed project', maxPayoutCredits: 30_000 }],
    ['project', { type: 'allocateProject', projectId: '@project', amountCredits: 20_000 }],
    [
      'game',
      {
        type: 'createGame',
        projectId: '@project',
        name: 'Parity game',
        platform: 'unity',
        maxPayoutCredits: 10_000,
        dailyPlayerCapCredits: 500,
      },
    ],
    [
      'game',
      { type: 'updateGame', gameId: '@game', name: 'Renamed game', status: 'paused', dailyPlayerCapCredits: 250 },
    ],
    ['game', { type: 'allocateGame', gameId: '@game', amountCredits: 4_000 }],
    ['rule', { type: 'createRule', gameId: '@game', eventType: 'level.up', rewardCredits: 25 }],
    ['rule', { type: 'updateRule', ruleId: '@rule', rewardCredits: 30, active: false }],
    ['secretKey', { type: 'issueKey', gameId: '@game', kind: 'secret', name: 'Server key' }],
    ['publicKey', { type: 'issueKey', gameId: '@game', kind: 'public', name: 'Client key' }],
    ['secretKey', { type: 'revokeKey', keyId: '@secretKey' }],
    ['member', { type: 'addMember', organizationId: '@org', identityUserId: 'idp|parity-member', role: 'viewer' }],
    ['member', { type: 'updateMember', memberId: '@member', role: 'admin' }],
    ['member', { type: 'removeMember', memberId: '@member' }],
    // The owner accepting their own membership (already joined): the answer is their member id, nothing changes.
    ['ownerMember', { type: 'acceptMembership', organizationId: '@org' }],
  ];

  it('covers the 15 action types and acceptMembership', () => {
    expect(new Set(steps.map(([, action]) => action.type)).size).toBe(16);
  });

  it.each(steps)('%s: %j', async (label, action) => {
    const [rest, graphql] = [
      restOutcome(await restAction(system, owner.token, resolve('rest', action))),
      graphqlOutcome(await graphqlAction(system, owner.token, resolve('graphql', action)), 'result'),
    ];
    if (!('ok' in rest) || !('ok' in graphql)) throw new Error(`failed: ${JSON.stringify({ rest, graphql })}`);
    // Creations name a new object; every other action answers the id of the object it changed.
    if (!ids.rest[label]) {
      ids.rest[label] = rest.ok.id;
      ids.graphql[label] = graphql.ok.id;
    }
    expect(rest.ok.id).toBe(ids.rest[label]);
    expect(graphql.ok.id).toBe(ids.graphql[label]);
    // REST leaves issuedKey and kind out unless issueKey; GraphQL answers them as null.
    expect(canonical({ ...withoutNulls(graphql.ok), id: label })).toEqual(canonical({ ...rest.ok, id: label }));
    if (action.type === 'issueKey') expect(graphql.ok).toMatchObject({ kind: action.kind, mode: 'sandbox' });
    else expect(graphql.ok).toMatchObject({ issuedKey: null, kind: null, mode: 'sandbox' });

    // The effect: the two organizations read the same, id for id.
    const snap = await snapshot(system, owner.token);
    const restView = organizationView(snap, ids.rest.org!);
    const graphqlView = organizationView(snap, ids.graphql.org!);
    expect(restView.organizations).toHaveLength(1);
    expect(canonical(graphqlView)).toEqual(canonical(restView));
  });

  it('leaves both organizations with every kind of object, equal field by field', async () => {
    const snap = await snapshot(system, owner.token);
    const restView = organizationView(snap, ids.rest.org!);
    expect(restView.organizations[0]).toMatchObject({ name: 'Parity organization', balanceCredits: 30_000 });
    expect(restView.projects[0]).toMatchObject({
      name: 'Renamed project',
      budgetCredits: 20_000,
      maxPayoutCredits: 30_000,
    });
    expect(restView.games[0]).toMatchObject({ name: 'Renamed game', status: 'paused', budgetCredits: 4_000 });
    expect(restView.rules[0]).toMatchObject({ rewardCredits: 30, active: false });
    expect(restView.keys.map((k) => [k.kind, k.revokedAt === null])).toEqual([
      ['secret', false],
      ['public', true],
    ]);
    expect(restView.members.map((m) => m.role)).toEqual(['owner']);
    expect(canonical(organizationView(snap, ids.graphql.org!))).toEqual(canonical(restView));
  });

  it('createOrganization with unlimited funding, by a developer with the capability', async () => {
    const rich = await developer(system, { canCreateUnlimitedOrganization: true });
    const [rest, graphql] = await both(rich.token, {
      type: 'createOrganization',
      name: 'Rich',
      unlimitedFunding: true,
    });
    if (!('ok' in rest) || !('ok' in graphql)) throw new Error(`failed: ${JSON.stringify({ rest, graphql })}`);
    const snap = await snapshot(system, rich.token);
    expect(canonical(organizationView(snap, graphql.ok.id))).toEqual(canonical(organizationView(snap, rest.ok.id)));
    expect(snap.organizations.map((o: any) => o.unlimitedFunding)).toEqual([true, true]);
  });

  it('runs several mutations of one request in order, each on its own', async () => {
    const result = await gql(
      system,
      owner.token,
      `mutation Two($org: UUID!) {
        funded: fundOrganization(input: { organizationId: $org, amountCredits: 7 }) { id mode }
        refused: fundOrganization(input: { organizationId: $org, amountCredits: 1000000000000 }) { id }
        renamed: createProject(input: { organizationId: $org, name: "After a refusal", maxPayoutCredits: 0 }) { id }
      }`,
      { org: ids.graphql.org },
    );
    expect(result.status).toBe(200);
    expect(result.body.data.funded).toEqual({ id: ids.graphql.org, mode: 'sandbox' });
    expect(result.body.data.refused).toBeNull();
    expect(result.body.errors).toEqual([
      expect.objectContaining({ path: ['refused'], extensions: { code: 'limit_exceeded', status: 400 } }),
    ]);
    expect(result.body.data.renamed.id).toEqual(expect.any(String));
  });
});

describe('denied calls answer the same code', () => {
  let w: World;
  let ruleId: string;
  let keyId: string;
  let viewerMemberId: string;
  let adminMemberId: string;
  let ownerMemberId: string;

  beforeAll(async () => {
    w = await world(system, owner.token);
    adminMemberId = await addMember(system, owner.token, w.organizationId, adminDev, 'admin');
    viewerMemberId = await addMember(system, owner.token, w.organizationId, viewer, 'viewer');
    ruleId = (
      await ok(system, owner.token, { type: 'createRule', gameId: w.gameId, eventType: 'win', rewardCredits: 5 })
    ).id;
    keyId = (await ok(system, owner.token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'k' })).id;
    const snap = await snapshot(system, owner.token);
    ownerMemberId = snap.members.find((m: any) => m.organizationId === w.organizationId && m.role === 'owner').id;
  });

  const managed = () => [
    { type: 'fundOrganization', organizationId: w.organizationId, amountCredits: 1 },
    { type: 'createProject', organizationId: w.organizationId, name: 'P', maxPayoutCredits: 1 },
    { type: 'updateProject', projectId: w.projectId, name: 'P2' },
    { type: 'allocateProject', projectId: w.projectId, amountCredits: 1 },
    {
      type: 'createGame',
      projectId: w.projectId,
      name: 'G',
      platform: 'ios',
      maxPayoutCredits: 1,
      dailyPlayerCapCredits: 1,
    },
    { type: 'updateGame', gameId: w.gameId, status: 'paused' },
    { type: 'allocateGame', gameId: w.gameId, amountCredits: 1 },
    { type: 'createRule', gameId: w.gameId, eventType: 'lose', rewardCredits: 1 },
    { type: 'updateRule', ruleId, active: false },
    { type: 'issueKey', gameId: w.gameId, kind: 'public', name: 'K' },
    { type: 'revokeKey', keyId },
  ];
  const membership = () => [
    { type: 'addMember', organizationId: w.organizationId, identityUserId: 'idp|someone', role: 'viewer' },
    { type: 'updateMember', memberId: viewerMemberId, role: 'admin' },
    { type: 'removeMember', memberId: viewerMemberId },
  ];

  it('a viewer: 403 forbidden for every action on the organization', async () => {
    for (const action of [...managed(), ...membership()]) {
      const [rest, graphql] = await both(viewer.token, action);
      expect({ action: action.type, graphql }).toEqual({ action: action.type, graphql: rest });
      expect(rest).toEqual({ error: { status: 403, code: 'forbidden' } });
    }
  });

  it('a non-member: 404 not_found for every action on the organization', async () => {
    for (const action of [...managed(), ...membership()]) {
      const [rest, graphql] = await both(outsider.token, action);
      expect({ action: action.type, graphql }).toEqual({ action: action.type, graphql: rest });
      expect(rest).toEqual({ error: { status: 404, code: 'not_found' } });
    }
  });

  it("an admin: 403 forbidden for member management, which is the owner's", async () => {
    for (const action of [
      ...membership(),
      { type: 'updateMember', memberId: adminMemberId, role: 'viewer' },
      { type: 'removeMember', memberId: adminMemberId },
    ]) {
      const [rest, graphql] = await both(adminDev.token, action);
      expect({ action: action.type, graphql }).toEqual({ action: action.type, graphql: rest });
      expect(rest).toEqual({ error: { status: 403, code: 'forbidden' } });
    }
  });

  it('objects that do not exist: 404 not_found', async () => {
    const missing = randomUUID();
    for (const action of [
      { type: 'fundOrganization', organizationId: missing, amountCredits: 1 },
      { type: 'updateProject', projectId: missing },
      { type: 'allocateGame', gameId: missing, amountCredits: 1 },
      { type: 'updateRule', ruleId: missing, active: true },
      { type: 'revokeKey', keyId: missing },
      { type: 'removeMember', memberId: missing },
    ]) {
      const [rest, graphql] = await both(owner.token, action);
      expect({ action: action.type, graphql }).toEqual({ action: action.type, graphql: rest });
      expect(rest).toEqual({ error: { status: 404, code: 'not_found' } });
    }
  });

  it('the ledger rules: the same code and status both ways', async () => {
    const rich = await developer(system, { canCreateUnlimitedOrganization: true });
    const unlimited = await ok(system, rich.token, { type: 'createOrganization', name: 'U', unlimitedFunding: true });
    const cases: Array<[Developer, Record<string, unknown>, number, string]> = [
      [
        newcomer,
        { type: 'createOrganization', name: 'No capability', unlimitedFunding: true },
        403,
        'unlimited_funding',
      ],
      [rich, { type: 'fundOrganization', organizationId: unlimited.id, amountCredits: 5 }, 400, 'unlimited_funding'],
      [
        owner,
        { type: 'fundOrganization', organizationId: w.organizationId, amountCredits: 1_000_000_000_000 },
        400,
        'limit_exceeded',
      ],
      [owner, { type: 'allocateProject', projectId: w.projectId, amountCredits: 999_999 }, 400, 'insufficient_funds'],
      [owner, { type: 'allocateGame', gameId: w.gameId, amountCredits: 999_999 }, 400, 'insufficient_funds'],
      [owner, { type: 'updateProject', projectId: w.projectId, maxPayoutCredits: 1 }, 400, 'limit_exceeded'],
      [owner, { type: 'updateGame', gameId: w.gameId, maxPayoutCredits: 1 }, 400, 'limit_exceeded'],
      [owner, { type: 'createRule', gameId: w.gameId, eventType: 'win', rewardCredits: 1 }, 409, 'conflict'],
      [
        owner,
        { type: 'addMember', organizationId: w.organizationId, identityUserId: viewer.sub, role: 'admin' },
        409,
        'conflict',
      ],
      [owner, { type: 'updateMember', memberId: ownerMemberId, role: 'admin' }, 409, 'owner_immutable'],
      [owner, { type: 'removeMember', memberId: ownerMemberId }, 409, 'owner_immutable'],
    ];
    for (const [dev, action, status, code] of cases) {
      const [rest, graphql] = await both(dev.token, action);
      expect({ action, graphql }).toEqual({ action, graphql: rest });
      expect({ action, rest }).toEqual({ action, rest: { error: { status, code } } });
    }
  });

  it('ceilings: project_limit and game_limit', async () => {
    const tight = await world(system, owner.token, { fund: 10_000, projectBudget: 900, gameBudget: 0, ceiling: 1_000 });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'allocateProject', projectId: tight.projectId, amountCredits: 101 }, 'project_limit'],
      [{ type: 'allocateGame', gameId: tight.gameId, amountCredits: 900 }, 'game_limit'],
    ];
    await ok(system, owner.token, { type: 'updateGame', gameId: tight.gameId, maxPayoutCredits: 899 });
    for (const [action, code] of cases) {
      const [rest, graphql] = await both(owner.token, action);
      expect(graphql).toEqual(rest);
      expect(rest).toEqual({ error: { status: 400, code } });
    }
  });
});

describe('invalid calls answer 400 invalid_action both ways', () => {
  let w: World;

  beforeAll(async () => {
    w = await world(system, owner.token);
  });

  const long = (n: number) => 'x'.repeat(n);
  const invalid = () => [
    { type: 'createOrganization', name: '' },
    { type: 'createOrganization', name: long(101) },
    { type: 'createOrganization', name: 'Bell\u0007' },
    { type: 'createOrganization', name: 'Extra', extra: 1 },
    { type: 'createOrganization', name: 'Flag', unlimitedFunding: 'yes' },
    { type: 'createOrganization' },
    { type: 'fundOrganization', organizationId: 'not-a-uuid', amountCredits: 1 },
    // Version 9 is outside the spec's UUID rule.
    { type: 'fundOrganization', organizationId: '6f1e8c1a-1111-9111-8111-111111111111', amountCredits: 1 },
    { type: 'fundOrganization', organizationId: w.organizationId, amountCredits: 0 },
    { type: 'fundOrganization', organizationId: w.organizationId, amountCredits: -5 },
    { type: 'fundOrganization', organizationId: w.organizationId, amountCredits: 1_000_000_000_001 },
    { type: 'fundOrganization', organizationId: w.organizationId, amountCredits: 1.5 },
    { type: 'fundOrganization', organizationId: w.organizationId, amountCredits: '5' },
    { type: 'createProject', organizationId: w.organizationId, name: 'P', maxPayoutCredits: -1 },
    { type: 'updateProject', projectId: w.projectId, name: null },
    { type: 'allocateProject', projectId: w.projectId },
    {
      type: 'createGame',
      projectId: w.projectId,
      name: 'G',
      platform: 'windows',
      maxPayoutCredits: 1,
      dailyPlayerCapCredits: 1,
    },
    { type: 'updateGame', gameId: w.gameId, status: 'stopped' },
    { type: 'allocateGame', gameId: w.gameId, amountCredits: 0 },
    { type: 'createRule', gameId: w.gameId, eventType: 'Level', rewardCredits: 1 },
    { type: 'createRule', gameId: w.gameId, eventType: long(65), rewardCredits: 1 },
    { type: 'createRule', gameId: w.gameId, eventType: 'win', rewardCredits: 0 },
    { type: 'updateRule', ruleId: randomUUID(), rewardCredits: 0 },
    { type: 'issueKey', gameId: w.gameId, kind: 'private', name: 'K' },
    { type: 'issueKey', gameId: w.gameId, kind: 'public', name: long(101) },
    { type: 'revokeKey', keyId: 'k-1' },
    { type: 'addMember', organizationId: w.organizationId, identityUserId: '', role: 'viewer' },
    { type: 'addMember', organizationId: w.organizationId, identityUserId: long(201), role: 'viewer' },
    { type: 'addMember', organizationId: w.organizationId, identityUserId: 'nul\u0000', role: 'viewer' },
    { type: 'addMember', organizationId: w.organizationId, identityUserId: 'idp|x', role: 'owner' },
    { type: 'updateMember', memberId: randomUUID(), role: 'superuser' },
    { type: 'removeMember' },
    // An unknown type: no such mutation.
    { type: 'deleteOrganization', organizationId: w.organizationId },
  ];

  it('for every schema violation, unknown field and unknown type', async () => {
    for (const action of invalid()) {
      const [rest, graphql] = await both(owner.token, action);
      expect({ action, graphql }).toEqual({ action, graphql: rest });
      expect({ action, rest }).toEqual({ action, rest: { error: { status: 400, code: 'invalid_action' } } });
    }
  });

  it('with the value written into the document instead of a variable', async () => {
    for (const document of [
      `mutation { fundOrganization(input: { organizationId: "${w.organizationId}", amountCredits: 0 }) { id } }`,
      `mutation { fundOrganization(input: { organizationId: "${w.organizationId}", amountCredits: 1e3 }) { id } }`,
      `mutation { fundOrganization(input: { organizationId: "nope", amountCredits: 1 }) { id } }`,
      `mutation { createOrganization(input: { name: "X", extra: true }) { id } }`,
      `mutation { createOrganization(input: {}) { id } }`,
      `mutation { createOrganization { id } }`,
      `mutation { createGame(input: { projectId: "${w.projectId}", name: "G", platform: windows, maxPayoutCredits: 1, dailyPlayerCapCredits: 1 }) { id } }`,
      `mutation { createOrganization(input: { name: "" }) { id } }`,
    ]) {
      const result = await gql(system, owner.token, document);
      expect({ document, outcome: graphqlOutcome(result, 'x') }).toEqual({
        document,
        outcome: { error: { status: 400, code: 'invalid_action' } },
      });
    }
  });
});
