// POST /api/game-sdk/v2/events/batch (CONTRACT section 11.1, "Batch events"; issue 41). The request's checks are the
// single endpoint's, in its order, up to not JSON (platform switch 503, bearer 401/403, content type 415, size 413 at
// 1 MiB, JSON 400 INVALID_REQUEST); then the body's shape (400 invalid_event). Each event is then what the single
// endpoint would have made of it alone (event-batch.ts: 413, invalid_event, invalid_metadata) and the valid ones go to
// the ledger through the same edge batcher as single events (event-decision.ts's recordEventRequest), submitted in one synchronous
// run: they leave in one RecordEvents request where they fit (the per-key in-flight bound and the request's room,
// event-batcher.ts), and the ledger decides them in order in ledger.record_events, copies of one eventId included.
//
// 200 with one result per event in input order. The quota fields are those of the last fresh decision. A whole
// request 503 only when every event met a 503 (nothing was decided; the message is the unknown-outcome one when any
// event's outcome is unknown). An unknown or revoked key is 401 for the whole request, as for the single endpoint.
import type Router from '@koa/router';
import type { Counter } from 'prom-client';
import type { EdgeDecision, GameEventResultJson } from '#runtime/contracts/record-events-wire.ts';
import { AppError } from '#runtime/errors.ts';
import { readJsonBodyDeferring } from '#runtime/http/body.ts';
import type { SecretKeyGate } from '#runtime/http/game-key.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import {
  BATCH_BODY_LIMIT_BYTES,
  checkBatchEvent,
  checkBatchShape,
  faultOutsideMetadata,
} from '../domain/event-batch.ts';
import type { EdgeEventBatcher } from './event-batcher.ts';
import {
  decisionError,
  EVENT_OUTCOME_UNKNOWN,
  gameEventResult,
  recordEventRequest,
  setQuotaHeaders,
} from './event-decision.ts';

export const EVENTS_BATCH_PATH = '/api/game-sdk/v2/events/batch';

export interface EventBatchRouteDeps {
  platform: PlatformSwitch;
  keys: SecretKeyGate;
  ledger: EdgeEventBatcher;
  decisions?: Counter<'status' | 'reason' | 'replayed'> | undefined;
}

type BatchResult =
  | { status: 200; data: GameEventResultJson }
  | { status: number; error: { code: string; message: string } };

const failed = (error: AppError): BatchResult => ({
  status: error.status,
  error: { code: error.code, message: error.message },
});

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
    // Straight to the batcher (no promise per event besides its own): its failures are relabelled below.
    const checks = events.map(checkBatchEvent);
    const call = ctx.state.call;
    let submitted = 0;
    const replies = checks.map((check) => {
      if (!check.ok) return undefined;
      submitted++;
      return ledger.record(recordEventRequest(key, check.input), call);
    });
    if (submitted === 0) await keys.assertKnown(ctx, key);
    const outcomes = await Promise.allSettled(replies);

    const results: BatchResult[] = [];
    // The decisions counter's increments, one per distinct label set of the request (prom-client hashes the labels
    // on every call: once per set, not per event).
    const counted = new Map<string, { labels: { status: string; reason: string; replayed: string }; events: number }>();
    let lastFresh: EdgeDecision | undefined;
    try {
      for (const [i, check] of checks.entries()) {
        if (!check.ok) {
          results.push(failed(new AppError(check.code, check.message)));
          continue;
        }
        const outcome = outcomes[i] as PromiseSettledResult<EdgeDecision>;
        if (outcome.status === 'rejected') {
          const error = decisionError(outcome.reason);
          // A key unknown or revoked (the ledger checks it with the events): the request's own 401.
          if (!(error instanceof AppError) || error.code === 'invalid_key') throw error;
          results.push(failed(error));
          continue;
        }
        const reply = outcome.value;
        const result = gameEventResult(reply);
        const reason = result.reason ?? 'none';
        const labelsKey = `${result.status} ${reason} ${result.replayed}`;
        const count = counted.get(labelsKey);
        if (count) count.events++;
        else {
          counted.set(labelsKey, {
            labels: { status: result.status, reason, replayed: String(result.replayed) },
            events: 1,
          });
        }
        if (!reply.replayed && reply.quota) lastFresh = reply;
        results.push({ status: 200, data: result });
      }
    } finally {
      // Counted as they were decided, also when a later event ends the request (a key unknown: 401).
      for (const { labels, events: n } of counted.values()) deps.decisions?.inc(labels, n);
    }
    if (results.every((result) => result.status === 503)) {
      const unknown = results.some((r) => 'error' in r && r.error.message === EVENT_OUTCOME_UNKNOWN);
      const first = results[0] as { error: { message: string } };
      throw new AppError('retry_later', unknown ? EVENT_OUTCOME_UNKNOWN : first.error.message);
    }
    ctx.res.setHeader('Cache-Control', 'no-store');
    if (lastFresh?.quota) setQuotaHeaders(ctx.res, lastFresh.quota);
    ctx.body = { data: { results } };
  });
}
