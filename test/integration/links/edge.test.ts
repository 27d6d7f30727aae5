// The game server's linking routes at the HTTP edge (CONTRACT sections 2, 6 and 7's credential rules): every code
// and the order of the checks, first failure wins: platform switch -> bearer secret key (missing or malformed,
// public, unknown or revoked) -> content type -> size -> JSON -> schema -> the ledger.
import { randomBytes } from 'node:crypto';
import { ok } from '../../support/console.ts';
import { admin, api, startTestSystem, type TestSystem } from '../../support/system.ts';
import {
  createIntent,
  expectData,
  expectError,
  type Game,
  gameWithKeys,
  intent,
  LINK_INTENTS,
  PLAYERS,
} from './helpers.ts';

const unknownSecret = () => `cr_sk_sandbox_${randomBytes(32).toString('base64url')}`;
const unknownPublic = () => `cr_pk_sandbox_${randomBytes(32).toString('base64url')}`;

describe('game server linking routes: edge checks in order', () => {
  let system: TestSystem;
  let game: Game;
  let revoked: string;

  beforeAll(async () => {
    system = await startTestSystem();
    game = await gameWithKeys(system);
    const spare = await ok(system, game.token, { type: 'issueKey', gameId: game.gameId, kind: 'secret', name: 'old' });
    await ok(system, game.token, { type: 'revokeKey', keyId: spare.id });
    revoked = spare.issuedKey!;
  });
  afterAll(async () => {
    await system?.stop();
  });

  const post = (options: { token?: string; headers?: Record<string, string>; body?: unknown; rawBody?: string }) =>
    api(system.url, 'POST', LINK_INTENTS, options);

  describe('credential', () => {
    it('401 invalid_key: no Authorization, another scheme, an empty or malformed bearer, a link token as bearer', async () => {
      const headers: Array<Record<string, string>> = [
        {},
        { Authorization: `Basic ${game.secretKey}` },
        { Authorization: 'Bearer' },
        { Authorization: 'Bearer ' },
        { Authorization: `Bearer ${game.secretKey}x` },
        { Authorization: `Bearer ${game.secretKey.slice(0, -1)}` },
        { Authorization: `Bearer  ${game.secretKey}` },
        { Authorization: `Bearer cr_link_sandbox_${'a'.repeat(43)}` },
      ];
      for (const h of headers) {
        const answer = await post({ headers: h, body: { externalPlayerId: 'p' } });
        expect({ h, status: answer.status, code: answer.body?.error?.code }).toEqual({
          h,
          status: 401,
          code: 'invalid_key',
        });
      }
    });

    it('the bearer scheme is case-insensitive', async () => {
      const answer = await post({
        headers: { Authorization: `bearer ${game.secretKey}` },
        body: { externalPlayerId: 'p' },
      });
      expectData(answer, 'LinkIntentResult');
    });

    it('401 invalid_key for an unknown or revoked secret key, before any body error', async () => {
      for (const key of [unknownSecret(), revoked]) {
        expectError(await post({ token: key, body: { externalPlayerId: 'p' } }), 401, 'invalid_key');
        expectError(
          await post({ token: key, rawBody: 'x', headers: { 'Content-Type': 'text/plain' } }),
          401,
          'invalid_key',
        );
        expectError(
          await post({ token: key, rawBody: '{', headers: { 'Content-Type': 'application/json' } }),
          401,
          'invalid_key',
        );
        expectError(await post({ token: key, body: { externalPlayerId: '' } }), 401, 'invalid_key');
        expectError(
          await post({ token: key, rawBody: 'x'.repeat(20_000), headers: { 'Content-Type': 'application/json' } }),
          401,
          'invalid_key',
        );
      }
    });

    it('403 secret_key_required for a known public key; 401 invalid_key for an unknown public key', async () => {
      expectError(await post({ token: game.publicKey, body: { externalPlayerId: 'p' } }), 403, 'secret_key_required');
      expectError(await post({ token: game.publicKey, rawBody: 'nope' }), 403, 'secret_key_required');
      expectError(await post({ token: unknownPublic(), body: { externalPlayerId: 'p' } }), 401, 'invalid_key');
    });
  });

  describe('body', () => {
    it('415 INVALID_CONTENT_TYPE unless application/json (charset allowed)', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx']) {
        expectError(
          await post({ token: game.secretKey, rawBody: '{"externalPlayerId":"p"}', headers: { 'Content-Type': type } }),
          415,
          'INVALID_CONTENT_TYPE',
        );
      }
      expectError(
        await post({ token: game.secretKey, rawBody: '{"externalPlayerId":"p"}' }),
        415,
        'INVALID_CONTENT_TYPE',
      );
      expectData(
        await post({
          token: game.secretKey,
          rawBody: '{"externalPlayerId":"charset"}',
          headers: { 'Content-Type': 'application/json; charset=utf-8' },
        }),
        'LinkIntentResult',
      );
    });

    it('413 PAYLOAD_TOO_LARGE above 16,384 bytes, before JSON is parsed; exactly 16,384 bytes is read', async () => {
      const big = `{"externalPlayerId":"p","pad":"${'x'.repeat(16_384)}"}`;
      expectError(
        await post({ token: game.secretKey, rawBody: big, headers: { 'Content-Type': 'application/json' } }),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      const exact = `{"externalPlayerId":"p"${' '.repeat(16_384 - 24)}}`;
      expect(Buffer.byteLength(exact)).toBe(16_384);
      expectData(
        await post({ token: game.secretKey, rawBody: exact, headers: { 'Content-Type': 'application/json' } }),
        'LinkIntentResult',
      );
    });

    it('400 INVALID_REQUEST for a body that is not JSON', async () => {
      for (const raw of ['', '{', 'externalPlayerId=p', '\xff']) {
        expectError(
          await post({ token: game.secretKey, rawBody: raw, headers: { 'Content-Type': 'application/json' } }),
          400,
          'INVALID_REQUEST',
        );
      }
    });

    it('400 INVALID_PLAYER: not an object, missing, empty, too long, control characters, not a string, unknown field', async () => {
      const bodies: unknown[] = [
        [],
        'p',
        null,
        {},
        { externalPlayerId: '' },
        { externalPlayerId: 'x'.repeat(201) },
        { externalPlayerId: 'tab\there' },
        { externalPlayerId: 'nul\u0000' },
        { externalPlayerId: 'del\u007f' },
        { externalPlayerId: 'line\nbreak' },
        { externalPlayerId: 42 },
        { externalPlayerId: 'p', extra: true },
      ];
      for (const body of bodies) {
        const answer = await post({ token: game.secretKey, body });
        expect({ body, status: answer.status, code: answer.body?.error?.code }).toEqual({
          body,
          status: 400,
          code: 'INVALID_PLAYER',
        });
      }
    });
  });

  describe('player reads', () => {
    const get = (path: string, token?: string) => api(system.url, 'GET', path, { token });

    it('401 invalid_key, 403 secret_key_required, then the query (400 INVALID_PLAYER)', async () => {
      const created = await intent(system, game);
      for (const path of [`${PLAYERS}/${created.playerId}`, `${PLAYERS}?externalPlayerId=x`, `${PLAYERS}?bad=1`]) {
        expectError(await get(path), 401, 'invalid_key');
        expectError(await get(path, unknownSecret()), 401, 'invalid_key');
        expectError(await get(path, revoked), 401, 'invalid_key');
        expectError(await get(path, unknownPublic()), 401, 'invalid_key');
        expectError(await get(path, game.publicKey), 403, 'secret_key_required');
      }
    });

    it('400 INVALID_PLAYER for a missing, repeated, empty, too long or control-character externalPlayerId, or another parameter', async () => {
      const queries = [
        '',
        '?',
        '?externalPlayerId=',
        '?externalPlayerId=a&externalPlayerId=b',
        `?externalPlayerId=${'x'.repeat(201)}`,
        '?externalPlayerId=a%0Ab',
        '?externalPlayerId=a%00',
        '?externalPlayerId=a&limit=1',
        '?externalplayerid=a',
      ];
      for (const query of queries) {
        const answer = await get(`${PLAYERS}${query}`, game.secretKey);
        expect({ query, status: answer.status, code: answer.body?.error?.code }).toEqual({
          query,
          status: 400,
          code: 'INVALID_PLAYER',
        });
      }
    });

    it('decodes the query: spaces, plus signs and non-ASCII ids', async () => {
      for (const id of ['with space', 'a+b', 'ünï 🎮']) {
        const created = await intent(system, game, id);
        const read = expectData(
          await get(`${PLAYERS}?externalPlayerId=${encodeURIComponent(id)}`, game.secretKey),
          'GamePlayer',
        );
        expect(read.playerId).toBe(created.playerId);
        expect(read.externalPlayerId).toBe(id);
      }
    });

    it('405 with the envelope and Allow for another method on a linking path', async () => {
      const create = await api(system.url, 'GET', LINK_INTENTS, { token: game.secretKey });
      expectError(create, 405, 'method_not_allowed');
      expect(create.headers.get('allow')).toBe('POST');
      const player = await api(system.url, 'DELETE', `${PLAYERS}/x`, { token: game.secretKey });
      expectError(player, 405, 'method_not_allowed');
      expect(player.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD']);
    });
  });

  describe('platform switch', () => {
    it('503 PLATFORM_DISABLED first of all, on every linking route; back to normal when enabled', async () => {
      expect((await admin(system, 'PUT', '/platform', { enabled: false })).status).toBe(200);
      try {
        const answers = [
          await post({ body: { externalPlayerId: 'p' } }),
          await post({ token: game.publicKey, rawBody: 'x' }),
          await api(system.url, 'GET', `${PLAYERS}/x`),
          await api(system.url, 'GET', `${PLAYERS}?externalPlayerId=x`, { token: game.secretKey }),
          await api(system.url, 'POST', '/api/native/v1/link-intents/inspect', { body: {} }),
          await api(system.url, 'POST', '/api/native/v1/link-intents/approve', { body: {} }),
        ];
        for (const answer of answers) expectError(answer, 503, 'PLATFORM_DISABLED');
      } finally {
        expect((await admin(system, 'PUT', '/platform', { enabled: true })).status).toBe(200);
      }
      expectData(await createIntent(system, game.secretKey, { externalPlayerId: 'back' }), 'LinkIntentResult');
    });
  });
});
