// The whole journey of the product against a running service, step by step, over its public HTTP API only:
// invitation -> developer session -> organization, project, game, rule, keys -> funding -> link intent ->
// inspection and approval from a native session -> event -> decision -> console snapshot and records.
// `npm run demo` prints it for a newcomer; the end-to-end test runs it against the `npm start` process and checks
// every answer. Sessions are signed with the development identity provider under DATA_DIR (the one `npm start` trusts
// when no JWKS is configured).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type DevProvider, developerSubject, loadDevProvider } from '#runtime/identity/dev-identity-provider.ts';

export interface JourneyOptions {
  /** Base URL of the running service, e.g. http://localhost:8080 (every edge's, as in the all-in-one process). */
  url: string;
  /**
   * Base URLs of the edges where they differ (the programs run apart, `npm run dev:split`): ingest for the events
   * and public configuration, links for link intents, players and native calls; the gateway's is `url`.
   */
  edges?: { ingest?: string; links?: string };
  /** The operator token the service was started with (ADMIN_TOKEN). */
  adminToken: string;
  /** DATA_DIR of the service: where its development identity provider keeps its keys. */
  dataDir: string;
  /** Native client headers (X-Client-Country, X-Client-Build). */
  country?: string;
  build?: string;
  /** Receives each step as it happens. */
  onStep?: (step: JourneyStep) => void;
  /** Receives a line of explanation before a step. */
  onNote?: (text: string) => void;
}

export interface JourneyStep {
  index: number;
  title: string;
  /** Who calls: operator, developer, game server, native app. */
  actor: string;
  method: string;
  path: string;
  request?: unknown;
  status: number;
  body: unknown;
}

/** The parts of the answers the demo prints (the full shapes are in /openapi.json). */
export interface DecisionView {
  eventId: string;
  playerId: string;
  status: 'accepted' | 'rejected';
  reason: string | null;
  rewardCredits: number;
  replayed: boolean;
}

export interface SnapshotView {
  organizations: Array<{ id: string; name: string; balanceCredits: number }>;
  projects: Array<{ id: string; name: string; budgetCredits: number; spentCredits: number }>;
  games: Array<{ id: string; name: string; budgetCredits: number; spentCredits: number }>;
  players: Array<{ id: string; externalPlayerId: string; creditsUserId: string | null; username: string | null }>;
  events: Array<{ id: string; eventId: string; status: string; rewardCredits: number }>;
}

export interface RecordsView {
  records: Array<{ id: string; eventId: string; playerId: string; status: string; rewardCredits: number }>;
}

export interface JourneyResult {
  steps: JourneyStep[];
  /** The developer the journey signed in as (an e-mail of the local development identity provider). */
  developerEmail: string;
  organizationId: string;
  projectId: string;
  gameId: string;
  playerId: string;
  creditsUserId: string;
  decision: DecisionView;
  snapshot: SnapshotView;
  records: RecordsView;
}

/** A step answered something the journey cannot continue from. */
export class JourneyError extends Error {
  readonly step: JourneyStep | undefined;

  constructor(message: string, step?: JourneyStep) {
    super(message);
    this.name = 'JourneyError';
    this.step = step;
  }
}

/** The development provider of a running `npm start`, without creating a key it would not trust. */
async function devProvider(dataDir: string, kind: 'developer' | 'native'): Promise<DevProvider> {
  const file = join(dataDir, 'dev-identity', `${kind}.private.jwk.json`);
  if (!existsSync(file)) {
    throw new JourneyError(
      `No development identity key at ${file}. Run the demo with the DATA_DIR the server uses (default ./.data); ` +
        `a server started with ${kind.toUpperCase()}_JWKS or ${kind.toUpperCase()}_JWKS_URL does not trust local tokens.`,
    );
  }
  return loadDevProvider(dataDir, kind);
}

/** The base URL of the edge that serves `path` (CONTRACT section 2's routes). */
export function edgeUrl(options: Pick<JourneyOptions, 'url' | 'edges'>, path: string): string {
  if (path.startsWith('/api/game-sdk/v2/events') || path.startsWith('/api/game-sdk/v2/config')) {
    return options.edges?.ingest ?? options.url;
  }
  if (path.startsWith('/api/game-sdk/v2/') || path.startsWith('/api/native/'))
    return options.edges?.links ?? options.url;
  return options.url;
}

export async function runJourney(options: JourneyOptions): Promise<JourneyResult> {
  const steps: JourneyStep[] = [];
  const note = (text: string) => options.onNote?.(text);

  const call = async <T = { id: string; issuedKey?: string }>(
    title: string,
    actor: string,
    method: string,
    path: string,
    init: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<T> => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.token) headers.Authorization = `Bearer ${init.token}`;
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`${edgeUrl(options, path)}${path}`, {
        method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
    } catch (error) {
      throw new JourneyError(`Cannot reach ${options.url}: ${(error as Error).cause ?? (error as Error).message}`);
    }
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    const step: JourneyStep = {
      index: steps.length + 1,
      title,
      actor,
      method,
      path,
      ...(init.body === undefined ? {} : { request: init.body }),
      status: response.status,
      body,
    };
    steps.push(step);
    options.onStep?.(step);
    if (response.status !== 200) throw new JourneyError(`${title}: the service answered ${response.status}`, step);
    return (body as { data: T }).data;
  };

  const developerProvider = await devProvider(options.dataDir, 'developer');
  const nativeProvider = await devProvider(options.dataDir, 'native');
  const suffix = randomUUID().slice(0, 8);

  // --- The operator invites a developer -------------------------------------------------------------------------
  note('The operator invites a developer by e-mail (operator API, ADMIN_TOKEN).');
  const email = `demo-${suffix}@example.com`;
  await call('Invite a developer', 'operator', 'POST', '/api/admin/v1/invitations', {
    token: options.adminToken,
    body: { email },
  });

  note(
    'The developer signs in with the identity provider; here the development provider under DATA_DIR signs the session.',
  );
  const developer = await developerProvider.sign(
    { email, email_verified: true },
    // The subject `npm run dev:token -- --email` derives, so that a person can sign in as this developer afterwards.
    { subject: developerSubject(email), expiresIn: '1h' },
  );
  await call('Developer access (binds the invitation)', 'developer', 'GET', '/api/developer/v1/access', {
    token: developer,
  });

  // --- The developer sets up a game ---------------------------------------------------------------------------
  note('The developer builds the console: organization -> project -> game -> rule -> keys, and moves funding down.');
  const act = (title: string, action: Record<string, unknown>) =>
    call(title, 'developer', 'POST', '/api/developer/v1/console', { token: developer, body: action });
  const organizationId = (await act('Create an organization', { type: 'createOrganization', name: 'Demo Studio' })).id;
  await act('Fund the organization (sandbox credits)', {
    type: 'fundOrganization',
    organizationId,
    amountCredits: 100_000,
  });
  const projectId = (
    await act('Create a project', {
      type: 'createProject',
      organizationId,
      name: 'Demo Project',
      maxPayoutCredits: 50_000,
    })
  ).id;
  await act('Allocate to the project', { type: 'allocateProject', projectId, amountCredits: 20_000 });
  const gameId = (
    await act('Create a game', {
      type: 'createGame',
      projectId,
      name: 'Demo Quest',
      platform: 'web',
      maxPayoutCredits: 10_000,
      dailyPlayerCapCredits: 1_000,
    })
  ).id;
  await act('Allocate to the game', { type: 'allocateGame', gameId, amountCredits: 5_000 });
  await act('Create a reward rule', { type: 'createRule', gameId, eventType: 'level.completed', rewardCredits: 250 });
  const secretKey = (
    await act('Issue a secret key (game server)', { type: 'issueKey', gameId, kind: 'secret', name: 'server' })
  ).issuedKey as string;
  await act('Issue a public key (game client)', { type: 'issueKey', gameId, kind: 'public', name: 'client' });

  // --- The game server asks for a link token ------------------------------------------------------------------
  note('A player opens the game. The game server asks for a one-time link token for its in-game id.');
  const externalPlayerId = `hero-${suffix}`;
  const intent = await call<{ playerId: string; linkToken: string }>(
    'Create a link intent',
    'game server',
    'POST',
    '/api/game-sdk/v2/link-intents',
    {
      token: secretKey,
      body: { externalPlayerId },
    },
  );

  // --- The player approves it in the native app ---------------------------------------------------------------
  note('The player signs in to the native app, which admits the session (country, account, build, device permit).');
  const creditsUserId = randomUUID();
  const sessionId = `demo-session-${suffix}`;
  const nativeSession = await nativeProvider.sign(
    { sid: sessionId, preferred_username: 'Demo Player' },
    { subject: creditsUserId, expiresIn: '1h' },
  );
  await call(
    'Device permit for the session (operator API; a device verification flow in production)',
    'operator',
    'POST',
    '/api/admin/v1/device-permits',
    {
      token: options.adminToken,
      body: { sessionId, creditsUserId, expiresInSeconds: 3600 },
    },
  );
  const nativeHeaders = {
    'X-Client-Country': options.country ?? 'DE',
    'X-Client-Build': options.build ?? '1000',
    'X-Client-Capabilities': 'challenge-v1',
  };
  await call('Inspect the link token', 'native app', 'POST', '/api/native/v1/link-intents/inspect', {
    token: nativeSession,
    headers: nativeHeaders,
    body: { linkToken: intent.linkToken },
  });
  await call('Approve the link token', 'native app', 'POST', '/api/native/v1/link-intents/approve', {
    token: nativeSession,
    headers: nativeHeaders,
    body: { linkToken: intent.linkToken },
  });
  await call('Read the player (now linked)', 'game server', 'GET', `/api/game-sdk/v2/players/${intent.playerId}`, {
    token: secretKey,
  });

  // --- The game server reports an event -------------------------------------------------------------------------
  note('The player completes a level; the game server reports it and gets a decision.');
  const decision = await call<DecisionView>('Post an event', 'game server', 'POST', '/api/game-sdk/v2/events', {
    token: secretKey,
    body: {
      eventId: randomUUID(),
      playerId: intent.playerId,
      eventType: 'level.completed',
      occurredAt: new Date().toISOString(),
      metadata: { level: 1 },
    },
  });

  // --- The developer sees it ------------------------------------------------------------------------------------
  note('The developer sees the spend in the console snapshot and the event in the records.');
  const snapshot = await call<SnapshotView>('Console snapshot', 'developer', 'GET', '/api/developer/v1/console', {
    token: developer,
  });
  const records = await call<RecordsView>(
    'Event records of the game',
    'developer',
    'GET',
    `/api/developer/v1/records?kind=events&gameId=${gameId}`,
    { token: developer },
  );
  return {
    steps,
    developerEmail: email,
    organizationId,
    projectId,
    gameId,
    playerId: intent.playerId,
    creditsUserId,
    decision,
    snapshot,
    records,
  };
}
