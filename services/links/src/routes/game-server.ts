// The game server's linking routes (CONTRACT sections 2 and 6), secret key:
//   POST /api/game-sdk/v2/link-intents             CreateLinkIntent -> LinkIntentResult
//   GET  /api/game-sdk/v2/players/{playerId}        -> GamePlayer
//   GET  /api/game-sdk/v2/players?externalPlayerId= -> GamePlayer
// Order of checks, first failure wins: platform switch (503 PLATFORM_DISABLED, retry_later when unreadable) ->
// bearer (401 invalid_key; a public key 403 secret_key_required; unknown or revoked 401 invalid_key) -> content
// type (415) -> size (413) -> JSON (400 INVALID_REQUEST) -> schema (400 INVALID_PLAYER) -> the ledger (401
// invalid_key when revoked meanwhile, 409 already_linked, 404 not_found; 503 retry_later when unreachable).
import type Router from '@koa/router';
import type Koa from 'koa';
import type { GamePlayer } from '#runtime/contracts/gen/rewards/v1/links_pb.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { issueLinkToken } from '#runtime/credentials/keys.ts';
import { AppError } from '#runtime/errors.ts';
import { readJsonBody } from '#runtime/http/body.ts';
import { retryLater, SecretKeyGate } from '#runtime/http/game-key.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import type { Transport } from '#runtime/transport/operation.ts';
import { checkCreateLinkIntent, checkPlayerQuery } from '../domain/requests.ts';

export const LINK_INTENTS_PATH = '/api/game-sdk/v2/link-intents';
export const PLAYERS_PATH = '/api/game-sdk/v2/players';

export interface GameServerRouteDeps {
  transport: Transport;
  platform: PlatformSwitch;
}

export function gamePlayerJson(player: GamePlayer | undefined) {
  if (!player) throw new AppError('internal_error', 'The ledger returned no player.');
  return {
    playerId: player.playerId,
    externalPlayerId: player.externalPlayerId,
    linked: player.linkedAt !== undefined,
    linkedAt: player.linkedAt ?? null,
    mode: 'sandbox' as const,
  };
}

// Link tokens and player data are for the caller only.
const noStore = (ctx: Koa.Context) => ctx.set('Cache-Control', 'no-store');

export function addGameServerRoutes(router: Router, deps: GameServerRouteDeps): void {
  const { transport } = deps;
  const keys = new SecretKeyGate(transport);
  const gate = platformGate(deps.platform, 'retry_later');

  router.post(LINK_INTENTS_PATH, gate, async (ctx) => {
    const key = await keys.secretKey(ctx);
    const input = await keys.check(ctx, key, async () => {
      const checked = checkCreateLinkIntent(await readJsonBody(ctx));
      if (!checked.ok) throw AppError.withStatus(checked.status, checked.code, checked.message);
      return checked.value;
    });
    // The token is made here and only its hash travels to the ledger: the value exists in this response only.
    const token = issueLinkToken();
    const reply = await transport
      .call(
        ledgerOps.createLinkIntent,
        { keyHash: key.hash, externalPlayerId: input.externalPlayerId, tokenHash: token.hash },
        ctx.state.call,
      )
      .catch((error: unknown) => {
        throw retryLater(error);
      });
    noStore(ctx);
    ctx.body = {
      data: { playerId: reply.playerId, linkToken: token.value, expiresAt: reply.expiresAt, mode: 'sandbox' },
    };
  });

  router.get(`${PLAYERS_PATH}/:playerId`, gate, async (ctx) => {
    const key = await keys.secretKey(ctx);
    const reply = await transport
      .call(
        ledgerOps.getPlayer,
        { keyHash: key.hash, selector: { case: 'playerId', value: ctx.params.playerId ?? '' } },
        ctx.state.call,
      )
      .catch((error: unknown) => {
        throw retryLater(error);
      });
    noStore(ctx);
    ctx.body = { data: gamePlayerJson(reply.player) };
  });

  router.get(PLAYERS_PATH, gate, async (ctx) => {
    const key = await keys.secretKey(ctx);
    const query = await keys.check(ctx, key, () => {
      const checked = checkPlayerQuery(ctx.querystring);
      if (!checked.ok) throw AppError.withStatus(checked.status, checked.code, checked.message);
      return checked.value;
    });
    const reply = await transport
      .call(
        ledgerOps.getPlayer,
        { keyHash: key.hash, selector: { case: 'externalPlayerId', value: query.externalPlayerId } },
        ctx.state.call,
      )
      .catch((error: unknown) => {
        throw retryLater(error);
      });
    noStore(ctx);
    ctx.body = { data: gamePlayerJson(reply.player) };
  });
}
