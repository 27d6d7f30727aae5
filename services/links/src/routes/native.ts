// The native app's linking routes (CONTRACT sections 2, 5 and 6), native session:
//   POST /api/native/v1/link-intents/inspect   InspectLinkIntent -> LinkInspection (does not consume)
//   POST /api/native/v1/link-intents/approve   ApproveLinkIntent -> LinkApproval (consumes and links)
// Order of checks, first failure wins: platform switch (503 PLATFORM_DISABLED; ACCOUNT_STATUS_UNAVAILABLE when
// unreadable) -> native admission, all five checks in identity-admission (UNAUTHORIZED, INVALID_TOKEN,
// INVALID_TOKEN_PAYLOAD, GEO_BLOCKED, ACCOUNT_DISABLED, CLIENT_UPDATE_REQUIRED, DEVICE_*): nothing of the body, let
// alone the token, is read before the session is admitted -> content type (415) -> size (413) -> JSON (400
// INVALID_REQUEST) -> schema (400 invalid_link) -> the ledger (404 invalid_link unknown, 409 invalid_link expired or
// used, 409 already_linked; 503 retry_later when unreachable).
// The token itself never leaves this process: the ledger gets its SHA-256.
import type Router from '@koa/router';
import type Koa from 'koa';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { sha256 } from '#runtime/credentials/keys.ts';
import { AppError } from '#runtime/errors.ts';
import { readJsonBody } from '#runtime/http/body.ts';
import { retryLater } from '#runtime/http/game-key.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import { checkLinkTokenBody } from '../domain/requests.ts';
import { admitNative, NATIVE_UNAVAILABLE_CODE } from './native-session.ts';

export const INSPECT_PATH = '/api/native/v1/link-intents/inspect';
export const APPROVE_PATH = '/api/native/v1/link-intents/approve';

export interface NativeRouteDeps {
  transport: Transport;
  platform: PlatformSwitch;
}

/** The token's hash, or 404 invalid_link for a value that cannot be an issued token. */
async function tokenHashOf(ctx: Koa.Context, kind: 'inspect' | 'approve'): Promise<Buffer> {
  const checked = checkLinkTokenBody(await readJsonBody(ctx), kind);
  if (!checked.ok) throw AppError.withStatus(checked.status, checked.code, checked.message);
  if (!checked.value.wellFormed) throw AppError.withStatus(404, 'invalid_link', 'No link intent has this token.');
  return sha256(checked.value.linkToken);
}

export function addNativeRoutes(router: Router, deps: NativeRouteDeps): void {
  const { transport } = deps;
  const gate = platformGate(deps.platform, NATIVE_UNAVAILABLE_CODE);

  router.post(INSPECT_PATH, gate, async (ctx) => {
    await admitNative(transport, ctx);
    const tokenHash = await tokenHashOf(ctx, 'inspect');
    const reply = await transport.call(ledgerOps.inspectLinkIntent, { tokenHash }, ctx.state.call).catch((error) => {
      throw retryLater(error);
    });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      data: {
        gameName: reply.gameName,
        externalPlayerId: reply.externalPlayerId,
        expiresAt: reply.expiresAt,
        mode: 'sandbox',
      },
    };
  });

  router.post(APPROVE_PATH, gate, async (ctx) => {
    const principal = await admitNative(transport, ctx);
    const tokenHash = await tokenHashOf(ctx, 'approve');
    const reply = await transport
      .call(
        ledgerOps.approveLinkIntent,
        { tokenHash, account: { creditsUserId: principal.creditsUserId, username: principal.username } },
        ctx.state.call,
      )
      .catch((error) => {
        throw retryLater(error);
      });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: { playerId: reply.playerId, gameId: reply.gameId, linked: true, mode: 'sandbox' } };
  });
}
