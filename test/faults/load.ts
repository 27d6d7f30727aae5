// Bounded open-model load of game events (POST /api/game-sdk/v2/events on the ingest program): arrivals at a fixed
// rate, at most `maxInFlight` requests outstanding (an arrival finding them all busy is skipped and counted, as
// k6's constant-arrival-rate does), a share of exact duplicates (the same bytes again, often while the first copy is
// still in flight) and of conflicting copies (the same eventId with another payload). Every request and its answer
// are recorded for the checks. Optionally a share of the arrivals are batch requests (POST .../events/batch: a few
// fresh events of one game, sometimes with an exact copy of a recent event of that game), each event of a batch
// recorded as a request of its own with its item of the answer.
import { randomUUID } from 'node:crypto';
import { payloadHash } from '../../services/ingest/src/domain/canonical-json.ts';
import { EVENT_TYPE, type FixtureGame, type Fixtures } from './fixtures.ts';

export const EVENTS_PATH = '/api/game-sdk/v2/events';
export const EVENTS_BATCH_PATH = '/api/game-sdk/v2/events/batch';

export type SendKind = 'fresh' | 'duplicate' | 'conflict' | 'retry' | 'replay';

export interface EventCopy {
  gameId: string;
  secret: string;
  eventId: string;
  /** The exact bytes sent. */
  body: string;
  /** SHA-256 (hex) of the RFC 8785 form of the body: the service's payload identity. */
  hash: string;
}

export interface Answer {
  status: number;
  /** Parsed JSON, or the raw text when it was not JSON. */
  body: unknown;
  retryAfter: string | null;
}

export interface SentRequest {
  seq: number;
  kind: SendKind;
  copy: EventCopy;
  /** Wall clock (ms since epoch), comparable with the database's timestamps on this machine. */
  sentAt: number;
  answeredAt?: number;
  answer?: Answer;
  /** Set when no answer came within the client's timeout, or the connection failed. */
  failure?: string;
  /** For retries and replays: the request they repeat. */
  of?: SentRequest;
  /** Sent in a batch request: the batch's number (the events of one batch share it) and the copy's index in it. */
  batch?: { id: number; index: number; size: number };
}

export interface LoadOptions {
  ingestUrl: string;
  fixtures: Fixtures;
  ratePerSecond: number;
  maxInFlight: number;
  duplicateShare: number;
  conflictShare: number;
  timeoutMs: number;
  /** Share of the arrivals that are batch requests (default 0). */
  batchShare?: number;
  /** Fresh events per batch request (default 4), plus sometimes a duplicate. */
  batchSize?: number;
}

let sequence = 0;

function pickGame(games: FixtureGame[]): FixtureGame {
  let r = Math.random();
  for (const game of games) {
    r -= game.weight;
    if (r < 0) return game;
  }
  return games[games.length - 1]!;
}

export function freshCopy(game: FixtureGame, phase: string): EventCopy {
  const body = {
    eventId: randomUUID(),
    playerId: game.players[Math.floor(Math.random() * game.players.length)]!,
    eventType: EVENT_TYPE,
    occurredAt: new Date().toISOString(),
    metadata: { suite: 'faults', phase },
  };
  return copyOf(game, body);
}

function copyOf(game: { id: string; secret: string }, body: { eventId: string; [k: string]: unknown }): EventCopy {
  return {
    gameId: game.id,
    secret: game.secret,
    eventId: body.eventId,
    body: JSON.stringify(body),
    hash: payloadHash(body).toString('hex'),
  };
}

/** The same eventId with another payload (another metadata value). */
function conflictingCopy(original: EventCopy): EventCopy {
  const body = JSON.parse(original.body) as { eventId: string; metadata: Record<string, unknown> };
  body.metadata = { ...body.metadata, conflicting: randomUUID().slice(0, 8) };
  return copyOf({ id: original.gameId, secret: original.secret }, body);
}

/** Sends one copy; never throws: a timeout or a connection failure is recorded as `failure`. */
export async function send(
  ingestUrl: string,
  copy: EventCopy,
  kind: SendKind,
  timeoutMs: number,
  of?: SentRequest,
): Promise<SentRequest> {
  const request: SentRequest = { seq: sequence++, kind, copy, sentAt: Date.now(), ...(of ? { of } : {}) };
  try {
    const response = await fetch(`${ingestUrl}${EVENTS_PATH}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${copy.secret}`, 'Content-Type': 'application/json' },
      body: copy.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text; the checks report it as malformed
    }
    request.answer = { status: response.status, body, retryAfter: response.headers.get('retry-after') };
  } catch (error) {
    const e = error as Error;
    request.failure =
      e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `request failed: ${e.cause ?? e.message}`;
  }
  request.answeredAt = Date.now();
  return request;
}

let batches = 0;

/**
 * Sends the copies (all of one game) as one batch request; never throws. Answers one SentRequest per copy: its item of
 * the answer (`{data}` or `{error}`, its status), or the whole answer when the request as a whole was refused, or the
 * failure.
 */
export async function sendBatch(
  ingestUrl: string,
  copies: EventCopy[],
  kinds: SendKind[],
  timeoutMs: number,
): Promise<SentRequest[]> {
  const id = batches++;
  const sentAt = Date.now();
  const requests: SentRequest[] = copies.map((copy, index) => ({
    seq: sequence++,
    kind: kinds[index]!,
    copy,
    sentAt,
    batch: { id, index, size: copies.length },
  }));
  try {
    const response = await fetch(`${ingestUrl}${EVENTS_BATCH_PATH}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${copies[0]!.secret}`, 'Content-Type': 'application/json' },
      body: `{"events":[${copies.map((c) => c.body).join(',')}]}`,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text; the checks report it as malformed
    }
    const retryAfter = response.headers.get('retry-after');
    const results = (body as { data?: { results?: unknown } } | undefined)?.data?.results;
    for (const [index, request] of requests.entries()) {
      const item = Array.isArray(results) ? (results[index] as Record<string, unknown> | undefined) : undefined;
      if (response.status === 200 && item && typeof item === 'object') {
        const { status, ...rest } = item;
        request.answer = { status: typeof status === 'number' ? status : -1, body: rest, retryAfter };
      } else {
        request.answer = { status: response.status, body, retryAfter };
      }
    }
  } catch (error) {
    const e = error as Error;
    const failure =
      e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `request failed: ${e.cause ?? e.message}`;
    for (const request of requests) request.failure = failure;
  }
  const answeredAt = Date.now();
  for (const request of requests) request.answeredAt = answeredAt;
  return requests;
}

export interface RunningLoad {
  /** Every request sent so far, in order of sending. */
  sent: SentRequest[];
  /** Sends `count` fresh events at once, beyond the rate and the in-flight cap (to have requests in flight). */
  burst(count: number): void;
  skipped(): number;
  /** Stops new arrivals and waits for the requests in flight. */
  stop(): Promise<void>;
}

export function startLoad(options: LoadOptions, phase: string): RunningLoad {
  const sent: SentRequest[] = [];
  const recent: EventCopy[] = [];
  const pending = new Set<Promise<void>>();
  let skipped = 0;
  let stopped = false;
  const startedAt = performance.now();
  let arrivals = 0;

  const arrive = (burst = false) => {
    if (!burst && pending.size >= options.maxInFlight) {
      skipped++;
      return;
    }
    if (!burst && options.batchShare && Math.random() < options.batchShare) {
      const game = pickGame(options.fixtures.games);
      const copies = Array.from({ length: options.batchSize ?? 4 }, () => freshCopy(game, phase));
      const kinds: SendKind[] = copies.map(() => 'fresh');
      const ofGame = recent.filter((c) => c.gameId === game.id);
      if (ofGame.length > 0 && Math.random() < options.duplicateShare * 2) {
        copies.push(ofGame[Math.floor(Math.random() * ofGame.length)]!);
        kinds.push('duplicate');
      }
      for (const copy of copies.slice(0, options.batchSize ?? 4)) {
        recent.push(copy);
        if (recent.length > 64) recent.shift();
      }
      const promise = sendBatch(options.ingestUrl, copies, kinds, options.timeoutMs).then((requests) => {
        sent.push(...requests);
        pending.delete(promise);
      });
      pending.add(promise);
      return;
    }
    const r = burst ? 1 : Math.random();
    let kind: SendKind = 'fresh';
    let copy: EventCopy;
    // Copies of one of the last few events: often the original is still in flight.
    const base = recent.length > 0 ? recent[Math.max(0, recent.length - 1 - Math.floor(Math.random() * 8))] : undefined;
    if (base && r < options.duplicateShare) {
      kind = 'duplicate';
      copy = base;
    } else if (base && r < options.duplicateShare + options.conflictShare) {
      kind = 'conflict';
      copy = conflictingCopy(base);
    } else {
      copy = freshCopy(pickGame(options.fixtures.games), phase);
      recent.push(copy);
      if (recent.length > 64) recent.shift();
    }
    const promise = send(options.ingestUrl, copy, kind, options.timeoutMs).then((request) => {
      sent.push(request);
      pending.delete(promise);
    });
    pending.add(promise);
  };

  // Arrivals are due at a fixed rate; a timer every 5 ms sends those due (catching up after a slow turn).
  const timer = setInterval(() => {
    if (stopped) return;
    const due = Math.floor(((performance.now() - startedAt) / 1000) * options.ratePerSecond);
    while (arrivals < due) {
      arrivals++;
      arrive();
    }
  }, 5);

  return {
    sent,
    burst(count) {
      for (let i = 0; i < count; i++) arrive(true);
    },
    skipped: () => skipped,
    async stop() {
      stopped = true;
      clearInterval(timer);
      while (pending.size > 0) await Promise.all([...pending]);
      sent.sort((a, b) => a.seq - b.seq);
    },
  };
}

/** Runs `work` over items with at most `concurrency` at once. */
export async function pool<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  });
  await Promise.all(workers);
  return results;
}
