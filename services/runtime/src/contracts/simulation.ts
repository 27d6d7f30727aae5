// The rule dry-run's input rules (GraphQL simulateRule, CONTRACT section 11), one spelling for the gateway (which
// refuses before calling) and the ledger (which checks again, for callers on the transport).
import { isUuid } from '../validation/uuid.ts';
import { CREDITS_MAX, EVENT_TYPE_REGEX } from './vocabulary.ts';

/** The longest window one simulation may replay. */
export const SIMULATION_WINDOW_DAYS_MAX = 31;
/** The most flipped decisions listed (all are counted). */
export const SIMULATION_FLIPS_MAX = 20;
/** Default of SIMULATE_RULE_MAX_EVENTS: the most stored decisions one simulation may replay. */
export const SIMULATION_MAX_EVENTS_DEFAULT = 100_000;
/** Error code of a window holding more decisions than SIMULATE_RULE_MAX_EVENTS. */
export const SIMULATION_TOO_LARGE = 'SIMULATION_TOO_LARGE';

const EVENT_TYPE = EVENT_TYPE_REGEX;
const DAY_MS = 86_400_000;

export interface SimulationInput {
  gameId: string;
  eventType: string;
  rewardCredits: number;
  dailyPlayerCapCredits: number;
  fromMs: number;
  toMs: number;
}

/** What is wrong with a simulation's input (the first problem found), or undefined. */
export function simulationInputProblem(input: SimulationInput, prefix = 'simulateRule.input'): string | undefined {
  const credits = (value: number, min: number) => Number.isInteger(value) && value >= min && value <= CREDITS_MAX;
  if (!isUuid(input.gameId)) return `${prefix}.gameId must be a valid uuid.`;
  if (!EVENT_TYPE.test(input.eventType)) return `${prefix}.eventType must match ${EVENT_TYPE.source}.`;
  if (!credits(input.rewardCredits, 1)) return `${prefix}.rewardCredits must be an integer from 1 to ${CREDITS_MAX}.`;
  if (!credits(input.dailyPlayerCapCredits, 0)) {
    return `${prefix}.dailyPlayerCapCredits must be an integer from 0 to ${CREDITS_MAX}.`;
  }
  if (!Number.isFinite(input.fromMs) || !Number.isFinite(input.toMs) || !(input.toMs > input.fromMs)) {
    return `${prefix}.to must be after from.`;
  }
  if (input.toMs - input.fromMs > SIMULATION_WINDOW_DAYS_MAX * DAY_MS) {
    return `${prefix}: the window may span at most ${SIMULATION_WINDOW_DAYS_MAX} days.`;
  }
  return undefined;
}
