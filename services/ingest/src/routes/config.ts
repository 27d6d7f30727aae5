// GET /api/game-sdk/v2/config?publicKey=... (CONTRACT sections 2 and 8): the public configuration of the key's
// game. Exactly one `publicKey` parameter holding a well-formed public key; missing, repeated, malformed, unknown,
// revoked or secret: 401 INVALID_PUBLIC_KEY. Other query parameters are ignored (cache busters of game clients;
// see docs/decisions.md).
import type Router from '@koa/router';
import type { GamePublicConfig } from '#runtime/contracts/gen/rewards/v1/events_pb.ts';
import { ledgerOps } from '#runtime/contracts/operations.ts';
import { classifyGameKey, sha256 } from '#runtime/credentials/keys.ts';
import { AppError, relabelUnavailable } from '#runtime/errors.ts';
import { platformGate } from '#runtime/http/platform-gate.ts';
import type { PlatformSwitch } from '#runtime/platform-switch.ts';
import type { Transport } from '#runtime/transport/operation.ts';

export const CONFIG_PATH = '/api/game-sdk/v2/config';

const invalidPublicKey = () =>
  new AppError('INVALID_PUBLIC_KEY', 'Exactly one publicKey query parameter with a valid public key is required.');

export function addConfigRoutes(router: Router, deps: { transport: Transport; platform: PlatformSwitch }): void {
  router.get(CONFIG_PATH, platformGate(deps.platform, 'retry_later'), async (ctx) => {
    const values = new URLSearchParams(ctx.querystring).getAll('publicKey');
    const publicKey = values.length === 1 ? values[0] : undefined;
    if (publicKey === undefined || classifyGameKey(publicKey) !== 'public') throw invalidPublicKey();
    const reply = await deps.transport
      .call(ledgerOps.getPublicConfig, { keyHash: sha256(publicKey) }, ctx.state.call)
      .catch((error: unknown) => {
        throw relabelUnavailable(error, 'retry_later', 'The configuration is temporarily unavailable; retry later.');
      });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: gamePublicConfig(reply.config) };
  });
}

function gamePublicConfig(config: GamePublicConfig | undefined) {
  if (!config) throw new AppError('internal_error', 'The ledger returned no configuration.');
  return {
    gameId: config.gameId,
    name: config.name,
    slug: config.slug,
    environment: 'sandbox',
    productionRewardsEnabled: false,
    platform: config.platform,
    status: config.status,
    rules: config.rules.map((rule) => ({ eventType: rule.eventType, rewardCredits: Number(rule.rewardCredits) })),
    thresholds: {
      maxPayoutCredits: Number(config.maxPayoutCredits),
      dailyPlayerCapCredits: Number(config.dailyPlayerCapCredits),
    },
  };
}
