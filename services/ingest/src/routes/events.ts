// POST /api/game-sdk/v2/events (CONTRACT section 7). First failure wins:
//   platform switch (503) -> bearer credential: missing, malformed, unknown or revoked (401 invalid_key), a public
//   key (403 secret_key_required) -> content type (415) -> size on the raw bytes (413) -> JSON (400 INVALID_REQUEST)
//   -> schema (400 invalid_event) -> metadata (400 invalid_metadata) -> RecordEvent in the ledger, which answers
//   401 invalid_key, 404 invalid_player, 409 event_conflict or the decision.
// Whether a well-formed key exists is known only to the ledger. A valid event asks once (RecordEvent checks the
// key in its transaction); a request that fails a check of its body first asks AuthenticateGameKey, so that an
// unknown or revoked key still answers 401 before any body error. The hot path stays one NATS round trip.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { Counter } from 'prom-client';
import type { EventDecision } from '../../../runtime/src/contracts/gen/rewards/v1/events_pb.ts';
import { ledgerOps } from '../../../runtime/src/contracts/operations.ts';
import { AppError, relabelUnavailable } from '../../../runtime/src/errors.ts';
import { readJsonBody } from '../../../runtime/src/http/body.ts';
import { platformGate } from '../../../runtime/src/http/platform-gate.ts';
import type { PlatformSwitch } from '../../../runtime/src/platform-switch.ts';
import type { Transport } from '../../../runtime/src/transport/operation.ts';
import { payloadHash } from '../domain/canonical-json.ts';
import { validateEventInput } from '../domain/event-input.ts';
import { bearerGameKey, type PresentedKey } from './credential.ts';

export const EVENTS_PATH = '/api/game-sdk/v2/events';

const RETRY_LATER = 'The ledger is temporarily unavailable; retry later. Nothing was stored.';
const invalidKey = () => new AppError(401, 'invalid_key', 'A valid, unrevoked secret game key is required.');

export interface EventRouteDeps {
  transport: Transport;
  platform: PlatformSwitch;
  /** Counts answered decisions (`event_decisions_total`). */
  decisions?: Counter<'status' | 'reason' | 'replayed'>;
}

export function addEventRoutes(router: Router, deps: EventRouteDeps): void {
  const { transport } = deps;

  /** Unknown or revoked keys answer 401 before anything else is reported about the request. */
  const assertKnownKey = async (ctx: Koa.Context, key: PresentedKey): Promise<void> => {
    const reply = await transport
      .call(ledgerOps.authenticateGameKey, { keyHash: key.hash }, ctx.state.call)
      .catch((error: unknown) => {
        throw relabelUnavailable(error, 'retry_later', RETRY_LATER);
      });
    if (!reply.valid) throw invalidKey();
  };

  router.post(EVENTS_PATH, platformGate(deps.platform, 'retry_later'), async (ctx) => {
    const key = bearerGameKey(ctx.get('Authorization'));
    if (!key) throw invalidKey();
    if (key.kind === 'public') {
      await assertKnownKey(ctx, key);
      throw new AppError(
        403,
        'secret_key_required',
        'Events need a secret game key; public keys only read configuration.',
      );
    }

    let body: unknown;
    try {
      body = await readJsonBody(ctx);
    } catch (error) {
      await assertKnownKey(ctx, key);
      throw error;
    }
    const checked = validateEventInput(body);
    if (!checked.ok) {
      await assertKnownKey(ctx, key);
      throw new AppError(400, checked.code, checked.message);
    }
    const input = checked.input;

    const reply = await transport
      .call(
        ledgerOps.recordEvent,
        {
          keyHash: key.hash,
          eventId: input.eventId,
          playerId: input.playerId,
          eventType: input.eventType,
          occurredAtMs: BigInt(input.occurredAtMs),
          payloadHash: payloadHash(body),
        },
        ctx.state.call,
      )
      .catch((error: unknown) => {
        throw relabelUnavailable(error, 'retry_later', RETRY_LATER);
      });
    const result = gameEventResult(reply.decision, reply.replayed);
    deps.decisions?.inc({ status: result.status, reason: result.reason ?? 'none', replayed: String(result.replayed) });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: result };
  });
}

function gameEventResult(decision: EventDecision | undefined, replayed: boolean) {
  if (!decision) throw new AppError(500, 'internal_error', 'The ledger returned no decision.');
  return {
    id: decision.id,
    eventId: decision.eventId,
    gameId: decision.gameId,
    organizationId: decision.organizationId,
    playerId: decision.playerId,
    eventType: decision.eventType,
    occurredAt: decision.occurredAt,
    status: decision.status,
    reason: decision.reason ?? null,
    rewardCredits: Number(decision.rewardCredits),
    createdAt: decision.createdAt,
    replayed,
    mode: 'sandbox',
  };
}
