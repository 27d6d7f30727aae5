// Transport handler of the rule dry-run: translates the message to the domain and back, nothing else.
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { DECISION_CHECK_ORDER } from '#runtime/contracts/vocabulary.ts';
import type { Database } from '#runtime/db/database.ts';
import type { Logger } from '#runtime/logger.ts';
import type { Metrics } from '#runtime/metrics.ts';
import { bind, type EndpointBinding } from '#runtime/transport/operation.ts';
import { principalOf, translateStoreError } from '../console/endpoints.ts';
import { ConsoleRepository } from '../console/write-repository.ts';
import type { SimulationFiguresRow } from './repository.ts';
import { RuleSimulations, type SimulationConfig } from './simulation.ts';

export interface SimulationDeps {
  database: Database;
  logger: Logger;
  metrics?: Metrics | undefined;
}

/** Figures as the message carries them: reasons in the order the decision checks them. */
function figures(row: SimulationFiguresRow) {
  const reasons = row.reasons ?? {};
  return {
    accepted: row.accepted,
    rejected: row.rejected,
    credits: BigInt(row.credits),
    reasons: DECISION_CHECK_ORDER.filter((reason) => (reasons[reason] ?? 0) > 0).map((reason) => ({
      reason,
      count: reasons[reason] ?? 0,
    })),
  };
}

export function simulationEndpoints(deps: SimulationDeps, config: SimulationConfig): EndpointBinding[] {
  const simulations = new RuleSimulations(new ConsoleRepository(deps.database), config);
  deps.metrics?.collections.track('ledger', { simulation_organizations: () => simulations.organizationsRunning });
  return [
    bind(ledgerOps.simulateRule, async (request) => {
      const principal = principalOf(request.principal);
      const result = await simulations
        .simulate({
          identityUserId: principal.identityUserId,
          gameId: request.gameId,
          eventType: request.eventType,
          rewardCredits: Number(request.rewardCredits),
          dailyPlayerCapCredits: Number(request.dailyPlayerCapCredits),
          active: request.active,
          fromMs: Number(request.fromMs),
          toMs: Number(request.toMs),
        })
        .catch((error: unknown) => translateStoreError(error, deps.logger));
      const decision = (d: { status: string; reason: string | null; rewardCredits: number }) => ({
        status: d.status,
        reason: d.reason ?? undefined,
        rewardCredits: BigInt(d.rewardCredits),
      });
      return {
        considered: result.considered,
        spentBeforeCredits: BigInt(result.spentBefore),
        stored: figures(result.stored),
        proposed: figures(result.proposed),
        days: result.days.map((day) => ({
          day: day.day,
          stored: figures(day.stored),
          proposed: figures(day.proposed),
        })),
        flipCount: result.flipCount,
        flips: result.flips.map((flip) => ({
          id: flip.id,
          eventId: flip.eventId,
          playerId: flip.playerId,
          eventType: flip.eventType,
          createdAtMs: BigInt(flip.createdAtMs),
          stored: decision(flip.stored),
          proposed: decision(flip.proposed),
        })),
      };
    }),
  ];
}
