// `npm run demo`: walks through the whole journey against a running `npm start` and prints each call and its
// answer, then the decision and the console's figures. Secrets (keys, link token, session tokens) are shortened.
//
//   ADMIN_TOKEN=... npm run demo [-- --url http://localhost:8080] [--country DE] [--build 1000]
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { JourneyError, type JourneyStep, runJourney } from './journey.ts';

const usage = `Usage: ADMIN_TOKEN=<the server's operator token> npm run demo [-- --url URL] [--country CC] [--build N]

Walks a newcomer through the whole journey against a running service (start it first with npm start):
invite a developer, build an organization, project, game, rule and keys, fund them, link a player from a native
session, post an event, and read the decision and the console snapshot.

  --url URL       the service (default http://localhost:8080)
  --country CC    X-Client-Country of the native app (default DE; must be in SUPPORTED_COUNTRIES if set)
  --build N       X-Client-Build of the native app (default 1000; at least NATIVE_MIN_BUILD)

Environment: ADMIN_TOKEN (required, the server's), DATA_DIR (default ./.data, the server's: its development
identity provider signs the demo's sessions).`;

function fail(message: string): never {
  process.stderr.write(`demo: ${message}\n\n${usage}\n`);
  process.exit(2);
}

let values: { url?: string; country?: string; build?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      url: { type: 'string', default: 'http://localhost:8080' },
      country: { type: 'string', default: 'DE' },
      build: { type: 'string', default: '1000' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }));
} catch (error) {
  fail((error as Error).message);
}
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const url = (values.url as string).replace(/\/+$/, '');
const adminToken = process.env.ADMIN_TOKEN;
if (!adminToken) fail('ADMIN_TOKEN is not set: use the operator token the server was started with.');
const dataDir = resolve(process.env.DATA_DIR || './.data');

// Is anybody there?
try {
  const health = await fetch(`${url}/healthz`);
  if (!health.ok) fail(`${url}/healthz answered ${health.status}: is this the sandbox rewards service?`);
} catch {
  fail(
    `nothing answers at ${url}. Start the service first, e.g.:\n\n  ADMIN_TOKEN=${'<at least 32 characters>'} npm start\n`,
  );
}

const SECRET = /(cr_(?:sk|pk|link)_sandbox_)([A-Za-z0-9_-]{6})[A-Za-z0-9_-]{37}/g;
const JWT = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g;
/** JSON of a body with secrets shortened: the demo shows their form, not their value. */
function show(value: unknown): string {
  const text = JSON.stringify(value, null, 2) ?? '';
  return text.replace(SECRET, '$1$2…').replace(JWT, 'eyJ…');
}
const indent = (text: string, prefix: string) =>
  text
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');

const out = (text = '') => process.stdout.write(`${text}\n`);

out(`Sandbox Rewards demo against ${url} (DATA_DIR ${dataDir})`);
try {
  const result = await runJourney({
    url,
    adminToken,
    dataDir,
    country: values.country,
    build: values.build,
    onNote: (text) => out(`\n# ${text}`),
    onStep: (step: JourneyStep) => {
      out(`\n${String(step.index).padStart(2)}. ${step.title}  [${step.actor}]`);
      out(`    -> ${step.method} ${step.path}`);
      if (step.request !== undefined) out(indent(show(step.request), '       '));
      out(`    <- ${step.status}`);
      out(indent(show(step.body), '       '));
    },
  });
  const game = result.snapshot.games.find((g) => g.id === result.gameId);
  const project = result.snapshot.projects.find((p) => p.id === result.projectId);
  const organization = result.snapshot.organizations.find((o) => o.id === result.organizationId);
  const player = result.snapshot.players.find((p) => p.id === result.playerId);
  out('\n== Result ==========================================================');
  out(
    `Decision: ${result.decision.status}${result.decision.reason ? ` (${result.decision.reason})` : ''}, ` +
      `rewardCredits ${result.decision.rewardCredits}, replayed ${result.decision.replayed}`,
  );
  out('Console snapshot:');
  out(`  organization "${organization?.name}": balanceCredits ${organization?.balanceCredits}`);
  out(`  project "${project?.name}": budgetCredits ${project?.budgetCredits}, spentCredits ${project?.spentCredits}`);
  out(
    `  game "${game?.name}": budgetCredits ${game?.budgetCredits}, spentCredits ${game?.spentCredits}, ` +
      `available ${(game?.budgetCredits ?? 0) - (game?.spentCredits ?? 0)}`,
  );
  out(`  linked player ${player?.externalPlayerId} -> creditsUserId ${player?.creditsUserId} ("${player?.username}")`);
  out(`  players in snapshot ${result.snapshot.players.length}, events in snapshot ${result.snapshot.events.length}`);
  out(`Records (kind=events, this game): ${result.records.records.length} event(s)`);
  out('Sandbox credits only: no production wallet was credited.');
} catch (error) {
  if (!(error instanceof JourneyError)) throw error;
  process.stderr.write(`\ndemo: ${error.message}\n`);
  if (error.step?.status === 401 && error.step.path.startsWith('/api/admin/')) {
    process.stderr.write('demo: ADMIN_TOKEN does not match the server.\n');
  }
  if (error.step?.status === 404 && error.step.path.startsWith('/api/admin/')) {
    process.stderr.write('demo: the server was started without ADMIN_TOKEN; restart it with one.\n');
  }
  process.exit(1);
}
