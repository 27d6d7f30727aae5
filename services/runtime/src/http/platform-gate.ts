import type Koa from 'koa';
import type { PlatformSwitch } from '../platform-switch.ts';

/** Route middleware: the platform switch is the first check of every non-operator API route. */
export function platformGate(platform: PlatformSwitch): Koa.Middleware {
  return async (ctx, next) => {
    await platform.assertEnabled(ctx.state.call);
    await next();
  };
}
