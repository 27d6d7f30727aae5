// GET /api/developer/v1/console: exactly the spec's DeveloperSnapshot, scoped to the caller's organizations, with
// at most 500 linked players and 200 events across them, and no secret and no e-mail anywhere.

import {
  addMember,
  type Developer,
  developer,
  insertEvents,
  insertPlayer,
  insertPlayers,
  ok,
  snapshot,
  type World,
  world,
} from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

let system: TestSystem;

beforeAll(async () => {
  system = await startTestSystem();
});

afterAll(async () => {
  await system?.stop();
});

const db = (text: string, params: unknown[] = []) => sql(system.databaseUrl!, text, params);

/** Newest first by (createdAt, id), with createdAt compared through the database's exact values. */
async function expectNewestFirst(table: 'players' | 'events', ids: string[]): Promise<void> {
  const rows = await db(
    `select id::text as id from ledger.${table} where id = any($1::uuid[]) order by created_at desc, id desc`,
    [ids],
  );
  expect(ids).toEqual(rows.map((r) => r.id));
}

describe('console snapshot', () => {
  it('is empty but complete for a developer without organizations', async () => {
    const dev = await developer(system);
    expect(await snapshot(system, dev.token)).toEqual({
      mode: 'sandbox',
      unitsPerDollar: 1000,
      canCreateUnlimitedOrganization: false,
      organizations: [],
      projects: [],
      games: [],
      keys: [],
      players: [],
      events: [],
      rules: [],
      members: [],
      limits: { players: 500, events: 200 },
    });
  });

  it('reports the invitation capability', async () => {
    const rich = await developer(system, { canCreateUnlimitedOrganization: true });
    expect((await snapshot(system, rich.token)).canCreateUnlimitedOrganization).toBe(true);
  });

  it("shows only the caller's organizations, with the caller's role in each", async () => {
    const alice = await developer(system);
    const bob = await developer(system);
    const aliceWorld = await world(system, alice.token);
    const bobWorld = await world(system, bob.token);
    await ok(system, alice.token, {
      type: 'createRule',
      gameId: aliceWorld.gameId,
      eventType: 'win',
      rewardCredits: 5,
    });
    await ok(system, bob.token, { type: 'createRule', gameId: bobWorld.gameId, eventType: 'win', rewardCredits: 5 });
    await ok(system, bob.token, { type: 'issueKey', gameId: bobWorld.gameId, kind: 'secret', name: 'bob' });
    await insertPlayer(system, bobWorld.gameId);

    const aliceSnap = await snapshot(system, alice.token);
    const everyOrganizationId = (snap: any) =>
      new Set(
        ['projects', 'games', 'keys', 'players', 'events', 'rules', 'members'].flatMap((list) =>
          snap[list].map((item: any) => item.organizationId),
        ),
      );
    expect(aliceSnap.organizations.map((o: any) => [o.id, o.role])).toEqual([[aliceWorld.organizationId, 'owner']]);
    expect([...everyOrganizationId(aliceSnap)]).toEqual([aliceWorld.organizationId]);

    // Bob adds Alice as a viewer: she now sees his organization too, as a viewer.
    await addMember(system, bob.token, bobWorld.organizationId, alice, 'viewer');
    const shared = await snapshot(system, alice.token);
    expect(shared.organizations.map((o: any) => [o.id, o.role]).sort()).toEqual(
      [
        [aliceWorld.organizationId, 'owner'],
        [bobWorld.organizationId, 'viewer'],
      ].sort(),
    );
    expect(everyOrganizationId(shared)).toEqual(new Set([aliceWorld.organizationId, bobWorld.organizationId]));
    expect(shared.keys).toHaveLength(1);
    expect(shared.members).toHaveLength(3);
  });

  it('computes the project spending from its games', async () => {
    const dev = await developer(system);
    const mine = await world(system, dev.token, { fund: 2000, projectBudget: 2000, gameBudget: 500 });
    const second = await ok(system, dev.token, {
      type: 'createGame',
      projectId: mine.projectId,
      name: 'Second',
      platform: 'unreal',
      maxPayoutCredits: 1000,
      dailyPlayerCapCredits: 10,
    });
    await ok(system, dev.token, { type: 'allocateGame', gameId: second.id, amountCredits: 400 });
    await db('update ledger.games set spent_credits = 120 where id = $1', [mine.gameId]);
    await db('update ledger.games set spent_credits = 33 where id = $1', [second.id]);
    const snap = await snapshot(system, dev.token);
    expect(snap.projects[0]).toMatchObject({ budgetCredits: 2000, spentCredits: 153 });
  });
});

describe('snapshot limits', () => {
  let dev: Developer;
  let first: World;
  let secondGame: string;
  let linked: string[];
  let unlinked: string[];

  beforeAll(async () => {
    dev = await developer(system);
    first = await world(system, dev.token);
    const second = await world(system, dev.token);
    secondGame = second.gameId;
    linked = [];
    unlinked = [];
    // 520 linked players across the caller's two organizations (the second's are newer), 30 unlinked ones, newest of
    // all. Explicit, non-overlapping creation times: the first organization's players one minute ago, one millisecond
    // apart, the second's 30 s later, the unlinked ones 30 s after that.
    const base = Date.now() - 60_000;
    linked = [
      ...(await insertPlayers(system, first.gameId, 260, { from: new Date(base) })),
      ...(await insertPlayers(system, secondGame, 260, { from: new Date(base + 30_000) })),
    ];
    unlinked = await insertPlayers(system, first.gameId, 30, { linked: false, from: new Date(base + 60_000) });
    await insertEvents(system, first.gameId, linked[1]!, 130);
    // A player of the second game (an event names a player of its own game: a foreign key says so).
    await insertEvents(system, secondGame, linked[260]!, 120);
  });

  it('lists at most 500 linked players across the organizations, newest first', async () => {
    const snap = await snapshot(system, dev.token);
    expect(snap.limits).toEqual({ players: 500, events: 200 });
    expect(snap.players).toHaveLength(500);
    for (const player of snap.players) {
      expect(player.creditsUserId).toEqual(expect.any(String));
      expect(player.linkedAt).toEqual(expect.any(String));
    }
    const ids = snap.players.map((p: any) => p.id);
    expect(ids.filter((id: string) => unlinked.includes(id))).toEqual([]);
    expect(new Set(snap.players.map((p: any) => p.organizationId)).size).toBe(2);
    await expectNewestFirst('players', ids);
    // The 500 are the newest linked ones: the 20 oldest linked players are the ones left out.
    expect(new Set(ids)).toEqual(new Set(linked.slice(20)));
  });

  it('lists at most 200 events across the organizations, newest first', async () => {
    const snap = await snapshot(system, dev.token);
    expect(snap.events).toHaveLength(200);
    expect(new Set(snap.events.map((e: any) => e.organizationId)).size).toBe(2);
    await expectNewestFirst(
      'events',
      snap.events.map((e: any) => e.id),
    );
    const accepted = snap.events.find((e: any) => e.status === 'accepted');
    expect(accepted).toMatchObject({ reason: null, rewardCredits: 5, eventType: 'level.up' });
    const rejected = snap.events.find((e: any) => e.status === 'rejected');
    expect(rejected).toMatchObject({ reason: 'daily_player_cap', rewardCredits: 0 });
  });

  it('carries no secret and no e-mail', async () => {
    const secret = await ok(system, dev.token, { type: 'issueKey', gameId: first.gameId, kind: 'secret', name: 's' });
    const text = JSON.stringify(await snapshot(system, dev.token));
    expect(text).not.toContain(secret.issuedKey!);
    expect(text).not.toContain(secret.issuedKey!.slice(20));
    expect(text).not.toContain(dev.email);
    expect(text).not.toMatch(/@example\.com/);
    expect(text).not.toMatch(/keyHash|key_hash|tokenHash|payloadHash|email/i);
  });
});
