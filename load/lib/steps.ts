// One step of npm run bench's searches for the rate at p99 <= 25 ms (load/bench.ts): whether its offered rate kept up.

/**
 * Whether a step's completed count shows its offered rate kept up: at least 95 % of it, and for a Poisson schedule
 * (`pgbench -R`) also anything within three standard deviations of the count the schedule draws (sqrt of the expected
 * count: 690 +- 26 at 138/s for 5 s, so 95 % alone failed one step in eleven of a pgbench that kept up).
 */
export function completedEnough(
  step: { offeredPerSecond: number; completedPerSecond: number },
  seconds: number,
  schedule: 'constant' | 'poisson',
): boolean {
  const expected = step.offeredPerSecond * seconds;
  const completed = step.completedPerSecond * seconds;
  const least =
    schedule === 'poisson' ? Math.min(0.95 * expected, expected - 3 * Math.sqrt(expected)) : 0.95 * expected;
  return completed >= least;
}
