// npm run bench:soak: the five programs under the mixed load for an hour, to find what grows. PostgreSQL (durable)
// and nats-server and the programs as separate processes (load/lib/system.ts); k6's full profile (load/ingest.js)
// holds its steady scenarios (fresh single events, batches of 20, replays, console reads) for --duration at --rate
// events per second in all, without its peak phase; beside it this process rotates tenants: every --rotate-every a new
// developer signs in and reads (REST and GraphQL), a new game gets a rule, a secret key, players (link intents) and
// webhook endpoints on a receiver here (every other game's answering only after --slow-ms), the previous game's key is
// replaced by a new one (issued, then the old one revoked), older games are retired (keys revoked, endpoints deleted),
// the new key floods once (batch requests of 100 events at once: the flood pacer's per-key maps), and the live keys
// send a steady trickle of single events, batches and replays, with now and then a request of a revoked key. So every
// map keyed by tenants' input (credentials, games, organizations, developers) sees new keys all the time.
//
// Every --sample-every: each process's RSS (/proc), each program's V8 heap and runtime_collection_entries (its
// /metrics), the load average. At the end: each program's RSS first/last/max and its least-squares slope in MiB per
// hour over the samples after --warmup; every collection's entries at the end of the load, their maximum, and after 15
// s idle and one event; k6's requests, failures and p50/p99 per scenario; the programs' HTTP answers by status; the
// driver's requests by status, rotations and webhook deliveries; the ledger's largest tables; the load average.
//
// "Half the latency-bound rate": npm run bench's rate at p99 <= 25 ms on this machine is 539-743 events/s
// (docs/benchmarks.md); an hour at half of its lower end, 250 events/s, keeps queues short, so what grows is what is
// kept, not a backlog.
import { randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg as osLoadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createLoadIdentity } from './lib/identity.ts';
import { ensureK6, type K6Summary, k6Version, runK6 } from './lib/k6.ts';
import { machine, rssMiB } from './lib/proc.ts';
import { startLoadSystem } from './lib/system.ts';

const HELP = `Usage: npm run bench:soak -- [options]

Holds the mixed load on the five programs (real PostgreSQL, durable, and NATS) for --duration while rotating
developers, games, keys and webhook endpoints; prints each program's RSS slope and every tenant-keyed map's and
queue's entries at the end (docs/benchmarks.md, "Soak").

Options:
  --duration D       the steady load, e.g. 1h or 3m (k6's duration syntax)                default 1h
  --rate N           events per second in all: k6's fresh events, replays and batches of
                     20, and the rotating keys' events and floods (half of npm run
                     bench's rate at p99 <= 25 ms on the 2-CPU machine, 539-743/s)      default 250
  --console-rate N   k6's console reads per second (the snapshot or a records page)     default 5
  --rotate-every S   seconds between rotations (developer, game, key, endpoints)        default 30
  --keys-rate N      events per second of the rotating keys (part of --rate)            default 10
  --flood N          events of each new key's flood (batch requests of 100 at once)      default 400
  --slow-ms MS       the slow webhook endpoints' answer time                             default 3000
  --sample-every S   seconds between samples                                             default 30
  --warmup D         samples before this (from the start of the load; at most a third
                     of the load) are left out of the slopes                             default 10m
  --durability D     durable (PostgreSQL's defaults) or off (fsync off, as the tests)    default durable
  --json FILE        also write every figure and sample as JSON to FILE
  --help             this text

Environment: K6 (the k6 binary; unset: the version pinned in .ci/go-tools.txt).
`;

const log = (line: string) => process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** k6's duration syntax (1h2m3s, 90s) in seconds. */
function seconds(duration: string): number {
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(n) * ({ ms: 0.001, s: 1, m: 60, h: 3600 } as Record<string, number>)[unit!]!;
  }
  return total;
}

interface Options {
  duration: string;
  rate: number;
  consoleRate: number;
  rotateEveryS: number;
  keysRate: number;
  flood: number;
  slowMs: number;
  sampleEveryS: number;
  warmupS: number;
  durable: boolean;
  json: string | undefined;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '1h' },
      rate: { type: 'string', default: '250' },
      'console-rate': { type: 'string', default: '5' },
      'rotate-every': { type: 'string', default: '30' },
      'keys-rate': { type: 'string', default: '10' },
      flood: { type: 'string', default: '400' },
      'slow-ms': { type: 'string', default: '3000' },
      'sample-every': { type: 'string', default: '30' },
      warmup: { type: 'string', default: '10m' },
      durability: { type: 'string', default: 'durable' },
      json: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const options: Options = {
    duration: values.duration!,
    rate: Number(values.rate),
    consoleRate: Number(values['console-rate']),
    rotateEveryS: Number(values['rotate-every']),
    keysRate: Number(values['keys-rate']),
    flood: Number(values.flood),
    slowMs: Number(values['slow-ms']),
    sampleEveryS: Number(values['sample-every']),
    warmupS: seconds(values.warmup!),
    durable: values.durability === 'durable',
    json: values.json,
  };
  const problems: string[] = [];
  if (!/^(\d+(ms|s|m|h))+$/.test(options.duration) || seconds(options.duration) < 30) {
    problems.push('--duration must look like 1h or 3m (30s at least)');
  }
  for (const [name, value, min] of [
    ['--rate', options.rate, 20],
    ['--console-rate', options.consoleRate, 0],
    ['--rotate-every', options.rotateEveryS, 5],
    ['--keys-rate', options.keysRate, 1],
    ['--flood', options.flood, 0],
    ['--slow-ms', options.slowMs, 0],
    ['--sample-every', options.sampleEveryS, 1],
  ] as const) {
    if (!Number.isInteger(value) || value < min) problems.push(`${name} must be an integer of at least ${min}`);
  }
  if (!['durable', 'off'].includes(values.durability!)) problems.push('--durability must be durable or off');
  if (problems.length === 0 && k6Rates(options).ingest < 1) problems.push('--rate leaves k6 no fresh events');
  if (problems.length) {
    process.stderr.write(`${problems.join('\n')}\n`);
    process.exit(2);
  }
  return options;
}

/**
 * k6's share of --rate: what the rotating keys do not send, split as the full profile's mix (a quarter in batches of
 * 20, about 15 % replays, the rest fresh single events).
 */
function k6Rates(options: Options): { ingest: number; replay: number; batch: number; events: number } {
  const events = options.rate - options.keysRate - options.flood / options.rotateEveryS;
  const batch = Math.max(1, Math.round((events * 0.25) / 20));
  const replay = Math.round(events * 0.15);
  const ingest = Math.round(events - replay - batch * 20);
  return { ingest, replay, batch, events: ingest + replay + batch * 20 };
}

// ---------- the webhook receiver ----------

interface Receiver {
  url: string;
  delivered: { fast: number; slow: number };
  close(): void;
}

async function startReceiver(slowMs: number): Promise<Receiver> {
  const delivered = { fast: 0, slow: 0 };
  const server = createServer((request, response) => {
    const slow = request.url === '/slow';
    request.resume();
    request.on('end', () => {
      if (slow) {
        setTimeout(() => {
          delivered.slow += 1;
          response.writeHead(204).end();
        }, slowMs).unref();
      } else {
        delivered.fast += 1;
        response.writeHead(204).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    delivered,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

// ---------- the rotating tenants ----------

/** Requests the driver made, by what and status. */
class Tally {
  readonly counts = new Map<string, number>();
  add(what: string, status: number | string): void {
    const key = `${what} ${status}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
}

/** The fields of the console's and the link intents' answers the driver reads. */
interface Data {
  id: string;
  issuedKey: string;
  playerId: string;
}

interface Answer {
  status: number;
  data: Data | undefined;
  text: string;
}

/**
 * Each rotated game's budget: far more than its events spend (a credit each), small enough for the project's 1e11 to
 * fund a thousand games (eight hours of rotations every 30 s).
 */
const GAME_BUDGET_CREDITS = 100_000_000;

interface RotatedGame {
  index: number;
  id: string;
  keys: Array<{ id: string; value: string; revoked: boolean }>;
  players: string[];
  endpoints: string[];
  /** Event bodies sent, kept for replays (the last few). */
  sent: string[];
}

interface DriverFigures {
  rotations: number;
  developers: number;
  gamesCreated: number;
  gamesRetired: number;
  keysIssued: number;
  keysRevoked: number;
  endpointsCreated: number;
  endpointsDeleted: number;
  eventsSent: number;
  requests: Record<string, number>;
  webhooksDelivered: { fast: number; slow: number };
}

class Rotator {
  private readonly tally = new Tally();
  private readonly games: RotatedGame[] = [];
  private stopped = false;
  private figures = {
    rotations: 0,
    developers: 0,
    gamesCreated: 0,
    gamesRetired: 0,
    keysIssued: 0,
    keysRevoked: 0,
    endpointsCreated: 0,
    endpointsDeleted: 0,
    eventsSent: 0,
  };
  private projectId = '';
  private readonly running: Array<Promise<void>> = [];
  /** The key of a retired game, for a request now and then that the edge must refuse (401). */
  private lastRevoked: string | undefined;
  private readonly urls: { gateway: string; ingest: string; links: string };
  private readonly adminToken: string;
  private readonly rotatorToken: string;
  private readonly signDeveloper: (email: string) => Promise<string>;
  private readonly runId: string;
  private readonly receiver: Receiver;
  private readonly options: Options;

  constructor(
    urls: { gateway: string; ingest: string; links: string },
    tokens: { admin: string; rotator: string; signDeveloper: (email: string) => Promise<string> },
    runId: string,
    receiver: Receiver,
    options: Options,
  ) {
    this.urls = urls;
    this.adminToken = tokens.admin;
    this.rotatorToken = tokens.rotator;
    this.signDeveloper = tokens.signDeveloper;
    this.runId = runId;
    this.receiver = receiver;
    this.options = options;
  }

  private async request(
    what: string,
    url: string,
    init: { method?: string; token?: string; body?: unknown },
  ): Promise<Answer> {
    try {
      const response = await fetch(url, {
        method: init.method ?? 'GET',
        headers: {
          ...(init.token ? { Authorization: `Bearer ${init.token}` } : {}),
          ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      this.tally.add(what, response.status);
      let data: Data | undefined;
      try {
        data = (JSON.parse(text) as { data?: Data }).data;
      } catch {
        data = undefined;
      }
      return { status: response.status, data, text };
    } catch (error) {
      this.tally.add(what, (error as Error).name === 'TimeoutError' ? 'timeout' : 'error');
      return { status: 0, data: undefined, text: String(error) };
    }
  }

  private async act(action: Record<string, unknown>, token = this.rotatorToken): Promise<Data> {
    const answer = await this.request(`console:${action.type}`, `${this.urls.gateway}/api/developer/v1/console`, {
      method: 'POST',
      token,
      body: action,
    });
    if (answer.status !== 200 || !answer.data) {
      throw new Error(`console ${action.type}: ${answer.status} ${answer.text.slice(0, 300)}`);
    }
    return answer.data;
  }

  private async invite(email: string): Promise<void> {
    const answer = await this.request('admin:invitation', `${this.urls.gateway}/api/admin/v1/invitations`, {
      method: 'POST',
      token: this.adminToken,
      body: { email },
    });
    if (answer.status !== 201 && answer.status !== 200 && answer.status !== 409) {
      throw new Error(`invitation: ${answer.status} ${answer.text.slice(0, 300)}`);
    }
  }

  /** The rotator's own developer, organization and project (the games are its). */
  async prepare(email: string): Promise<void> {
    await this.invite(email);
    await this.request('access', `${this.urls.gateway}/api/developer/v1/access`, { token: this.rotatorToken });
    const organizationId = (await this.act({ type: 'createOrganization', name: `soak ${this.runId}` })).id;
    await this.act({ type: 'fundOrganization', organizationId, amountCredits: 100_000_000_000 });
    this.projectId = (
      await this.act({ type: 'createProject', organizationId, name: 'soak', maxPayoutCredits: 100_000_000_000 })
    ).id;
    await this.act({ type: 'allocateProject', projectId: this.projectId, amountCredits: 100_000_000_000 });
  }

  /** Rotations every --rotate-every and the live keys' events, until stop(). */
  start(): void {
    this.running.push(this.rotations(), this.trickle());
  }

  async stop(): Promise<DriverFigures> {
    this.stopped = true;
    await Promise.all(this.running);
    return {
      ...this.figures,
      requests: Object.fromEntries([...this.tally.counts].sort()),
      webhooksDelivered: { ...this.receiver.delivered },
    };
  }

  private async rotations(): Promise<void> {
    while (!this.stopped) {
      const started = Date.now();
      try {
        await this.rotate();
      } catch (error) {
        log(`rotation ${this.figures.rotations}: ${(error as Error).message}`);
      }
      const wait = this.options.rotateEveryS * 1000 - (Date.now() - started);
      for (let waited = 0; waited < wait && !this.stopped; waited += 500) await sleep(Math.min(500, wait - waited));
    }
  }

  private async rotate(): Promise<void> {
    const index = this.figures.rotations++;
    // A new developer: invited, admitted, reads the console over REST and GraphQL (developer limits, fair reads,
    // identity's verified tokens: one more subject and token each).
    const email = `soak-dev-${index}-${this.runId}@example.com`;
    await this.invite(email);
    const token = await this.signDeveloper(email);
    this.figures.developers += 1;
    await this.request('access', `${this.urls.gateway}/api/developer/v1/access`, { token });
    await this.request('console:snapshot', `${this.urls.gateway}/api/developer/v1/console`, { token });
    await this.request('graphql', `${this.urls.gateway}/graphql`, {
      method: 'POST',
      token,
      body: { query: '{ snapshot { mode organizations { id } } }' },
    });

    // A new game with its rule, key, players and webhook endpoints (every other game's also slow).
    const gameId = (
      await this.act({
        type: 'createGame',
        projectId: this.projectId,
        name: `soak ${index}`,
        platform: 'web',
        maxPayoutCredits: GAME_BUDGET_CREDITS,
        dailyPlayerCapCredits: 0,
      })
    ).id;
    this.figures.gamesCreated += 1;
    await this.act({ type: 'allocateGame', gameId, amountCredits: GAME_BUDGET_CREDITS });
    await this.act({ type: 'createRule', gameId, eventType: 'level_complete', rewardCredits: 1 });
    const key = await this.act({ type: 'issueKey', gameId, kind: 'secret', name: `soak ${index}` });
    this.figures.keysIssued += 1;
    const game: RotatedGame = {
      index,
      id: gameId,
      keys: [{ id: key.id, value: key.issuedKey, revoked: false }],
      players: [],
      endpoints: [],
      sent: [],
    };
    for (const path of index % 2 === 0 ? ['/fast'] : ['/fast', '/slow']) {
      const endpoint = await this.act({
        type: 'createWebhookEndpoint',
        gameId,
        url: `${this.receiver.url}${path}`,
        eventTypes: ['decision.accepted', 'decision.rejected'],
      });
      game.endpoints.push(endpoint.id);
      this.figures.endpointsCreated += 1;
    }
    for (let p = 0; p < 3; p++) {
      const intent = await this.request('link-intent', `${this.urls.links}/api/game-sdk/v2/link-intents`, {
        method: 'POST',
        token: key.issuedKey,
        body: { externalPlayerId: `soak-${this.runId}-${index}-${p}` },
      });
      if (intent.data?.playerId) game.players.push(intent.data.playerId);
    }
    // The rotator reads its new game's decisions over GraphQL.
    await this.request('graphql', `${this.urls.gateway}/graphql`, {
      method: 'POST',
      token: this.rotatorToken,
      body: {
        query: 'query D($g: UUID!) { decisions(gameId: $g, first: 10) { edges { cursor } } }',
        variables: { g: gameId },
      },
    });

    // The previous game's key is replaced: a new one issued, then the old one revoked.
    const previous = this.games.at(-1);
    if (previous) {
      const old = previous.keys.find((k) => !k.revoked);
      const fresh = await this.act({ type: 'issueKey', gameId: previous.id, kind: 'secret', name: 'rotated' });
      this.figures.keysIssued += 1;
      previous.keys.push({ id: fresh.id, value: fresh.issuedKey, revoked: false });
      if (old) {
        // Marked first: the trickle stops sending with it before the ledger refuses it.
        old.revoked = true;
        await this.act({ type: 'revokeKey', keyId: old.id });
        this.figures.keysRevoked += 1;
      }
    }
    this.games.push(game);
    // Games older than the last two are retired: their keys revoked, their endpoints deleted.
    while (this.games.length > 2) {
      const retired = this.games.shift()!;
      for (const k of retired.keys.filter((k) => !k.revoked)) {
        k.revoked = true;
        await this.act({ type: 'revokeKey', keyId: k.id });
        this.figures.keysRevoked += 1;
      }
      for (const webhookEndpointId of retired.endpoints) {
        await this.act({ type: 'deleteWebhookEndpoint', webhookEndpointId });
        this.figures.endpointsDeleted += 1;
      }
      this.figures.gamesRetired += 1;
      this.lastRevoked = retired.keys.at(-1)?.value;
    }

    // The new key floods once: batch requests of 100 events at once.
    if (game.players.length > 0 && this.options.flood > 0) {
      const requests = Math.ceil(this.options.flood / 100);
      await Promise.all(
        Array.from({ length: requests }, () =>
          this.batch(game, key.issuedKey, Math.min(100, this.options.flood / requests), 'flood'),
        ),
      );
    }
  }

  private body(game: RotatedGame): string {
    const text = JSON.stringify({
      eventId: randomUUID(),
      playerId: game.players[Math.floor(Math.random() * game.players.length)],
      eventType: 'level_complete',
      occurredAt: new Date().toISOString(),
      metadata: { source: 'soak' },
    });
    game.sent.push(text);
    if (game.sent.length > 20) game.sent.shift();
    return text;
  }

  private async post(what: string, path: string, key: string, body: string): Promise<number> {
    try {
      const response = await fetch(`${this.urls.ingest}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body,
        signal: AbortSignal.timeout(30_000),
      });
      await response.arrayBuffer();
      this.tally.add(what, response.status);
      return response.status;
    } catch (error) {
      this.tally.add(what, (error as Error).name === 'TimeoutError' ? 'timeout' : 'error');
      return 0;
    }
  }

  private async batch(game: RotatedGame, key: string, size: number, what: string): Promise<void> {
    const events = Array.from({ length: size }, () => JSON.parse(this.body(game)));
    this.figures.eventsSent += size;
    await this.post(what, '/api/game-sdk/v2/events/batch', key, JSON.stringify({ events }));
  }

  /** The live keys' events at --keys-rate: single events, batches of 5, replays; a revoked key's request now and then. */
  private async trickle(): Promise<void> {
    const tickMs = 100;
    const perTick = this.options.keysRate / (1000 / tickMs);
    let owed = 0;
    let tick = 0;
    const inFlight = new Set<Promise<unknown>>();
    while (!this.stopped) {
      const started = Date.now();
      owed += perTick;
      tick += 1;
      const live = this.games.flatMap((game) =>
        game.players.length === 0 ? [] : game.keys.filter((k) => !k.revoked).map((k) => ({ game, key: k.value })),
      );
      while (owed >= 1 && live.length > 0 && inFlight.size < 64) {
        const { game, key } = live[Math.floor(Math.random() * live.length)]!;
        const roll = Math.random();
        let sent: Promise<unknown>;
        if (roll < 0.1 && owed >= 5) {
          owed -= 5;
          sent = this.batch(game, key, 5, 'keys:batch');
        } else if (roll < 0.2 && game.sent.length > 0) {
          owed -= 1;
          this.figures.eventsSent += 1;
          sent = this.post('keys:replay', '/api/game-sdk/v2/events', key, game.sent[0]!);
        } else {
          owed -= 1;
          this.figures.eventsSent += 1;
          sent = this.post('keys:event', '/api/game-sdk/v2/events', key, this.body(game));
        }
        inFlight.add(sent);
        void sent.finally(() => inFlight.delete(sent));
      }
      if (tick % 50 === 0 && this.lastRevoked && live.length > 0) {
        const body = this.body(live[0]!.game);
        const sent = this.post('keys:revoked', '/api/game-sdk/v2/events', this.lastRevoked, body);
        inFlight.add(sent);
        void sent.finally(() => inFlight.delete(sent));
      }
      if (live.length === 0) owed = 0;
      await sleep(Math.max(0, tickMs - (Date.now() - started)));
    }
    await Promise.all(inFlight);
  }

  /** One event of a live key (after the idle wait: the flood pacer forgets idle keys when a call ends). */
  async oneEvent(): Promise<number> {
    const game = this.games.findLast((g) => g.players.length > 0 && g.keys.some((k) => !k.revoked));
    const key = game?.keys.find((k) => !k.revoked);
    if (!game || !key) return 0;
    return this.post('keys:event', '/api/game-sdk/v2/events', key.value, this.body(game));
  }
}

// ---------- samples ----------

interface Sample {
  /** Seconds since the start of the load (k6's setup done); negative before. */
  t: number;
  at: string;
  loadAverage1m: number;
  /** VmRSS, MiB, by process. */
  rss: Record<string, number>;
  /** RssAnon (VmRSS without file-backed pages: the binary's code read in as it runs), MiB, by process. */
  rssAnon: Record<string, number>;
  /** V8 heap used, MiB, by program. */
  heapUsed: Record<string, number>;
  /** Active handles (mostly sockets: the edges' count follows k6's connections), by program. */
  handles: Record<string, number>;
  /** runtime_collection_entries by `program collection`. */
  collections: Record<string, number>;
}

async function metricsText(url: string): Promise<string> {
  try {
    return await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  } catch {
    return '';
  }
}

function collectionsOf(text: string, into: Record<string, number>): void {
  for (const m of text.matchAll(/^runtime_collection_entries\{program="([^"]+)",collection="([^"]+)"\} (\S+)$/gm)) {
    into[`${m[1]} ${m[2]}`] = Number(m[3]);
  }
}

async function takeSample(
  t: number,
  processes: Array<{ name: string; pid: number }>,
  programUrls: Record<string, string>,
): Promise<Sample> {
  const rss: Record<string, number> = {};
  const rssAnon: Record<string, number> = {};
  for (const p of processes) {
    rss[p.name] = rssMiB(p.pid, 'VmRSS');
    rssAnon[p.name] = rssMiB(p.pid, 'RssAnon');
  }
  const heapUsed: Record<string, number> = {};
  const handles: Record<string, number> = {};
  const collections: Record<string, number> = {};
  for (const [name, url] of Object.entries(programUrls)) {
    const text = await metricsText(url);
    const heap = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1];
    if (heap !== undefined) heapUsed[name] = Number(heap) / 1048576;
    const active = /^nodejs_active_handles_total (\S+)$/m.exec(text)?.[1];
    if (active !== undefined) handles[name] = Number(active);
    collectionsOf(text, collections);
  }
  return {
    t,
    at: new Date().toISOString(),
    loadAverage1m: machine().loadAverage1m,
    rss,
    rssAnon,
    heapUsed,
    handles,
    collections,
  };
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx === 0 ? Number.NaN : sxy / sxx;
}

/** The programs' HTTP answers by program and status (http_requests_total, probes and /metrics left out). */
function statusCounts(texts: Record<string, string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [name, text] of Object.entries(texts)) {
    for (const m of text.matchAll(
      /^http_requests_total\{program="[^"]+",method="[^"]+",route="([^"]+)",status="(\d+)"\} (\S+)$/gm,
    )) {
      if (['/healthz', '/readyz', '/metrics'].includes(m[1]!)) continue;
      const key = `${name} ${m[2]}`;
      counts[key] = (counts[key] ?? 0) + Number(m[3]);
    }
  }
  return counts;
}

interface ScenarioFigures {
  requests: number;
  failedRate: number;
  p50: number;
  p99: number;
}

function scenarios(summary: K6Summary | undefined): Record<string, ScenarioFigures> {
  const out: Record<string, ScenarioFigures> = {};
  const m = summary?.metrics ?? {};
  for (const name of ['ingest', 'replay', 'batch', 'console']) {
    const duration = m[`http_req_duration{scenario:${name}}`]?.values;
    const failed = m[`http_req_failed{scenario:${name}}`]?.values;
    if (!duration) continue;
    out[name] = {
      requests: (failed?.passes ?? 0) + (failed?.fails ?? 0),
      failedRate: failed?.rate ?? Number.NaN,
      p50: duration.med ?? Number.NaN,
      p99: duration['p(99)'] ?? Number.NaN,
    };
  }
  return out;
}

async function largestTables(databaseUrl: string): Promise<Array<{ table: string; rows: number; mib: number }>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('analyze');
    const { rows } = await client.query<{ table: string; rows: string; bytes: string }>(
      `select schemaname || '.' || relname as table, n_live_tup::text as rows,
              pg_total_relation_size(relid)::text as bytes
         from pg_stat_user_tables order by pg_total_relation_size(relid) desc limit 10`,
    );
    return rows.map((r) => ({ table: r.table, rows: Number(r.rows), mib: Number(r.bytes) / 1048576 }));
  } finally {
    await client.end();
  }
}

// ---------- the run ----------

async function main(): Promise<void> {
  const options = readOptions();
  const k6 = ensureK6(log);
  const rates = k6Rates(options);
  const before = machine();
  const runId = randomBytes(4).toString('hex');
  const resultsDir = resolve('load/results/soak');
  mkdirSync(resultsDir, { recursive: true });
  const samplesFile = join(resultsDir, `samples-${runId}.jsonl`);
  log(
    `${k6Version(k6)}; --duration ${options.duration} at ${options.rate} events/s: k6 ${rates.ingest} fresh + ` +
      `${rates.replay} replays + ${rates.batch} batches of 20 (${rates.events}/s) and ${options.consoleRate} console reads/s; ` +
      `the rotating keys ${options.keysRate}/s and a flood of ${options.flood} per rotation every ${options.rotateEveryS} s; ` +
      `load average ${before.loadAverage1m.toFixed(2)}; samples in ${samplesFile}`,
  );

  const receiver = await startReceiver(options.slowMs);
  const identity = await createLoadIdentity(runId, 10);
  const adminToken = randomBytes(24).toString('hex');
  const system = await startLoadSystem({
    mode: 'programs',
    env: {
      ...identity.env,
      ADMIN_TOKEN: adminToken,
      NATIVE_ADMISSION_MODE: 'enforce',
      EVENT_RATE_LIMIT_PER_MINUTE: '1000000',
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
    },
    logDir: join(resultsDir, 'logs'),
    log,
    durable: options.durable,
  });
  let stopping: Promise<void> | undefined;
  const stopAll = () => {
    stopping ??= system.stop().finally(() => receiver.close());
    return stopping;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the service`);
      void stopAll().finally(() => process.exit(130));
    });
  }
  try {
    const rotatorEmail = `soak-rotator-${runId}@example.com`;
    const rotator = new Rotator(
      system.urls,
      { admin: adminToken, rotator: await identity.signDeveloper(rotatorEmail), signDeveloper: identity.signDeveloper },
      runId,
      receiver,
      options,
    );
    await rotator.prepare(rotatorEmail);

    const processes = [...system.processes];
    const samples: Sample[] = [];
    let loadStart: number | undefined;
    const sampleNow = async () => {
      const t = loadStart === undefined ? -1 : (Date.now() - loadStart) / 1000;
      const sample = await takeSample(t, processes, system.programUrls);
      samples.push(sample);
      appendFileSync(samplesFile, `${JSON.stringify(sample)}\n`);
      return sample;
    };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const started = Date.now();
        const s = await sampleNow();
        if (s.t >= 0) {
          const rss = Object.entries(s.rss)
            .map(([n, v]) => `${n} ${v.toFixed(0)}`)
            .join(', ');
          log(`t=${(s.t / 60).toFixed(1)} min RSS MiB ${rss}; load ${s.loadAverage1m.toFixed(2)}`);
        }
        for (let waited = Date.now() - started; waited < options.sampleEveryS * 1000 && sampling; waited += 250) {
          await sleep(250);
        }
      }
    })();

    const k6Result = await runK6(
      k6,
      {
        BASE_URL: system.urls.gateway,
        GATEWAY_URL: system.urls.gateway,
        INGEST_URL: system.urls.ingest,
        LINKS_URL: system.urls.links,
        DEV_TOKEN: identity.developerToken,
        NATIVE_TOKENS: JSON.stringify(identity.nativeSessions),
        ADMIN_TOKEN: adminToken,
        EVENT_RATE_LIMIT_PER_MINUTE: '1000000',
        DURATION: options.duration,
        INGEST_RATE: String(rates.ingest),
        REPLAY_RATE: String(rates.replay),
        BATCH_RATE: String(rates.batch),
        BATCH_SIZE: '20',
        CONSOLE_RATE: String(options.consoleRate),
        PEAK_RATE: '0',
        // A busy minute on a shared machine must not end the hour: failures are counted and reported instead.
        ABORT_ON_FAIL: 'false',
      },
      {
        resultsDir,
        profile: 'full',
        quiet: true,
        onStart: (pid) => processes.push({ name: 'k6', pid }),
        onLogLine: (line) => {
          if (loadStart === undefined && line.includes('setup: done')) {
            loadStart = Date.now();
            log('k6 setup done: the load starts, and the rotations');
            rotator.start();
          }
        },
      },
    );
    const loadSeconds = loadStart === undefined ? 0 : (Date.now() - loadStart) / 1000;
    const driver = await rotator.stop();
    log(`k6 exited with ${k6Result.exitCode} after ${(loadSeconds / 60).toFixed(1)} min of load`);
    sampling = false;
    await sampler;
    const k6Index = processes.findIndex((p) => p.name === 'k6');
    if (k6Index >= 0) processes.splice(k6Index, 1);
    const atEnd = await sampleNow();
    // Idle, then one event: the flood pacer forgets idle keys when a call ends.
    await sleep(15_000);
    const oneEvent = await rotator.oneEvent();
    await sleep(1_000);
    const afterIdle = await sampleNow();
    const texts: Record<string, string> = {};
    for (const [name, url] of Object.entries(system.programUrls)) texts[name] = await metricsText(url);
    const statuses = statusCounts(texts);
    const tables = await largestTables(system.databaseUrl);
    const after = machine();
    const loadavg = osLoadavg();

    // ---------- figures ----------
    const names = Object.keys(samples[0]?.rss ?? {}).filter((n) => n !== 'k6');
    const underLoad = samples.filter((s) => s.t >= 0 && s.t <= loadSeconds + 1);
    const measured = underLoad.filter((s) => s.t >= Math.min(options.warmupS, loadSeconds / 3));
    const warmupUsedS = Math.min(options.warmupS, loadSeconds / 3);
    const rssFigures = Object.fromEntries(
      names.map((name) => {
        const values = underLoad.map((s) => s.rss[name]!).filter(Number.isFinite);
        const points = measured
          .filter((s) => Number.isFinite(s.rss[name]))
          .map((s) => [s.t / 3600, s.rss[name]!] as [number, number]);
        const anon = measured
          .filter((s) => Number.isFinite(s.rssAnon[name]))
          .map((s) => [s.t / 3600, s.rssAnon[name]!] as [number, number]);
        const heap = measured
          .filter((s) => Number.isFinite(s.heapUsed[name]))
          .map((s) => [s.t / 3600, s.heapUsed[name]!] as [number, number]);
        return [
          name,
          {
            first: values[0] ?? Number.NaN,
            last: values.at(-1) ?? Number.NaN,
            max: Math.max(...values),
            slopeMiBPerHour: slope(points),
            anonFirst: anon[0]?.[1] ?? Number.NaN,
            anonLast: anon.at(-1)?.[1] ?? Number.NaN,
            anonSlopeMiBPerHour: slope(anon),
            heapSlopeMiBPerHour: slope(heap),
            heapFirst: heap[0]?.[1] ?? Number.NaN,
            heapLast: heap.at(-1)?.[1] ?? Number.NaN,
          },
        ];
      }),
    );
    const k6Rss = samples.map((s) => s.rss.k6).filter((v): v is number => v !== undefined && Number.isFinite(v));
    const collectionNames = [...new Set(samples.flatMap((s) => Object.keys(s.collections)))].sort();
    const collections = Object.fromEntries(
      collectionNames.map((name) => [
        name,
        {
          end: atEnd.collections[name] ?? Number.NaN,
          max: Math.max(...underLoad.map((s) => s.collections[name] ?? 0)),
          afterIdle: afterIdle.collections[name] ?? Number.NaN,
        },
      ]),
    );
    const loads = underLoad.map((s) => s.loadAverage1m);
    const k6Scenarios = scenarios(k6Result.summary);
    const httpReqs = k6Result.summary?.metrics?.http_reqs?.values?.count ?? Number.NaN;
    const decisions = k6Result.summary?.metrics?.ingest_decisions?.values?.count ?? Number.NaN;
    // k6 adds VUs when answers slow (up to each scenario's maxVUs), each with its own keep-alive connection, and keeps
    // them to the end: the edges' sockets, and their memory, follow the most it needed.
    const vusMax = k6Result.summary?.metrics?.vus_max?.values?.max ?? Number.NaN;
    const handlesAt = (s: Sample | undefined) =>
      Object.entries(s?.handles ?? {})
        .map(([n, v]) => `${n} ${v}`)
        .join(', ');

    const f = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
    const lines = [
      '',
      `npm run bench:soak: ${before.cpus} x ${before.cpuModel}; ${(loadSeconds / 60).toFixed(1)} min of load ` +
        `(--duration ${options.duration}) at ${options.rate} events/s (k6 ${rates.ingest} fresh, ${rates.replay} replays, ` +
        `${rates.batch} x 20 in batches, ${options.consoleRate} console reads/s; rotating keys ${options.keysRate}/s ` +
        `and ${options.flood} per rotation); ${driver.rotations} rotations every ${options.rotateEveryS} s; ` +
        `PostgreSQL ${options.durable ? 'durable' : 'fsync off'}`,
      `load average (1 min) ${f(before.loadAverage1m, 2)} before, ${f(Math.min(...loads), 2)}-${f(Math.max(...loads), 2)} ` +
        `(mean ${f(loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length), 2)}) under load, ` +
        `${loadavg.map((v) => v.toFixed(2)).join(' / ')} (1/5/15 min) at the end`,
      '',
      `RSS (VmRSS, MiB; ${underLoad.length} samples every ${options.sampleEveryS} s; slope: least squares over the ` +
        `${measured.length} samples after ${f(warmupUsedS / 60, 1)} min)`,
      '',
      '| process | first | last | max | slope MiB/h | anonymous (RssAnon) first / last, slope MiB/h | V8 heap used first / last MiB | heap slope MiB/h |',
      '|---|---|---|---|---|---|---|---|',
      ...names.map((name) => {
        const r = rssFigures[name]!;
        return `| ${name} | ${f(r.first)} | ${f(r.last)} | ${f(r.max)} | ${f(r.slopeMiBPerHour, 1)} | ${f(r.anonFirst)} / ${f(r.anonLast)}, ${f(r.anonSlopeMiBPerHour, 1)} | ${f(r.heapFirst)} / ${f(r.heapLast)} | ${f(r.heapSlopeMiBPerHour, 1)} |`;
      }),
      `| k6 (the driver) | ${f(k6Rss[0] ?? Number.NaN)} | ${f(k6Rss.at(-1) ?? Number.NaN)} | ${f(Math.max(...k6Rss))} | | | | |`,
      '',
      'Collections (runtime_collection_entries): at the end of the load, the most under load, after 15 s idle and one event',
      '',
      '| program collection | end | max | after idle |',
      '|---|---|---|---|',
      ...collectionNames.map((name) => {
        const c = collections[name]!;
        return `| ${name} | ${f(c.end)} | ${f(c.max)} | ${f(c.afterIdle)} |`;
      }),
      '',
      `k6: exit ${k6Result.exitCode}; ${f(httpReqs)} requests, ${f(decisions)} decisions; at most ${f(vusMax)} VUs ` +
        `(each its own connection); the programs' active handles first: ${handlesAt(underLoad[0])}; last under load: ` +
        `${handlesAt(underLoad.at(-1))}`,
      '',
      '| scenario | requests | failed | p50 ms | p99 ms |',
      '|---|---|---|---|---|',
      ...Object.entries(k6Scenarios).map(
        ([name, s]) => `| ${name} | ${s.requests} | ${f(s.failedRate * 100, 2)} % | ${f(s.p50, 1)} | ${f(s.p99, 1)} |`,
      ),
      '',
      `the programs' answers by status (all routes but probes and /metrics): ${Object.entries(statuses)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')}`,
      `the driver: ${driver.developers} developers, ${driver.gamesCreated} games (${driver.gamesRetired} retired), ` +
        `${driver.keysIssued} keys issued, ${driver.keysRevoked} revoked, ${driver.endpointsCreated} webhook endpoints ` +
        `(${driver.endpointsDeleted} deleted), ${driver.eventsSent} events; webhooks delivered ${driver.webhooksDelivered.fast} ` +
        `fast, ${driver.webhooksDelivered.slow} slow (${options.slowMs} ms); the event after idle: ${oneEvent}`,
      `the driver's requests: ${Object.entries(driver.requests)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')}`,
      '',
      'the largest tables at the end',
      '',
      '| table | rows | MiB |',
      '|---|---|---|',
      ...tables.map((t) => `| ${t.table} | ${t.rows} | ${f(t.mib, 1)} |`),
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    if (options.json) {
      writeFileSync(
        options.json,
        JSON.stringify(
          {
            options,
            rates,
            machine: { before, after, loadavg },
            loadSeconds,
            rss: rssFigures,
            collections,
            k6: { exitCode: k6Result.exitCode, httpReqs, decisions, vusMax, scenarios: k6Scenarios },
            statuses,
            driver,
            tables,
            samples,
          },
          null,
          2,
        ),
      );
    }
  } finally {
    await stopAll();
  }
}

await main();
