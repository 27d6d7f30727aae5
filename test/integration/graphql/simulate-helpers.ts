// Shared steps of the rule dry-run tests (simulateRule): a game set up through the console with the given rules,
// linked, unlinked and disabled players, a stream of events posted at explicit receipt times, and the figures a
// list of actual decisions adds up to (what the simulation's answer must equal).

import { DECISION_CHECK_ORDER } from '#runtime/contracts/vocabulary.ts';
import { ok } from '../../support/console.ts';
import { expectDecision, postEvent } from '../../support/ingest.ts';
import { createPlayer, type PlayerOptions } from '../../support/ledger-fixtures.ts';
import type { TestSystem } from '../../support/system.ts';
import { gql } from './helpers.ts';

export const SIMULATE = `query Simulate($input: SimulateRuleInput!) {
  simulateRule(input: $input) {
    gameId from to considered spentBeforeCredits flipCount
    stored { accepted rejected creditsSpent reasons { reason count } }
    proposed { accepted rejected creditsSpent reasons { reason count } }
    days { day stored { accepted rejected creditsSpent } proposed { accepted rejected creditsSpent } }
    flips {
      id eventId playerId eventType createdAt
      stored { status reason rewardCredits }
      proposed { status reason rewardCredits }
    }
  }
}`;

export function simulate(system: TestSystem, token: string | undefined, input: Record<string, unknown>) {
  return gql(system, token, SIMULATE, { input });
}

export interface RuleSpec {
  eventType: string;
  rewardCredits: number;
  active: boolean;
}

export interface SimGame {
  gameId: string;
  organizationId: string;
  key: string;
  /** Players in the order of the specs given. */
  players: string[];
}

/**
 * A game of an existing project (through the console: createGame, allocateGame, createRule/updateRule, issueKey),
 * and its players (SQL fixtures: the links program owns them).
 */
export async function simulationGame(
  system: TestSystem,
  token: string,
  project: { organizationId: string; projectId: string },
  game: { budgetCredits: number; maxPayoutCredits: number; dailyPlayerCapCredits: number; rules: RuleSpec[] },
  players: PlayerOptions[],
  databaseUrl = system.databaseUrl!,
): Promise<SimGame> {
  const gameId = (
    await ok(system, token, {
      type: 'createGame',
      projectId: project.projectId,
      name: 'Simulated',
      platform: 'web',
      maxPayoutCredits: game.maxPayoutCredits,
      dailyPlayerCapCredits: game.dailyPlayerCapCredits,
    })
  ).id;
  await ok(system, token, { type: 'allocateGame', gameId, amountCredits: game.budgetCredits });
  for (const rule of game.rules) {
    const ruleId = (
      await ok(system, token, {
        type: 'createRule',
        gameId,
        eventType: rule.eventType,
        rewardCredits: rule.rewardCredits,
      })
    ).id;
    if (!rule.active) await ok(system, token, { type: 'updateRule', ruleId, active: false });
  }
  const issued = await ok(system, token, { type: 'issueKey', gameId, kind: 'secret', name: 'server' });
  const fixture = { gameId, organizationId: project.organizationId, projectId: project.projectId, slug: '', name: '' };
  const ids: string[] = [];
  for (const options of players) ids.push((await createPlayer(databaseUrl, fixture, options)).id);
  return { gameId, organizationId: project.organizationId, key: issued.issuedKey!, players: ids };
}

/** One event of a stream: which player (index), its type, when it is received and when it occurred. */
export interface StreamEvent {
  eventId: string;
  player: number;
  eventType: string;
  receivedAt: Date;
  occurredAt: Date;
}

export type Decision = ReturnType<typeof expectDecision>;

/** Posts the stream into a game, each event received at its receipt time (the system's clock). */
export async function postStream(system: TestSystem, game: SimGame, stream: StreamEvent[]): Promise<Decision[]> {
  const decisions: Decision[] = [];
  try {
    for (const event of stream) {
      system.clock.set(event.receivedAt);
      const response = await postEvent(system.url, game.key, {
        eventId: event.eventId,
        playerId: game.players[event.player],
        eventType: event.eventType,
        occurredAt: event.occurredAt.toISOString(),
      });
      decisions.push(expectDecision(response));
    }
  } finally {
    system.clock.reset();
  }
  return decisions;
}

/** The figures a list of decisions adds up to, as simulateRule answers them. */
export function figuresOf(decisions: Array<{ status: string; reason: string | null; rewardCredits: number }>) {
  const counts = new Map<string, number>();
  for (const d of decisions) if (d.reason) counts.set(d.reason, (counts.get(d.reason) ?? 0) + 1);
  return {
    accepted: decisions.filter((d) => d.status === 'accepted').length,
    rejected: decisions.filter((d) => d.status === 'rejected').length,
    creditsSpent: decisions.reduce((sum, d) => sum + d.rewardCredits, 0),
    reasons: DECISION_CHECK_ORDER.filter((r) => counts.has(r)).map((reason) => ({ reason, count: counts.get(reason) })),
  };
}

/** The UTC day (as its midnight) of an instant. */
export function utcDay(at: Date): string {
  return `${at.toISOString().slice(0, 10)}T00:00:00.000Z`;
}

/** A small seeded generator (mulberry32): the same stream on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
