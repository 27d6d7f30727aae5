// The decision search's total, estimated from the game's statistics (console/src/pages/decisions/total.ts): asked
// only for one game's search whose filters the statistics count, over the search's window (at most its last 400
// days), and summed by status and reason.
import {
  aboutDecisions,
  pagesOf,
  type TotalBucket,
  totalOf,
  totalWindow,
} from '../../console/src/pages/decisions/total.ts';

const GAME = '3f2c0e4a-1b2c-4d5e-8f90-a1b2c3d4e5f6';
const NOW = Date.parse('2026-12-07T12:00:00.000Z');
const buckets: TotalBucket[] = [
  {
    accepted: 10,
    rejected: 4,
    reasons: [
      { reason: 'daily_player_cap', count: 3 },
      { reason: 'game_paused', count: 1 },
    ],
  },
  { accepted: 5, rejected: 2, reasons: [{ reason: 'daily_player_cap', count: 2 }] },
];

describe("the decision search's total", () => {
  it('is asked for one game whose filters the statistics count, over the window', () => {
    expect(totalWindow({ size: 25 }, NOW)).toBeUndefined();
    for (const filter of [{ player: 'p' }, { event: 'e' }, { type: 'level.up' }]) {
      expect(totalWindow({ size: 25, game: GAME, ...filter }, NOW)).toBeUndefined();
    }
    const window = totalWindow({ size: 25, game: GAME, status: 'rejected', from: '2026-12-01T00:00:00.000Z' }, NOW)!;
    expect(window).toEqual({ gameId: GAME, from: '2026-12-01T00:00:00.000Z', to: '2026-12-07T12:01:00.000Z' });
    // No start: the statistics' 400 days at most.
    const open = totalWindow({ size: 25, game: GAME, to: '2026-12-07T00:00:00.000Z' }, NOW)!;
    expect(Date.parse(open.to) - Date.parse(open.from)).toBe(400 * 86_400_000 - 1);
  });

  it('sums the buckets by status and reason', () => {
    expect(totalOf(buckets, { size: 25 })).toBe(21);
    expect(totalOf(buckets, { size: 25, status: 'accepted' })).toBe(15);
    expect(totalOf(buckets, { size: 25, status: 'rejected' })).toBe(6);
    expect(totalOf(buckets, { size: 25, reason: 'daily_player_cap' })).toBe(5);
    expect(totalOf(buckets, { size: 25, status: 'accepted', reason: 'daily_player_cap' })).toBe(0);
  });

  it('reads as an estimate, in pages', () => {
    expect(aboutDecisions(10_000)).toBe('about 10,000 decisions');
    expect(aboutDecisions(1)).toBe('about 1 decision');
    expect(pagesOf(130, 25)).toBe(6);
    expect(pagesOf(0, 25)).toBe(1);
  });
});
