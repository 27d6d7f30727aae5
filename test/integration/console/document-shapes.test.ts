// The REST shapes the API document defines, key by key, in real responses of the running service: the snapshot, the
// record pages, every action result, the access result, event results, the link and player shapes, the public game
// configuration and the error envelopes have exactly the document's fields, recursively, no more and no fewer
// (CONTRACT section 11.2: a shape of the document never gains or loses a field; additions go to GraphQL, new
// endpoints or new action types).
//
// The expected keys below are copied from the document's text (shared/spec, cited section by section), not from the
// gateway's schemas: the other console tests validate against those schemas, which would follow a field added to
// them. Every list in a checked response is made non-empty, so that its elements are checked too.

import { randomUUID } from 'node:crypto';
import { EVENT_RECORD_FIELDS } from '#runtime/contracts/event-record.ts';
import { act, addMember, CONSOLE, type Developer, developer, RECORDS, world } from '../../support/console.ts';
import { CONFIG_PATH, EVENTS_PATH } from '../../support/ingest.ts';
import { type ApiResponse, admin, api, startTestSystem, type TestSystem } from '../../support/system.ts';
import { APPROVE, INSPECT, LINK_INTENTS, native, nativeSession, PLAYERS } from '../links/helpers.ts';

/** A shape's keys: a leaf (`null`), a nested object, or a list whose elements have one shape (`[shape]`). */
type Shape = { [key: string]: Shape | [Shape] | null };
const fields = (...names: string[]): Shape => Object.fromEntries(names.map((name) => [name, null]));

// ---- the document's shapes ("Resources and their fields", each table's Field column) ----

// "### Organization (`DeveloperOrganization`)"
const DeveloperOrganization = fields('id', 'name', 'unlimitedFunding', 'balanceCredits', 'role', 'createdAt');
// "### Project (`DeveloperProject`)"
const DeveloperProject = fields(
  'id',
  'organizationId',
  'name',
  'maxPayoutCredits',
  'budgetCredits',
  'spentCredits',
  'createdAt',
);
// "### Game (`DeveloperGame`)"
const DeveloperGame = fields(
  'id',
  'projectId',
  'organizationId',
  'name',
  'platform',
  'status',
  'maxPayoutCredits',
  'budgetCredits',
  'spentCredits',
  'dailyPlayerCapCredits',
  'createdAt',
);
// "### Key (`DeveloperKey`, metadata only; ...)"
const DeveloperKey = fields(
  'id',
  'gameId',
  'organizationId',
  'kind',
  'name',
  'prefix',
  'publicKey',
  'createdAt',
  'revokedAt',
);
// "### Member (`DeveloperMember`)"
const DeveloperMember = fields('id', 'organizationId', 'identityUserId', 'role', 'createdAt');
// "### Rule (`DeveloperRule`)"
const DeveloperRule = fields('id', 'gameId', 'organizationId', 'eventType', 'rewardCredits', 'active', 'createdAt');
// "### Player (`DeveloperPlayer`, console view)"
const DeveloperPlayer = fields(
  'id',
  'gameId',
  'organizationId',
  'externalPlayerId',
  'creditsUserId',
  'username',
  'linkedAt',
  'createdAt',
);
// "### Event record (`DeveloperEvent`, console view)": eventRecordJson's members, the one mapping of a decision.
const DeveloperEvent = fields(...EVENT_RECORD_FIELDS);
// "### Event decision (`GameEventResult`)": all fields of the event record plus `replayed` and `mode`.
const GameEventResult: Shape = { ...DeveloperEvent, ...fields('replayed', 'mode') };
// "### Link and player shapes"
const LinkIntentResult = fields('playerId', 'linkToken', 'expiresAt', 'mode');
const LinkInspection = fields('gameName', 'externalPlayerId', 'expiresAt', 'mode');
const LinkApproval = fields('playerId', 'gameId', 'linked', 'mode');
const GamePlayer = fields('playerId', 'externalPlayerId', 'linked', 'linkedAt', 'mode');
// "### Public game configuration (`GamePublicConfig`)": rules are `{ eventType, rewardCredits }`, thresholds
// `{ maxPayoutCredits, dailyPlayerCapCredits }`.
const GamePublicConfig: Shape = {
  ...fields('gameId', 'name', 'slug', 'environment', 'productionRewardsEnabled', 'platform', 'status'),
  rules: [fields('eventType', 'rewardCredits')],
  thresholds: fields('maxPayoutCredits', 'dailyPlayerCapCredits'),
};
// "### Console snapshot (`DeveloperSnapshot`)": element shapes as above, limits { players, events }.
const DeveloperSnapshot: Shape = {
  ...fields('mode', 'unitsPerDollar', 'canCreateUnlimitedOrganization'),
  organizations: [DeveloperOrganization],
  projects: [DeveloperProject],
  games: [DeveloperGame],
  keys: [DeveloperKey],
  players: [DeveloperPlayer],
  events: [DeveloperEvent],
  rules: [DeveloperRule],
  members: [DeveloperMember],
  limits: fields('players', 'events'),
};
// "### Record page (`DeveloperRecordPage`)": kind, records (player or event records by kind), nextCursor.
const playerPage: Shape = { kind: null, records: [DeveloperPlayer], nextCursor: null };
const eventPage: Shape = { kind: null, records: [DeveloperEvent], nextCursor: null };
// "### Access result (`DeveloperAccess`)"
const DeveloperAccess = fields('authorized', 'email', 'mode');
// "### Action result (`DeveloperActionResult`)": id and mode; issuedKey and kind for issueKey only ("### POST
// /api/developer/v1/console": "`issuedKey` and `kind` for issueKey").
const DeveloperActionResult = fields('id', 'mode');
const IssueKeyActionResult = fields('id', 'mode', 'issuedKey', 'kind');
// "General rules": success bodies are `{ "data": <object> }`; "## Errors": `{ "error": { "code", "message" } }`.
const data = (shape: Shape | [Shape]): Shape => ({ data: shape as Shape });
const ErrorEnvelope: Shape = { error: fields('code', 'message') };

// ---- the comparison ----

/** Every difference between a value's keys and a shape's, with its path (`data.organizations[0].joined: extra`). */
function differences(value: unknown, shape: Shape | [Shape] | null, path: string): string[] {
  if (shape === null) return [];
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return [`${path}: not a list`];
    if (value.length === 0) return [`${path}: empty, so its elements are not checked`];
    return value.flatMap((item, index) => differences(item, shape[0], `${path}[${index}]`));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: not an object`];
  const actual = Object.keys(value);
  const expected = Object.keys(shape);
  return [
    ...actual.filter((key) => !expected.includes(key)).map((key) => `${path}.${key}: not in the document`),
    ...expected.filter((key) => !actual.includes(key)).map((key) => `${path}.${key}: missing`),
    ...expected
      .filter((key) => actual.includes(key))
      .flatMap((key) => differences((value as Record<string, unknown>)[key], shape[key]!, `${path}.${key}`)),
  ];
}

/** The response has this status and its body exactly the shape's keys. */
function expectShape(response: ApiResponse, status: number, shape: Shape, what: string): void {
  expect({ what, status: response.status }).toEqual({ what, status });
  expect({ what, differences: differences(response.body, shape, 'body') }).toEqual({ what, differences: [] });
}

// ---- the service and a world where every list has elements ----

let system: TestSystem;
let owner: Developer;
let viewer: Developer;
let organizationId: string;
let projectId: string;
let gameId: string;
let secretKey: string;
let publicKey: string;
let linkedPlayerId: string;

const console_ = (token: string) => api(system.url, 'GET', CONSOLE, { token });
const records = (token: string, query: string) => api(system.url, 'GET', `${RECORDS}?${query}`, { token });
const postEvent = (key: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
  api(system.url, 'POST', EVENTS_PATH, { token: key, body, headers });
const event = (overrides: Record<string, unknown> = {}) => ({
  eventId: randomUUID(),
  playerId: linkedPlayerId,
  eventType: 'level.up',
  occurredAt: new Date().toISOString(),
  ...overrides,
});

beforeAll(async () => {
  system = await startTestSystem();
  owner = await developer(system);
  viewer = await developer(system);
  ({ organizationId, projectId, gameId } = await world(system, owner.token));
  await addMember(system, owner.token, organizationId, viewer, 'viewer');
  const rule = await act(system, owner.token, { type: 'createRule', gameId, eventType: 'level.up', rewardCredits: 5 });
  expect(rule.status).toBe(200);
  const issue = async (kind: 'public' | 'secret') =>
    (await act(system, owner.token, { type: 'issueKey', gameId, kind, name: kind })).body.data.issuedKey as string;
  secretKey = await issue('secret');
  publicKey = await issue('public');
  // A linked player, through the document's link flow (an unlinked one stays for the players page).
  const intent = await api(system.url, 'POST', LINK_INTENTS, {
    token: secretKey,
    body: { externalPlayerId: 'linked-player' },
  });
  expect(intent.status).toBe(200);
  linkedPlayerId = intent.body.data.playerId;
  const session = await nativeSession(system, { username: 'someone' });
  expect((await native(system, APPROVE, session, { linkToken: intent.body.data.linkToken })).status).toBe(200);
  expect(
    (await api(system.url, 'POST', LINK_INTENTS, { token: secretKey, body: { externalPlayerId: 'unlinked' } })).status,
  ).toBe(200);
  // An accepted decision and a rejected one.
  expect((await postEvent(secretKey, event())).status).toBe(200);
  expect((await postEvent(secretKey, event({ eventType: 'no.such.rule' }))).status).toBe(200);
});

afterAll(async () => {
  await system?.stop();
});

describe("the document's REST shapes, key by key", () => {
  it('GET /api/developer/v1/console: DeveloperSnapshot, every list with elements', async () => {
    expectShape(await console_(owner.token), 200, data(DeveloperSnapshot), 'snapshot');
  });

  it('GET /api/developer/v1/records: DeveloperRecordPage of players and of events, with and without nextCursor', async () => {
    expectShape(await records(owner.token, 'kind=players'), 200, data(playerPage), 'players page');
    expectShape(await records(owner.token, 'kind=events'), 200, data(eventPage), 'events page');
    const first = await records(owner.token, `kind=events&gameId=${gameId}&limit=1`);
    expectShape(first, 200, data(eventPage), 'first events page of two');
    expect(first.body.data.nextCursor).toEqual(expect.any(String));
    const next = await records(
      owner.token,
      `kind=events&gameId=${gameId}&limit=1&cursor=${first.body.data.nextCursor}`,
    );
    expectShape(next, 200, data(eventPage), 'second events page');
  });

  it('GET /api/developer/v1/access: DeveloperAccess', async () => {
    expectShape(
      await api(system.url, 'GET', '/api/developer/v1/access', { token: owner.token }),
      200,
      data(DeveloperAccess),
      'access',
    );
  });

  it("POST /api/developer/v1/console: DeveloperActionResult of each of the document's 15 actions", async () => {
    const run = async (action: Record<string, unknown>, shape = DeveloperActionResult) => {
      const response = await act(system, owner.token, action);
      expectShape(response, 200, data(shape), String(action.type));
      return response.body.data.id as string;
    };
    const orgId = await run({ type: 'createOrganization', name: 'Shapes' });
    await run({ type: 'fundOrganization', organizationId: orgId, amountCredits: 1000 });
    const newProjectId = await run({ type: 'createProject', organizationId: orgId, name: 'P', maxPayoutCredits: 500 });
    await run({ type: 'updateProject', projectId: newProjectId, name: 'P2' });
    await run({ type: 'allocateProject', projectId: newProjectId, amountCredits: 100 });
    const newGameId = await run({
      type: 'createGame',
      projectId: newProjectId,
      name: 'G',
      platform: 'ios',
      maxPayoutCredits: 100,
      dailyPlayerCapCredits: 10,
    });
    await run({ type: 'updateGame', gameId: newGameId, status: 'paused' });
    await run({ type: 'allocateGame', gameId: newGameId, amountCredits: 10 });
    const ruleId = await run({ type: 'createRule', gameId: newGameId, eventType: 'win', rewardCredits: 1 });
    await run({ type: 'updateRule', ruleId, active: false });
    await run({ type: 'issueKey', gameId: newGameId, kind: 'public', name: 'pk' }, IssueKeyActionResult);
    const keyId = await run({ type: 'issueKey', gameId: newGameId, kind: 'secret', name: 'sk' }, IssueKeyActionResult);
    await run({ type: 'revokeKey', keyId });
    const memberId = await run({
      type: 'addMember',
      organizationId: orgId,
      identityUserId: 'idp|someone',
      role: 'viewer',
    });
    await run({ type: 'updateMember', memberId, role: 'admin' });
    await run({ type: 'removeMember', memberId });
  });

  it('POST /api/game-sdk/v2/events: GameEventResult, accepted, rejected and replayed', async () => {
    const accepted = event();
    expectShape(await postEvent(secretKey, accepted), 200, data(GameEventResult), 'accepted');
    expectShape(await postEvent(secretKey, accepted), 200, data(GameEventResult), 'replayed');
    expectShape(await postEvent(secretKey, event({ eventType: 'unknown' })), 200, data(GameEventResult), 'rejected');
  });

  it('the link and player shapes, and the public game configuration', async () => {
    const created = await api(system.url, 'POST', LINK_INTENTS, {
      token: secretKey,
      body: { externalPlayerId: `shape-${randomUUID().slice(0, 8)}` },
    });
    expectShape(created, 200, data(LinkIntentResult), 'LinkIntentResult');
    const session = await nativeSession(system);
    const linkToken = created.body.data.linkToken;
    expectShape(await native(system, INSPECT, session, { linkToken }), 200, data(LinkInspection), 'LinkInspection');
    expectShape(await native(system, APPROVE, session, { linkToken }), 200, data(LinkApproval), 'LinkApproval');
    const player = await api(system.url, 'GET', `${PLAYERS}/${linkedPlayerId}`, { token: secretKey });
    expectShape(player, 200, data(GamePlayer), 'GamePlayer by id');
    const byExternal = await api(system.url, 'GET', `${PLAYERS}?externalPlayerId=unlinked`, { token: secretKey });
    expectShape(byExternal, 200, data(GamePlayer), 'GamePlayer by external id');
    const config = await api(system.url, 'GET', `${CONFIG_PATH}?publicKey=${publicKey}`);
    expectShape(config, 200, data(GamePublicConfig), 'GamePublicConfig');
  });

  it('the error envelope, for each status the document names, on the console, records, events and links', async () => {
    const cases: Array<[string, number, Promise<ApiResponse>]> = [
      ['console without a session', 401, console_('')],
      ['action of an unknown type', 400, act(system, owner.token, { type: 'noSuchAction' })],
      [
        'action body not JSON',
        400,
        api(system.url, 'POST', CONSOLE, {
          token: owner.token,
          rawBody: '{',
          headers: { 'Content-Type': 'application/json' },
        }),
      ],
      [
        'viewer mutating',
        403,
        act(system, viewer.token, { type: 'createProject', organizationId, name: 'x', maxPayoutCredits: 1 }),
      ],
      ['action on an unknown object', 404, act(system, owner.token, { type: 'revokeKey', keyId: randomUUID() })],
      [
        'rule for an event type the game has',
        409,
        act(system, owner.token, { type: 'createRule', gameId, eventType: 'level.up', rewardCredits: 1 }),
      ],
      [
        'action body too large',
        413,
        act(system, owner.token, { type: 'createOrganization', name: 'x'.repeat(20_000) }),
      ],
      [
        'action not JSON by its type',
        415,
        api(system.url, 'POST', CONSOLE, {
          token: owner.token,
          rawBody: '{}',
          headers: { 'Content-Type': 'text/plain' },
        }),
      ],
      [
        'allocation over the balance',
        400,
        act(system, owner.token, { type: 'allocateProject', projectId, amountCredits: 1e12 }),
      ],
      ['records query unknown parameter', 400, records(owner.token, 'kind=events&x=1')],
      ['records cursor altered', 400, records(owner.token, 'kind=events&cursor=not-a-cursor')],
      ['records of an unseen game', 404, records(owner.token, `kind=events&gameId=${randomUUID()}`)],
      ['event without a key', 401, postEvent(undefined, event())],
      ['event with a public key', 403, postEvent(publicKey, event())],
      ['event schema violation', 400, postEvent(secretKey, { ...event(), extra: 1 })],
      ['event of an unknown player', 404, postEvent(secretKey, event({ playerId: randomUUID() }))],
      [
        'event id reused with another payload',
        409,
        (async () => {
          const first = event();
          await postEvent(secretKey, first);
          return postEvent(secretKey, { ...first, eventType: 'other' });
        })(),
      ],
      ['event body too large', 413, postEvent(secretKey, event({ metadata: { text: 'x'.repeat(20_000) } }))],
      [
        'event not JSON by its type',
        415,
        api(system.url, 'POST', EVENTS_PATH, {
          token: secretKey,
          rawBody: '{}',
          headers: { 'Content-Type': 'text/plain' },
        }),
      ],
      ['configuration with a bad public key', 401, api(system.url, 'GET', `${CONFIG_PATH}?publicKey=nope`)],
      ['player of another game', 404, api(system.url, 'GET', `${PLAYERS}/${randomUUID()}`, { token: secretKey })],
      ['unknown route', 404, api(system.url, 'GET', '/api/developer/v1/nothing-here', { token: owner.token })],
    ];
    for (const [what, status, response] of cases) expectShape(await response, status, ErrorEnvelope, what);
  });

  it('the error envelope of a 503 while the platform is disabled', async () => {
    expect((await admin(system, 'PUT', '/platform', { enabled: false })).status).toBe(200);
    try {
      // The switch reaches each program within moments (services/runtime/src/platform-switch.ts): ask until it has.
      const disabled = async (request: () => Promise<ApiResponse>) => {
        for (let attempt = 0; ; attempt++) {
          const response = await request();
          if (response.status === 503 || attempt === 50) return response;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      expectShape(await disabled(() => console_(owner.token)), 503, ErrorEnvelope, 'console while disabled');
      expectShape(await disabled(() => postEvent(secretKey, event())), 503, ErrorEnvelope, 'event while disabled');
    } finally {
      expect((await admin(system, 'PUT', '/platform', { enabled: true })).status).toBe(200);
    }
  });
});
