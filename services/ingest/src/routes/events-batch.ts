// POST /api/game-sdk/v2/events/batch (CONTRACT section 11.1, "Batch events"). The request's checks are the
// single endpoint's, in its order, up to not JSON (platform switch 503, bearer 401/403, content type 415, size 413 at
// 1 MiB, JSON 400 INVALID_REQUEST); then the body's shape (400 invalid_event). Each event is then what the single
// endpoint would have made of it alone (event-batch.ts: 413, invalid_event, invalid_metadata) and the valid ones go to
// the ledger through the same edge batcher as single events (event-decision.ts's recordEventRequest), submitted in one synchronous
// run: they leave in one RecordEvents request where they fit (the per-key in-flight bound and the request's room,
// event-batcher.ts), and the ledger decides them in order in ledger.record_events, copies of one eventId included.
//
// 200 with one result per event in input order. The quota fields are those of the last fresh decision. A whole
// request 503 only when every event met a 503 and none was decided (BatchRetryVerdict: which message). An unknown or
// revoked key is 401 for the whole request, as for the single endpoint.
import { Buffer } from 'node:buffer';
import type Router from '@koa/router';
import type { Counter } from 'prom-client';
import { type Outcome, Rejected } from '#runtime/batching/keyed-batcher.ts';
import { EVENT_ANSWER_LOST } from '#runtime/contracts/event-answer-lost.ts';
import { AppError } from '#runtime/errors.ts';
import { readJsonBodyDeferring } from '#runtime/http/body.ts';
import type { SecretKeyGate } from '#runtime/http/game-key.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import {
  BATCH_BODY_LIMIT_BYTES,
  BatchRetryVerdict,
  checkBatchEvent,
  checkBatchShape,
  faultOutsideMetadata,
} from '../domain/event-batch.ts';
import type { EdgeEventBatcher, RecordEventInit } from './event-batcher.ts';
import {
  answerJson,
  decisionError,
  EVENT_OUTCOME_UNKNOWN,
  gameEventResultText,
  recordEventRequest,
  setQuotaHeaders,
} from './event-decision.ts';
import type { KeyTenants } from './key-tenants.ts';
import type { EdgeDecision } from './record-events-wire.ts';

export const EVENTS_BATCH_PATH = '/api/game-sdk/v2/events/batch';

export interface EventBatchRouteDeps {
  platform: PlatformSwitch;
  keys: SecretKeyGate;
  ledger: EdgeEventBatcher;
  /** The games of credentials: a batch waits in its game's queue once known (key-tenants.ts). */
  tenants?: KeyTenants | undefined;
  decisions?: Counter<'status' | 'reason' | 'replayed'> | undefined;
}

// The answer `{"data": {"results": [...]}}` in pieces: a decision's item around its JSON text (as the codec wrote it),
// a failed event's item stringified.
const RESULTS_OPEN = Buffer.from('{"data":{"results":[');
const RESULTS_CLOSE = Buffer.from(']}}');
const DECIDED_OPEN = Buffer.from('{"status":200,"data":');
const DECIDED_CLOSE = Buffer.from('}');
const COMMA = Buffer.from(',');

const failedItem = (error: AppError): Buffer =>
  Buffer.from(JSON.stringify({ status: error.status, error: { code: error.code, message: error.message } }));

export function addEventBatchRoute(router: Router, deps: EventBatchRouteDeps): void {
  const { keys, ledger } = deps;
  router.post(EVENTS_BATCH_PATH, platformGate(deps.platform, 'retry_later'), async (ctx) => {
    const key = await keys.secretKey(ctx);
    const events = await keys.check(ctx, key, async () => {
      const { value: body, memberFault } = await readJsonBodyDeferring(ctx, 'events', {
        limitBytes: BATCH_BODY_LIMIT_BYTES,
      });
      if (memberFault !== undefined) {
        const outside = faultOutsideMetadata((body as { events?: unknown }).events);
        if (outside !== undefined) throw new AppError('INVALID_REQUEST', outside);
      }
      const shape = checkBatchShape(body);
      if (!shape.ok) throw new AppError('invalid_event', shape.message);
      return shape.events;
    });

    // Every valid event is submitted in this synchronous run: they leave together (one request where they fit).
    // Straight to the batcher, with one promise for all of them; their failures are relabelled below.
    const checks = events.map(checkBatchEvent);
    const requests: RecordEventInit[] = [];
    for (const check of checks) if (check.ok) requests.push(recordEventRequest(key, check.input));
    if (requests.length === 0) await keys.assertKnown(ctx, key);
    const credential = ctx.req.headers.authorization;
    const queue = deps.tenants?.of(credential)?.game;
    const outcomes = requests.length === 0 ? [] : await ledger.recordAll(key.hash, requests, ctx.state.call, queue);

    const pieces: Buffer[] = [RESULTS_OPEN];
    const verdict = new BatchRetryVerdict({ answerLost: EVENT_ANSWER_LOST, mixed: EVENT_OUTCOME_UNKNOWN });
    const failed = (error: AppError): void => {
      if (pieces.length > 1) pieces.push(COMMA);
      verdict.failed(error.status, error.message);
      pieces.push(failedItem(error));
    };
    // The decisions counter's increments, one per distinct label set of the request (prom-client hashes the labels
    // on every call: once per set, not per event).
    const counted = new Map<string, { labels: { status: string; reason: string; replayed: string }; events: number }>();
    let lastFresh: EdgeDecision | undefined;
    try {
      let submitted = 0;
      for (const check of checks) {
        if (!check.ok) {
          failed(new AppError(check.code, check.message));
          continue;
        }
        const outcome = outcomes[submitted++] as Outcome<EdgeDecision>;
        if (outcome instanceof Rejected) {
          const error = decisionError(outcome.error);
          // A key unknown or revoked (the ledger checks it with the events): the request's own 401.
          if (!(error instanceof AppError) || error.code === 'invalid_key') throw error;
          failed(error);
          continue;
        }
        const reply = outcome;
        if (queue === undefined) deps.tenants?.learn(credential, reply);
        const result = gameEventResultText(reply);
        const reason = reply.reason ?? 'none';
        const labelsKey = `${reply.status} ${reason} ${reply.replayed}`;
        const count = counted.get(labelsKey);
        if (count) count.events++;
        else {
          counted.set(labelsKey, {
            labels: { status: reply.status, reason, replayed: String(reply.replayed) },
            events: 1,
          });
        }
        if (!reply.replayed && reply.quota) lastFresh = reply;
        verdict.decided();
        if (pieces.length > 1) pieces.push(COMMA);
        pieces.push(DECIDED_OPEN, result, DECIDED_CLOSE);
      }
    } finally {
      // Counted as they were decided, also when a later event ends the request (a key unknown: 401).
      for (const { labels, events: n } of counted.values()) deps.decisions?.inc(labels, n);
    }
    const retryMessage = verdict.wholeRequestMessage();
    if (retryMessage !== undefined) throw new AppError('retry_later', retryMessage);
    ctx.res.setHeader('Cache-Control', 'no-store');
    if (lastFresh?.quota) setQuotaHeaders(ctx.res, lastFresh.quota);
    pieces.push(RESULTS_CLOSE);
    answerJson(ctx, pieces);
  });
}
