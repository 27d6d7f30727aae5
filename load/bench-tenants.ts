// npm run bench:tenants: tenant isolation at the gateway. One developer (the victim) reads its snapshot
// at the web console's pace while another (the attacker, a valid account) floods: reads, its team's reads, rule
// dry-runs, reconnects.
// Prints the victim's snapshot latency per phase next to its latency alone, and what the attacker got.
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import WebSocket from 'ws';
import { summarizeCpuProfile } from './lib/cpuprofile.ts';
import { createLoadIdentity } from './lib/identity.ts';
import { cpuSeconds, machine, machineBusySeconds, percentile, sampleBackendCpu } from './lib/proc.ts';
import { type LoadSystem, type SystemMode, startLoadSystem } from './lib/system.ts';

const HELP = `Usage: npm run bench:tenants -- [options]

Starts the service (real PostgreSQL and NATS) with its default developer limits, makes two developers, warms the
process up (a phase of A at the k6 console rate, not the reference), and measures developer B's snapshot (GET
/api/developer/v1/console, one at a time, a pause between) alone (the reference), while developer A reads
at the k6 console scenario's rate (what the defaults must allow), then while developer A floods:
snapshot and record reads, rule dry-runs (simulateRule over its game's stored decisions), WebSocket reconnects.
Every flood is a closed loop of --concurrency clients that never slow down (429s included), run in a child process
of its own so that its clients do not delay B's clock (both still share the machine's CPUs with the service).

Options:
  --mode M              all-in-one or programs                                  default all-in-one
  --duration S          seconds per phase                                       default 15
  --concurrency N       attacker's clients per flood                            default 32
  --dry-run-clients N   attacker's clients sending simulateRule                 default 10
  --decisions N         decisions stored in the attacker's game (dry-runs replay them)  default 50000
  --pause MS            victim's pause between two snapshots                    default 100
  --phases LIST         which phases, comma-separated: paced, reads, team-reads, dry-runs, reconnects
                        (team-reads: A and --team - 1 developers added to A's organization flood reads
                        together, each as A does alone)                         default all five
  --team N              developers of A's organization in the team-reads flood  default 4
  --env KEY=VALUE       a setting of the service (repeatable), e.g. DEVELOPER_IN_FLIGHT_MAX=4 to compare
  --cpu-prof DIR        run the service with node --cpu-prof (profiles in DIR, summarized at the end)
  --help                this text
`;

const log = (line: string) => process.stderr.write(`[tenants] ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Developer {
  email: string;
  token: string;
  gameId: string;
  organizationId: string;
  /** The tokens of A's teammates (the team-reads flood): developers added to A's organization. */
  team?: string[];
}

async function call(base: string, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function action(base: string, token: string, body: Record<string, unknown>): Promise<string> {
  const answer = await call(base, 'POST', '/api/developer/v1/console', token, body);
  if (answer.status !== 200) throw new Error(`${body.type}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data.id as string;
}

/** An invited developer with an organization, a project and a funded game. */
async function developer(
  base: string,
  adminToken: string,
  sign: (email: string) => Promise<string>,
): Promise<Developer> {
  const email = `tenant-${randomUUID().slice(0, 8)}@example.com`;
  const invited = await call(base, 'POST', '/api/admin/v1/invitations', adminToken, { email });
  if (invited.status !== 200) throw new Error(`invitation: ${invited.status}`);
  const token = await sign(email);
  const access = await call(base, 'GET', '/api/developer/v1/access', token);
  if (access.status !== 200) throw new Error(`access: ${access.status} ${JSON.stringify(access.body)}`);
  const organizationId = await action(base, token, { type: 'createOrganization', name: 'Tenant' });
  await action(base, token, { type: 'fundOrganization', organizationId, amountCredits: 1_000_000 });
  const projectId = await action(base, token, {
    type: 'createProject',
    organizationId,
    name: 'Project',
    maxPayoutCredits: 1_000_000,
  });
  await action(base, token, { type: 'allocateProject', projectId, amountCredits: 1_000_000 });
  const gameId = await action(base, token, {
    type: 'createGame',
    projectId,
    name: 'Game',
    platform: 'web',
    maxPayoutCredits: 1_000_000,
    dailyPlayerCapCredits: 100,
  });
  await action(base, token, { type: 'allocateGame', gameId, amountCredits: 1_000_000 });
  await action(base, token, { type: 'createRule', gameId, eventType: 'level.up', rewardCredits: 1 });
  return { email, token, gameId, organizationId } satisfies Developer;
}

/** `count` stored decisions of one player in the game over the last day (what a dry-run replays). */
async function storeDecisions(databaseUrl: string, gameId: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const keyId = randomUUID();
    const playerId = randomUUID();
    await client.query(
      `insert into ledger.keys (id, game_id, organization_id, kind, name, prefix, public_key, key_hash)
       select $1, g.id, g.organization_id, 'secret', 'bench', 'cr_sk_sandbox_AAAAAA', null, $2
         from ledger.games g where g.id = $3`,
      [keyId, randomBytes(32), gameId],
    );
    await client.query(
      `insert into ledger.players (id, game_id, organization_id, external_player_id, credits_user_id, username,
                                   linked_at, created_at)
       select $1, g.id, g.organization_id, 'bench-player', gen_random_uuid(), 'bench', now(), now()
         from ledger.games g where g.id = $2`,
      [playerId, gameId],
    );
    await client.query(
      `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
                                  occurred_at, status, reason, reward_credits, payload_hash, created_at)
       select gen_random_uuid(), g.id, g.project_id, g.organization_id, gen_random_uuid(), $1, $2, 'level.up',
              now() - make_interval(secs => i * 86000.0 / $3), 'accepted', null, 1, sha256(i::text::bytea),
              now() - make_interval(secs => i * 86000.0 / $3)
         from ledger.games g, generate_series(1, $3) i where g.id = $4`,
      [playerId, keyId, count, gameId],
    );
    // Statistics as autovacuum would have them by now: without, the planner still sees the tables as they were
    // before the bulk insert (nearly empty) and may scan where a running service would use the tenant's index.
    await client.query('analyze ledger.events, ledger.players');
  } finally {
    await client.end();
  }
}

interface Sampled {
  latenciesMs: number[];
  failures: number;
}

/** The victim: its snapshot, one at a time, `pauseMs` apart, until `stop`. */
async function victimLoop(base: string, token: string, pauseMs: number, stop: () => boolean): Promise<Sampled> {
  const sampled: Sampled = { latenciesMs: [], failures: 0 };
  while (!stop()) {
    const started = performance.now();
    const answer = await call(base, 'GET', '/api/developer/v1/console', token);
    const ms = performance.now() - started;
    if (answer.status === 200) sampled.latenciesMs.push(ms);
    else sampled.failures += 1;
    await sleep(pauseMs);
  }
  return sampled;
}

/** Counts of the attacker's answers by status (or close code for WebSockets). */
type Outcomes = Map<string, number>;

async function floodLoop(clients: number, stop: () => boolean, once: () => Promise<string>): Promise<Outcomes> {
  const outcomes: Outcomes = new Map();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!stop()) {
        const outcome = await once().catch((error: unknown) => `error ${(error as Error).message.slice(0, 40)}`);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    }),
  );
  return outcomes;
}

/**
 * Developer A reading as the k6 console scenario does at its full profile's rate (load/ingest.js consoleRead): an
 * iteration every 100 ms, whatever the answers; every other one the snapshot, else a records page and the next one.
 * The load the defaults must serve: the floods below are to come down to it.
 */
async function pacedReads(base: string, developer: Developer, stop: () => boolean): Promise<Outcomes> {
  const outcomes: Outcomes = new Map();
  const count = (status: number) => outcomes.set(String(status), (outcomes.get(String(status)) ?? 0) + 1);
  const running: Array<Promise<void>> = [];
  for (let index = 0; !stop(); index++) {
    running.push(
      (async () => {
        if (index % 2 === 0) {
          count((await call(base, 'GET', '/api/developer/v1/console', developer.token)).status);
          return;
        }
        const path = `/api/developer/v1/records?kind=events&gameId=${developer.gameId}&limit=50`;
        const first = await call(base, 'GET', path, developer.token);
        count(first.status);
        const next = first.body?.data?.nextCursor;
        if (next)
          count((await call(base, 'GET', `${path}&cursor=${encodeURIComponent(next)}`, developer.token)).status);
      })().catch(() => undefined),
    );
    await sleep(100);
  }
  await Promise.all(running);
  return outcomes;
}

const SIMULATE = `query Simulate($input: SimulateRuleInput!) { simulateRule(input: $input) { considered flipCount } }`;

/** One graphql-transport-ws connection attempt: connection_init, then closed by us once acknowledged or by the server. */
function reconnect(base: string, token: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    let settled = false;
    const done = (outcome: string) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
      socket.terminate();
    };
    socket.on('open', () =>
      socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } })),
    );
    socket.on('message', (data) => {
      if (JSON.parse(String(data)).type === 'connection_ack') done('ack');
    });
    socket.on('close', (code, reason) => done(`close ${code} ${String(reason)}`));
    socket.on('error', (error) => done(`error ${error.message.slice(0, 40)}`));
  });
}

/** What the attacker's child process needs to flood. */
interface FloodSpec {
  key: string;
  base: string;
  attacker: Developer;
  concurrency: number;
  dryRunClients: number;
  dryRunInput: Record<string, unknown>;
}

const FLOODS: Record<
  string,
  { name: (spec: FloodSpec) => string; run: (spec: FloodSpec, stop: () => boolean) => Promise<Outcomes> }
> = {
  paced: {
    name: () => 'reads at the k6 console rate (10 iterations/s, what the defaults must allow)',
    run: (spec, stop) => pacedReads(spec.base, spec.attacker, stop),
  },
  reads: {
    name: () => 'flooding reads (snapshot and record pages)',
    run: (spec, stop) => {
      let n = 0;
      return floodLoop(spec.concurrency, stop, async () => {
        n += 1;
        const path =
          n % 2 === 0
            ? '/api/developer/v1/console'
            : `/api/developer/v1/records?kind=events&gameId=${spec.attacker.gameId}&limit=100`;
        return String((await call(spec.base, 'GET', path, spec.attacker.token)).status);
      });
    },
  },
  'team-reads': {
    name: (spec) =>
      `flooding reads by a team (A and ${spec.attacker.team?.length ?? 0} developers of A's organization, each ${spec.concurrency} clients)`,
    run: (spec, stop) => {
      const tokens = [spec.attacker.token, ...(spec.attacker.team ?? [])];
      let n = 0;
      return floodLoop(spec.concurrency * tokens.length, stop, async () => {
        n += 1;
        const token = tokens[n % tokens.length] as string;
        const path =
          Math.floor(n / tokens.length) % 2 === 0
            ? '/api/developer/v1/console'
            : `/api/developer/v1/records?kind=events&gameId=${spec.attacker.gameId}&limit=100`;
        return String((await call(spec.base, 'GET', path, token)).status);
      });
    },
  },
  'dry-runs': {
    name: (spec) => `dry-runs (${spec.dryRunClients} clients, simulateRule over the stored decisions)`,
    run: (spec, stop) =>
      floodLoop(spec.dryRunClients, stop, async () => {
        const answer = await call(spec.base, 'POST', '/graphql', spec.attacker.token, {
          query: SIMULATE,
          variables: { input: spec.dryRunInput },
        });
        return String(answer.status);
      }),
  },
  reconnects: {
    name: () => 'reconnects (WebSocket connection attempts)',
    run: (spec, stop) => floodLoop(spec.concurrency, stop, () => reconnect(spec.base, spec.attacker.token)),
  },
};

/** The attacker (child process): floods until told to stop, then sends its outcomes to the parent. */
async function floodChild(spec: FloodSpec): Promise<void> {
  let stopped = false;
  process.on('message', (message) => {
    if (message === 'stop') stopped = true;
  });
  const flood = FLOODS[spec.key];
  if (!flood) throw new Error(`unknown flood ${spec.key}`);
  const outcomes = await flood.run(spec, () => stopped);
  process.send?.(Object.fromEntries(outcomes), () => process.disconnect());
}

/** Runs one flood in a child process; stop() ends it and answers its outcomes. */
function startFlood(spec: FloodSpec): { pid: number; stop: () => Promise<Outcomes> } {
  const child = fork(new URL(import.meta.url).pathname, ['--flood-child', JSON.stringify(spec)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const outcomes = new Promise<Outcomes>((resolve, reject) => {
    child.once('message', (m) => resolve(new Map(Object.entries(m as Record<string, number>))));
    child.once('exit', (code) => reject(new Error(`the flood's process exited (${code})`)));
  });
  return {
    pid: child.pid ?? 0,
    stop: async () => {
      child.send('stop');
      return outcomes;
    },
  };
}

/**
 * Active PostgreSQL backends of the run's database, sampled every 200 ms: the largest number seen, the mean, and the
 * statements seen most often (their first 100 characters, whitespace folded).
 */
function sampleBackends(databaseUrl: string, databaseName: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  const counts: number[] = [];
  const statements = new Map<string, number>();
  let stopped = false;
  const running = (async () => {
    await client.connect();
    while (!stopped) {
      const { rows } = await client.query(
        `select left(regexp_replace(query, '\\s+', ' ', 'g'), 100) as statement from pg_stat_activity
          where datname = $1 and state = 'active' and pid <> pg_backend_pid()`,
        [databaseName],
      );
      counts.push(rows.length);
      for (const row of rows) statements.set(row.statement, (statements.get(row.statement) ?? 0) + 1);
      await sleep(200);
    }
    await client.end();
  })();
  return {
    stop: async () => {
      stopped = true;
      await running;
      const mean = counts.reduce((a, b) => a + b, 0) / Math.max(1, counts.length);
      const top = [...statements.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3);
      return { max: Math.max(0, ...counts), mean, top };
    },
  };
}

interface Phase {
  name: string;
  victim: Sampled;
  attacker: Outcomes | undefined;
  seconds: number;
  loadAverage1m: number;
  backends: { max: number; mean: number; top: Array<[string, number]> };
  /** CPU seconds per second of the phase: the service's processes, PostgreSQL's backends, A's clients, the machine. */
  cpu: { service: number; postgres: number; attacker: number; machine: number };
}

function p(values: number[], q: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted.length === 0 ? Number.NaN : percentile(sorted, q);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      mode: { type: 'string', default: 'all-in-one' },
      duration: { type: 'string', default: '15' },
      concurrency: { type: 'string', default: '32' },
      'dry-run-clients': { type: 'string', default: '10' },
      decisions: { type: 'string', default: '50000' },
      pause: { type: 'string', default: '100' },
      phases: { type: 'string', default: 'paced,reads,team-reads,dry-runs,reconnects' },
      team: { type: 'string', default: '4' },
      env: { type: 'string', multiple: true, default: [] },
      'cpu-prof': { type: 'string' },
      'flood-child': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values['flood-child']) return floodChild(JSON.parse(values['flood-child']) as FloodSpec);
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const mode = values.mode as SystemMode;
  const seconds = Number(values.duration);
  const concurrency = Number(values.concurrency);
  const dryRunClients = Number(values['dry-run-clients']);
  const pauseMs = Number(values.pause);
  const settings = Object.fromEntries(
    (values.env as string[]).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  const chosen = new Set(String(values.phases).split(','));
  const runId = randomBytes(4).toString('hex');
  const identity = await createLoadIdentity(runId, 0);
  const adminToken = randomBytes(24).toString('hex');
  const logDir = join('load', 'results', 'tenants', 'logs');
  mkdirSync(logDir, { recursive: true });
  const cpuProfileDir = values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined;
  if (cpuProfileDir) mkdirSync(cpuProfileDir, { recursive: true });
  const before = machine();
  log(`machine: ${before.cpus} CPUs, ${before.cpuModel}, load average (1 min) ${before.loadAverage1m.toFixed(2)}`);
  const system: LoadSystem = await startLoadSystem({
    mode,
    // The gateway's developer limits are left at their defaults: they are what is measured.
    env: { ...identity.env, ADMIN_TOKEN: adminToken, NATIVE_ADMISSION_MODE: 'off', ...settings },
    logDir,
    log,
    ...(cpuProfileDir ? { cpuProfile: { dir: cpuProfileDir, programs: ['all-in-one', 'gateway', 'ledger'] } } : {}),
  });
  const base = system.urls.gateway;
  try {
    const victim = await developer(base, adminToken, identity.signDeveloper);
    const attacker = await developer(base, adminToken, identity.signDeveloper);
    // A's teammates: invited, added to A's organization by A (members read what A reads).
    attacker.team = [];
    for (let i = 1; i < Number(values.team); i++) {
      const email = `team-${randomUUID().slice(0, 8)}@example.com`;
      const invited = await call(base, 'POST', '/api/admin/v1/invitations', adminToken, { email });
      if (invited.status !== 200) throw new Error(`invitation: ${invited.status}`);
      const token = await identity.signDeveloper(email);
      const access = await call(base, 'GET', '/api/developer/v1/access', token);
      if (access.status !== 200) throw new Error(`access: ${access.status}`);
      await action(base, attacker.token, {
        type: 'addMember',
        organizationId: attacker.organizationId,
        // The subject load/lib/identity.ts signs a developer's token with.
        identityUserId: `load|${runId}|${email}`,
        role: 'viewer',
      });
      attacker.team.push(token);
    }
    await storeDecisions(system.databaseUrl, attacker.gameId, Number(values.decisions));
    log(`two developers ready; ${Number(values.decisions).toLocaleString('en')} decisions in the attacker's game`);
    const dryRunInput = {
      gameId: attacker.gameId,
      eventType: 'level.up',
      rewardCredits: 2,
      dailyPlayerCapCredits: 50,
      active: true,
      from: new Date(Date.now() - 86_400_000).toISOString(),
      to: new Date().toISOString(),
    };
    const phases: Phase[] = [];
    const measure = async (name: string, key?: string) => {
      const started = performance.now();
      const attack = key ? startFlood({ key, base, attacker, concurrency, dryRunClients, dryRunInput }) : undefined;
      // The flood takes hold first; then the victim is measured for the phase's duration.
      if (attack) await sleep(1000);
      let stopped = false;
      const backends = sampleBackends(system.databaseUrl, system.databaseName);
      const servicePids = system.processes.filter((process) => !process.name.startsWith('nats')).map((x) => x.pid);
      const serviceCpu = () => servicePids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
      const cpuAt = {
        service: serviceCpu(),
        attacker: attack ? cpuSeconds(attack.pid) : 0,
        machine: machineBusySeconds(),
      };
      const postgresCpu = sampleBackendCpu(system.databaseName);
      const measuredFrom = performance.now();
      const victimRun = victimLoop(base, victim.token, pauseMs, () => stopped);
      await sleep(seconds * 1000);
      stopped = true;
      const victimSampled = await victimRun;
      const measuredS = (performance.now() - measuredFrom) / 1000;
      const cpu = {
        service: (serviceCpu() - cpuAt.service) / measuredS,
        postgres: postgresCpu.stop() / measuredS,
        attacker: attack ? (cpuSeconds(attack.pid) - cpuAt.attacker) / measuredS : 0,
        machine: (machineBusySeconds() - cpuAt.machine) / measuredS,
      };
      const attackerOutcomes = await attack?.stop();
      phases.push({
        name,
        victim: victimSampled,
        attacker: attackerOutcomes,
        seconds: (performance.now() - started) / 1000,
        loadAverage1m: machine().loadAverage1m,
        backends: await backends.stop(),
        cpu,
      });
      log(`${name}: victim p95 ${p(victimSampled.latenciesMs, 95).toFixed(1)} ms`);
      for (const [statement, seen] of phases.at(-1)?.backends.top ?? []) log(`  active ${seen} x: ${statement}`);
      await sleep(2000);
    };
    // The process's warm-up (compilation of both developers' read paths, pools, caches) is not the victim's latency
    // alone: a first phase takes it, with A reading at the k6 rate, and is not the reference.
    await measure('warm-up (A at the k6 console rate; not the reference)', 'paced');
    await measure('alone');
    for (const [key, flood] of Object.entries(FLOODS)) {
      if (chosen.has(key))
        await measure(flood.name({ key, base, attacker, concurrency, dryRunClients, dryRunInput }), key);
    }
    await measure('alone again');

    const alone = p(phases.find((phase) => phase.name === 'alone')?.victim.latenciesMs ?? [], 95);
    const lines = [
      '',
      `Tenant isolation (${mode}, developer limits ${Object.keys(settings).length ? JSON.stringify(settings) : 'at their defaults'}): developer B's snapshot while developer A floods`,
      '',
      '| phase | B snapshots | B p50 ms | B p95 ms | B max ms | B p95 / alone | B failures | A answers (/s) | active backends max, mean | CPU/s service, PostgreSQL, A clients, machine | load avg 1m |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...phases.map((phase) => {
        const l = phase.victim.latenciesMs;
        const answers = phase.attacker
          ? [...phase.attacker.entries()]
              .sort((x, y) => y[1] - x[1])
              .map(([outcome, count]) => `${outcome}: ${count} (${(count / phase.seconds).toFixed(0)}/s)`)
              .join(', ')
          : '-';
        return `| ${phase.name} | ${l.length} | ${p(l, 50).toFixed(1)} | ${p(l, 95).toFixed(1)} | ${Math.max(...l).toFixed(1)} | ${(p(l, 95) / alone).toFixed(2)} | ${phase.victim.failures} | ${answers} | ${phase.backends.max}, ${phase.backends.mean.toFixed(1)} | ${[phase.cpu.service, phase.cpu.postgres, phase.cpu.attacker, phase.cpu.machine].map((x) => x.toFixed(2)).join(', ')} | ${phase.loadAverage1m.toFixed(2)} |`;
      }),
      '',
      `machine: ${before.cpus} CPUs (${before.cpuModel}), ${before.memoryGiB.toFixed(0)} GiB; load average before ${before.loadAverage1m.toFixed(2)}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await system.stop();
  }
  if (cpuProfileDir) {
    for (const file of readdirSync(cpuProfileDir).filter((n) => n.endsWith('.cpuprofile'))) {
      const profile = JSON.parse(readFileSync(join(cpuProfileDir, file), 'utf8'));
      process.stdout.write(`\nCPU PROFILE ${file}\n${summarizeCpuProfile(profile, 25)}\n`);
    }
  }
}

await main();
