// npm run bench's searches for the rate at p99 <= 25 ms (load/bench.ts): one step's verdict (whether its offered rate
// kept up within the bound), the search over rates, each decided by a majority of its tries, and the two sides' tries
// taken in turn.

/** The p99 bound of the step search: the highest offered rate whose p99 stays within it. */
export const P99_BOUND_MS = 25;
/** The step search stops when the lowest failing rate is within this share above the highest passing one. */
export const STEP_RESOLUTION = 0.05;

/** One try of an offered rate in a step search: what it gave and whether it held the bound. */
export interface Step {
  offeredPerSecond: number;
  completedPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Failed requests or transactions, and (k6) iterations it could not start (no VU free). */
  failed: number;
  dropped: number;
  /** p99 within P99_BOUND_MS, nothing failed or dropped, and the offered rate completed (completedEnough). */
  held: boolean;
}

/** A step as the search recorded it: which try of its rate it was (1, 2, ...). */
export interface TriedStep extends Step {
  try: number;
}

/** One offered rate of a search, decided: whether a majority of its tries held, and how many tries that took. */
export interface RateVerdict {
  offeredPerSecond: number;
  held: boolean;
  tries: number;
  triesHeld: number;
}

/** A search's outcome: the highest rate that held (0 when none did), every try, and each rate's verdict. */
export interface StepSearchResult {
  ratePerSecond: number;
  steps: TriedStep[];
  rates: RateVerdict[];
}

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

/** A step's verdict: p99 within P99_BOUND_MS, nothing failed or dropped, and its offered rate completed. */
export function held(step: Omit<Step, 'held'>, seconds: number, schedule: 'constant' | 'poisson'): Step {
  return {
    ...step,
    held:
      step.p99Ms <= P99_BOUND_MS && step.failed === 0 && step.dropped === 0 && completedEnough(step, seconds, schedule),
  };
}

/** The tries of `tries` that must hold for a rate to hold: a strict majority (2 of 3, 3 of 4, 1 of 1). */
export function triesToHold(tries: number): number {
  return Math.floor(tries / 2) + 1;
}

/**
 * One side's search for the highest offered rate whose step holds the bound: from its start, up by a quarter while
 * rates hold, down to half while none has, then halving the interval between the highest that held and the lowest
 * that did not, until they are within STEP_RESOLUTION of each other or `maxSteps` rates were decided. 0 when none
 * held.
 *
 * Each rate is tried up to `tries` times and holds when a strict majority of its tries held; its tries stop once the
 * majority is decided (with 3: two that held, or two that did not). On this VM one slow durable commit decides a 5 s
 * step's p99 on either side, so a single try made the ratio of the two sides' rates move 0.97-8 between runs.
 */
export class StepSearch {
  readonly steps: TriedStep[] = [];
  readonly rates: RateVerdict[] = [];
  /** The next rate to try; undefined once the search is over. */
  next: number | undefined;
  readonly side: string;
  readonly tries: number;
  private readonly maxSteps: number;
  private readonly log: (line: string) => void;
  private highestHeld = 0;
  private lowestFailed = Number.POSITIVE_INFINITY;
  /** The tries of the current rate so far, and how many of them held. */
  private current = { tries: 0, held: 0 };

  constructor(side: string, start: number, options: { maxSteps: number; tries: number; log?: (line: string) => void }) {
    if (!Number.isInteger(options.tries) || options.tries < 1) throw new Error(`tries must be 1 or more`);
    this.side = side;
    this.maxSteps = options.maxSteps;
    this.tries = options.tries;
    this.log = options.log ?? (() => {});
    this.next = Math.max(1, Math.round(start));
  }

  /** Records one try of the current rate (`next`); moves `next` on once the rate's majority is decided. */
  record(step: Step): void {
    const rate = step.offeredPerSecond;
    if (rate !== this.next) throw new Error(`${this.side}: a step at ${rate}/s, the search is at ${this.next}/s`);
    this.current = { tries: this.current.tries + 1, held: this.current.held + (step.held ? 1 : 0) };
    this.steps.push({ ...step, try: this.current.tries });
    const of = this.tries > 1 ? ` try ${this.current.tries} of ${this.tries}` : '';
    this.log(
      `${this.side} step ${rate}/s${of}: p99 ${step.p99Ms.toFixed(1)} ms, ${step.completedPerSecond.toFixed(0)}/s completed, ${step.failed} failed, ${step.dropped} dropped: ${step.held ? 'held' : 'NOT held'}`,
    );
    const needed = triesToHold(this.tries);
    const failedTries = this.current.tries - this.current.held;
    if (this.current.held < needed && failedTries <= this.tries - needed) return;
    this.decide(rate, this.current.held >= needed);
  }

  private decide(rate: number, rateHeld: boolean): void {
    this.rates.push({
      offeredPerSecond: rate,
      held: rateHeld,
      tries: this.current.tries,
      triesHeld: this.current.held,
    });
    if (this.tries > 1) {
      this.log(
        `${this.side} ${rate}/s: ${rateHeld ? 'held' : 'NOT held'} (${this.current.held} of ${this.current.tries} tries held)`,
      );
    }
    this.current = { tries: 0, held: 0 };
    if (rateHeld) this.highestHeld = Math.max(this.highestHeld, rate);
    else this.lowestFailed = Math.min(this.lowestFailed, rate);
    const next = Math.max(
      1,
      Math.round(
        this.lowestFailed === Number.POSITIVE_INFINITY
          ? rate * 1.25
          : this.highestHeld === 0
            ? rate * 0.5
            : (this.highestHeld + this.lowestFailed) / 2,
      ),
    );
    const done =
      this.rates.length >= this.maxSteps ||
      (this.highestHeld > 0 && this.lowestFailed - this.highestHeld <= STEP_RESOLUTION * this.highestHeld) ||
      next === this.highestHeld ||
      next === this.lowestFailed;
    this.next = done ? undefined : next;
  }

  get result(): StepSearchResult {
    return { ratePerSecond: this.highestHeld, steps: this.steps, rates: this.rates };
  }
}

/**
 * Runs the searches' tries in turn, one try of each side still searching then the next, so that both sides' tries
 * meet the same minutes of the machine (on this VM the disk's slow commits come and go within minutes: run one search
 * after the other, and pgbench's rate at the bound moved from 88 to 891/s between runs while the service's held at
 * 362-444/s).
 */
export async function interleavedSearches(
  sides: { search: StepSearch; probe: (rate: number) => Promise<Step> }[],
): Promise<void> {
  for (;;) {
    const pending = sides.filter((s) => s.search.next !== undefined);
    if (pending.length === 0) return;
    for (const { search, probe } of pending) search.record(await probe(search.next as number));
  }
}
