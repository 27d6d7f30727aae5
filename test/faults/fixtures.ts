// The suite's world, made through the public API the way a developer and players would make it (as k6's setup()
// does): operator invitation and device permits, the console (organization, funding, project, games, rules, keys),
// link intents and native approvals. The games differ so that the invariants are exercised at their edges: one
// takes most of the traffic (rate limit), one has a small budget (game_budget_exhausted), one a small daily cap per
// player (daily_player_cap); every game also has an unlinked player (player_not_linked).
import type { LoadIdentity } from '../../load/lib/identity.ts';

export interface FixtureGame {
  id: string;
  secret: string;
  /** Linked players first, then one unlinked player. */
  players: string[];
  /** Share of the load (weights sum to 1). */
  weight: number;
}

export interface Fixtures {
  organizationId: string;
  projectId: string;
  fundedCredits: number;
  games: FixtureGame[];
}

export const EVENT_TYPE = 'level.complete';
export const REWARD_CREDITS = 10;

/** The games: budget, daily cap per player and share of the events. */
export const GAME_PLANS = [
  { name: 'hot', budgetCredits: 1_000_000, dailyPlayerCapCredits: 1_000_000, weight: 0.4 },
  { name: 'small-budget', budgetCredits: 2_000, dailyPlayerCapCredits: 1_000_000, weight: 0.2 },
  { name: 'daily-cap', budgetCredits: 1_000_000, dailyPlayerCapCredits: 300, weight: 0.2 },
  { name: 'plain', budgetCredits: 1_000_000, dailyPlayerCapCredits: 1_000_000, weight: 0.2 },
] as const;

const NATIVE_HEADERS = {
  'X-Client-Country': 'US',
  'X-Client-Build': '999999',
  'X-Client-Capabilities': 'challenge-v1',
};

async function call(base: string, method: string, path: string, token: string, body?: unknown, headers = {}) {
  const response = await send(base, method, path, token, body, headers);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { data: any }).data;
}

/**
 * A call sent again after a 503, up to 5 times: for a setup step that may safely be made twice (a link intent: a
 * second one for the same player is a new token for the same player). A service just started on a loaded machine
 * can miss its first deadlines; the world is set up before any fault, and is not what the suite checks.
 */
async function callAgainOn503(base: string, method: string, path: string, token: string, body?: unknown) {
  for (let attempt = 1; ; attempt++) {
    const response = await send(base, method, path, token, body, {});
    const text = await response.text();
    if (response.status === 200) return (JSON.parse(text) as { data: any }).data;
    if (response.status !== 503 || attempt >= 5) {
      throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
  }
}

function send(base: string, method: string, path: string, token: string, body: unknown, headers: object) {
  return fetch(`${base}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
}

/** One console action (POST /api/developer/v1/console) as the developer; its `data`, or throws unless 200. */
export function consoleCall(gateway: string, developerToken: string, action: Record<string, unknown>): Promise<any> {
  return call(gateway, 'POST', '/api/developer/v1/console', developerToken, action);
}

export async function createFixtures(
  urls: { gateway: string; links: string },
  identity: LoadIdentity,
  adminToken: string,
): Promise<Fixtures> {
  const { gateway, links } = urls;
  await call(gateway, 'POST', '/api/admin/v1/invitations', adminToken, { email: identity.developerEmail });
  for (const session of identity.nativeSessions) {
    await call(gateway, 'POST', '/api/admin/v1/device-permits', adminToken, {
      sessionId: session.sid,
      creditsUserId: session.creditsUserId,
      expiresInSeconds: 86_400,
    });
  }
  await call(gateway, 'GET', '/api/developer/v1/access', identity.developerToken);
  const consoleAction = (action: Record<string, unknown>) => consoleCall(gateway, identity.developerToken, action);

  const total = GAME_PLANS.reduce((sum, g) => sum + g.budgetCredits, 0);
  // Funded in two steps, with something left unallocated, so that the funding invariant has more than one term.
  const fundedCredits = total + 5_000;
  const organization = await consoleAction({ type: 'createOrganization', name: 'Fault suite' });
  await consoleAction({ type: 'fundOrganization', organizationId: organization.id, amountCredits: total });
  await consoleAction({ type: 'fundOrganization', organizationId: organization.id, amountCredits: 5_000 });
  const project = await consoleAction({
    type: 'createProject',
    organizationId: organization.id,
    name: 'Fault suite project',
    maxPayoutCredits: total * 2,
  });
  await consoleAction({ type: 'allocateProject', projectId: project.id, amountCredits: total });

  const games: FixtureGame[] = [];
  for (const plan of GAME_PLANS) {
    const game = await consoleAction({
      type: 'createGame',
      projectId: project.id,
      name: `Fault suite ${plan.name}`,
      platform: 'other',
      maxPayoutCredits: plan.budgetCredits * 2,
      dailyPlayerCapCredits: plan.dailyPlayerCapCredits,
    });
    await consoleAction({ type: 'allocateGame', gameId: game.id, amountCredits: plan.budgetCredits });
    await consoleAction({ type: 'createRule', gameId: game.id, eventType: EVENT_TYPE, rewardCredits: REWARD_CREDITS });
    const key = await consoleAction({ type: 'issueKey', gameId: game.id, kind: 'secret', name: 'fault suite' });
    const players: string[] = [];
    for (let p = 0; p <= identity.nativeSessions.length; p++) {
      const intent = await callAgainOn503(links, 'POST', '/api/game-sdk/v2/link-intents', key.issuedKey, {
        externalPlayerId: `faults-${plan.name}-${p}`,
      });
      const session = identity.nativeSessions[p];
      if (session) {
        await call(
          links,
          'POST',
          '/api/native/v1/link-intents/approve',
          session.token,
          { linkToken: intent.linkToken },
          NATIVE_HEADERS,
        );
      }
      players.push(intent.playerId);
    }
    games.push({ id: game.id, secret: key.issuedKey, players, weight: plan.weight });
  }
  return { organizationId: organization.id, projectId: project.id, fundedCredits, games };
}
