// The histories of a phase for the independent checker (test/faults/checker, Porcupine): every request and its answer
// with call and return times, as operations of a register per event and of a bank per game, plus the funding changes
// made during the phase and reads of the games' state before and after it. The checker is a Go program built here
// with `go build` (once per source version, cached) and given the histories on standard input.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type pg from 'pg';
import { decisionOf, rowKey, type StoredRow } from './checks.ts';
import type { SentRequest } from './load.ts';

const run = promisify(execFile);

export const CHECKER_DIR = resolve(import.meta.dirname, 'checker');

export interface HistoryOp {
  /** Microseconds; the answer's time is widened to the end of its millisecond (the clock's resolution). */
  call: number;
  /** null: no answer that tells whether it took effect (a 503 or none): it may take effect at any time after its call. */
  return: number | null;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
}

export interface HistoryPartition {
  key: string;
  initial?: GameState;
  ops: HistoryOp[];
}

export interface Histories {
  registers: HistoryPartition[];
  banks: HistoryPartition[];
  /** Porcupine's time limit per partition; a partition not decided within it counts as failed (Unknown). */
  timeoutMs?: number;
}

export interface GameState {
  spent: number;
  budget: number;
}

/** A change of a game's budget made during the phase (the console's allocateGame), with its outcome. */
export interface FundingChange {
  gameId: string;
  amountCredits: number;
  sentAt: number;
  answeredAt: number;
  /** ok: answered 200; failed: answered with an error that says nothing changed (4xx); unknown: 503 or no answer. */
  outcome: 'ok' | 'failed' | 'unknown';
}

export interface GameRead {
  gameId: string;
  /** When the read's query was sent and answered. */
  sentAt: number;
  answeredAt: number;
  state: GameState;
}

export interface CheckerResult {
  registers: number;
  banks: number;
  ok: boolean;
  failures: Array<{ model: string; key: string; result: string; ops: string[] }>;
}

const microsCall = (ms: number) => ms * 1000;
const microsReturn = (ms: number) => ms * 1000 + 999;

/** A request that may or may not have decided: a 503, no answer, or an answer that is not a well-formed decision. */
function undecided(r: SentRequest): boolean {
  if (r.failure !== undefined) return true;
  if (r.answer!.status === 409) return false;
  return decisionOf(r) === undefined;
}

/**
 * The phase's histories: a register per event (every copy sent, retried and replayed) and a bank per game (the fresh
 * decisions that accept or refuse for the budget, the requests without a known outcome, the funding changes, and the
 * reads before and after). Operations that change nothing in any state (other refusals, replays, conflicts) are left
 * out of the banks: they can always be placed, and the checks stay small.
 *
 * With `stored` (the decisions stored after the phase, read after the final reads), the banks are sharper and much
 * smaller: a request of unknown outcome moved a balance only if its event is stored as accepted (with its payload) and
 * no request was answered that decision as fresh; then its event's earliest such request is an acceptance that may
 * take effect at any time after its call, and the event's other ones change nothing. Without it, each may or may not
 * have accepted (Porcupine then has 2^n orders to try for n of them, too many after a long cut).
 */
export function buildHistories(
  requests: SentRequest[],
  rewardCredits: number,
  initial: GameRead[],
  fundings: FundingChange[],
  final: GameRead[],
  stored?: Map<string, StoredRow>,
): Histories {
  const registers = new Map<string, HistoryOp[]>();
  const banks = new Map<string, HistoryOp[]>();
  const push = (map: Map<string, HistoryOp[]>, key: string, op: HistoryOp) => {
    const list = map.get(key);
    if (list) list.push(op);
    else map.set(key, [op]);
  };
  const answeredFresh = new Set<string>();
  for (const r of requests) {
    const d = decisionOf(r);
    if (d && !d.replayed) answeredFresh.add(rowKey(r.copy.gameId, r.copy.eventId));
  }
  /** Events decided by a request of unknown outcome: the earliest such request's call. */
  const decidedUnseen = new Map<string, { gameId: string; call: number }>();
  for (const r of requests) {
    const call = microsCall(r.sentAt);
    const unknown = undecided(r);
    const ret = unknown ? null : microsReturn(r.answeredAt!);
    const d = decisionOf(r);
    const registerOutput = unknown
      ? { kind: 'unknown' }
      : r.answer!.status === 409
        ? { kind: 'conflict' }
        : {
            kind: 'decision',
            value: JSON.stringify({ ...d, replayed: undefined }),
            replayed: d!.replayed,
          };
    push(registers, rowKey(r.copy.gameId, r.copy.eventId), {
      call,
      return: ret,
      input: { hash: r.copy.hash },
      output: registerOutput,
    });
    let bankKind: string | undefined;
    if (unknown && stored) {
      const key = rowKey(r.copy.gameId, r.copy.eventId);
      const row = stored.get(key);
      if (row?.status === 'accepted' && row.hash === r.copy.hash && !answeredFresh.has(key)) {
        const earliest = decidedUnseen.get(key);
        if (!earliest || call < earliest.call) decidedUnseen.set(key, { gameId: r.copy.gameId, call });
      }
    } else if (unknown) bankKind = 'unknown';
    else if (d && !d.replayed) {
      if (d.status === 'accepted') bankKind = 'accepted';
      else if (d.reason === 'game_budget_exhausted') bankKind = 'exhausted';
    }
    if (bankKind) {
      push(banks, r.copy.gameId, {
        call,
        return: ret,
        input: { kind: 'event', reward: rewardCredits },
        output: { kind: bankKind },
      });
    }
  }
  for (const { gameId, call } of decidedUnseen.values()) {
    push(banks, gameId, {
      call,
      return: null,
      input: { kind: 'event', reward: rewardCredits },
      output: { kind: 'accepted' },
    });
  }
  for (const f of fundings) {
    push(banks, f.gameId, {
      call: microsCall(f.sentAt),
      return: f.outcome === 'unknown' ? null : microsReturn(f.answeredAt),
      input: { kind: 'fund', amount: f.amountCredits },
      output: { kind: f.outcome },
    });
  }
  for (const read of final) {
    push(banks, read.gameId, {
      call: microsCall(read.sentAt),
      return: microsReturn(read.answeredAt),
      input: { kind: 'read' },
      output: { kind: 'read', ...read.state },
    });
  }
  return {
    registers: [...registers].map(([key, ops]) => ({ key, ops })),
    banks: initial.map((read) => ({ key: read.gameId, initial: read.state, ops: banks.get(read.gameId) ?? [] })),
  };
}

/** The checker's binary, built from test/faults/checker once per version of its sources (kept in node_modules/.cache). */
export async function checkerBinary(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(CHECKER_DIR, file)));
  const dir = resolve('node_modules/.cache/sandbox-rewards');
  const binary = join(dir, `faults-checker-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const output = `${binary}.${process.pid}`;
  await run('go', ['build', '-o', output, '.'], { cwd: CHECKER_DIR, timeout: 300_000 });
  await run('mv', [output, binary]);
  return binary;
}

/** Runs the checker on the histories; rejects when it cannot read them (exit status 2) or does not run. */
export async function checkHistories(histories: Histories): Promise<CheckerResult> {
  const binary = await checkerBinary();
  return new Promise((done, fail) => {
    const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code === 0 || code === 1) done(JSON.parse(stdout) as CheckerResult);
      else fail(new Error(`the checker exited ${code}: ${stderr.trim()}`));
    });
    child.stdin.end(JSON.stringify(histories));
  });
}

/** Every game's spent and budget now, as one read (its query's send and answer times). */
export async function readGames(client: pg.Client, gameIds: string[]): Promise<GameRead[]> {
  const sentAt = Date.now();
  const { rows } = await client.query<{ id: string; spent: string; budget: string }>(
    `select id, spent_credits::text as spent, budget_credits::text as budget from ledger.games where id = any($1::uuid[])`,
    [gameIds],
  );
  const answeredAt = Date.now();
  return rows.map((row) => ({
    gameId: row.id,
    sentAt,
    answeredAt,
    state: { spent: Number(row.spent), budget: Number(row.budget) },
  }));
}

/**
 * A funding change through the console, as a developer makes it: `allocateProject` (from the organization's balance),
 * then `allocateGame` of the same amount to the game; the latter is the bank's operation. Undefined when the first
 * step did not answer 200 (the game's budget was not touched).
 */
export async function fundGame(
  gatewayUrl: string,
  developerToken: string,
  projectId: string,
  gameId: string,
  amountCredits: number,
  timeoutMs: number,
): Promise<FundingChange | undefined> {
  const action = async (body: Record<string, unknown>): Promise<FundingChange['outcome']> => {
    try {
      const response = await fetch(`${gatewayUrl}/api/developer/v1/console`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${developerToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.arrayBuffer();
      if (response.status === 200) return 'ok';
      // A refusal (4xx) changed nothing; a 503 or another 5xx may have.
      return response.status >= 400 && response.status < 500 ? 'failed' : 'unknown';
    } catch {
      return 'unknown';
    }
  };
  if ((await action({ type: 'allocateProject', projectId, amountCredits })) !== 'ok') return undefined;
  const sentAt = Date.now();
  const outcome = await action({ type: 'allocateGame', gameId, amountCredits });
  return { gameId, amountCredits, sentAt, answeredAt: Date.now(), outcome };
}
