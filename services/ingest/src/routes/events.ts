// POST /api/game-sdk/v2/events (CONTRACT section 7). First failure wins:
//   platform switch (503) -> bearer credential: missing, malformed, unknown or revoked (401 invalid_key), a public
//   key (403 secret_key_required) -> content type (415) -> size on the raw bytes (413) -> JSON (400 INVALID_REQUEST)
//   -> schema (400 invalid_event) -> metadata (400 invalid_metadata) -> RecordEvent in the ledger, which answers
//   401 invalid_key, 404 invalid_player, 409 event_conflict or the decision.
// A lone surrogate or a number outside a double's range inside `metadata` is a metadata fault, not a JSON one
// (CONTRACT section 10): the body reader reports it instead of refusing the body, and validateEventInput refuses it
// after the schema. Elsewhere in the body, and a duplicated member name anywhere, it stays 400 INVALID_REQUEST.
// Whether a well-formed key exists is known only to the ledger. A valid event asks once (RecordEvent checks the
// key in its transaction); a request that fails a check of its body first asks AuthenticateGameKey, so that an
// unknown or revoked key still answers 401 before any body error. The hot path stays one NATS round trip, shared
// by the events of one batch (event-batcher.ts).
import type { ServerResponse } from 'node:http';
import type Router from '@koa/router';
import type { Counter } from 'prom-client';
import { eventRecordJson } from '#runtime/contracts/event-record.ts';
import type { DeveloperEvent } from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import type { DecisionQuota } from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import { AppError, relabelUnavailable } from '#runtime/errors.ts';
import { readJsonBodyDeferring } from '#runtime/http/body.ts';
import { SecretKeyGate } from '#runtime/http/game-key.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import { eventCanonicalForms } from '../domain/canonical-json.ts';
import { validateEventInput } from '../domain/event-input.ts';
import {
  EDGE_BATCH_MAX_DEFAULT,
  EDGE_IN_FLIGHT_MAX_DEFAULT,
  EDGE_KEY_IN_FLIGHT_MAX_DEFAULT,
  EDGE_KEYS_MAX_DEFAULT,
  type EdgeBatchObserver,
  EdgeEventBatcher,
} from './event-batcher.ts';

export const EVENTS_PATH = '/api/game-sdk/v2/events';

/** The RecordEvent request never reached a ledger (no responders, NATS disconnected): known not stored. */
export const EVENT_NOT_STORED = 'The ledger is temporarily unavailable; retry later. Nothing was stored.';
/**
 * The RecordEvent request may have reached a ledger and its reply was lost (timeout, connection lost): the event may
 * have been decided (CONTRACT section 7). A retry with the same eventId answers the stored decision.
 */
export const EVENT_OUTCOME_UNKNOWN =
  'The ledger did not answer in time; whether the event was decided is unknown. ' +
  'Retry with the same eventId: it answers the stored decision if one was made.';

export interface EventRouteDeps {
  transport: Transport;
  platform: PlatformSwitch;
  /** Counts answered decisions (`event_decisions_total`). */
  decisions?: Counter<'status' | 'reason' | 'replayed'>;
  /** Edge batching (event-batcher.ts); batchMax 1 sends one RecordEvent per event. */
  batching?: {
    batchMax: number;
    inFlightMax: number;
    keysMax: number;
    keyInFlightMax: number;
    observer?: EdgeBatchObserver;
  };
}

export function addEventRoutes(router: Router, deps: EventRouteDeps): void {
  const { transport } = deps;
  const keys = new SecretKeyGate(transport);
  const ledger = new EdgeEventBatcher(
    transport,
    {
      batchMax: deps.batching?.batchMax ?? EDGE_BATCH_MAX_DEFAULT,
      inFlightMax: deps.batching?.inFlightMax ?? EDGE_IN_FLIGHT_MAX_DEFAULT,
      keysMax: deps.batching?.keysMax ?? EDGE_KEYS_MAX_DEFAULT,
      keyInFlightMax: deps.batching?.keyInFlightMax ?? EDGE_KEY_IN_FLIGHT_MAX_DEFAULT,
    },
    deps.batching?.observer,
  );

  router.post(EVENTS_PATH, platformGate(deps.platform, 'retry_later'), async (ctx) => {
    const key = await keys.secretKey(ctx);
    const { value: body, memberFault } = await keys.check(ctx, key, () => readJsonBodyDeferring(ctx, 'metadata'));
    const checked = validateEventInput(body, memberFault);
    if (!checked.ok) {
      await keys.assertKnown(ctx, key);
      throw new AppError(checked.code, checked.message);
    }
    const input = checked.input;
    const canonical = eventCanonicalForms(input);

    const reply = await ledger
      .record(
        {
          keyHash: key.hash,
          eventId: input.eventId,
          playerId: input.playerId,
          eventType: input.eventType,
          occurredAtMs: BigInt(input.occurredAtMs),
          payloadHash: canonical.payloadHash,
          metadataJson: canonical.metadataJson,
        },
        ctx.state.call,
      )
      .catch((error: unknown) => {
        throw relabelUnavailable(error, 'retry_later', EVENT_NOT_STORED, { unknown: EVENT_OUTCOME_UNKNOWN });
      });
    const result = gameEventResult(reply.decision, reply.replayed);
    deps.decisions?.inc({ status: result.status, reason: result.reason ?? 'none', replayed: String(result.replayed) });
    // Node's setHeader, not Koa's ctx.set (two arrays per call): the hot path's headers.
    ctx.res.setHeader('Cache-Control', 'no-store');
    if (!reply.replayed && reply.quota) setQuotaHeaders(ctx.res, reply.quota);
    ctx.body = { data: result };
  });
}

/**
 * The quota fields of a fresh decision (CONTRACT section 11): the IETF httpapi rate-limit fields for the game's
 * per-minute limit, in structured-field syntax, and the player's and the game's credits left after the decision.
 * Replays carry none (their figures would describe a moment long gone).
 */
export function setQuotaHeaders(response: ServerResponse, quota: DecisionQuota): void {
  response.setHeader('RateLimit-Policy', `"minute";q=${quota.rateLimit};w=60`);
  response.setHeader('RateLimit', `"minute";r=${quota.rateRemaining};t=${quota.rateResetSeconds}`);
  response.setHeader('Rewards-Daily-Remaining', quota.dailyRemainingCredits.toString());
  response.setHeader('Rewards-Budget-Remaining', quota.budgetRemainingCredits.toString());
}

/** GameEventResult: the event record plus `replayed` and `mode`. */
function gameEventResult(decision: DeveloperEvent | undefined, replayed: boolean) {
  if (!decision) throw new AppError('internal_error', 'The ledger returned no decision.');
  return { ...eventRecordJson(decision), replayed, mode: 'sandbox' };
}
