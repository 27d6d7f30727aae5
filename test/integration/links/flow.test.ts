// Link intents and players over HTTP on real PostgreSQL and NATS (CONTRACT section 6): creation, inspection,
// approval, the codes of unknown, expired, used and already linked tokens, player reads scoped to the key's game, and
// the 10-minute expiry with the ledger's link clock set by the test (no waiting).
import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import { ok } from '../../support/console.ts';
import { sql } from '../../support/database.ts';
import { api, startTestSystem, type TestSystem } from '../../support/system.ts';
import {
  APPROVE,
  createIntent,
  expectData,
  expectError,
  type Game,
  gameWithKeys,
  INSPECT,
  intent,
  intentRows,
  LINK_TOKEN,
  native,
  nativeSession,
  PLAYERS,
  playerRow,
} from './helpers.ts';

describe('link intents and players', () => {
  let system: TestSystem;
  let game: Game;

  beforeAll(async () => {
    system = await startTestSystem({ env: { SUPPORTED_COUNTRIES: 'DE,FR', NATIVE_MIN_BUILD: '100' } });
    game = await gameWithKeys(system);
  });
  afterAll(async () => {
    system?.clock.reset();
    await system?.stop();
  });
  afterEach(() => system?.clock.reset());

  describe('creation', () => {
    it('creates the player and a one-time token valid 10 minutes; only its SHA-256 is stored', async () => {
      const before = Date.now();
      const created = await intent(system, game, 'Ada#1 ünïcode 🎮');
      expect(created.linkToken).toMatch(LINK_TOKEN);
      const expiresAt = Date.parse(created.expiresAt);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 10 * 60_000 - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 10 * 60_000 + 1000);
      expect(await playerRow(system, created.playerId)).toEqual({
        external_player_id: 'Ada#1 ünïcode 🎮',
        credits_user_id: null,
        username: null,
        linked_at: null,
      });
      const [row, ...more] = await intentRows(system, created.playerId);
      expect(more).toHaveLength(0);
      expect(row.lifetime).toEqual({ minutes: 10 });
      expect(Buffer.from(row.token_hash).equals(createHash('sha256').update(created.linkToken).digest())).toBe(true);
      expect(row.consumed_at).toBeNull();
    });

    it('finds the existing player for the same externalPlayerId and issues a new, different token each time', async () => {
      const first = await intent(system, game, 'same-player');
      const second = await intent(system, game, 'same-player');
      expect(second.playerId).toBe(first.playerId);
      expect(second.linkToken).not.toBe(first.linkToken);
      expect(await intentRows(system, first.playerId)).toHaveLength(2);
    });

    it('the same externalPlayerId in another game is another player', async () => {
      const other = await gameWithKeys(system);
      const a = await intent(system, game, 'shared-name');
      const b = await intent(system, other, 'shared-name');
      expect(b.playerId).not.toBe(a.playerId);
    });

    it('accepts externalPlayerId of exactly 1 and 200 characters (200 code points, astral ones included)', async () => {
      await intent(system, game, 'x');
      await intent(system, game, 'y'.repeat(200));
      await intent(system, game, '🎮'.repeat(200));
    });

    it('409 already_linked for a player that is linked, and no intent is stored', async () => {
      const created = await intent(system, game);
      const session = await nativeSession(system);
      expectData(await native(system, APPROVE, session, { linkToken: created.linkToken }), 'LinkApproval');
      const again = await createIntent(system, game.secretKey, { externalPlayerId: created.externalPlayerId });
      expectError(again, 409, 'already_linked');
      expect(await intentRows(system, created.playerId)).toHaveLength(1);
    });

    it('401 invalid_key for a revoked secret key, immediately after revokeKey', async () => {
      const other = await gameWithKeys(system);
      await intent(system, other);
      await ok(system, other.token, { type: 'revokeKey', keyId: other.secretKeyId });
      expectError(
        await createIntent(system, other.secretKey, { externalPlayerId: 'after-revoke' }),
        401,
        'invalid_key',
      );
    });

    it('the revocation is rechecked inside the transaction: a creation racing a revokeKey waits for it, then 401', async () => {
      const other = await gameWithKeys(system);
      const client = new pg.Client({ connectionString: system.databaseUrl });
      await client.connect();
      try {
        // A revocation in progress (what revokeKey does, held open by the test).
        await client.query('begin');
        await client.query('update ledger.keys set revoked_at = now() where id = $1', [other.secretKeyId]);
        let answered = false;
        const pending = createIntent(system, other.secretKey, { externalPlayerId: 'racing-revoke' }).finally(() => {
          answered = true;
        });
        // The creation's transaction waits on the key row (no timing: wait until PostgreSQL reports the lock wait).
        // A creation that did not wait would answer while the revocation is still open: that is the failure.
        for (;;) {
          if (answered)
            throw new Error(`the creation answered without waiting: ${JSON.stringify((await pending).body)}`);
          const waiting = await client.query(
            `select 1 from pg_stat_activity
              where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`,
          );
          if (waiting.rowCount) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        await client.query('commit');
        expectError(await pending, 401, 'invalid_key');
      } finally {
        await client.end();
      }
      const players = await sql(
        system.databaseUrl!,
        `select 1 from ledger.players where external_player_id = 'racing-revoke'`,
      );
      expect(players).toHaveLength(0);
    });
  });

  describe('inspection', () => {
    it('answers the game name, the player and the expiry, and does not consume the token', async () => {
      const created = await intent(system, game, 'inspected');
      const session = await nativeSession(system);
      for (let i = 0; i < 2; i++) {
        const inspection = expectData(
          await native(system, INSPECT, session, { linkToken: created.linkToken }),
          'LinkInspection',
        );
        expect(inspection).toEqual({
          gameName: game.gameName,
          externalPlayerId: 'inspected',
          expiresAt: created.expiresAt,
          mode: 'sandbox',
        });
      }
      expect((await intentRows(system, created.playerId))[0].consumed_at).toBeNull();
      expectData(await native(system, APPROVE, session, { linkToken: created.linkToken }), 'LinkApproval');
    });

    it('404 invalid_link for an unknown token, well formed or not', async () => {
      const session = await nativeSession(system);
      const unknown = `cr_link_sandbox_${'A'.repeat(43)}`;
      expectError(await native(system, INSPECT, session, { linkToken: unknown }), 404, 'invalid_link');
      expectError(await native(system, INSPECT, session, { linkToken: 'x'.repeat(32) }), 404, 'invalid_link');
      expectError(await native(system, INSPECT, session, { linkToken: 'y'.repeat(200) }), 404, 'invalid_link');
    });

    it('409 invalid_link for a used token; 409 already_linked when the player was linked through another token', async () => {
      const first = await intent(system, game, 'two-tokens');
      const second = await intent(system, game, 'two-tokens');
      const session = await nativeSession(system);
      expectData(await native(system, APPROVE, session, { linkToken: first.linkToken }), 'LinkApproval');
      expectError(await native(system, INSPECT, session, { linkToken: first.linkToken }), 409, 'invalid_link');
      expectError(await native(system, INSPECT, session, { linkToken: second.linkToken }), 409, 'already_linked');
    });
  });

  describe('approval', () => {
    it('links the player to the account (creditsUserId = sub, username of the account, linkedAt) and consumes the token', async () => {
      const created = await intent(system, game, 'approved');
      const session = await nativeSession(system, { username: 'Grace' });
      const approval = expectData(
        await native(system, APPROVE, session, { linkToken: created.linkToken }),
        'LinkApproval',
      );
      expect(approval).toEqual({ playerId: created.playerId, gameId: game.gameId, linked: true, mode: 'sandbox' });
      const row = await playerRow(system, created.playerId);
      expect(row).toEqual({
        external_player_id: 'approved',
        credits_user_id: session.sub,
        username: 'Grace',
        linked_at: expect.any(Date),
      });
      const [stored] = await intentRows(system, created.playerId);
      expect(stored.consumed_by).toBe(session.sub);
      expect(stored.consumed_at).toEqual(row!.linked_at);
    });

    it('an account without a username links with username null', async () => {
      const created = await intent(system, game);
      const session = await nativeSession(system);
      expectData(await native(system, APPROVE, session, { linkToken: created.linkToken }), 'LinkApproval');
      expect((await playerRow(system, created.playerId))!.username).toBeNull();
    });

    it('404 invalid_link for an unknown token; 409 invalid_link for a used one, by anyone', async () => {
      const session = await nativeSession(system);
      expectError(
        await native(system, APPROVE, session, { linkToken: `cr_link_sandbox_${'b'.repeat(43)}` }),
        404,
        'invalid_link',
      );
      const created = await intent(system, game);
      expectData(await native(system, APPROVE, session, { linkToken: created.linkToken }), 'LinkApproval');
      expectError(await native(system, APPROVE, session, { linkToken: created.linkToken }), 409, 'invalid_link');
      const other = await nativeSession(system);
      expectError(await native(system, APPROVE, other, { linkToken: created.linkToken }), 409, 'invalid_link');
    });

    it('409 already_linked when the player was linked through another token; that token stays unused', async () => {
      const first = await intent(system, game, 'contested');
      const second = await intent(system, game, 'contested');
      expectData(
        await native(system, APPROVE, await nativeSession(system), { linkToken: first.linkToken }),
        'LinkApproval',
      );
      const late = await nativeSession(system);
      expectError(await native(system, APPROVE, late, { linkToken: second.linkToken }), 409, 'already_linked');
      const rows = await intentRows(system, first.playerId);
      expect(rows.map((r) => r.consumed_at === null)).toEqual([false, true]);
    });

    it('409 already_linked when the account is linked to another player of the same game; other games are fine', async () => {
      const session = await nativeSession(system);
      const mine = await intent(system, game);
      expectData(await native(system, APPROVE, session, { linkToken: mine.linkToken }), 'LinkApproval');
      const another = await intent(system, game);
      expectError(await native(system, APPROVE, session, { linkToken: another.linkToken }), 409, 'already_linked');
      // The refused token is not consumed: another account can still use it.
      expectData(
        await native(system, APPROVE, await nativeSession(system), { linkToken: another.linkToken }),
        'LinkApproval',
      );
      const otherGame = await gameWithKeys(system);
      const elsewhere = await intent(system, otherGame);
      expectData(await native(system, APPROVE, session, { linkToken: elsewhere.linkToken }), 'LinkApproval');
    });

    it('one account approving tokens of two players of one game at once: one links, the other is already_linked', async () => {
      const session = await nativeSession(system);
      const a = await intent(system, game);
      const b = await intent(system, game);
      const answers = await Promise.all([
        native(system, APPROVE, session, { linkToken: a.linkToken }),
        native(system, APPROVE, session, { linkToken: b.linkToken }),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
      expectError(answers.find((r) => r.status === 409)!, 409, 'already_linked');
      const linked = [await playerRow(system, a.playerId), await playerRow(system, b.playerId)].filter(
        (row) => row!.credits_user_id === session.sub,
      );
      expect(linked).toHaveLength(1);
    });
  });

  describe('expiry (the ledger link clock set by the test)', () => {
    const T = new Date('2030-01-15T12:00:00.000Z');
    const plus = (ms: number) => new Date(T.getTime() + ms);

    it('a token is valid until 10 minutes after creation, exclusive; then inspect and approve answer 409 invalid_link', async () => {
      system.clock.set(T);
      const created = await intent(system, game, 'expiring');
      expect(created.expiresAt).toBe('2030-01-15T12:10:00.000Z');
      const session = await nativeSession(system);

      system.clock.set(plus(10 * 60_000 - 1));
      expectData(await native(system, INSPECT, session, { linkToken: created.linkToken }), 'LinkInspection');

      system.clock.set(plus(10 * 60_000));
      expectError(await native(system, INSPECT, session, { linkToken: created.linkToken }), 409, 'invalid_link');
      expectError(await native(system, APPROVE, session, { linkToken: created.linkToken }), 409, 'invalid_link');
      expect(await playerRow(system, created.playerId)).toMatchObject({ credits_user_id: null, linked_at: null });
      expect((await intentRows(system, created.playerId))[0].consumed_at).toBeNull();

      // The game server asks for a new token; the same player gets it.
      const renewed = await intent(system, game, 'expiring');
      expect(renewed.playerId).toBe(created.playerId);
      expect(renewed.expiresAt).toBe('2030-01-15T12:20:00.000Z');
      expectData(await native(system, APPROVE, session, { linkToken: renewed.linkToken }), 'LinkApproval');
    });

    it('approval at the last millisecond links; linkedAt is the approval time', async () => {
      system.clock.set(T);
      const created = await intent(system, game);
      system.clock.set(plus(10 * 60_000 - 1));
      const session = await nativeSession(system);
      expectData(await native(system, APPROVE, session, { linkToken: created.linkToken }), 'LinkApproval');
      const read = expectData(
        await api(system.url, 'GET', `${PLAYERS}/${created.playerId}`, { token: game.secretKey }),
        'GamePlayer',
      );
      expect(read.linkedAt).toBe('2030-01-15T12:09:59.999Z');
    });

    it('a used token that has also expired is still "used" (409 invalid_link)', async () => {
      system.clock.set(T);
      const created = await intent(system, game);
      const session = await nativeSession(system);
      expectData(await native(system, APPROVE, session, { linkToken: created.linkToken }), 'LinkApproval');
      system.clock.set(plus(60 * 60_000));
      const answer = await native(system, APPROVE, session, { linkToken: created.linkToken });
      expectError(answer, 409, 'invalid_link');
      expect(answer.body.error.message).toMatch(/used/);
    });
  });

  describe('player reads', () => {
    it('by id and by externalPlayerId: unlinked, then linked with linkedAt', async () => {
      const created = await intent(system, game, 'read me');
      const byId = () => api(system.url, 'GET', `${PLAYERS}/${created.playerId}`, { token: game.secretKey });
      const byExternal = () =>
        api(system.url, 'GET', `${PLAYERS}?externalPlayerId=${encodeURIComponent('read me')}`, {
          token: game.secretKey,
        });
      const unlinked = {
        playerId: created.playerId,
        externalPlayerId: 'read me',
        linked: false,
        linkedAt: null,
        mode: 'sandbox',
      };
      expect(expectData(await byId(), 'GamePlayer')).toEqual(unlinked);
      expect(expectData(await byExternal(), 'GamePlayer')).toEqual(unlinked);

      const session = await nativeSession(system);
      expectData(await native(system, APPROVE, session, { linkToken: created.linkToken }), 'LinkApproval');
      const linked = expectData(await byId(), 'GamePlayer');
      expect(linked).toEqual({ ...unlinked, linked: true, linkedAt: expect.any(String) });
      expect(expectData(await byExternal(), 'GamePlayer')).toEqual(linked);
      const row = await playerRow(system, created.playerId);
      expect(Date.parse(linked.linkedAt)).toBe((row!.linked_at as Date).getTime());
      expect((await byId()).headers.get('cache-control')).toBe('no-store');
    });

    it("404 not_found for another game's player, an unknown id, a malformed id and an unknown externalPlayerId", async () => {
      const other = await gameWithKeys(system);
      const theirs = await intent(system, other, 'theirs');
      const paths = [
        `${PLAYERS}/${theirs.playerId}`,
        `${PLAYERS}/${randomUUID()}`,
        `${PLAYERS}/not-a-uuid`,
        `${PLAYERS}?externalPlayerId=theirs`,
        `${PLAYERS}?externalPlayerId=nobody`,
      ];
      for (const path of paths) {
        const answer = await api(system.url, 'GET', path, { token: game.secretKey });
        expect({ path, status: answer.status, code: answer.body?.error?.code }).toEqual({
          path,
          status: 404,
          code: 'not_found',
        });
        expectError(answer, 404, 'not_found');
      }
      // The owner of that game reads its player.
      expectData(
        await api(system.url, 'GET', `${PLAYERS}/${theirs.playerId}`, { token: other.secretKey }),
        'GamePlayer',
      );
    });

    it('the player id is case-insensitive, answered in lower case', async () => {
      const created = await intent(system, game);
      const read = expectData(
        await api(system.url, 'GET', `${PLAYERS}/${created.playerId.toUpperCase()}`, { token: game.secretKey }),
        'GamePlayer',
      );
      expect(read.playerId).toBe(created.playerId);
    });
  });
});
