// Helpers of the game SDK tests: event bodies, the event call, and strict checks of the response shapes.

import { randomUUID } from 'node:crypto';
import { gameEventResultSchema, gamePublicConfigSchema } from '#runtime/contracts/ingest-shapes.ts';
import { createAjv, describeAjvError } from '#runtime/validation/ajv.ts';
import type { GameEventResult } from '../../clients/game-server/src/client.ts';
import type { EventWorld } from './ledger-fixtures.ts';
import { type ApiResponse, api, type RequestOptions } from './system.ts';

export const EVENTS_PATH = '/api/game-sdk/v2/events';
export const CONFIG_PATH = '/api/game-sdk/v2/config';

const ajv = createAjv();
const resultValidator = ajv.compile(gameEventResultSchema);
const configValidator = ajv.compile(gamePublicConfigSchema);

export interface EventBody {
  eventId: string;
  playerId: string;
  eventType: string;
  occurredAt: string;
  metadata?: unknown;
  [extra: string]: unknown;
}

/** A valid event of the world's player and rule, occurring at `at` (default: now). */
export function eventBody(world: EventWorld, overrides: Partial<EventBody> = {}, at = new Date()): EventBody {
  return {
    eventId: randomUUID(),
    playerId: world.player.id,
    eventType: world.eventType,
    occurredAt: at.toISOString(),
    ...overrides,
  };
}

export function postEvent(base: string, key: string | undefined, body: unknown, options: RequestOptions = {}) {
  return api(base, 'POST', EVENTS_PATH, { token: key, body, ...options });
}

/** Asserts a 200 with a strict GameEventResult and returns it. */
export function expectDecision(response: ApiResponse) {
  if (response.status !== 200) {
    throw new Error(`expected a decision, got ${response.status} ${JSON.stringify(response.body)}`);
  }
  expect(Object.keys(response.body)).toEqual(['data']);
  if (!resultValidator(response.body.data)) {
    throw new Error(`not a GameEventResult: ${describeAjvError(resultValidator.errors, 'data')}`);
  }
  // The game server SDK's type of it (the shape a game server reads), as a plain object type.
  return response.body.data as Pick<GameEventResult, keyof GameEventResult>;
}

/** Asserts a strict GamePublicConfig. */
export function expectPublicConfig(response: ApiResponse) {
  if (response.status !== 200) {
    throw new Error(`expected a configuration, got ${response.status} ${JSON.stringify(response.body)}`);
  }
  expect(Object.keys(response.body)).toEqual(['data']);
  if (!configValidator(response.body.data)) {
    throw new Error(`not a GamePublicConfig: ${describeAjvError(configValidator.errors, 'data')}`);
  }
  return response.body.data;
}

/** Asserts the error envelope with exactly this status and code. */
export function expectError(response: ApiResponse, status: number, code: string) {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code });
  expect(Object.keys(response.body.error).sort()).toEqual(['code', 'message']);
  expect(typeof response.body.error.message).toBe('string');
}

export function postRaw(base: string, key: string | undefined, rawBody: string | Uint8Array, contentType?: string) {
  const headers: Record<string, string> = {};
  if (contentType !== undefined) headers['Content-Type'] = contentType;
  return api(base, 'POST', EVENTS_PATH, { token: key, rawBody, headers });
}

/** The first sample of a metric in a program's /metrics (0 when absent). */
export async function programMetric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? 0);
}

/** Polls `check` until it holds; throws `never: <what>` after `deadlineMs` (a wait, not a timed assertion). */
export async function until(what: string, check: () => Promise<boolean>, deadlineMs = 30_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never: ${what}`);
}
