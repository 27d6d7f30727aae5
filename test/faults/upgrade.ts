// The fault `upgrade` (docs/reliability.md, "Upgrade and rollback"): the previous release's programs
// (.ci/previous-release), two replicas of each with the edges behind HAProxy, on a database its
// own migrations made, under mixed load: single events (exact duplicates and conflicting copies), batch requests,
// console actions through the gateway, and a webhook endpoint per game on a receiver that verifies every signature.
// Meanwhile, as `helm upgrade` then `helm rollback` would: this tree's migrations run on the live database (the hook
// Job's command); every replica is replaced by this tree's program, one at a time, the new one ready (and, for an
// edge, in HAProxy's rotation) before the old one gets SIGTERM (maxSurge 1, maxUnavailable 0); then the code is rolled
// back the same way to the previous release, which runs on the new schema. The phase's checks: the suite's own (every
// answer, the stored rows, Porcupine, the invariants), no request failed, every console action answered 200, every
// decision's webhook delivered once; the ingest p99 while the migrations ran against the p99 before is reported.
import { resolve } from 'node:path';
import type pg from 'pg';
import { identityMigrations } from '../../services/identity-admission/src/migrations/index.ts';
import { EDGES, PROGRAMS, type ProgramReplica } from '../../services/launcher/tools/processes.ts';
import { ledgerMigrations } from '../../services/ledger/src/migrations/index.ts';
import type { CheckBook } from './checks.ts';
import type { Fixtures } from './fixtures.ts';
import type { SentRequest } from './load.ts';
import { runMigrations } from './previous-release.ts';
import { type FaultSystem, type ProgramName, waitReadyRestarting } from './system.ts';
import { WebhookReceiverFault } from './webhooks.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Load on the previous release before its migrations begin (beyond the phase's `--before-ms`): p99's baseline. */
const BASELINE_MS = 5_000;
/** The window before the migrations whose p99 is the baseline. */
const BASELINE_WINDOW_MS = 8_000;
/** Load on this tree's programs before the rollback begins. */
const UPGRADED_MS = 3_000;
/** One console action every this long, one at a time. */
const CONSOLE_INTERVAL_MS = 400;

type Release = 'previous' | 'current';

interface Slot {
  port: number;
  /** The process on this port, if one runs (or is starting). */
  process?: ProgramReplica;
  release?: Release;
}

interface Step {
  name: string;
  to: Release;
  /** From the new process's start to its /readyz 200 (and, for an edge, HAProxy's UP). */
  readyMs: number;
  /** From the old process's SIGTERM to its exit. */
  stopMs: number;
  code: number | null;
  /** Times the new process exited while starting and was started again (as the kubelet restarts a container). */
  restarts: number;
}

export interface ConsoleRequest {
  action: string;
  sentAt: number;
  answeredAt: number;
  status: number | null;
  /** The error's text, or the start of an unexpected body. */
  problem?: string;
}

export const CHECK_UPGRADE = {
  console: 'upgrade: every console action answered 200',
  migrated: "upgrade: this tree's migrations applied on the live database (the rolled-back release runs on them)",
  once: 'webhooks: each message (webhook-id) received once',
} as const;

/** Console actions one after the other, through the gateway, as a developer: reads, rules, keys, funding. */
function startConsoleLoad(gateway: string, token: string, fixtures: Fixtures) {
  const requests: ConsoleRequest[] = [];
  let stopped = false;
  const game = fixtures.games[fixtures.games.length - 1]!.id; // `plain`: a rule of another event type, keys
  let ruleId: string | undefined;
  let keyId: string | undefined;
  let turn = 0;
  const call = async (action: string, method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) => {
    const request: ConsoleRequest = { action, sentAt: Date.now(), answeredAt: 0, status: null };
    let data: any;
    try {
      const response = await fetch(`${gateway}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(15_000),
      });
      request.status = response.status;
      const text = await response.text();
      if (response.status === 200) data = (JSON.parse(text) as { data: unknown }).data;
      else request.problem = text.slice(0, 200);
    } catch (error) {
      request.problem = `request failed: ${(error as Error).message}`;
    }
    request.answeredAt = Date.now();
    requests.push(request);
    return data;
  };
  const action = (body: Record<string, unknown>) => call(String(body.type), 'POST', '/api/developer/v1/console', body);
  const next = async () => {
    switch (turn++ % 6) {
      case 0:
        await call('snapshot', 'GET', '/api/developer/v1/console');
        break;
      case 1:
        if (ruleId === undefined) {
          ruleId = (await action({ type: 'createRule', gameId: game, eventType: 'upgrade.probe', rewardCredits: 1 }))
            ?.id;
        } else {
          await action({ type: 'updateRule', ruleId, active: turn % 12 < 6, rewardCredits: 1 + (turn % 5) });
        }
        break;
      case 2:
        await call('records', 'GET', `/api/developer/v1/records?kind=events&gameId=${game}&limit=50`);
        break;
      case 3:
        if (keyId === undefined) {
          keyId = (await action({ type: 'issueKey', gameId: game, kind: 'secret', name: 'upgrade probe' }))?.id;
        } else {
          await action({ type: 'revokeKey', keyId });
          keyId = undefined;
        }
        break;
      case 4:
        await action({ type: 'fundOrganization', organizationId: fixtures.organizationId, amountCredits: 1 });
        break;
      default:
        await action({ type: 'updateProject', projectId: fixtures.projectId, name: `Fault suite project ${turn}` });
    }
  };
  const running = (async () => {
    while (!stopped) {
      await next();
      await sleep(CONSOLE_INTERVAL_MS);
    }
  })();
  return {
    requests,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/** p99 (nearest rank) of the answer times of the requests sent in [from, to): single events, answered. */
function p99(requests: SentRequest[], from: number, to: number): { ms: number | null; n: number } {
  const times = requests
    .filter((r) => r.batch === undefined && r.answer !== undefined && r.sentAt >= from && r.sentAt < to)
    .map((r) => r.answeredAt! - r.sentAt)
    .sort((a, b) => a - b);
  if (times.length === 0) return { ms: null, n: 0 };
  return { ms: times[Math.min(times.length - 1, Math.ceil(times.length * 0.99) - 1)]!, n: times.length };
}

export class UpgradeFault {
  private readonly webhooks = new WebhookReceiverFault();
  private console: ReturnType<typeof startConsoleLoad> | undefined;
  private slots = new Map<ProgramName, Slot[]>();
  private marks: Record<string, number> = {};

  async prepare(system: FaultSystem, fixtures: Fixtures, developerToken: string, client: pg.Client): Promise<void> {
    if (!system.previousRelease) throw new Error('the service does not run the previous release');
    // One endpoint, on the `plain` game (a fifth of the events): the two ledgers deliver about 50 messages a second
    // on this machine, fewer than the 80 decisions a second of every game, and a backlog would outlast the phase.
    await this.webhooks.prepare(system, fixtures, developerToken, client, [fixtures.games.at(-1)!]);
    this.console = startConsoleLoad(system.urls.gateway, developerToken, fixtures);
  }

  /** The migrations, the upgrade one replica at a time, a few seconds on this tree, the rollback. */
  async inject(system: FaultSystem, log: (line: string) => void): Promise<{ endedAt: number; note: string }> {
    const previous = system.previousRelease!;
    this.slots = new Map(
      PROGRAMS.map((program) => [
        program,
        [
          ...system.programs.of(program).map((process): Slot => ({ port: process.port, process, release: 'previous' })),
          ...(system.surgePorts[program] ?? []).map((port): Slot => ({ port })),
        ],
      ]),
    );
    await sleep(BASELINE_MS);
    const migration = await runMigrations(
      resolve('.'),
      await system.checkDatabaseUrl(),
      `${system.logDir}/migrate.log`,
    );
    this.marks.migrationStartedAt = migration.startedAt;
    this.marks.migrationEndedAt = migration.endedAt;
    log(
      `upgrade: this tree's migrations took ${migration.endedAt - migration.startedAt} ms (the previous release serving)`,
    );
    const upgradeAt = Date.now();
    const up = await this.roll(system, 'current', resolve('.'), log);
    this.marks.upgradedAt = Date.now();
    await sleep(UPGRADED_MS);
    const rollbackAt = Date.now();
    const down = await this.roll(system, 'previous', previous.root, log);
    const endedAt = Date.now();
    const describe = (steps: Step[]) =>
      `${steps.length} replicas, each ready ${(Math.min(...steps.map((s) => s.readyMs)) / 1000).toFixed(1)}-${(Math.max(...steps.map((s) => s.readyMs)) / 1000).toFixed(1)} s, ` +
      `stops ${(Math.max(...steps.map((s) => s.stopMs)) / 1000).toFixed(1)} s at most, exits ${[...new Set(steps.map((s) => s.code))].join(', ')}, ` +
      `${steps.reduce((n, s) => n + s.restarts, 0)} exited while starting and were started again`;
    return {
      endedAt,
      note:
        `${previous.tag} -> working tree -> ${previous.tag}; migrations ${((migration.endedAt - migration.startedAt) / 1000).toFixed(1)} s; ` +
        `upgrade ${((this.marks.upgradedAt - upgradeAt) / 1000).toFixed(1)} s (${describe(up)}); ` +
        `rollback ${((endedAt - rollbackAt) / 1000).toFixed(1)} s (${describe(down)})` +
        (system.startFailures.length > 0
          ? `; processes that exited while starting (started again): ${system.startFailures.join(' | ')}`
          : ''),
    };
  }

  /** Every replica not on `to` replaced by one on `to`, one at a time: the new one ready before the old one leaves. */
  private async roll(system: FaultSystem, to: Release, root: string, log: (line: string) => void): Promise<Step[]> {
    const steps: Step[] = [];
    for (const program of PROGRAMS) {
      const slots = this.slots.get(program)!;
      for (const old of slots.filter((s) => s.process !== undefined && s.release !== to)) {
        const free = slots.find((s) => s.process === undefined);
        if (!free) throw new Error(`${program}: no free port for the surge`);
        const name = `${program}-${slots.indexOf(free) + 1}`;
        const starting = Date.now();
        const fresh = system.programs.launch(program, { port: free.port, label: name, root });
        free.process = fresh;
        free.release = to;
        // A process that exits while starting is started again, as the kubelet restarts a pod's container (the
        // rollout waits for it to be ready): counted and reported, not a failure of the phase unless it keeps exiting.
        const failures = await waitReadyRestarting(fresh, (line) => log(`upgrade: ${line}`));
        const restarts = failures.length;
        system.startFailures.push(...failures);
        // A Service sends to a new pod once its readiness probe passed: here, once HAProxy has seen it up.
        if (system.balancer && (EDGES as readonly string[]).includes(program)) {
          await system.balancer.waitStatus(program, name, 'UP', 10_000);
        }
        const stopping = Date.now();
        const code = await old.process!.stop();
        const oldName = `${program}-${slots.indexOf(old) + 1}`;
        old.process = undefined;
        old.release = undefined;
        const step = { name, to, readyMs: stopping - starting, stopMs: Date.now() - stopping, code, restarts };
        steps.push(step);
        log(
          `upgrade: ${name} (${to === 'current' ? 'this tree' : 'previous release'}) ready ${step.readyMs} ms after start; ` +
            `${oldName} exited ${code} ${step.stopMs} ms after SIGTERM`,
        );
      }
    }
    return steps;
  }

  /** The p99 of the single events' answer times before and while the migrations ran (reported, not asserted). */
  latencyNote(requests: SentRequest[]): string {
    const { migrationStartedAt: from, migrationEndedAt: to } = this.marks;
    if (from === undefined || to === undefined) return 'the migrations did not run';
    const before = p99(requests, from - BASELINE_WINDOW_MS, from);
    const during = p99(requests, from, to);
    const ratio = before.ms && during.ms !== null ? ` (${(during.ms / before.ms).toFixed(2)}x)` : '';
    return (
      `ingest p99 ${before.ms ?? '-'} ms in the ${BASELINE_WINDOW_MS / 1000} s before the migrations (${before.n} events), ` +
      `${during.ms ?? '-'} ms while they ran (${during.n} events)${ratio}`
    );
  }

  /** After the load, retries and replays: the console actions, the schema, the webhooks. */
  async settle(book: CheckBook, client: pg.Client): Promise<string> {
    await this.console?.stop();
    const consoleRequests = this.console?.requests ?? [];
    this.console = undefined;
    for (const r of consoleRequests) {
      book.check(
        CHECK_UPGRADE.console,
        r.status === 200,
        () =>
          `${r.action} sent ${new Date(r.sentAt).toISOString().slice(11, 23)}, after ${r.answeredAt - r.sentAt} ms: ${r.status ?? ''} ${r.problem ?? ''}`,
      );
    }
    const { rows } = await client.query<{ name: string }>(
      `select name from ledger.mikro_orm_migrations union all select name from identity.mikro_orm_migrations`,
    );
    const applied = new Set(rows.map((r) => r.name));
    const migrations = [...identityMigrations.migrations, ...ledgerMigrations.migrations].map((m) => m.name);
    for (const name of migrations) book.check(CHECK_UPGRADE.migrated, applied.has(name), () => `${name} not applied`);
    const webhooks = await this.webhooks.settle(book, client, { once: CHECK_UPGRADE.once });
    const slowest = consoleRequests.reduce((a, r) => Math.max(a, r.answeredAt - r.sentAt), 0);
    return `${consoleRequests.length} console actions (slowest ${slowest} ms); webhooks: ${webhooks}`;
  }

  async cleanUp(): Promise<void> {
    await this.console?.stop();
    this.console = undefined;
    await this.webhooks.cleanUp();
  }
}
