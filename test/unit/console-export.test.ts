// The decision search's export, as pure logic (console/src/pages/decisions/export-query.ts): the query it sends for a
// search, the window it takes when the search has none, what it refuses before sending, the file's name, the curl
// command, and how a cut-short NDJSON export is told from a whole one.
import {
  cutShortBy,
  DECISION_EXPORT_PATH,
  decisionsText,
  exportCurl,
  exportedCount,
  exportFileName,
  exportPlan,
} from '../../console/src/pages/decisions/export-query.ts';

const GAME = '3f2c0e4a-1b2c-4d5e-8f90-a1b2c3d4e5f6';
const PLAYER = 'b1748125-0c1d-4e2f-8a3b-4c5d6e7f8091';
const NOW = Date.parse('2026-11-28T21:00:00.000Z');

test('an export is of one game: without one it says so before sending', () => {
  expect(exportPlan({ size: 25, status: 'rejected' }, 'csv', NOW)).toEqual({
    problem: 'Choose a game in the filters: an export holds the decisions of one game.',
  });
});

test("the search's filters become the export's parameters; no window means the 31 days before now", () => {
  const plan = exportPlan(
    {
      size: 50,
      game: GAME,
      org: 'o',
      project: 'p',
      event: 'e',
      status: 'rejected',
      reason: 'rule_inactive',
      type: 'level.up',
      after: 'c',
    },
    'csv',
    NOW,
  );
  expect(plan).toEqual({
    from: '2026-10-28T21:00:00.000Z',
    to: '2026-11-28T21:00:00.000Z',
    query: new URLSearchParams({
      gameId: GAME,
      from: '2026-10-28T21:00:00.000Z',
      to: '2026-11-28T21:00:00.000Z',
      format: 'csv',
      organizationId: 'o',
      projectId: 'p',
      eventId: 'e',
      status: 'rejected',
      reason: 'rule_inactive',
      eventType: 'level.up',
    }).toString(),
  });
});

test("the search's window is kept; a start alone ends now, an end alone starts 31 days before it", () => {
  const window = (from?: string, to?: string) => {
    const plan = exportPlan({ size: 25, game: GAME, from, to }, 'ndjson', NOW);
    return 'problem' in plan ? plan.problem : [plan.from, plan.to];
  };
  expect(window('2026-11-01T00:00:00.000Z', '2026-11-02T00:00:00.000Z')).toEqual([
    '2026-11-01T00:00:00.000Z',
    '2026-11-02T00:00:00.000Z',
  ]);
  expect(window('2026-11-20T00:00:00.000Z')).toEqual(['2026-11-20T00:00:00.000Z', '2026-11-28T21:00:00.000Z']);
  expect(window(undefined, '2026-02-01T00:00:00.000Z')).toEqual([
    '2026-01-01T00:00:00.000Z',
    '2026-02-01T00:00:00.000Z',
  ]);
  expect(window('2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.001Z')).toBe(
    'An export covers at most 31 days: narrow the received window.',
  );
  expect(window('2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')).toEqual([
    '2026-10-01T00:00:00.000Z',
    '2026-11-01T00:00:00.000Z',
  ]);
});

test("a game's own player id is sent as the player id the console looked up", () => {
  const plan = exportPlan({ size: 25, game: GAME, player: 'hero-9' }, 'ndjson', NOW, PLAYER);
  expect('query' in plan && new URLSearchParams(plan.query).get('playerId')).toBe(PLAYER);
});

test('the file name, and the same request as a curl command with the token left to fill in', () => {
  expect(exportFileName(GAME, '2026-10-28T21:00:00.000Z', '2026-10-29T21:30:00.000Z', 'csv')).toBe(
    'decisions-3f2c0e4a-2026-10-28T2100-to-2026-10-29T2130.csv',
  );
  expect([decisionsText(1), decisionsText(2500)]).toEqual(['1 decision', '2,500 decisions']);
  expect(exportCurl('https://rewards.example', 'gameId=g&format=ndjson', 'd.ndjson')).toBe(
    `curl -fsS -H "Authorization: Bearer $TOKEN" 'https://rewards.example${DECISION_EXPORT_PATH}?gameId=g&format=ndjson' -o d.ndjson`,
  );
});

test('a cut-short NDJSON export is told by its error line; records are counted without it or the CSV header', () => {
  const whole = '{"id":"a"}\n{"id":"b"}\n';
  const cut = `${whole}{"error":{"code":"DEVELOPER_ACCESS_UNAVAILABLE","message":"The ledger did not answer."}}\n`;
  expect(cutShortBy(whole)).toBeUndefined();
  expect(cutShortBy(cut)).toEqual({ code: 'DEVELOPER_ACCESS_UNAVAILABLE', message: 'The ledger did not answer.' });
  expect(cutShortBy('{"error":"not the envelope"}\n')).toBeUndefined();
  expect(exportedCount(whole, 'ndjson')).toBe(2);
  expect(exportedCount(cut, 'ndjson')).toBe(2);
  expect(exportedCount('id,eventId\r\na,1\r\nb,2\r\n', 'csv')).toBe(2);
  expect(exportedCount('id,eventId\r\n', 'csv')).toBe(0);
  expect(exportedCount('', 'ndjson')).toBe(0);
});
