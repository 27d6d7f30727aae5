// POST /api/game-sdk/v2/events over HTTP on real PostgreSQL and NATS: every edge error code of CONTRACT section 7,
// the order in which they win, and both sides of every body, timestamp and metadata limit.
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { issueKeyValue } from '#runtime/credentials/keys.ts';
import {
  EVENTS_PATH,
  type EventBody,
  eventBody,
  expectDecision,
  expectError,
  postEvent,
  postRaw,
} from '../../support/ingest.ts';
import {
  createEventWorld,
  createGame,
  createKey,
  createPlayer,
  type EventWorld,
  type KeyFixture,
  revokeKey,
} from '../../support/ledger-fixtures.ts';
import { admin, api, startTestSystem, type TestSystem } from '../../support/system.ts';

const LIMIT = 16_384;

/** A body of exactly `bytes` UTF-8 bytes: a valid event padded with JSON whitespace. */
function bodyOfSize(world: EventWorld, bytes: number): string {
  const json = JSON.stringify(eventBody(world));
  if (Buffer.byteLength(json) > bytes) throw new Error('body too small for the event');
  return json + ' '.repeat(bytes - Buffer.byteLength(json));
}

/** POST without Content-Length (chunked transfer encoding), as a streaming client would send it. */
function postChunked(base: string, key: string, body: string): Promise<{ status: number; body: any }> {
  const url = new URL(EVENTS_PATH, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    req.on('error', reject);
    const bytes = Buffer.from(body);
    // Several chunks, so that the limit is crossed while streaming.
    for (let i = 0; i < bytes.length; i += 4000) req.write(bytes.subarray(i, i + 4000));
    req.end();
  });
}

describe('POST /api/game-sdk/v2/events: edge checks', () => {
  let system: TestSystem;
  let db: string;
  let world: EventWorld;
  let publicKey: KeyFixture;

  beforeAll(async () => {
    system = await startTestSystem();
    db = system.databaseUrl!;
    world = await createEventWorld(db, { budgetCredits: 1_000_000_000, dailyPlayerCapCredits: 1_000_000_000 });
    publicKey = await createKey(db, world.game, 'public');
  });
  afterAll(async () => system?.stop());

  const accept = async (body: unknown) => expectDecision(await postEvent(system.url, world.key.value, body));

  describe('platform switch', () => {
    afterEach(async () => {
      expect((await admin(system, 'PUT', '/platform', { enabled: true })).status).toBe(200);
    });

    it('answers 503 PLATFORM_DISABLED before looking at the credential or the body', async () => {
      expect((await admin(system, 'PUT', '/platform', { enabled: false })).status).toBe(200);
      expectError(await postRaw(system.url, undefined, 'not json', 'text/plain'), 503, 'PLATFORM_DISABLED');
      const response = await postEvent(system.url, world.key.value, eventBody(world));
      expectError(response, 503, 'PLATFORM_DISABLED');
      expect(response.headers.get('retry-after')).toBe('1');
    });
  });

  describe('credential', () => {
    it.each([
      ['no Authorization header', undefined],
      ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
      ['an empty bearer', 'Bearer '],
      ['two spaces', 'Bearer  x'],
      ['not a key', 'Bearer hello'],
      ['a key one character short', `Bearer cr_sk_sandbox_${'A'.repeat(42)}`],
      ['a key one character long', `Bearer cr_sk_sandbox_${'A'.repeat(44)}`],
      ['a key with a character outside base64url', `Bearer cr_sk_sandbox_${'A'.repeat(42)}+`],
      ['a link token', `Bearer cr_link_sandbox_${'A'.repeat(43)}`],
    ])('missing or malformed (%s): 401 invalid_key', async (_what, authorization) => {
      const headers: Record<string, string> = authorization === undefined ? {} : { Authorization: authorization };
      expectError(await postEvent(system.url, undefined, eventBody(world), { headers }), 401, 'invalid_key');
    });

    it('an unknown secret key: 401 invalid_key', async () => {
      expectError(await postEvent(system.url, issueKeyValue('secret').value, eventBody(world)), 401, 'invalid_key');
    });

    it('a revoked secret key: 401 invalid_key, and nothing is stored', async () => {
      const key = await createKey(db, world.game, 'secret');
      await accept(eventBody(world));
      await revokeKey(db, key.id);
      const body = eventBody(world);
      expectError(await postEvent(system.url, key.value, body), 401, 'invalid_key');
      // The same event through a valid key is still fresh.
      expect((await accept(body)).replayed).toBe(false);
    });

    it('a public key of the game: 403 secret_key_required', async () => {
      expectError(await postEvent(system.url, publicKey.value, eventBody(world)), 403, 'secret_key_required');
    });

    it('an unknown or revoked public key: 401 invalid_key (unknown or revoked comes first)', async () => {
      expectError(await postEvent(system.url, issueKeyValue('public').value, eventBody(world)), 401, 'invalid_key');
      const revoked = await createKey(db, world.game, 'public');
      await revokeKey(db, revoked.id);
      expectError(await postEvent(system.url, revoked.value, eventBody(world)), 401, 'invalid_key');
    });

    it('accepts the bearer scheme in any letter case', async () => {
      const response = await postEvent(system.url, undefined, eventBody(world), {
        headers: { Authorization: `bearer ${world.key.value}` },
      });
      expect(expectDecision(response).status).toBe('accepted');
    });
  });

  describe('order of the checks: an unknown or revoked key answers 401 before any body error', () => {
    const unknown = issueKeyValue('secret').value;
    it.each([
      ['a wrong content type', () => postRaw(system.url, unknown, JSON.stringify(eventBody(world)), 'text/plain')],
      ['a body too large', () => postRaw(system.url, unknown, bodyOfSize(world, LIMIT + 1), 'application/json')],
      ['a body that is not JSON', () => postRaw(system.url, unknown, '{', 'application/json')],
      ['a schema violation', () => postEvent(system.url, unknown, { ...eventBody(world), extra: 1 })],
      ['bad metadata', () => postEvent(system.url, unknown, eventBody(world, { metadata: { s: 'a\u0000' } }))],
      ['a player of no game', () => postEvent(system.url, unknown, eventBody(world, { playerId: randomUUID() }))],
    ])('%s', async (_what, send) => {
      expectError(await send(), 401, 'invalid_key');
    });

    it('a revoked key with a bad body: 401', async () => {
      const key = await createKey(db, world.game, 'secret');
      await revokeKey(db, key.id);
      expectError(await postRaw(system.url, key.value, '{', 'application/json'), 401, 'invalid_key');
    });

    it('a public key with a bad body: 403 before the body errors', async () => {
      expectError(await postRaw(system.url, publicKey.value, '{', 'text/plain'), 403, 'secret_key_required');
    });

    it('content type before size, size before JSON, JSON before schema, schema before metadata', async () => {
      const key = world.key.value;
      expectError(await postRaw(system.url, key, `{${' '.repeat(LIMIT)}`, 'text/plain'), 415, 'INVALID_CONTENT_TYPE');
      expectError(
        await postRaw(system.url, key, `{${' '.repeat(LIMIT)}`, 'application/json'),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      expectError(await postRaw(system.url, key, '{"extra": 1', 'application/json'), 400, 'INVALID_REQUEST');
      const both = eventBody(world, { eventType: 'Bad', metadata: { s: '\u0000' } });
      expectError(await postEvent(system.url, key, both), 400, 'invalid_event');
    });

    it('metadata before the player check', async () => {
      const body = eventBody(world, { playerId: randomUUID(), metadata: { s: '\u0000' } });
      expectError(await postEvent(system.url, world.key.value, body), 400, 'invalid_metadata');
    });
  });

  describe('content type', () => {
    it.each([
      ['missing', undefined],
      ['text/plain', 'text/plain'],
      ['form data', 'application/x-www-form-urlencoded'],
      ['a JSON-like subtype', 'application/json-patch+json'],
      ['application/jsonx', 'application/jsonx'],
    ])('%s: 415 INVALID_CONTENT_TYPE', async (_what, type) => {
      expectError(
        await postRaw(system.url, world.key.value, JSON.stringify(eventBody(world)), type),
        415,
        'INVALID_CONTENT_TYPE',
      );
    });

    it.each(['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset=UTF-8'])(
      '%s is accepted',
      async (type) => {
        const response = await postRaw(system.url, world.key.value, JSON.stringify(eventBody(world)), type);
        expect(expectDecision(response).status).toBe('accepted');
      },
    );
  });

  describe('body size, counted on the raw bytes', () => {
    it('16,384 bytes are accepted, 16,385 are 413 PAYLOAD_TOO_LARGE (with Content-Length)', async () => {
      const exact = await postRaw(system.url, world.key.value, bodyOfSize(world, LIMIT), 'application/json');
      expect(expectDecision(exact).status).toBe('accepted');
      const over = await postRaw(system.url, world.key.value, bodyOfSize(world, LIMIT + 1), 'application/json');
      expectError(over, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('the same bound without Content-Length (chunked)', async () => {
      const exact = await postChunked(system.url, world.key.value, bodyOfSize(world, LIMIT));
      expect(exact.status).toBe(200);
      expect(exact.body.data.status).toBe('accepted');
      const over = await postChunked(system.url, world.key.value, bodyOfSize(world, LIMIT + 1));
      expect(over).toEqual({
        status: 413,
        body: { error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } },
      });
    });

    it('bytes, not characters: multi-byte UTF-8 counts per byte', async () => {
      // metadata keeps to its own limit; the padding is whitespace and one 3-byte character in a string
      const base = JSON.stringify(eventBody(world, { metadata: { s: '€' } }));
      const padded = (total: number) => base + ' '.repeat(total - Buffer.byteLength(base));
      expect(base.length).toBeLessThan(Buffer.byteLength(base));
      expect(expectDecision(await postRaw(system.url, world.key.value, padded(LIMIT), 'application/json')).status).toBe(
        'accepted',
      );
      expectError(
        await postRaw(system.url, world.key.value, padded(LIMIT + 1), 'application/json'),
        413,
        'PAYLOAD_TOO_LARGE',
      );
    });
  });

  describe('JSON', () => {
    it.each([
      ['an empty body', ''],
      ['a truncated object', '{"eventId":'],
      ['a trailing comma', '{"a":1,}'],
      ['single quotes', "{'a':1}"],
      ['two documents', '{} {}'],
    ])('%s: 400 INVALID_REQUEST', async (_what, text) => {
      expectError(await postRaw(system.url, world.key.value, text, 'application/json'), 400, 'INVALID_REQUEST');
    });

    it('bytes that are not UTF-8: 400 INVALID_REQUEST', async () => {
      const bytes = Buffer.concat([Buffer.from('{"eventType":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
      expectError(await postRaw(system.url, world.key.value, bytes, 'application/json'), 400, 'INVALID_REQUEST');
    });

    // CONTRACT section 10: bodies are I-JSON; what JSON.parse would let through is not JSON here, and nothing is
    // stored (the same eventId in a valid body is still a fresh event).
    const raw = (body: EventBody, from: string, to: string) => {
      const text = JSON.stringify(body);
      if (!text.includes(from)) throw new Error(`${from} is not in ${text}`);
      return text.replace(from, to);
    };
    it.each([
      [
        'a duplicated member name (the last would win)',
        (b: EventBody) => raw(b, '"eventType":', '"eventType":"unknown.thing","eventType":'),
      ],
      [
        'the same member twice with the same value',
        (b: EventBody) => raw(b, '"playerId":', `"eventId":"${b.eventId}","playerId":`),
      ],
      [
        'a duplicated name spelled with an escape',
        (b: EventBody) => raw(b, '"playerId":', '"\\u0065ventId":"x","playerId":'),
      ],
      [
        'a duplicated name inside metadata',
        (b: EventBody) => raw({ ...b, metadata: { a: 1 } }, '"a":1', '"a":1,"a":2'),
      ],
      ['a lone surrogate in eventType', (b: EventBody) => raw(b, '"eventType":"', '"eventType":"\\ud800')],
      // Inside metadata a lone surrogate or an out-of-range number is a metadata fault: metadata-faults.test.ts.
    ])('not I-JSON, %s: 400 INVALID_REQUEST, and nothing is stored', async (_what, make) => {
      const body = eventBody(world);
      const response = await postRaw(system.url, world.key.value, make(body), 'application/json');
      expectError(response, 400, 'INVALID_REQUEST');
      expect((await accept(body)).replayed).toBe(false);
    });

    it('the duplicated eventType of the issue is refused rather than decided with the last value', async () => {
      const body = eventBody(world);
      const text = JSON.stringify(body).replace('"eventType":', '"eventType":"unknown.thing","eventType":');
      const response = await postRaw(system.url, world.key.value, text, 'application/json');
      expectError(response, 400, 'INVALID_REQUEST');
      expect(response.body.error.message).toMatch(/duplicated member name/);
    });

    it('an escaped member name is the same name: same payload, same hash (also after a `\\` name)', async () => {
      // The poison of V8's member-name cache (nodejs/node#63785): a `\` member after `h`.
      const poison = eventBody(world, { metadata: { h: [], '\\': 0 } });
      expect((await accept(poison)).status).toBe('accepted');
      const body = eventBody(world, { metadata: { h: 1, é: 2 } });
      const escaped = JSON.stringify(body).replace('"é"', '"\\u00e9"');
      expect(escaped).toContain('"h":1,"\\u00e9":2');
      expect(expectDecision(await postRaw(system.url, world.key.value, escaped, 'application/json')).replayed).toBe(
        false,
      );
      expect((await accept(body)).replayed).toBe(true);
    });

    it('precision beyond a double is not out of range: 1e-400 and 0.1000000000000000055511 are accepted', async () => {
      const text = JSON.stringify(eventBody(world, { metadata: { n: 0, m: 0 } }))
        .replace('"n":0', '"n":1e-400')
        .replace('"m":0', '"m":0.1000000000000000055511151231257827');
      expect(expectDecision(await postRaw(system.url, world.key.value, text, 'application/json')).status).toBe(
        'accepted',
      );
    });
  });

  describe('schema: 400 invalid_event', () => {
    const cases: Array<[string, (w: EventWorld) => unknown]> = [
      ['an array', () => []],
      ['a string', () => 'event'],
      ['null', () => null],
      ['an unknown field', (w) => ({ ...eventBody(w), reward: 5 })],
      ['rewardCredits chosen by the caller', (w) => ({ ...eventBody(w), rewardCredits: 5 })],
      ['no eventId', (w) => ({ ...eventBody(w), eventId: undefined })],
      ['no playerId', (w) => ({ ...eventBody(w), playerId: undefined })],
      ['no eventType', (w) => ({ ...eventBody(w), eventType: undefined })],
      ['no occurredAt', (w) => ({ ...eventBody(w), occurredAt: undefined })],
      ['eventId not a UUID', (w) => eventBody(w, { eventId: 'event-1' })],
      ['eventId of version 0', (w) => eventBody(w, { eventId: '123e4567-e89b-02d3-a456-426614174000' })],
      ['eventId with a bad variant', (w) => eventBody(w, { eventId: '123e4567-e89b-42d3-c456-426614174000' })],
      ['playerId a number', (w) => eventBody(w, { playerId: 42 as never })],
      ['eventType with upper case', (w) => eventBody(w, { eventType: 'Level.complete' })],
      ['eventType starting with a digit', (w) => eventBody(w, { eventType: '1level' })],
      ['eventType empty', (w) => eventBody(w, { eventType: '' })],
      ['eventType of 65 characters', (w) => eventBody(w, { eventType: `a${'b'.repeat(64)}` })],
      ['occurredAt a number', (w) => eventBody(w, { occurredAt: Date.now() as never })],
      ['metadata an array', (w) => eventBody(w, { metadata: [] })],
      ['metadata null', (w) => eventBody(w, { metadata: null })],
      ['metadata a string', (w) => eventBody(w, { metadata: 'x' })],
    ];
    it.each(cases)('%s', async (_what, make) => {
      expectError(await postEvent(system.url, world.key.value, make(world)), 400, 'invalid_event');
    });

    it('eventType of 64 characters and the nil and max UUIDs are accepted by the schema', async () => {
      const long = `a${'b'.repeat(63)}`;
      const decision = await accept(eventBody(world, { eventType: long }));
      expect(decision).toMatchObject({ eventType: long, reason: 'unknown_or_inactive_rule' });
      const nil = await accept(eventBody(world, { eventId: '00000000-0000-0000-0000-000000000000' }));
      expect(nil.eventId).toBe('00000000-0000-0000-0000-000000000000');
      const max = await accept(eventBody(world, { eventId: 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF' }));
      expect(max.eventId).toBe('ffffffff-ffff-ffff-ffff-ffffffffffff');
    });
  });

  describe('occurredAt grammar', () => {
    // A valid instant near now in the given spelling: the decision is accepted (inside the window).
    const now = new Date();
    const pad = (n: number, w = 2) => String(n).padStart(w, '0');
    const utc = (d: Date) =>
      `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
    const shifted = (minutes: number) => new Date(now.getTime() + minutes * 60_000);

    it.each([
      ['minutes only, Z', () => `${utc(now)}Z`],
      ['seconds', () => `${utc(now)}:${pad(now.getUTCSeconds())}Z`],
      ['one fraction digit', () => `${utc(now)}:${pad(now.getUTCSeconds())}.5Z`],
      ['nine fraction digits', () => `${utc(now)}:${pad(now.getUTCSeconds())}.123456789Z`],
      ['+00:00', () => `${utc(now)}+00:00`],
      ['-00:00', () => `${utc(now)}-00:00`],
      ['a positive offset', () => `${utc(shifted(90))}+01:30`],
      ['a negative offset', () => `${utc(shifted(-600))}-10:00`],
      ['the largest offset', () => `${utc(shifted(23 * 60 + 59))}+23:59`],
    ])('%s is accepted', async (_what, make) => {
      const occurredAt = make();
      const decision = await accept(eventBody(world, { occurredAt }));
      expect(decision.status).toBe('accepted');
      // Normalized to UTC RFC 3339 with milliseconds.
      expect(decision.occurredAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Math.abs(Date.parse(decision.occurredAt) - now.getTime())).toBeLessThan(120_000);
    });

    it('normalizes an offset to UTC and truncates the fraction to milliseconds', async () => {
      const occurredAt = `${utc(shifted(60))}:07.98765+01:00`;
      const decision = await accept(eventBody(world, { occurredAt }));
      expect(decision.occurredAt).toBe(`${utc(now)}:07.987Z`);
    });

    it.each([
      ['no offset', '2026-02-03T04:05:06'],
      ['no time', '2026-02-03'],
      ['lower-case t', '2026-02-03t04:05:06Z'],
      ['lower-case z', '2026-02-03T04:05:06z'],
      ['a space separator', '2026-02-03 04:05:06Z'],
      ['hour 24', '2026-02-03T24:00Z'],
      ['minute 60', '2026-02-03T04:60Z'],
      ['second 60 (leap second)', '2026-02-03T04:05:60Z'],
      ['a fraction without seconds', '2026-02-03T04:05.5Z'],
      ['an empty fraction', '2026-02-03T04:05:06.Z'],
      ['an offset hour 24', '2026-02-03T04:05+24:00'],
      ['an offset minute 60', '2026-02-03T04:05+01:60'],
      ['an offset without colon', '2026-02-03T04:05+0100'],
      ['29 February of a common year', '2026-02-29T04:05Z'],
      ['29 February of 1900', '1900-02-29T04:05Z'],
      ['31 April', '2026-04-31T04:05Z'],
      ['month 13', '2026-13-01T04:05Z'],
      ['day 0', '2026-01-00T04:05Z'],
      ['a two-digit year', '26-02-03T04:05Z'],
      ['a five-digit year', '12026-02-03T04:05Z'],
    ])('%s: 400 invalid_event', async (_what, occurredAt) => {
      expectError(await postEvent(system.url, world.key.value, eventBody(world, { occurredAt })), 400, 'invalid_event');
    });

    it.each([
      ['29 February of a leap year', '2024-02-29T12:00Z', '2024-02-29T12:00:00.000Z'],
      ['29 February of 2000', '2000-02-29T12:00:00+00:00', '2000-02-29T12:00:00.000Z'],
      ['the last instant of 9999', '9999-12-31T23:59:59.9999Z', '9999-12-31T23:59:59.999Z'],
      ['the first instant of 0000', '0000-01-01T00:00Z', '0000-01-01T00:00:00.000Z'],
    ])('%s is valid input (and out of the window)', async (_what, occurredAt, normalized) => {
      const decision = await accept(eventBody(world, { occurredAt }));
      expect(decision).toMatchObject({ status: 'rejected', reason: 'timestamp_out_of_window', occurredAt: normalized });
    });
  });

  describe('metadata limits: 400 invalid_metadata beyond, accepted at the bound', () => {
    const nest = (levels: number): Record<string, unknown> => {
      let value: Record<string, unknown> = {};
      for (let i = 1; i < levels; i++) value = { a: value };
      return value;
    };
    const entries = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    // {"s":"xxx"} is 8 bytes plus the string; 3-byte characters count 3.
    const sized = (bytes: number) => ({ s: 'x'.repeat(bytes - 8) });
    const sizedMultiByte = (bytes: number) => ({
      s: `${'€'.repeat(Math.floor((bytes - 8) / 3))}${'x'.repeat((bytes - 8) % 3)}`,
    });

    const pairs: Array<[string, unknown, unknown]> = [
      ['canonical size 4,096 bytes', sized(4096), sized(4097)],
      ['canonical size counts UTF-8 bytes', sizedMultiByte(4096), sizedMultiByte(4097)],
      ['depth 6 (the metadata object is 1)', nest(6), nest(7)],
      ['depth counts arrays', { a: [[[[[]]]]] }, { a: [[[[[[]]]]]] }],
      ['100 items per array', { a: Array(100).fill(0) }, { a: Array(101).fill(0) }],
      ['100 entries per object', entries(100), entries(101)],
      ['100 entries in a nested object', { n: entries(100) }, { n: entries(101) }],
      ['NUL in a string', { s: 'a\u0001b' }, { s: 'a\u0000b' }],
      ['NUL in a key', { 'a\u0001': 1 }, { 'a\u0000': 1 }],
    ];
    it.each(pairs)('%s', async (_what, within, beyond) => {
      expect((await accept(eventBody(world, { metadata: within }))).status).toBe('accepted');
      expectError(
        await postEvent(system.url, world.key.value, eventBody(world, { metadata: beyond })),
        400,
        'invalid_metadata',
      );
    });

    it('surrogate pairs in strings and keys are accepted (a lone surrogate: metadata-faults.test.ts)', async () => {
      expect((await accept(eventBody(world, { metadata: { s: '\ud83d\ude00', '\ud83d\ude00': 1 } }))).status).toBe(
        'accepted',
      );
    });

    it('finite numbers: 1e308 and -1e308 are accepted (1e309: metadata-faults.test.ts)', async () => {
      const raw = (number: string) =>
        JSON.stringify(eventBody(world, { metadata: { n: 0 } })).replace('"n":0', `"n":${number}`);
      for (const number of ['1e308', '-1e308']) {
        const response = await postRaw(system.url, world.key.value, raw(number), 'application/json');
        expect(expectDecision(response).status).toBe('accepted');
      }
    });

    it('empty metadata and every JSON value type are accepted', async () => {
      expect((await accept(eventBody(world, { metadata: {} }))).status).toBe('accepted');
      const all = { s: 'text', n: -1.5e-7, t: true, f: false, z: null, a: [1, 'two', [3]], o: { p: {} } };
      expect((await accept(eventBody(world, { metadata: all }))).status).toBe('accepted');
    });
  });

  describe('player', () => {
    it('a player of another game, or of none: 404 invalid_player, and nothing is stored', async () => {
      const other = await createGame(db);
      const stranger = await createPlayer(db, other);
      for (const playerId of [stranger.id, randomUUID()]) {
        const body = eventBody(world, { playerId });
        expectError(await postEvent(system.url, world.key.value, body), 404, 'invalid_player');
        // Nothing was stored: the same eventId with a real player is a fresh event.
        expect((await accept({ ...body, playerId: world.player.id })).replayed).toBe(false);
      }
    });
  });

  it('a wrong method on the path: 405 with the envelope and Allow (RFC 9110), whatever the method', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'PROPFIND']) {
      const response = await api(system.url, method, EVENTS_PATH);
      expectError(response, 405, 'method_not_allowed');
      expect({ method, allow: response.headers.get('allow') }).toEqual({ method, allow: 'POST' });
    }
  });
});
