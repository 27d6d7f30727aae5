// GET /api/developer/v1/records: keyset pagination newest first by (createdAt, id), an opaque signed cursor bound to
// kind and filters, membership checked on every page, and the query rules of CONTRACT section 8.

import {
  addMember,
  type Developer,
  developer,
  expectData,
  expectError,
  insertEvents,
  insertPlayer,
  insertPlayers,
  ok,
  RECORDS,
  type World,
  world,
} from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';

let system: TestSystem;
let owner: Developer;
let outsider: Developer;
let w: World;
let other: World;
let playerId: string;

beforeAll(async () => {
  system = await startTestSystem();
  owner = await developer(system);
  outsider = await developer(system);
  w = await world(system, owner.token);
  // A second organization of the same owner, to check the filters.
  other = await world(system, owner.token);
  playerId = await insertPlayer(system, w.gameId);
  await insertEvents(system, w.gameId, playerId, 300);
  const otherPlayer = await insertPlayer(system, other.gameId);
  await insertEvents(system, other.gameId, otherPlayer, 20);
});

afterAll(async () => {
  await system?.stop();
});

const db = (text: string, params: unknown[] = []) => sql(system.databaseUrl!, text, params);

async function page(
  token: string,
  query: string,
): Promise<{ kind: string; records: any[]; nextCursor: string | null }> {
  return expectData(await api(system.url, 'GET', `${RECORDS}?${query}`, { token }), 'DeveloperRecordPage');
}

/** Walks every page; returns the records in the order received and the number of pages. */
async function walk(token: string, query: string): Promise<{ records: any[]; pages: number }> {
  const records: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const suffix: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const current = await page(token, `${query}${suffix}`);
    records.push(...current.records);
    cursor = current.nextCursor;
    pages++;
    if (pages > 1000) throw new Error('the walk does not end');
  } while (cursor !== null);
  return { records, pages };
}

async function expectedOrder(table: 'events' | 'players', where: string, params: unknown[]): Promise<string[]> {
  const rows = await db(
    `select id::text as id from ledger.${table} where ${where} order by created_at desc, id desc`,
    params,
  );
  return rows.map((r) => r.id);
}

describe('walking the records', () => {
  it('returns each of 300 events exactly once, newest first, with limit 7, and ends with nextCursor null', async () => {
    const { records, pages } = await walk(owner.token, `kind=events&gameId=${w.gameId}&limit=7`);
    expect(pages).toBe(Math.ceil(300 / 7));
    const ids = records.map((r) => r.id);
    expect(new Set(ids).size).toBe(300);
    expect(ids).toEqual(await expectedOrder('events', 'game_id = $1', [w.gameId]));
    for (const record of records) expect(record.gameId).toBe(w.gameId);
  });

  it('breaks ties of createdAt by id', async () => {
    const dev = await developer(system);
    const mine = await world(system, dev.token);
    const player = await insertPlayer(system, mine.gameId);
    await insertEvents(system, mine.gameId, player, 40, { sameCreatedAt: true });
    const { records } = await walk(dev.token, 'kind=events&limit=7');
    expect(records.map((r) => r.id)).toEqual(await expectedOrder('events', 'game_id = $1', [mine.gameId]));
    expect(new Set(records.map((r) => r.createdAt)).size).toBe(1);
  });

  it('answers nextCursor null on a full last page (no empty page after it)', async () => {
    const exact = await page(owner.token, `kind=events&organizationId=${other.organizationId}&limit=20`);
    expect(exact.records).toHaveLength(20);
    expect(exact.nextCursor).toBeNull();
    const { records, pages } = await walk(owner.token, `kind=events&organizationId=${other.organizationId}&limit=10`);
    expect(records).toHaveLength(20);
    expect(pages).toBe(2);
  });

  it('uses 50 as the default page size and accepts up to 100', async () => {
    expect((await page(owner.token, 'kind=events')).records).toHaveLength(50);
    expect((await page(owner.token, 'kind=events&limit=100')).records).toHaveLength(100);
    expect((await page(owner.token, 'kind=events&limit=1')).records).toHaveLength(1);
  });

  it('lists linked and unlinked players', async () => {
    const dev = await developer(system);
    const mine = await world(system, dev.token);
    const linked = await insertPlayers(system, mine.gameId, 12);
    const unlinked = await insertPlayers(system, mine.gameId, 9, { linked: false });
    const { records } = await walk(dev.token, 'kind=players&limit=5');
    expect(records.map((r) => r.id)).toEqual([...linked, ...unlinked].reverse());
    const first = records.find((r) => r.id === unlinked[0]);
    expect(first).toMatchObject({ creditsUserId: null, username: null, linkedAt: null });
    expect(records.find((r) => r.id === linked[0])).toMatchObject({ creditsUserId: expect.any(String) });
  });
});

describe('filters', () => {
  it('are AND-ed and scoped to the caller', async () => {
    const all = await walk(owner.token, 'kind=events&limit=100');
    expect(all.records).toHaveLength(320);
    const byOrganization = await walk(owner.token, `kind=events&organizationId=${w.organizationId}&limit=100`);
    expect(byOrganization.records).toHaveLength(300);
    const byProject = await walk(owner.token, `kind=events&projectId=${other.projectId}&limit=100`);
    expect(byProject.records).toHaveLength(20);
    // A game of one organization and the other organization: nothing matches both.
    expect(
      (await page(owner.token, `kind=events&organizationId=${other.organizationId}&gameId=${w.gameId}`)).records,
    ).toEqual([]);
    const players = await page(owner.token, `kind=players&projectId=${w.projectId}`);
    expect(players.records.map((r) => r.id)).toEqual([playerId]);
  });

  it('answer 404 not_found for an object the caller cannot see', async () => {
    for (const filter of [`organizationId=${w.organizationId}`, `projectId=${w.projectId}`, `gameId=${w.gameId}`]) {
      expectError(
        await api(system.url, 'GET', `${RECORDS}?kind=events&${filter}`, { token: outsider.token }),
        404,
        'not_found',
      );
    }
    expectError(
      await api(system.url, 'GET', `${RECORDS}?kind=players&gameId=00000000-0000-0000-0000-000000000000`, {
        token: owner.token,
      }),
      404,
      'not_found',
    );
    // Without filters, an outsider simply sees none of them.
    expect((await page(outsider.token, 'kind=events')).records).toEqual([]);
  });
});

describe('query rules', () => {
  it('answer 400 INVALID_RECORD_QUERY for unknown, repeated or malformed parameters', async () => {
    for (const query of [
      '',
      'kind=',
      'kind=games',
      'kind=events&kind=events',
      'kind=events&limit=10&limit=10',
      'kind=events&unknown=1',
      'kind=events&Kind=events',
      'kind=events&limit=0',
      'kind=events&limit=101',
      'kind=events&limit=-1',
      'kind=events&limit=abc',
      'kind=events&limit=1.5',
      'kind=events&limit=',
      'kind=events&limit=07',
      'kind=events&limit=1e1',
      'kind=events&organizationId=not-a-uuid',
      'kind=events&gameId=',
      'kind=events&cursor=',
      'kind=events&limit[]=5',
    ]) {
      expectError(
        await api(system.url, 'GET', `${RECORDS}${query ? `?${query}` : ''}`, { token: owner.token }),
        400,
        'INVALID_RECORD_QUERY',
      );
    }
  });

  it('answer 400 INVALID_CURSOR for an altered cursor or one used with another kind or other filters', async () => {
    const first = await page(owner.token, `kind=events&organizationId=${w.organizationId}&limit=7`);
    const cursor = first.nextCursor!;
    expect(cursor).toEqual(expect.any(String));
    const use = (query: string, value: string) =>
      api(system.url, 'GET', `${RECORDS}?${query}&cursor=${encodeURIComponent(value)}`, { token: owner.token });
    // The cursor itself works, with any page size.
    expectData(await use(`kind=events&organizationId=${w.organizationId}&limit=3`, cursor), 'DeveloperRecordPage');
    const flip = (text: string, index: number) =>
      text.slice(0, index) + (text[index] === 'A' ? 'B' : 'A') + text.slice(index + 1);
    for (const altered of [
      flip(cursor, 5),
      flip(cursor, cursor.length - 1),
      `${cursor}A`,
      cursor.slice(0, -2),
      'garbage',
      '!!!!',
    ]) {
      expectError(await use(`kind=events&organizationId=${w.organizationId}`, altered), 400, 'INVALID_CURSOR');
    }
    expectError(await use(`kind=players&organizationId=${w.organizationId}`, cursor), 400, 'INVALID_CURSOR');
    expectError(await use('kind=events', cursor), 400, 'INVALID_CURSOR');
    expectError(
      await use(`kind=events&organizationId=${w.organizationId}&gameId=${w.gameId}`, cursor),
      400,
      'INVALID_CURSOR',
    );
    expectError(await use(`kind=events&projectId=${w.projectId}`, cursor), 400, 'INVALID_CURSOR');
  });

  it('keeps the cursor opaque: no ids or timestamps in clear', async () => {
    const first = await page(owner.token, `kind=events&gameId=${w.gameId}&limit=7`);
    const last = first.records[6];
    expect(first.nextCursor).not.toContain(last.id);
    expect(first.nextCursor).not.toContain(w.gameId);
    expect(first.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});

describe('membership on every page', () => {
  it('answers 404 on the next page once the member is removed, and stops showing that organization', async () => {
    const member = await developer(system);
    const memberId = await addMember(system, owner.token, w.organizationId, member, 'viewer');
    const first = await page(member.token, `kind=events&organizationId=${w.organizationId}&limit=7`);
    expect(first.records).toHaveLength(7);
    const unfiltered = await page(member.token, 'kind=events&limit=7');
    expect(unfiltered.records).toHaveLength(7);

    await ok(system, owner.token, { type: 'removeMember', memberId });
    expectError(
      await api(
        system.url,
        'GET',
        `${RECORDS}?kind=events&organizationId=${w.organizationId}&limit=7&cursor=${encodeURIComponent(first.nextCursor!)}`,
        { token: member.token },
      ),
      404,
      'not_found',
    );
    const next = await page(member.token, `kind=events&limit=7&cursor=${encodeURIComponent(unfiltered.nextCursor!)}`);
    expect(next).toEqual({ kind: 'events', records: [], nextCursor: null });
  });
});
