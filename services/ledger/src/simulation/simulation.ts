// The rule dry-run (GraphQL simulateRule, CONTRACT section 11): who may run it, its bounds, and the replay, in one
// READ ONLY transaction on one snapshot (repeatable read): the count, the role and the replay see the same rows.
import {
  SIMULATION_FLIPS_MAX,
  SIMULATION_TOO_LARGE,
  type SimulationInput,
  simulationInputProblem,
} from '#runtime/contracts/simulation.ts';
import { AppError } from '#runtime/errors.ts';
import { invariant } from '#runtime/invariant.ts';
import { checkRole } from '../console/action-service.ts';
import { type ConsoleRepository, ConsoleTx } from '../console/write-repository.ts';
import { countWindowDecisions, type SimulationRow, simulateRule } from './repository.ts';

export interface SimulationConfig {
  /** EVENT_RATE_LIMIT_PER_MINUTE: the limit the replay applies, the ledger's own. */
  rateLimitPerMinute: number;
  /** SIMULATE_RULE_MAX_EVENTS: the most stored decisions one simulation replays. */
  maxEvents: number;
  /** SIMULATE_RULE_PER_ORGANIZATION_MAX: dry-runs of one organization's games at once in this ledger process. */
  perOrganizationMax?: number;
  /** SIMULATE_RULE_LEDGER_MAX: dry-runs at once in this ledger process. */
  max?: number;
}

/** Defaults: one dry-run per organization, two in a ledger process, so one tenant never takes every slot. */
export const SIMULATIONS_PER_ORGANIZATION_DEFAULT = 1;
export const SIMULATIONS_PER_LEDGER_DEFAULT = 2;

/**
 * The dry-runs running in this process, by organization. An organization holds at most `perOrganizationMax` of the
 * process's `max` slots, so whatever one tenant's developers run (each gateway bounds a developer to one), another
 * tenant's dry-run finds a slot; past a bound the dry-run is refused (429), not queued.
 */
export class SimulationSlots {
  private readonly byOrganization = new Map<string, number>();
  private running = 0;
  private readonly perOrganizationMax: number;
  private readonly max: number;

  constructor(perOrganizationMax: number, max: number) {
    this.perOrganizationMax = perOrganizationMax;
    this.max = max;
  }

  /** Organizations with a dry-run running (its map's entries). */
  get organizations(): number {
    return this.byOrganization.size;
  }

  /** A slot for a dry-run of `organizationId`'s game, or 429 TOO_MANY_REQUESTS; release it with the returned call. */
  take(organizationId: string): () => void {
    const held = this.byOrganization.get(organizationId) ?? 0;
    if (held >= this.perOrganizationMax) {
      throw AppError.withStatus(
        429,
        'TOO_MANY_REQUESTS',
        `At most ${this.perOrganizationMax} simulateRule of one organization may run at once; retry when it has answered.`,
      );
    }
    if (this.running >= this.max) {
      throw AppError.withStatus(
        429,
        'TOO_MANY_REQUESTS',
        'The ledger is running as many simulateRule as it may; retry shortly.',
      );
    }
    this.byOrganization.set(organizationId, held + 1);
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const left = (this.byOrganization.get(organizationId) ?? 1) - 1;
      invariant(left >= 0 && this.running >= 0, 'simulation_slots', () => ({ organizationId, left }));
      if (left <= 0) this.byOrganization.delete(organizationId);
      else this.byOrganization.set(organizationId, left);
    };
  }
}

export interface SimulationRequest extends SimulationInput {
  identityUserId: string;
  active: boolean;
}

const notFound = () => new AppError('not_found', 'No such object in an organization you are a member of.');

export class RuleSimulations {
  private readonly repository: ConsoleRepository;
  private readonly config: SimulationConfig;
  private readonly slots: SimulationSlots;

  constructor(repository: ConsoleRepository, config: SimulationConfig) {
    this.repository = repository;
    this.config = config;
    this.slots = new SimulationSlots(
      config.perOrganizationMax ?? SIMULATIONS_PER_ORGANIZATION_DEFAULT,
      config.max ?? SIMULATIONS_PER_LEDGER_DEFAULT,
    );
  }

  /** Organizations with a dry-run running. */
  get organizationsRunning(): number {
    return this.slots.organizations;
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
      const release = this.slots.take(organizationId);
      try {
        return await this.replay(em, r, window);
      } finally {
        release();
      }
    });
  }

  private async replay(
    em: Parameters<Parameters<ConsoleRepository['read']>[0]>[0],
    r: SimulationRequest,
    window: { gameId: string; from: Date; to: Date },
  ): Promise<SimulationRow> {
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
  }
}
