// A typed TypeScript client of the REST API: openapi-fetch over the types openapi-typescript generates from the
// OpenAPI document (./openapi.d.ts, written by the command in README.md). Every path, body, response and error of
// GET /openapi.json is typed; nothing here is written by hand but the credentials.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './openapi.d.ts';

export type Schemas = components['schemas'];
export type GameEventInput = Schemas['GameEventInput'];
export type GameEventResult = Schemas['GameEventResult'];
/** One batch result: a decision (status 200) or a failure (4xx or 503, its ApiError). */
export type GameEventBatchResult = Schemas['GameEventBatchResult'];
export type ApiError = Schemas['ApiError'];

/** A client that sends `Authorization: Bearer <credential>` (a game's secret key, or a session token). */
export function rewardsClient(baseUrl: string, credential: string) {
  const client = createClient<paths>({ baseUrl });
  const bearer: Middleware = {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${credential}`);
      return request;
    },
  };
  client.use(bearer);
  return client;
}

/** True for a batch result that is a decision (accepted or rejected, a replay included). */
export function isDecision(result: GameEventBatchResult): result is Schemas['GameEventBatchDecision'] {
  return result.status === 200;
}
