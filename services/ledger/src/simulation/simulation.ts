// The rule dry-run (GraphQL simulateRule, CONTRACT section 11): who may run it, its bounds, and the replay, in one
// READ ONLY transaction on one snapshot (repeatable read): the count, the role and the replay see the same rows.
import {
  SIMULATION_FLIPS_MAX,
  SIMULATION_TOO_LARGE,
  type SimulationInput,
  simulationInputProblem,
} from '#runtime/contracts/simulation.ts';
import { AppError } from '#runtime/errors.ts';
import { checkRole } from '../console/action-service.ts';
import { type ConsoleRepository, ConsoleTx } from '../console/write-repository.ts';
import { countWindowDecisions, type SimulationRow, simulateRule } from './repository.ts';

export interface SimulationConfig {
  /** EVENT_RATE_LIMIT_PER_MINUTE: the limit the replay applies, the ledger's own. */
  rateLimitPerMinute: number;
  /** SIMULATE_RULE_MAX_EVENTS: the most stored decisions one simulation replays. */
  maxEvents: number;
}

export interface SimulationRequest extends SimulationInput {
  identityUserId: string;
  active: boolean;
}

const notFound = () => new AppError('not_found', 'No such object in an organization you are a member of.');

export class RuleSimulations {
  private readonly repository: ConsoleRepository;
  private readonly config: SimulationConfig;

  constructor(repository: ConsoleRepository, config: SimulationConfig) {
    this.repository = repository;
    this.config = config;
  }

  async simulate(r: SimulationRequest): Promise<SimulationRow> {
    // The edge checks the same rules first; again here, for callers on the transport.
    const problem = simulationInputProblem(r, 'input');
    if (problem) throw new AppError('INVALID_REQUEST', problem);
    const window = { gameId: r.gameId, from: new Date(r.fromMs), to: new Date(r.toMs) };
    return this.repository.read(async (em) => {
      // Who may edit the game's rules may try a rule: the console actions' own role check (owner, admin).
      const tx = new ConsoleTx(em);
      const organizationId = await tx.organizationOf('games', r.gameId);
      if (organizationId === undefined) throw notFound();
      checkRole(await tx.memberRole(organizationId, r.identityUserId), 'manage');
      // Bounded work: count at most max + 1 rows of the index range before replaying any.
      const count = await countWindowDecisions(em, { ...window, atMost: this.config.maxEvents + 1 });
      if (count > this.config.maxEvents) {
        throw new AppError(
          SIMULATION_TOO_LARGE,
          `The window holds more than ${this.config.maxEvents} decisions of this game, the most one simulation ` +
            'replays; simulate a shorter window.',
        );
      }
      const result = await simulateRule(em, {
        ...window,
        eventType: r.eventType,
        rewardCredits: r.rewardCredits,
        dailyPlayerCapCredits: r.dailyPlayerCapCredits,
        active: r.active,
        rateLimitPerMinute: this.config.rateLimitPerMinute,
        flipsMax: SIMULATION_FLIPS_MAX,
      });
      if (!result) throw notFound();
      return result;
    });
  }
}
