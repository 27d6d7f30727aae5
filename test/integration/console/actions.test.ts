// The 15 console actions over HTTP on real PostgreSQL and NATS: success, each permission denial, each validation
// error and each rule of CONTRACT section 8. Every body is checked against the strict schemas of /openapi.json.
import { createHash, randomUUID } from 'node:crypto';
import {
  act,
  addMember,
  CONSOLE,
  type Developer,
  developer,
  expectData,
  expectError,
  ok,
  snapshot,
  type World,
  world,
} from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { admin, api, startTestSystem, type TestSystem } from '../../support/system.ts';

let system: TestSystem;
let owner: Developer;
let adminDev: Developer;
let viewer: Developer;
let outsider: Developer;
let w: World;

beforeAll(async () => {
  system = await startTestSystem();
  owner = await developer(system);
  adminDev = await developer(system);
  viewer = await developer(system);
  outsider = await developer(system);
  w = await world(system, owner.token);
  await addMember(system, owner.token, w.organizationId, adminDev, 'admin');
  await addMember(system, owner.token, w.organizationId, viewer, 'viewer');
});

afterAll(async () => {
  await system?.stop();
});

const db = (text: string, params: unknown[] = []) => sql(system.databaseUrl!, text, params);

/** The same action by a viewer (403 forbidden) and by a non-member (404 not_found). */
async function expectDenied(action: Record<string, unknown>): Promise<void> {
  expectError(await act(system, viewer.token, action), 403, 'forbidden');
  expectError(await act(system, outsider.token, action), 404, 'not_found');
}

async function expectInvalid(action: Record<string, unknown>): Promise<void> {
  expectError(await act(system, owner.token, action), 400, 'invalid_action');
}

describe('action bodies', () => {
  it('reject an unknown type, a missing type and a non-object body with 400 invalid_action', async () => {
    await expectInvalid({ type: 'deleteOrganization', organizationId: w.organizationId });
    await expectInvalid({ name: 'No type' });
    await expectInvalid({ type: 42 });
    expectError(await act(system, owner.token, ['createOrganization'] as never), 400, 'invalid_action');
    expectError(
      await api(system.url, 'POST', CONSOLE, {
        token: owner.token,
        rawBody: '"text"',
        headers: { 'Content-Type': 'application/json' },
      }),
      400,
      'invalid_action',
    );
  });

  it('reject unknown fields, in every action', async () => {
    await expectInvalid({ type: 'createOrganization', name: 'X', extra: 1 });
    await expectInvalid({ type: 'revokeKey', keyId: randomUUID(), reason: 'lost' });
    await expectInvalid({ type: 'removeMember', memberId: randomUUID(), type2: 'x' });
  });

  it('reject malformed ids', async () => {
    await expectInvalid({ type: 'fundOrganization', organizationId: 'not-a-uuid', amountCredits: 1 });
    await expectInvalid({ type: 'allocateGame', gameId: '00000000-0000-0000-0000-00000000000g', amountCredits: 1 });
    // Version 9 is outside the spec's UUID rule.
    await expectInvalid({ type: 'revokeKey', keyId: '11111111-1111-9111-8111-111111111111' });
  });
});

describe('createOrganization', () => {
  it('creates an organization owned by the caller, with a zero balance', async () => {
    const dev = await developer(system);
    const { id } = await ok(system, dev.token, { type: 'createOrganization', name: 'Acme Games' });
    const snap = await snapshot(system, dev.token);
    expect(snap.organizations).toEqual([
      expect.objectContaining({ id, name: 'Acme Games', unlimitedFunding: false, balanceCredits: 0, role: 'owner' }),
    ]);
    expect(snap.members).toEqual([
      expect.objectContaining({ organizationId: id, identityUserId: dev.sub, role: 'owner' }),
    ]);
  });

  it('validates the name: 1 to 100 characters, no control characters', async () => {
    await expectInvalid({ type: 'createOrganization', name: '' });
    await expectInvalid({ type: 'createOrganization', name: 'x'.repeat(101) });
    await expectInvalid({ type: 'createOrganization', name: 'tab\there' });
    await expectInvalid({ type: 'createOrganization', name: 'del\u007f' });
    await expectInvalid({ type: 'createOrganization' });
    await expectInvalid({ type: 'createOrganization', name: 'X', unlimitedFunding: 'yes' });
    await ok(system, owner.token, { type: 'createOrganization', name: 'x'.repeat(100) });
    await ok(system, owner.token, { type: 'createOrganization', name: 'Ünïcode 🎮 name' });
  });

  it('refuses unlimited funding without the invitation capability (403 unlimited_funding)', async () => {
    expectError(
      await act(system, owner.token, { type: 'createOrganization', name: 'Rich', unlimitedFunding: true }),
      403,
      'unlimited_funding',
    );
  });

  it('creates an unlimited organization with the capability', async () => {
    const rich = await developer(system, { canCreateUnlimitedOrganization: true });
    const { id } = await ok(system, rich.token, { type: 'createOrganization', name: 'Rich', unlimitedFunding: true });
    const snap = await snapshot(system, rich.token);
    expect(snap.canCreateUnlimitedOrganization).toBe(true);
    expect(snap.organizations[0]).toMatchObject({ id, unlimitedFunding: true, balanceCredits: 0 });
  });
});

describe('fundOrganization', () => {
  it('adds funding for owners and admins', async () => {
    const before = (await snapshot(system, owner.token)).organizations.find((o: any) => o.id === w.organizationId);
    expect(
      await ok(system, owner.token, { type: 'fundOrganization', organizationId: w.organizationId, amountCredits: 250 }),
    ).toEqual({ id: w.organizationId, mode: 'sandbox' });
    await ok(system, adminDev.token, { type: 'fundOrganization', organizationId: w.organizationId, amountCredits: 50 });
    const after = (await snapshot(system, owner.token)).organizations.find((o: any) => o.id === w.organizationId);
    expect(after.balanceCredits).toBe(before.balanceCredits + 300);
  });

  it('requires an amount from 1 to 1e12', async () => {
    for (const amountCredits of [0, -5, 1.5, 1_000_000_000_001, '10', null]) {
      await expectInvalid({ type: 'fundOrganization', organizationId: w.organizationId, amountCredits });
    }
    await expectInvalid({ type: 'fundOrganization', organizationId: w.organizationId });
  });

  it('is denied to viewers and non-members, and not_found for an unknown organization', async () => {
    await expectDenied({ type: 'fundOrganization', organizationId: w.organizationId, amountCredits: 1 });
    expectError(
      await act(system, owner.token, { type: 'fundOrganization', organizationId: randomUUID(), amountCredits: 1 }),
      404,
      'not_found',
    );
  });

  it('refuses an unlimited organization (400 unlimited_funding)', async () => {
    const rich = await developer(system, { canCreateUnlimitedOrganization: true });
    const { id } = await ok(system, rich.token, { type: 'createOrganization', name: 'Rich', unlimitedFunding: true });
    expectError(
      await act(system, rich.token, { type: 'fundOrganization', organizationId: id, amountCredits: 10 }),
      400,
      'unlimited_funding',
    );
  });

  it('keeps the balance within 1e12 (400 limit_exceeded)', async () => {
    const dev = await developer(system);
    const { id } = await ok(system, dev.token, { type: 'createOrganization', name: 'Big' });
    await ok(system, dev.token, { type: 'fundOrganization', organizationId: id, amountCredits: 1_000_000_000_000 });
    expectError(
      await act(system, dev.token, { type: 'fundOrganization', organizationId: id, amountCredits: 1 }),
      400,
      'limit_exceeded',
    );
  });
});

describe('createProject and updateProject', () => {
  it('creates a project with a ceiling and no budget', async () => {
    const { id } = await ok(system, adminDev.token, {
      type: 'createProject',
      organizationId: w.organizationId,
      name: 'Season 2',
      maxPayoutCredits: 0,
    });
    const project = (await snapshot(system, owner.token)).projects.find((p: any) => p.id === id);
    expect(project).toMatchObject({
      organizationId: w.organizationId,
      name: 'Season 2',
      maxPayoutCredits: 0,
      budgetCredits: 0,
      spentCredits: 0,
    });
  });

  it('validates createProject fields and permissions', async () => {
    const base = { type: 'createProject', organizationId: w.organizationId, name: 'P', maxPayoutCredits: 10 };
    await expectInvalid({ ...base, maxPayoutCredits: -1 });
    await expectInvalid({ ...base, maxPayoutCredits: 1_000_000_000_001 });
    await expectInvalid({ ...base, name: '' });
    await expectInvalid({ type: 'createProject', organizationId: w.organizationId, name: 'P' });
    await expectDenied(base);
  });

  it('renames and changes the ceiling; the ceiling cannot fall below the budget (400 limit_exceeded)', async () => {
    const project = await ok(system, owner.token, {
      type: 'createProject',
      organizationId: w.organizationId,
      name: 'Old',
      maxPayoutCredits: 1000,
    });
    await ok(system, owner.token, { type: 'allocateProject', projectId: project.id, amountCredits: 400 });
    await ok(system, owner.token, { type: 'updateProject', projectId: project.id, name: 'New', maxPayoutCredits: 400 });
    const updated = (await snapshot(system, owner.token)).projects.find((p: any) => p.id === project.id);
    expect(updated).toMatchObject({ name: 'New', maxPayoutCredits: 400, budgetCredits: 400 });
    expectError(
      await act(system, owner.token, { type: 'updateProject', projectId: project.id, maxPayoutCredits: 399 }),
      400,
      'limit_exceeded',
    );
    // A body with no optional field is a valid no-op.
    await ok(system, owner.token, { type: 'updateProject', projectId: project.id });
    await expectInvalid({ type: 'updateProject', projectId: project.id, name: 'x'.repeat(101) });
    await expectDenied({ type: 'updateProject', projectId: project.id, name: 'Mine' });
    expectError(
      await act(system, owner.token, { type: 'updateProject', projectId: randomUUID(), name: 'Ghost' }),
      404,
      'not_found',
    );
  });
});

describe('allocateProject', () => {
  it('moves organization balance into the project budget', async () => {
    const dev = await developer(system);
    const mine = await world(system, dev.token, { fund: 1000, projectBudget: 0, gameBudget: 0, ceiling: 700 });
    await ok(system, dev.token, { type: 'allocateProject', projectId: mine.projectId, amountCredits: 600 });
    const snap = await snapshot(system, dev.token);
    expect(snap.organizations[0].balanceCredits).toBe(400);
    expect(snap.projects[0].budgetCredits).toBe(600);
    // 400 left in the organization, 100 left under the ceiling.
    expectError(
      await act(system, dev.token, { type: 'allocateProject', projectId: mine.projectId, amountCredits: 401 }),
      400,
      'insufficient_funds',
    );
    expectError(
      await act(system, dev.token, { type: 'allocateProject', projectId: mine.projectId, amountCredits: 101 }),
      400,
      'project_limit',
    );
    await ok(system, dev.token, { type: 'allocateProject', projectId: mine.projectId, amountCredits: 100 });
    const after = await snapshot(system, dev.token);
    expect(after.organizations[0].balanceCredits).toBe(300);
    expect(after.projects[0].budgetCredits).toBe(700);
  });

  it('allocates from an unlimited organization without a balance, within the project ceiling', async () => {
    const rich = await developer(system, { canCreateUnlimitedOrganization: true });
    const org = await ok(system, rich.token, { type: 'createOrganization', name: 'Rich', unlimitedFunding: true });
    const project = await ok(system, rich.token, {
      type: 'createProject',
      organizationId: org.id,
      name: 'P',
      maxPayoutCredits: 5000,
    });
    await ok(system, rich.token, { type: 'allocateProject', projectId: project.id, amountCredits: 5000 });
    expectError(
      await act(system, rich.token, { type: 'allocateProject', projectId: project.id, amountCredits: 1 }),
      400,
      'project_limit',
    );
    const snap = await snapshot(system, rich.token);
    expect(snap.organizations[0].balanceCredits).toBe(0);
    expect(snap.projects[0].budgetCredits).toBe(5000);
  });

  it('validates the amount and permissions', async () => {
    await expectInvalid({ type: 'allocateProject', projectId: w.projectId, amountCredits: 0 });
    await expectDenied({ type: 'allocateProject', projectId: w.projectId, amountCredits: 1 });
    expectError(
      await act(system, owner.token, { type: 'allocateProject', projectId: randomUUID(), amountCredits: 1 }),
      404,
      'not_found',
    );
  });
});

describe('createGame, updateGame and allocateGame', () => {
  it('creates an active game with a slug distinct from its id', async () => {
    const { id } = await ok(system, adminDev.token, {
      type: 'createGame',
      projectId: w.projectId,
      name: 'Racer',
      platform: 'unity',
      maxPayoutCredits: 5000,
      dailyPlayerCapCredits: 25,
    });
    const game = (await snapshot(system, owner.token)).games.find((g: any) => g.id === id);
    expect(game).toEqual({
      id,
      projectId: w.projectId,
      organizationId: w.organizationId,
      name: 'Racer',
      platform: 'unity',
      status: 'active',
      maxPayoutCredits: 5000,
      budgetCredits: 0,
      spentCredits: 0,
      dailyPlayerCapCredits: 25,
      createdAt: expect.any(String),
    });
    const [row] = await db('select slug::text as slug from ledger.games where id = $1', [id]);
    expect(row!.slug).toMatch(/^[0-9a-f-]{36}$/);
    expect(row!.slug).not.toBe(id);
  });

  it('validates createGame fields and permissions', async () => {
    const base = {
      type: 'createGame',
      projectId: w.projectId,
      name: 'G',
      platform: 'web',
      maxPayoutCredits: 10,
      dailyPlayerCapCredits: 1,
    };
    await expectInvalid({ ...base, platform: 'switch' });
    await expectInvalid({ ...base, dailyPlayerCapCredits: -1 });
    await expectInvalid({ ...base, status: 'paused' });
    const { dailyPlayerCapCredits: _, ...missing } = base;
    await expectInvalid(missing);
    await expectDenied(base);
    expectError(await act(system, owner.token, { ...base, projectId: randomUUID() }), 404, 'not_found');
  });

  it('pauses, resumes and edits a game; the ceiling cannot fall below its budget or spending', async () => {
    const game = await ok(system, owner.token, {
      type: 'createGame',
      projectId: w.projectId,
      name: 'Edit me',
      platform: 'ios',
      maxPayoutCredits: 1000,
      dailyPlayerCapCredits: 10,
    });
    await ok(system, owner.token, { type: 'allocateGame', gameId: game.id, amountCredits: 300 });
    await ok(system, adminDev.token, { type: 'updateGame', gameId: game.id, status: 'paused', name: 'Paused' });
    let g = (await snapshot(system, owner.token)).games.find((x: any) => x.id === game.id);
    expect(g).toMatchObject({ status: 'paused', name: 'Paused', budgetCredits: 300 });
    await ok(system, owner.token, {
      type: 'updateGame',
      gameId: game.id,
      status: 'active',
      dailyPlayerCapCredits: 0,
      maxPayoutCredits: 300,
    });
    g = (await snapshot(system, owner.token)).games.find((x: any) => x.id === game.id);
    expect(g).toMatchObject({ status: 'active', dailyPlayerCapCredits: 0, maxPayoutCredits: 300 });
    expectError(
      await act(system, owner.token, { type: 'updateGame', gameId: game.id, maxPayoutCredits: 299 }),
      400,
      'limit_exceeded',
    );
    await expectInvalid({ type: 'updateGame', gameId: game.id, status: 'archived' });
    await expectDenied({ type: 'updateGame', gameId: game.id, status: 'paused' });
  });

  it('refuses a game ceiling below what the game already spent (400 limit_exceeded)', async () => {
    const dev = await developer(system);
    const mine = await world(system, dev.token, { fund: 1000, projectBudget: 1000, gameBudget: 500, ceiling: 1000 });
    // What events would have spent (the event path belongs to another program): spent 200 of the 500 budget.
    await db('update ledger.games set spent_credits = 200 where id = $1', [mine.gameId]);
    const snap = await snapshot(system, dev.token);
    expect(snap.games[0].spentCredits).toBe(200);
    expect(snap.projects[0].spentCredits).toBe(200);
    expectError(
      await act(system, dev.token, { type: 'updateGame', gameId: mine.gameId, maxPayoutCredits: 499 }),
      400,
      'limit_exceeded',
    );
    expectError(
      await act(system, dev.token, { type: 'updateProject', projectId: mine.projectId, maxPayoutCredits: 999 }),
      400,
      'limit_exceeded',
    );
    await ok(system, dev.token, { type: 'updateGame', gameId: mine.gameId, maxPayoutCredits: 500 });
  });

  it('allocates unallocated project funding to games, within each game ceiling', async () => {
    const dev = await developer(system);
    const mine = await world(system, dev.token, { fund: 1000, projectBudget: 600, gameBudget: 0, ceiling: 1000 });
    const second = await ok(system, dev.token, {
      type: 'createGame',
      projectId: mine.projectId,
      name: 'Second',
      platform: 'android',
      maxPayoutCredits: 250,
      dailyPlayerCapCredits: 10,
    });
    await ok(system, dev.token, { type: 'allocateGame', gameId: mine.gameId, amountCredits: 300 });
    expectError(
      await act(system, dev.token, { type: 'allocateGame', gameId: second.id, amountCredits: 251 }),
      400,
      'game_limit',
    );
    await ok(system, dev.token, { type: 'allocateGame', gameId: second.id, amountCredits: 250 });
    // 600 - 300 - 250 = 50 left in the project.
    expectError(
      await act(system, dev.token, { type: 'allocateGame', gameId: mine.gameId, amountCredits: 51 }),
      400,
      'insufficient_funds',
    );
    await ok(system, dev.token, { type: 'allocateGame', gameId: mine.gameId, amountCredits: 50 });
    const snap = await snapshot(system, dev.token);
    expect(snap.games.map((g: any) => g.budgetCredits).sort()).toEqual([250, 350]);
    expect(snap.projects[0]).toMatchObject({ budgetCredits: 600, spentCredits: 0 });
    expect(snap.organizations[0].balanceCredits).toBe(400);
    const [project] = await db('select allocated_credits::int as allocated from ledger.projects where id = $1', [
      mine.projectId,
    ]);
    expect(project!.allocated).toBe(600);
    await expectInvalid({ type: 'allocateGame', gameId: mine.gameId, amountCredits: -1 });
    await expectDenied({ type: 'allocateGame', gameId: w.gameId, amountCredits: 1 });
    expectError(
      await act(system, dev.token, { type: 'allocateGame', gameId: randomUUID(), amountCredits: 1 }),
      404,
      'not_found',
    );
  });
});

describe('rules', () => {
  it('creates an active rule, one per event type, and updates it', async () => {
    const { id } = await ok(system, adminDev.token, {
      type: 'createRule',
      gameId: w.gameId,
      eventType: 'match.won',
      rewardCredits: 15,
    });
    let rule = (await snapshot(system, owner.token)).rules.find((r: any) => r.id === id);
    expect(rule).toMatchObject({
      gameId: w.gameId,
      organizationId: w.organizationId,
      eventType: 'match.won',
      rewardCredits: 15,
      active: true,
    });
    expectError(
      await act(system, owner.token, {
        type: 'createRule',
        gameId: w.gameId,
        eventType: 'match.won',
        rewardCredits: 1,
      }),
      409,
      'conflict',
    );
    await ok(system, owner.token, { type: 'updateRule', ruleId: id, active: false, rewardCredits: 20 });
    rule = (await snapshot(system, owner.token)).rules.find((r: any) => r.id === id);
    expect(rule).toMatchObject({ active: false, rewardCredits: 20 });
    await ok(system, owner.token, { type: 'updateRule', ruleId: id, active: true });
    await expectDenied({ type: 'updateRule', ruleId: id, active: false });
    expectError(
      await act(system, owner.token, { type: 'updateRule', ruleId: randomUUID(), active: true }),
      404,
      'not_found',
    );
    await expectInvalid({ type: 'updateRule', ruleId: id, rewardCredits: 0 });
    await expectInvalid({ type: 'updateRule', ruleId: id, active: 'no' });
  });

  it('validates eventType and rewardCredits, and permissions', async () => {
    const base = { type: 'createRule', gameId: w.gameId, eventType: 'ok_type', rewardCredits: 1 };
    for (const eventType of ['', 'Upper', '1starts.with.digit', 'has space', 'x'.repeat(65)]) {
      await expectInvalid({ ...base, eventType });
    }
    await ok(system, owner.token, { ...base, eventType: `a${'b'.repeat(63)}` });
    await expectInvalid({ ...base, rewardCredits: 0 });
    await expectInvalid({ ...base, rewardCredits: 1_000_000_000_001 });
    await expectDenied({ ...base, eventType: 'denied' });
    expectError(await act(system, owner.token, { ...base, gameId: randomUUID() }), 404, 'not_found');
  });
});

describe('keys', () => {
  it('issues a secret key once, stores only its SHA-256 and shows metadata only', async () => {
    const issued = await ok(system, adminDev.token, {
      type: 'issueKey',
      gameId: w.gameId,
      kind: 'secret',
      name: 'server',
    });
    expect(issued.kind).toBe('secret');
    expect(issued.issuedKey).toMatch(/^cr_sk_sandbox_[A-Za-z0-9_-]{43}$/);
    const key = (await snapshot(system, owner.token)).keys.find((k: any) => k.id === issued.id);
    expect(key).toEqual({
      id: issued.id,
      gameId: w.gameId,
      organizationId: w.organizationId,
      kind: 'secret',
      name: 'server',
      prefix: issued.issuedKey!.slice(0, 'cr_sk_sandbox_'.length + 6),
      publicKey: null,
      createdAt: expect.any(String),
      revokedAt: null,
    });
    const [row] = await db('select key_hash, public_key from ledger.keys where id = $1', [issued.id]);
    expect(Buffer.from(row!.key_hash).equals(createHash('sha256').update(issued.issuedKey!).digest())).toBe(true);
    expect(row!.public_key).toBeNull();
    const everything = JSON.stringify(await db('select * from ledger.keys'));
    expect(everything).not.toContain(issued.issuedKey!.slice(14));
    // The value never appears again, in the snapshot or the audit trail.
    const snapText = JSON.stringify(await snapshot(system, owner.token));
    expect(snapText).not.toContain(issued.issuedKey!);
    expect(JSON.stringify(await db('select * from ledger.audit_log'))).not.toContain(issued.issuedKey!);
  });

  it('issues a public key whose value is shown as publicKey', async () => {
    const issued = await ok(system, owner.token, {
      type: 'issueKey',
      gameId: w.gameId,
      kind: 'public',
      name: 'client',
    });
    expect(issued.kind).toBe('public');
    expect(issued.issuedKey).toMatch(/^cr_pk_sandbox_[A-Za-z0-9_-]{43}$/);
    const key = (await snapshot(system, owner.token)).keys.find((k: any) => k.id === issued.id);
    expect(key).toMatchObject({ kind: 'public', publicKey: issued.issuedKey, prefix: issued.issuedKey!.slice(0, 20) });
  });

  it('issues distinct random values', async () => {
    const values = new Set<string>();
    for (let i = 0; i < 5; i++) {
      values.add(
        (await ok(system, owner.token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: `k${i}` }))
          .issuedKey!,
      );
    }
    expect(values.size).toBe(5);
  });

  it('revokes a key at once; revoking again keeps the first time', async () => {
    const issued = await ok(system, owner.token, { type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'old' });
    expect(await ok(system, adminDev.token, { type: 'revokeKey', keyId: issued.id })).toEqual({
      id: issued.id,
      mode: 'sandbox',
    });
    const first = (await snapshot(system, owner.token)).keys.find((k: any) => k.id === issued.id).revokedAt;
    expect(first).toEqual(expect.any(String));
    await ok(system, owner.token, { type: 'revokeKey', keyId: issued.id });
    expect((await snapshot(system, owner.token)).keys.find((k: any) => k.id === issued.id).revokedAt).toBe(first);
    await expectDenied({ type: 'revokeKey', keyId: issued.id });
    expectError(await act(system, owner.token, { type: 'revokeKey', keyId: randomUUID() }), 404, 'not_found');
  });

  it('validates issueKey fields and permissions', async () => {
    await expectInvalid({ type: 'issueKey', gameId: w.gameId, kind: 'admin', name: 'k' });
    await expectInvalid({ type: 'issueKey', gameId: w.gameId, kind: 'secret', name: '' });
    await expectInvalid({ type: 'issueKey', gameId: w.gameId, kind: 'secret' });
    await expectDenied({ type: 'issueKey', gameId: w.gameId, kind: 'secret', name: 'k' });
    expectError(
      await act(system, owner.token, { type: 'issueKey', gameId: randomUUID(), kind: 'secret', name: 'k' }),
      404,
      'not_found',
    );
  });
});

describe('members', () => {
  it('lets only the owner add members; an existing member is 409 conflict', async () => {
    const newcomer = await developer(system);
    const base = { type: 'addMember', organizationId: w.organizationId, identityUserId: newcomer.sub, role: 'viewer' };
    expectError(await act(system, adminDev.token, base), 403, 'forbidden');
    expectError(await act(system, viewer.token, base), 403, 'forbidden');
    expectError(await act(system, outsider.token, base), 404, 'not_found');
    const { id } = await ok(system, owner.token, base);
    expectError(await act(system, owner.token, { ...base, role: 'admin' }), 409, 'conflict');
    expectError(await act(system, owner.token, { ...base, identityUserId: owner.sub }), 409, 'conflict');
    const member = (await snapshot(system, newcomer.token)).members.find((m: any) => m.id === id);
    expect(member).toMatchObject({ organizationId: w.organizationId, identityUserId: newcomer.sub, role: 'viewer' });
  });

  it('validates addMember fields', async () => {
    const base = { type: 'addMember', organizationId: w.organizationId, identityUserId: 'someone', role: 'viewer' };
    await expectInvalid({ ...base, role: 'owner' });
    await expectInvalid({ ...base, identityUserId: '' });
    await expectInvalid({ ...base, identityUserId: 'x'.repeat(201) });
    await ok(system, owner.token, { ...base, identityUserId: 'x'.repeat(200) });
  });

  it('membership does not grant console access: the member also needs an invitation', async () => {
    const stranger = `dev|uninvited-${randomUUID()}`;
    await ok(system, owner.token, {
      type: 'addMember',
      organizationId: w.organizationId,
      identityUserId: stranger,
      role: 'admin',
    });
    const { developerToken } = await import('../../support/system.ts');
    const token = await developerToken(system, `uninvited-${randomUUID()}@example.com`, { sub: stranger });
    expectError(await api(system.url, 'GET', CONSOLE, { token }), 403, 'DEVELOPER_INVITATION_REQUIRED');
    expectError(
      await act(system, token, { type: 'fundOrganization', organizationId: w.organizationId, amountCredits: 1 }),
      403,
      'DEVELOPER_INVITATION_REQUIRED',
    );
  });

  it('changes and removes non-owner members; the owner is immutable (409 owner_immutable)', async () => {
    const dev = await developer(system);
    const mine = await ok(system, dev.token, { type: 'createOrganization', name: 'Team' });
    const helper = await developer(system);
    const helperId = await addMember(system, dev.token, mine.id, helper, 'admin');
    const ownerMember = (await snapshot(system, dev.token)).members.find((m: any) => m.role === 'owner');

    // The admin can fund but not manage members.
    await ok(system, helper.token, { type: 'fundOrganization', organizationId: mine.id, amountCredits: 5 });
    expectError(
      await act(system, helper.token, { type: 'updateMember', memberId: ownerMember.id, role: 'viewer' }),
      403,
      'forbidden',
    );
    expectError(await act(system, helper.token, { type: 'removeMember', memberId: helperId }), 403, 'forbidden');
    expectError(await act(system, outsider.token, { type: 'removeMember', memberId: helperId }), 404, 'not_found');

    expectError(
      await act(system, dev.token, { type: 'updateMember', memberId: ownerMember.id, role: 'admin' }),
      409,
      'owner_immutable',
    );
    expectError(
      await act(system, dev.token, { type: 'removeMember', memberId: ownerMember.id }),
      409,
      'owner_immutable',
    );
    await expectInvalid({ type: 'updateMember', memberId: helperId, role: 'owner' });

    await ok(system, dev.token, { type: 'updateMember', memberId: helperId, role: 'viewer' });
    expectError(
      await act(system, helper.token, { type: 'fundOrganization', organizationId: mine.id, amountCredits: 5 }),
      403,
      'forbidden',
    );
    expect((await snapshot(system, helper.token)).organizations).toEqual([
      expect.objectContaining({ id: mine.id, role: 'viewer' }),
    ]);

    await ok(system, dev.token, { type: 'removeMember', memberId: helperId });
    expectError(
      await act(system, helper.token, { type: 'fundOrganization', organizationId: mine.id, amountCredits: 5 }),
      404,
      'not_found',
    );
    expect((await snapshot(system, helper.token)).organizations).toEqual([]);
    expectError(await act(system, dev.token, { type: 'removeMember', memberId: helperId }), 404, 'not_found');
    expectError(
      await act(system, dev.token, { type: 'updateMember', memberId: randomUUID(), role: 'admin' }),
      404,
      'not_found',
    );
  });
});

describe('audit trail', () => {
  it('records who did what and when, in the ledger schema, for every mutation', async () => {
    const dev = await developer(system);
    const org = await ok(system, dev.token, { type: 'createOrganization', name: 'Audited' });
    await ok(system, dev.token, { type: 'fundOrganization', organizationId: org.id, amountCredits: 77 });
    expectError(
      await act(system, dev.token, {
        type: 'fundOrganization',
        organizationId: org.id,
        amountCredits: 1_000_000_000_000,
      }),
      400,
      'limit_exceeded',
    );
    const rows = await db(
      `select actor, action, target_id::text as target, details, created_at from ledger.audit_log
        where organization_id = $1 order by id`,
      [org.id],
    );
    expect(rows.map((r) => [r.actor, r.action, r.target])).toEqual([
      [dev.sub, 'createOrganization', org.id],
      [dev.sub, 'fundOrganization', org.id],
    ]);
    expect(rows[1]!.details).toEqual({ amountCredits: 77 });
    expect(rows[1]!.created_at).toBeInstanceOf(Date);
  });
});

describe('invitation recheck', () => {
  it('refuses every action once the invitation is revoked', async () => {
    const dev = await developer(system);
    const org = await ok(system, dev.token, { type: 'createOrganization', name: 'Short-lived' });
    const list = await admin(system, 'GET', '/invitations');
    const invitation = list.body.data.records.find((i: any) => i.email === dev.email);
    await admin(system, 'POST', `/invitations/${invitation.id}/revoke`);
    expectError(
      await act(system, dev.token, { type: 'fundOrganization', organizationId: org.id, amountCredits: 1 }),
      403,
      'DEVELOPER_INVITATION_REQUIRED',
    );
    const [row] = await db('select balance_credits::int as balance from ledger.organizations where id = $1', [org.id]);
    expect(row!.balance).toBe(0);
  });
});

describe('response shapes', () => {
  it('answer every action with exactly { id, mode } (issueKey adds issuedKey and kind)', async () => {
    const result = await act(system, owner.token, { type: 'createOrganization', name: 'Shape' });
    expect(Object.keys(expectData(result, 'DeveloperActionResult')).sort()).toEqual(['id', 'mode']);
    expect(result.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
