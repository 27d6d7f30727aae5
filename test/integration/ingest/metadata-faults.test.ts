// POST /api/game-sdk/v2/events over HTTP: a lone surrogate or a number outside a double's range inside `metadata`
// is a metadata fault, 400 invalid_metadata, in the order of checks of CONTRACT section 7 (after the schema), not
// the not-JSON 400 INVALID_REQUEST of section 10; elsewhere in the body, and a duplicated member name anywhere, it
// stays INVALID_REQUEST. Nothing is stored for such an event: the same eventId with valid metadata is
// still a fresh decision.
import { issueKeyValue } from '#runtime/credentials/keys.ts';
import { type EventBody, eventBody, expectDecision, expectError, postRaw } from '../../support/ingest.ts';
import { createEventWorld, type EventWorld } from '../../support/ledger-fixtures.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

/** The body's JSON text with `from` replaced by `to` (raw escapes and numbers JSON.stringify cannot write). */
const raw = (body: EventBody, from: string, to: string) => {
  const text = JSON.stringify(body);
  if (!text.includes(from)) throw new Error(`${from} is not in ${text}`);
  return text.replace(from, to);
};

describe('POST /api/game-sdk/v2/events: lone surrogates and out-of-range numbers in metadata', () => {
  let system: TestSystem;
  let world: EventWorld;

  beforeAll(async () => {
    system = await startTestSystem();
    world = await createEventWorld(system.databaseUrl!, {
      budgetCredits: 1_000_000_000,
      dailyPlayerCapCredits: 1_000_000_000,
    });
  });
  afterAll(async () => system?.stop());

  const post = (text: string, key = world.key.value) => postRaw(system.url, key, text, 'application/json');

  /** Nothing was stored for `body.eventId`: the same event with valid metadata is a fresh decision. */
  const expectNothingStored = async (body: EventBody) => {
    const valid = { ...body, metadata: { s: 'ok', n: 1 } };
    const decision = expectDecision(await post(JSON.stringify(valid)));
    expect({ eventId: decision.eventId, replayed: decision.replayed }).toEqual({
      eventId: body.eventId,
      replayed: false,
    });
  };

  it.each([
    [
      'a lone surrogate in a metadata value ("a\\ud800b")',
      (b: EventBody) => raw({ ...b, metadata: { s: 'x' } }, '"x"', '"a\\ud800b"'),
      /unpaired surrogate/,
    ],
    [
      'a lone low surrogate in a metadata value',
      (b: EventBody) => raw({ ...b, metadata: { s: 'x' } }, '"x"', '"\\udc00"'),
      /unpaired surrogate/,
    ],
    [
      'a lone surrogate in a metadata key',
      (b: EventBody) => raw({ ...b, metadata: { s: 1 } }, '"s"', '"\\ude00"'),
      /key contains an unpaired surrogate/,
    ],
    [
      'a lone surrogate deep inside metadata',
      (b: EventBody) => raw({ ...b, metadata: { a: [{ b: 'ok' }] } }, '"ok"', '"x\\udc00"'),
      /unpaired surrogate/,
    ],
    ['1e400 in metadata', (b: EventBody) => raw({ ...b, metadata: { n: 0 } }, '"n":0', '"n":1e400'), /finite/],
    ['-1e400 in metadata', (b: EventBody) => raw({ ...b, metadata: { n: 0 } }, '"n":0', '"n":-1e400'), /finite/],
    ['1e309 in a metadata array', (b: EventBody) => raw({ ...b, metadata: { a: [0] } }, '[0]', '[1e309]'), /finite/],
    [
      'a lone surrogate under an escaped "metadata" name',
      (b: EventBody) => raw({ ...b, metadata: { s: 'x' } }, '"metadata":{"s":"x"}', '"\\u006detadata":{"s":"\\ud800"}'),
      /unpaired surrogate/,
    ],
  ])('%s: 400 invalid_metadata, and nothing is stored', async (_what, make, message) => {
    const body = eventBody(world);
    const response = await post(make(body));
    expectError(response, 400, 'invalid_metadata');
    expect(response.body.error.message).toMatch(message);
    await expectNothingStored(body);
  });

  it.each([
    [
      'a duplicated member name inside metadata',
      (b: EventBody) => raw({ ...b, metadata: { a: 1 } }, '"a":1', '"a":1,"a":2'),
    ],
    [
      'a duplicated member name and a lone surrogate inside metadata',
      (b: EventBody) => raw({ ...b, metadata: { a: 1 } }, '"a":1', '"s":"\\ud800","a":1,"a":2'),
    ],
    [
      'a lone surrogate in metadata and a duplicated member name elsewhere',
      (b: EventBody) =>
        raw(
          { ...b, metadata: { s: 'x' } },
          '"metadata":{"s":"x"}',
          `"metadata":{"s":"\\ud800"},"eventId":"${b.eventId}"`,
        ),
    ],
    ['a lone surrogate in eventType', (b: EventBody) => raw(b, '"eventType":"', '"eventType":"\\ud800')],
    [
      'a lone surrogate in eventType and in metadata',
      (b: EventBody) =>
        raw({ ...b, metadata: { s: 'x' } }, '"eventType":"', '"eventType":"\\ud800').replace('"x"', '"\\ud800"'),
    ],
    [
      '1e400 outside metadata (an unknown field)',
      (b: EventBody) => raw({ ...b, metadata: { s: 'x' } }, '"metadata":', '"extra":1e400,"metadata":'),
    ],
    [
      'a lone surrogate in a top-level member name',
      (b: EventBody) => raw({ ...b, metadata: { s: 'x' } }, '"metadata":', '"\\ud800":1,"metadata":'),
    ],
    [
      'a lone surrogate in a "metadata" member below the top level',
      (b: EventBody) =>
        raw({ ...b, metadata: { s: 'x' } }, '"metadata":', '"extra":{"metadata":{"s":"\\ud800"}},"metadata":'),
    ],
  ])('%s: 400 INVALID_REQUEST (not JSON), and nothing is stored', async (_what, make) => {
    const body = eventBody(world);
    expectError(await post(make(body)), 400, 'INVALID_REQUEST');
    await expectNothingStored(body);
  });

  it.each([
    [
      'an eventType outside the pattern and a lone surrogate in metadata',
      (b: EventBody) => raw({ ...b, eventType: 'BAD', metadata: { s: 'x' } }, '"x"', '"\\ud800"'),
    ],
    [
      'an unknown field and 1e400 in metadata',
      (b: EventBody) => raw({ ...b, extra: 1, metadata: { n: 0 } }, '"n":0', '"n":1e400'),
    ],
    [
      'a missing playerId and a lone surrogate in a metadata key',
      (b: EventBody) =>
        raw({ ...b, metadata: { s: 1 } }, `"playerId":"${b.playerId}",`, '').replace('"s"', '"\\ud83d"'),
    ],
    [
      'metadata that is not an object (a lone surrogate string)',
      (b: EventBody) => raw({ ...b, metadata: 'x' }, '"x"', '"\\ud800"'),
    ],
    [
      'metadata that is not an object (1e400)',
      (b: EventBody) => raw({ ...b, metadata: 0 }, '"metadata":0', '"metadata":1e400'),
    ],
  ])('schema first: %s: 400 invalid_event, and nothing is stored', async (_what, make) => {
    const body = eventBody(world);
    expectError(await post(make(body)), 400, 'invalid_event');
    await expectNothingStored(body);
  });

  it('an unknown key with a metadata fault: 401 invalid_key (the credential before the body)', async () => {
    const text = raw({ ...eventBody(world), metadata: { n: 0 } }, '"n":0', '"n":1e400');
    expectError(await post(text, issueKeyValue('secret').value), 401, 'invalid_key');
  });

  it('valid metadata next to these faults is untouched: surrogate pairs, 1e308 and 1e-400 are accepted', async () => {
    const body = eventBody(world, { metadata: { s: 'x', n: 0, m: 0 } });
    const text = raw(body, '"x"', '"\\ud83d\\ude00"').replace('"n":0', '"n":-1e308').replace('"m":0', '"m":1e-400');
    expect(expectDecision(await post(text)).status).toBe('accepted');
    // The same payload written another way is the same event.
    expect(
      expectDecision(await post(JSON.stringify({ ...body, metadata: { s: '😀', n: -1e308, m: 0 } }))).replayed,
    ).toBe(true);
  });
});
