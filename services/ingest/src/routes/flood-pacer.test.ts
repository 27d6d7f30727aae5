// The flood pacer on its own, with explicit times: when a flood is spaced out, by how much, and that it never is
// while nobody else waits. Its effect on other games' latency beside a flood is measured by npm run bench:fair
// (docs/reliability.md, "Fair ingest"); the batcher's side of it (a key held back keeps its place, a timer sends it)
// in keyed-batcher.test.ts.
import { FLOOD_PACER_DEFAULTS, FloodPacer } from './flood-pacer.ts';

const LONG = 16;
const FLOOD = 32;
const options = { ...FLOOD_PACER_DEFAULTS, longBatchMin: LONG, floodBatchMin: FLOOD, target: 2 };
const pacer = () => new FloodPacer(options);
const flood = (key = 'A') => [{ key, size: FLOOD }];
const quiet = [{ key: 'B', size: 1 }];

/** Short calls of `ms` each, every 20 ms from `from` (as game B's 50 events a second); answers the last one's end. */
function shortCalls(p: FloodPacer, from: number, count: number, ms: number): number {
  let at = from;
  for (let i = 0; i < count; i++) {
    at += 20;
    p.ended(quiet, at - ms, at);
  }
  return at;
}

test('a flood alone, or floods together, are never paced: only calls without a long batch set the pace', () => {
  const p = pacer();
  for (let t = 0; t < 5_000; t += 40) p.ended([...flood('A'), ...flood('C')], t, t + 40);
  expect(p.currentPace(5_000)).toBe(0);
  expect(p.notBefore('A', 5_000)).toBe(5_000);
});

test('while the other keys’ calls take over the target times the quiet round trip, a flood waits after each call', () => {
  const p = pacer();
  let now = shortCalls(p, 0, 50, 4); // B alone: 4 ms round trips, the quiet one
  expect(p.currentPace(now)).toBe(0);
  now = shortCalls(p, now, 10, 12); // beside a flood: three times the quiet round trip
  const pace = p.currentPace(now);
  expect(pace).toBeGreaterThan(1);
  expect(pace).toBeLessThanOrEqual(10 * FLOOD_PACER_DEFAULTS.paceStep);
  // A's calls of long batches: the first floodCalls - 1 are not a flood yet; from then on each is followed by a wait.
  for (let i = 1; i < FLOOD_PACER_DEFAULTS.floodCalls; i++) {
    p.ended(flood(), now - 30, now);
    expect(p.notBefore('A', now)).toBe(now);
  }
  p.ended(flood(), now - 30, now); // a 30 ms call of the flood ends
  expect(p.notBefore('A', now)).toBeCloseTo(now + 30 * pace);
  expect(p.notBefore('B', now)).toBe(now); // only the flood's key
  expect(p.notBefore('A', now + 30 * pace + 1)).toBe(now + 30 * pace + 1);
  // However slow the others' calls stay, the pace stops at paceMax.
  now = shortCalls(p, now, 200, 12);
  expect(p.currentPace(now)).toBe(FLOOD_PACER_DEFAULTS.paceMax);
});

test('a paced flood has one long batch in flight at a time; unpaced, or not a flood, the batcher’s own bound', () => {
  const p = pacer();
  let now = shortCalls(p, 0, 50, 4);
  for (let i = 0; i < FLOOD_PACER_DEFAULTS.floodCalls; i++) p.ended(flood(), now - 30, now);
  expect(p.inFlightMax('A', now)).toBeUndefined(); // a flood, but nobody else is slowed: not paced
  now = shortCalls(p, now, 10, 12);
  expect(p.currentPace(now)).toBeGreaterThan(0);
  expect(p.inFlightMax('A', now)).toBe(LONG);
  expect(p.inFlightMax('B', now)).toBeUndefined(); // the quiet key
  p.ended([{ key: 'C', size: FLOOD }], now - 30, now); // one backlog's call of another key: not a flood yet
  expect(p.inFlightMax('C', now)).toBeUndefined();
  // Paced, the flood's calls of one long batch keep it a flood.
  for (let i = 0; i < 2 * FLOOD_PACER_DEFAULTS.floodCalls; i++) p.ended([{ key: 'A', size: LONG }], now - 10, now);
  expect(p.inFlightMax('A', now)).toBe(LONG);
  expect(p.notBefore('A', now)).toBeGreaterThan(now);
  // The others fall quiet: a second later the flood has its own bound back.
  expect(p.inFlightMax('A', now + FLOOD_PACER_DEFAULTS.quietMs + 1)).toBeUndefined();
});

test('the pace falls back once the other keys’ calls are quick again, and is 0 once they stop', () => {
  const p = pacer();
  let now = shortCalls(p, 0, 50, 4);
  now = shortCalls(p, now, 40, 12);
  const paced = p.currentPace(now);
  expect(paced).toBeGreaterThan(0);
  now = shortCalls(p, now, 10, 4);
  expect(p.currentPace(now)).toBeLessThan(paced);
  now = shortCalls(p, now, 200, 4);
  expect(p.currentPace(now)).toBe(0);
  // Paced again, then B goes quiet: a second later the flood has the machine back, its pending wait dropped.
  now = shortCalls(p, now, 40, 12);
  for (let i = 0; i < FLOOD_PACER_DEFAULTS.floodCalls; i++) p.ended(flood(), now - 30, now);
  expect(p.notBefore('A', now + 1)).toBeGreaterThan(now + 1);
  const later = now + FLOOD_PACER_DEFAULTS.quietMs + 1;
  expect(p.currentPace(later)).toBe(0);
  expect(p.notBefore('A', later)).toBe(later);
});

test('the quiet round trip is the lowest of the last two windows: a slower period becomes the new quiet one', () => {
  const p = pacer();
  let now = shortCalls(p, 0, 50, 4);
  // Twelve milliseconds for two windows: the 4 ms floor is forgotten, 12 ms is the quiet round trip, the pace falls.
  const windows = Math.ceil((2 * FLOOD_PACER_DEFAULTS.floorWindowMs) / 20) + 1;
  now = shortCalls(p, now, windows, 12);
  now = shortCalls(p, now, 100, 12);
  expect(p.currentPace(now)).toBe(0);
});

test('a key whose long batches are interrupted by a short one is not a flood: its count starts again', () => {
  const p = pacer();
  const now = shortCalls(p, shortCalls(p, 0, 50, 4), 40, 12);
  expect(p.currentPace(now)).toBeGreaterThan(0);
  for (let round = 0; round < 3; round++) {
    for (let i = 1; i < FLOOD_PACER_DEFAULTS.floodCalls; i++) p.ended(flood('G'), now - 30, now);
    p.ended([{ key: 'G', size: 20 }], now - 30, now); // a game server's batch of 20 alone
  }
  p.ended(flood('G'), now - 30, now);
  expect(p.notBefore('G', now)).toBe(now);
});

test('a game server’s batch requests, long batches short of a backlog, are never a flood however many in a row', () => {
  const p = pacer();
  const now = shortCalls(p, shortCalls(p, 0, 50, 4), 40, 12);
  expect(p.currentPace(now)).toBeGreaterThan(0);
  for (let i = 0; i < 4 * FLOOD_PACER_DEFAULTS.floodCalls; i++) p.ended([{ key: 'G', size: 20 }], now - 30, now);
  expect(p.notBefore('G', now)).toBe(now);
  expect(p.inFlightMax('G', now)).toBeUndefined();
});

test('keys that flooded once, or were rotated, are forgotten once they have had no call for forgetMs', () => {
  const p = pacer();
  let now = shortCalls(p, shortCalls(p, 0, 50, 4), 40, 12);
  expect(p.currentPace(now)).toBeGreaterThan(0);
  // A thousand keys, each a paced flood for a moment and then gone (a key rotated every 50 ms).
  for (let k = 0; k < 1_000; k++) {
    for (let i = 0; i < FLOOD_PACER_DEFAULTS.floodCalls; i++) p.ended(flood(`K${k}`), now - 30, now);
    now = shortCalls(p, now, 2, 12);
    // At most the keys of the last two forgetMs (one sweep per forgetMs), 40 ms each.
    expect(p.keysKept).toBeLessThanOrEqual(1 + (2 * FLOOD_PACER_DEFAULTS.forgetMs) / 40);
  }
  // Another key's calls go on: the last flood is forgotten too, forgetMs after its last call.
  now = shortCalls(p, now, (2 * FLOOD_PACER_DEFAULTS.forgetMs) / 20, 12);
  expect(p.keysKept).toBe(0);
  expect(p.sizes).toEqual({ resumeAt: 0, floodRuns: 0 });
  // A key whose calls go on keeps its run.
  for (let i = 0; i < FLOOD_PACER_DEFAULTS.floodCalls; i++) p.ended(flood('A'), now - 30, now);
  now = shortCalls(p, now, FLOOD_PACER_DEFAULTS.forgetMs / 20, 12);
  p.ended(flood('A'), now - 30, now);
  expect(p.keysKept).toBe(1);
});

test('invalid options are refused', () => {
  expect(() => new FloodPacer({ ...options, target: 0 })).toThrow(/invalid/);
  expect(() => new FloodPacer({ ...options, longBatchMin: 0 })).toThrow(/invalid/);
  expect(() => new FloodPacer({ ...options, floodBatchMin: LONG - 1 })).toThrow(/invalid/);
  expect(() => new FloodPacer({ ...options, forgetMs: 0 })).toThrow(/invalid/);
});
