// The game-server client's pure parts (clients/game-server): an event's body written once and checked, the quota
// fields and Retry-After read from headers; and the package as it is published: its build (the repository's
// TypeScript, the package's own tsconfig) emits the JavaScript and declarations its package.json exports name, and the
// built module runs under Node without the sources.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  BATCH_EVENTS_MAX,
  EVENT_BODY_BYTES_MAX,
  InvalidEventError,
  parseQuota,
  parseSerializedEvent,
  retryAfterMs,
  serializeEvent,
} from '../../clients/game-server/src/index.ts';

const PACKAGE = resolve('clients/game-server');
const headers = (values: Record<string, string>) => new Headers(values);
const player = '0b6f4d6c-3b1e-4c57-9a5e-1f2d3c4b5a69';

describe('serializeEvent', () => {
  it('writes the body once, with the exact occurredAt text given, and fills in eventId and occurredAt', () => {
    const event = serializeEvent({
      playerId: player,
      eventType: 'level.complete',
      occurredAt: '2031-05-06T07:07:08+00:00',
    });
    expect(JSON.parse(event.body)).toEqual({
      eventId: event.eventId,
      playerId: player,
      eventType: 'level.complete',
      occurredAt: '2031-05-06T07:07:08+00:00',
    });
    expect(event.bytes).toBe(Buffer.byteLength(event.body));
    const dated = serializeEvent({ playerId: player, eventType: 'a', occurredAt: new Date(Date.UTC(2031, 4, 6)) });
    expect(JSON.parse(dated.body).occurredAt).toBe('2031-05-06T00:00:00.000Z');
    expect(JSON.parse(serializeEvent({ playerId: player, eventType: 'a' }).body).occurredAt).toMatch(/Z$/);
    // metadata absent and {} are different payloads: kept as given.
    expect(JSON.parse(serializeEvent({ playerId: player, eventType: 'a', metadata: {} }).body)).toHaveProperty(
      'metadata',
    );
    expect(parseSerializedEvent(event.body)).toEqual(event);
  });

  it.each([
    ['an unknown field', { playerId: player, eventType: 'a', points: 3 }],
    ['a playerId that is no UUID', { playerId: 'hero', eventType: 'a' }],
    ['an eventType outside the pattern', { playerId: player, eventType: 'Level Complete' }],
    ['an occurredAt without offset', { playerId: player, eventType: 'a', occurredAt: '2031-05-06T07:07:08' }],
    ['metadata that is an array', { playerId: player, eventType: 'a', metadata: [] }],
    [
      'a body over 16,384 bytes',
      { playerId: player, eventType: 'a', metadata: { s: 'x'.repeat(EVENT_BODY_BYTES_MAX) } },
    ],
  ])('refuses %s', (_, event) => {
    expect(() => serializeEvent(event as never)).toThrow(InvalidEventError);
  });
});

describe('quota and Retry-After', () => {
  it('reads RateLimit, RateLimit-Policy and the two Rewards fields', () => {
    const quota = parseQuota(
      headers({
        'RateLimit-Policy': '"minute";q=120;w=60',
        RateLimit: '"minute";r=37;t=12',
        'Rewards-Daily-Remaining': '450',
        'Rewards-Budget-Remaining': '12000',
      }),
      1_000,
    );
    expect(quota).toEqual({
      limit: 120,
      windowSeconds: 60,
      remaining: 37,
      resetSeconds: 12,
      dailyRemainingCredits: 450,
      budgetRemainingCredits: 12_000,
      receivedAtMs: 1_000,
    });
    expect(parseQuota(headers({}), 0)).toBeUndefined();
    expect(parseQuota(headers({ RateLimit: '"minute";r=1' }), 0)).toBeUndefined();
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs(headers({ 'Retry-After': '1' }), 0)).toBe(1_000);
    const now = Date.UTC(2031, 0, 1);
    expect(retryAfterMs(headers({ 'Retry-After': new Date(now + 5_000).toUTCString() }), now)).toBe(5_000);
    expect(retryAfterMs(headers({}), 0)).toBeUndefined();
  });
});

describe('the package as published', () => {
  it('builds with the repository TypeScript into the files its exports name, and the build runs alone', async () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: '@sandbox-rewards/game-server',
      type: 'module',
      files: ['dist', 'README.md'],
    });
    expect(manifest.dependencies).toBeUndefined();
    const out = mkdtempSync(join(tmpdir(), 'game-server-build-'));
    try {
      execFileSync(resolve('node_modules/.bin/tsc'), ['-p', join(PACKAGE, 'tsconfig.json'), '--outDir', out]);
      const exported = manifest.exports['.'] as { types: string; import: string };
      for (const file of [exported.types, exported.import])
        expect(existsSync(join(out, file.replace('./dist/', '')))).toBe(true);
      // Relative imports of the built files end in .js: Node resolves them without a loader.
      expect(readFileSync(join(out, 'client.js'), 'utf8')).toContain("from './event.js'");
      const built = await import(pathToFileURL(join(out, 'index.js')).href);
      expect(built.BATCH_EVENTS_MAX).toBe(BATCH_EVENTS_MAX);
      expect(typeof built.GameServerClient).toBe('function');
      expect(built.serializeEvent({ playerId: player, eventType: 'a' }).eventId).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
