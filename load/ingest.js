// k6 load test of the Sandbox Rewards hot path (see load/README.md).
//
//   PROFILE=smoke|full  BASE_URL=http://127.0.0.1:8080  DEV_TOKEN=<developer session JWT>
//   NATIVE_TOKENS='[{"token":"...","sid":"...","creditsUserId":"..."}]'  k6 run load/ingest.js
//
// Scenarios (open model, constant-arrival-rate):
//   ingest   fresh events spread over many games and players      POST /api/game-sdk/v2/events
//   replay   the same eventId and payload re-sent; expects replayed: true and the stored decision
//   console  developer reads: GET /api/developer/v1/console and /api/developer/v1/records
// then, in the full profile, the peak (fresh events, a closed loop of PEAK_VUS in flight; with PEAK_BATCH=true batches
// of BATCH_SIZE instead), and a step when STEP_RATE is set (fresh events, open model: npm run bench's step search).
// SETUP_DATA=<file>: setup() returns that file's JSON (an earlier run's summary's setup_data) instead of making
// fixtures, so that npm run bench's later k6 runs reuse the games and players of its first.
// Thresholds are the pass/fail gate; handleSummary writes load/results/<profile>-summary.json.

import { check, fail, sleep } from 'k6';
import encoding from 'k6/encoding';
import exec from 'k6/execution';
import http from 'k6/http';
import { Counter, Rate } from 'k6/metrics';

// ---------- configuration ----------

const PROFILE = (__ENV.PROFILE || 'smoke').toLowerCase();
const PROFILES = {
  // CI: a few requests per second for half a minute; lenient latency (2-core machines, all-in-one).
  smoke: {
    games: 2,
    playersPerGame: 2,
    replayPool: 10,
    ingestRate: 10,
    replayRate: 5,
    consoleRate: 2,
    batchRate: 1,
    duration: '30s',
    vus: 10,
    maxVUs: 50,
    peakRate: 0,
    peakDuration: '0s',
    peakVUs: 0,
    latency: { ingest: [500, 1000], replay: [300, 800], console: [800, 1500], batch: [1000, 2000] },
  },
  // Measurement: many games in one project, sustained mixed load; then the peak phase: fresh events only, a closed
  // loop of peakVUs requests in flight (each VU sends its next event when its last is answered, as pgbench's clients
  // do), so that the completed rate is the service's end-to-end ceiling (npm run bench reports it).
  full: {
    games: 20,
    playersPerGame: 10,
    replayPool: 100,
    ingestRate: 200,
    replayRate: 50,
    consoleRate: 10,
    batchRate: 5,
    duration: '5m',
    vus: 50,
    maxVUs: 400,
    peakRate: 'closed',
    peakDuration: '1m',
    peakVUs: 64,
    latency: { ingest: [150, 400], replay: [100, 250], console: [400, 1000], batch: [400, 1000] },
  },
};
if (!PROFILES[PROFILE]) {
  throw new Error(`PROFILE must be one of ${Object.keys(PROFILES).join(', ')}, got ${PROFILE}`);
}
const P = PROFILES[PROFILE];
const intEnv = (name, fallback) => {
  const v = __ENV[name];
  if (v === undefined || v === '') return fallback;
  const n = Number.parseInt(v, 10);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${v}`);
  return n;
};

const trimUrl = (u) => u.replace(/\/+$/, '');
const BASE_URL = trimUrl(__ENV.BASE_URL || 'http://127.0.0.1:8080');
// Each edge program may run on its own port (the five programs run alone): console, access and operator calls go to
// the gateway, events to ingest, link intents and native approvals to links. Unset: BASE_URL (the all-in-one
// process, or an Ingress routing the paths).
const GATEWAY_URL = trimUrl(__ENV.GATEWAY_URL || BASE_URL);
const INGEST_URL = trimUrl(__ENV.INGEST_URL || BASE_URL);
const LINKS_URL = trimUrl(__ENV.LINKS_URL || BASE_URL);
const DEV_TOKEN = __ENV.DEV_TOKEN || '';
const ADMIN_TOKEN = __ENV.ADMIN_TOKEN || '';
const NATIVE_TOKENS = JSON.parse(__ENV.NATIVE_TOKENS || '[]');
const GAMES = Math.max(1, intEnv('GAMES', P.games));
const PLAYERS_PER_GAME = Math.max(1, intEnv('PLAYERS_PER_GAME', P.playersPerGame));
const REPLAY_POOL = Math.max(1, intEnv('REPLAY_POOL', P.replayPool));
const DURATION = __ENV.DURATION || P.duration;
const RATES = {
  ingest: intEnv('INGEST_RATE', P.ingestRate),
  replay: intEnv('REPLAY_RATE', P.replayRate),
  console: intEnv('CONSOLE_RATE', P.consoleRate),
  // Batch requests per second (POST /api/game-sdk/v2/events/batch), each of BATCH_SIZE fresh events of one game.
  batch: intEnv('BATCH_RATE', P.batchRate),
};
const BATCH_SIZE = Math.min(100, Math.max(1, intEnv('BATCH_SIZE', 20)));
// PEAK_RATE: `closed` (a closed loop of PEAK_VUS requests in flight), events per second offered (an open model with
// at most PEAK_VUS in flight), or 0 (no peak phase). PEAK_BATCH=true: each request of the peak is a batch of
// BATCH_SIZE fresh events (the `peakBatch` function: batch()'s request, checked as cheaply as peak()) instead of one
// event.
const peakRate = (__ENV.PEAK_RATE || String(P.peakRate)).toLowerCase();
const PEAK = {
  rate: peakRate === 'closed' ? 'closed' : intEnv('PEAK_RATE', P.peakRate),
  duration: __ENV.PEAK_DURATION || P.peakDuration,
  vus: Math.max(1, intEnv('PEAK_VUS', P.peakVUs)),
  exec: __ENV.PEAK_BATCH === 'true' ? 'peakBatch' : 'peak',
};
// One step of npm run bench's search for the highest rate at which the p99 stays within its bound: fresh events
// offered at STEP_RATE per second for STEP_DURATION, open model (arrivals do not wait for answers; up to STEP_VUS in
// flight), after STEP_WARMUP at the same rate (scenario stepWarmup, reported apart).
const STEP = {
  rate: intEnv('STEP_RATE', 0),
  duration: __ENV.STEP_DURATION || '0s',
  warmup: __ENV.STEP_WARMUP || '2s',
  vus: Math.max(1, intEnv('STEP_VUS', 1000)),
};
// An earlier run's fixtures (npm run bench writes its first run's setup_data there): read in the init context.
const GIVEN_SETUP = __ENV.SETUP_DATA ? JSON.parse(open(__ENV.SETUP_DATA)) : null;
const EVENT_RATE_LIMIT_PER_MINUTE = intEnv('EVENT_RATE_LIMIT_PER_MINUTE', 120);
const NATIVE_HEADERS = {
  'X-Client-Country': __ENV.CLIENT_COUNTRY || 'US',
  'X-Client-Build': __ENV.CLIENT_BUILD || '999999',
  'X-Client-Capabilities': 'challenge-v1',
};
const EVENT_TYPE = 'level_complete';
const REWARD_CREDITS = 1;
const GAME_BUDGET_CREDITS = 1_000_000_000; // per game; 1,000 games at most stay under the 1e12 limits
const RESULTS_DIR = __ENV.RESULTS_DIR || 'load/results';

// ---------- scenarios and thresholds ----------

const scenario = (exe, rate) => ({
  executor: 'constant-arrival-rate',
  exec: exe,
  rate,
  timeUnit: '1s',
  duration: DURATION,
  preAllocatedVUs: Math.min(P.vus, Math.max(1, rate)),
  maxVUs: P.maxVUs,
  gracefulStop: '10s',
});
const scenarios = {};
if (RATES.ingest > 0) scenarios.ingest = scenario('ingest', RATES.ingest);
if (RATES.replay > 0) scenarios.replay = scenario('replay', RATES.replay);
if (RATES.console > 0) scenarios.console = scenario('consoleRead', RATES.console);
if (RATES.batch > 0) scenarios.batch = scenario('batch', RATES.batch);
// k6 durations: 1h2m3s, 90s, 500ms.
function seconds(duration) {
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(n) * { ms: 0.001, s: 1, m: 60, h: 3600 }[unit];
  }
  return total;
}
// Fresh events only (the `peak` function), offered at `rate` per second from `startSeconds` on.
const freshEvents = (rate, duration, startSeconds, preAllocatedVUs, maxVUs) => ({
  executor: 'constant-arrival-rate',
  exec: 'peak',
  rate,
  timeUnit: '1s',
  duration,
  startTime: `${startSeconds}s`,
  preAllocatedVUs,
  maxVUs,
  gracefulStop: '10s',
});
const STEADY_SECONDS = Object.keys(scenarios).length > 0 ? seconds(DURATION) + 10 : 0;
if (PEAK.rate === 'closed' && seconds(PEAK.duration) > 0) {
  // After the steady scenarios and their graceful stop; the summary's http_reqs{scenario:peak} count over
  // PEAK_DURATION is the completed rate.
  scenarios.peak = {
    executor: 'constant-vus',
    exec: PEAK.exec,
    vus: PEAK.vus,
    duration: PEAK.duration,
    startTime: `${STEADY_SECONDS}s`,
    gracefulStop: '10s',
  };
} else if (PEAK.rate > 0 && seconds(PEAK.duration) > 0) {
  scenarios.peak = { ...freshEvents(PEAK.rate, PEAK.duration, STEADY_SECONDS, PEAK.vus, PEAK.vus), exec: PEAK.exec };
}

if (STEP.rate > 0 && seconds(STEP.duration) > 0) {
  // After the steady scenarios and the peak (when they run): the latency at one offered rate.
  const start = STEADY_SECONDS + (scenarios.peak ? seconds(PEAK.duration) + 10 : 0);
  const warmupSeconds = seconds(STEP.warmup);
  const vus = Math.min(STEP.vus, Math.max(1, Math.ceil(STEP.rate / 10)));
  if (warmupSeconds > 0) scenarios.stepWarmup = freshEvents(STEP.rate, STEP.warmup, start, vus, STEP.vus);
  scenarios.step = freshEvents(STEP.rate, STEP.duration, start + warmupSeconds, vus, STEP.vus);
}

const thresholds = {
  // Any failed request (status >= 400 or network error) beyond 1% fails the run; stop early if the
  // service is clearly down (unless ABORT_ON_FAIL=false: npm run bench:soak keeps an hour's figures over a bad minute).
  http_req_failed: [{ threshold: 'rate<0.01', abortOnFail: __ENV.ABORT_ON_FAIL !== 'false', delayAbortEval: '15s' }],
};
for (const name of Object.keys(scenarios)) {
  if (name === 'peak' || name === 'step' || name === 'stepWarmup') {
    // Saturation: latency is the queue of PEAK_VUS requests in flight, reported but not gated.
    // Step: the latency npm run bench's step search compares with its bound, also not gated here (its warm-up neither).
    thresholds[`http_req_failed{scenario:${name}}`] = ['rate<0.01'];
    thresholds[`checks{scenario:${name}}`] = ['rate>0.99'];
    thresholds[`http_req_duration{scenario:${name}}`] = ['max>=0'];
    thresholds[`http_reqs{scenario:${name}}`] = ['count>=0'];
    continue;
  }
  const [p95, p99] = P.latency[name];
  thresholds[`http_req_failed{scenario:${name}}`] = ['rate<0.01'];
  thresholds[`http_req_duration{scenario:${name}}`] = [`p(95)<${p95}`, `p(99)<${p99}`];
  thresholds[`checks{scenario:${name}}`] = ['rate>0.99'];
}
if (scenarios.replay) thresholds.replay_consistent = ['rate>0.999'];
if (scenarios.ingest) {
  // Always-true thresholds: they only make k6 report these sub-metrics in the summary.
  thresholds['ingest_decisions{status:accepted}'] = ['count>=0'];
  thresholds['ingest_decisions{status:rejected}'] = ['count>=0'];
  thresholds['ingest_decisions{reason:rate_limited}'] = ['count>=0'];
}

export const options = {
  scenarios,
  thresholds,
  setupTimeout: __ENV.SETUP_TIMEOUT || '10m',
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
  discardResponseBodies: false,
  // Fewer tags per sample: less work for k6 per request (url, proto, tls_version, ... are the same for every call).
  systemTags: ['status', 'method', 'name', 'scenario', 'check', 'error', 'error_code', 'expected_response'],
  userAgent: 'sandbox-rewards-k6/1.0',
};

// ---------- metrics ----------

const decisions = new Counter('ingest_decisions'); // tagged status, reason
const replayConsistent = new Rate('replay_consistent'); // replayed:true with the stored decision

// ---------- helpers ----------

// UUID version 4 (random): k6's WebCrypto, in Go, instead of building the string in the script's interpreter.
export function uuidv4() {
  return crypto.randomUUID();
}

const pick = (list) => list[Math.floor(Math.random() * list.length)];
const json = (body) => JSON.stringify(body);
const bearer = (token) => ({ Authorization: `Bearer ${token}` });

function jwtEmail(token) {
  try {
    const payload = JSON.parse(encoding.b64decode(token.split('.')[1], 'rawurl', 's'));
    return payload.email || null;
  } catch (_) {
    return null;
  }
}

// A setup call that must succeed: fails the whole test with the response on anything unexpected.
function must(res, what, okStatuses = [200]) {
  if (!okStatuses.includes(res.status)) {
    fail(`${what}: HTTP ${res.status} ${String(res.body).slice(0, 300)}`);
  }
  if (res.status !== 200) return null;
  const body = res.json();
  if (!body || typeof body !== 'object' || !('data' in body)) fail(`${what}: no { data } envelope`);
  return body.data;
}

// setup() sends one action after another as fast as they are answered: with many games (GAMES up to 1,000) that is
// more than the developer's limits allow (DEVELOPER_RATE_PER_SECOND), so a 429 waits its Retry-After and tries again.
function consoleAction(action) {
  for (let attempt = 1; ; attempt++) {
    const res = http.post(`${GATEWAY_URL}/api/developer/v1/console`, json(action), {
      headers: { ...bearer(DEV_TOKEN), 'Content-Type': 'application/json' },
      tags: { name: `console:${action.type}` },
    });
    if (res.status !== 429 || attempt === 20) return must(res, `console ${action.type}`);
    sleep(Number(res.headers['Retry-After']) || 1);
  }
}

function eventBody(playerId, extra) {
  return {
    eventId: uuidv4(),
    playerId,
    eventType: EVENT_TYPE,
    occurredAt: new Date().toISOString(),
    metadata: { source: 'k6', profile: PROFILE, ...extra },
  };
}

function postEvent(secret, bodyText, name) {
  return http.post(`${INGEST_URL}/api/game-sdk/v2/events`, bodyText, {
    headers: { ...bearer(secret), 'Content-Type': 'application/json' },
    tags: { name },
  });
}

// ---------- setup: fixtures through the public API ----------

export function setup() {
  if (GIVEN_SETUP) {
    // npm run bench watches for this line: the scenarios start now.
    console.log(`setup: done, ${GIVEN_SETUP.games.length} games of ${__ENV.SETUP_DATA} (an earlier run's)`);
    return GIVEN_SETUP;
  }
  if (!DEV_TOKEN) fail('DEV_TOKEN is required (npm run dev:token -- --email k6@example.com)');
  const runId = `${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
  console.log(
    `setup: run ${runId}, profile ${PROFILE}, ${GAMES} games x ${PLAYERS_PER_GAME} players, base ${BASE_URL}`,
  );

  // Optional operator steps when ADMIN_TOKEN is given: invitation of the token's e-mail and device
  // permits of the native sessions (the runner may have done both already; 409 is fine).
  if (ADMIN_TOKEN) {
    const email = jwtEmail(DEV_TOKEN);
    if (email) {
      must(
        http.post(`${GATEWAY_URL}/api/admin/v1/invitations`, json({ email }), {
          headers: { ...bearer(ADMIN_TOKEN), 'Content-Type': 'application/json' },
          tags: { name: 'admin:invitation' },
          // An invitation that exists already (a second run) is not a failed request in http_req_failed.
          responseCallback: http.expectedStatuses(200, 201, 409),
        }),
        'invitation',
        [200, 201, 409],
      );
    }
    for (const n of NATIVE_TOKENS) {
      must(
        http.post(
          `${GATEWAY_URL}/api/admin/v1/device-permits`,
          json({ sessionId: n.sid, creditsUserId: n.creditsUserId, expiresInSeconds: 86400 }),
          {
            headers: { ...bearer(ADMIN_TOKEN), 'Content-Type': 'application/json' },
            tags: { name: 'admin:device-permit' },
          },
        ),
        'device permit',
        [200, 201],
      );
    }
  }

  const access = must(
    http.get(`${GATEWAY_URL}/api/developer/v1/access`, {
      headers: bearer(DEV_TOKEN),
      tags: { name: 'access' },
    }),
    'developer access (is the e-mail invited?)',
  );
  console.log(`setup: developer ${access.email} admitted`);

  const totalBudget = GAME_BUDGET_CREDITS * GAMES;
  const org = consoleAction({ type: 'createOrganization', name: `k6 ${runId}` });
  consoleAction({ type: 'fundOrganization', organizationId: org.id, amountCredits: totalBudget });
  const project = consoleAction({
    type: 'createProject',
    organizationId: org.id,
    name: `k6 project ${runId}`,
    maxPayoutCredits: totalBudget,
  });
  consoleAction({ type: 'allocateProject', projectId: project.id, amountCredits: totalBudget });

  const linkedPerGame = Math.min(PLAYERS_PER_GAME, NATIVE_TOKENS.length);
  if (linkedPerGame < PLAYERS_PER_GAME) {
    console.warn(
      `setup: ${NATIVE_TOKENS.length} native sessions: ${linkedPerGame} of ${PLAYERS_PER_GAME} players per game get linked; ` +
        'events of unlinked players are rejected with player_not_linked (still HTTP 200)',
    );
  }

  const games = [];
  for (let g = 0; g < GAMES; g++) {
    const game = consoleAction({
      type: 'createGame',
      projectId: project.id,
      name: `k6 game ${g} ${runId}`,
      platform: 'other',
      maxPayoutCredits: GAME_BUDGET_CREDITS,
      dailyPlayerCapCredits: GAME_BUDGET_CREDITS,
    });
    consoleAction({ type: 'allocateGame', gameId: game.id, amountCredits: GAME_BUDGET_CREDITS });
    consoleAction({ type: 'createRule', gameId: game.id, eventType: EVENT_TYPE, rewardCredits: REWARD_CREDITS });
    const key = consoleAction({ type: 'issueKey', gameId: game.id, kind: 'secret', name: `k6 ${runId}` });
    if (!key.issuedKey) fail('issueKey returned no issuedKey');

    const players = [];
    for (let p = 0; p < PLAYERS_PER_GAME; p++) {
      const intent = must(
        http.post(`${LINKS_URL}/api/game-sdk/v2/link-intents`, json({ externalPlayerId: `k6-${runId}-g${g}-p${p}` }), {
          headers: { ...bearer(key.issuedKey), 'Content-Type': 'application/json' },
          tags: { name: 'link-intent' },
        }),
        'link intent',
      );
      if (p < linkedPerGame) {
        const native = NATIVE_TOKENS[p];
        const headers = { ...bearer(native.token), ...NATIVE_HEADERS, 'Content-Type': 'application/json' };
        must(
          http.post(`${LINKS_URL}/api/native/v1/link-intents/inspect`, json({ linkToken: intent.linkToken }), {
            headers,
            tags: { name: 'link-inspect' },
          }),
          'link inspect',
        );
        const approval = must(
          http.post(`${LINKS_URL}/api/native/v1/link-intents/approve`, json({ linkToken: intent.linkToken }), {
            headers,
            tags: { name: 'link-approve' },
          }),
          'link approve',
        );
        if (approval.playerId !== intent.playerId || approval.linked !== true)
          fail('link approval does not match the intent');
      }
      players.push(intent.playerId);
    }
    games.push({ id: game.id, secret: key.issuedKey, players });
  }

  // Events for the replay scenario: recorded once here, then re-sent byte for byte.
  const replays = [];
  for (let i = 0; i < REPLAY_POOL; i++) {
    const game = games[i % games.length];
    const body = json(eventBody(game.players[i % game.players.length], { replayPool: i }));
    const decision = must(postEvent(game.secret, body, 'event:replay-seed'), 'replay seed event');
    replays.push({
      secret: game.secret,
      body,
      status: decision.status,
      reason: decision.reason,
      rewardCredits: decision.rewardCredits,
      id: decision.id,
    });
  }

  const perGamePerMinute = (RATES.ingest * 60) / GAMES;
  if (perGamePerMinute > EVENT_RATE_LIMIT_PER_MINUTE) {
    console.warn(
      `setup: about ${Math.round(perGamePerMinute)} fresh events per game per minute exceed EVENT_RATE_LIMIT_PER_MINUTE=${EVENT_RATE_LIMIT_PER_MINUTE}: ` +
        'most decisions will be rate_limited; raise GAMES or the server limit to measure accepted events',
    );
  }
  // npm run bench watches for this line: the scenarios start now.
  console.log(`setup: done, ${games.length} games, ${replays.length} replay events`);
  return { runId, organizationId: org.id, projectId: project.id, games, replays };
}

// ---------- scenario functions ----------

export function ingest(data) {
  const game = pick(data.games);
  const body = eventBody(pick(game.players), { iteration: exec.scenario.iterationInTest });
  const res = postEvent(game.secret, json(body), 'event:fresh');
  let d = null;
  try {
    d = res.json().data;
  } catch (_) {
    d = null;
  }
  check(res, {
    'ingest: 200': (r) => r.status === 200,
    'ingest: fresh decision': () => d !== null && d.replayed === false && d.eventId === body.eventId,
    'ingest: accepted or rejected': () => d !== null && (d.status === 'accepted' || d.status === 'rejected'),
  });
  if (d) decisions.add(1, { status: String(d.status), reason: String(d.reason) });
}

// A game server's burst (a match ends): BATCH_SIZE fresh events of one game in one batch request; every result must
// be a fresh decision of its own event, in order.
export function batch(data) {
  const game = pick(data.games);
  const events = [];
  for (let i = 0; i < BATCH_SIZE; i++) {
    events.push(eventBody(pick(game.players), { iteration: exec.scenario.iterationInTest, item: i }));
  }
  const res = http.post(`${INGEST_URL}/api/game-sdk/v2/events/batch`, json({ events }), {
    headers: { ...bearer(game.secret), 'Content-Type': 'application/json' },
    tags: { name: 'event:batch' },
  });
  let results = null;
  try {
    results = res.json().data.results;
  } catch (_) {
    results = null;
  }
  check(res, {
    'batch: 200': (r) => r.status === 200,
    'batch: one fresh decision per event, in order': () =>
      results !== null &&
      results.length === events.length &&
      results.every((r, i) => r.status === 200 && r.data.replayed === false && r.data.eventId === events[i].eventId),
  });
  if (results) {
    for (const r of results)
      if (r.status === 200) decisions.add(1, { status: String(r.data.status), reason: String(r.data.reason) });
  }
}

// The peak phase's fresh event: the same request as ingest() (the same body, byte for byte in the same member order),
// checked with one check on the raw body (no JSON parse, no tagged counter), so that k6 spends as little CPU per
// request as it can on a machine it shares with the service it measures: the body is one template string, and each
// game's request parameters and players' JSON are made once per VU (peakGame), not per request.
export function peak(data) {
  const game = peakGame(data);
  const eventId = uuidv4();
  const body =
    `{"eventId":"${eventId}","playerId":${pick(game.players)},"eventType":${EVENT_TYPE_JSON},` +
    `"occurredAt":"${new Date().toISOString()}","metadata":${PEAK_METADATA_JSON}${exec.scenario.iterationInTest}}}`;
  const res = http.post(EVENTS_URL, body, game.params);
  check(res, {
    'peak: 200, a fresh decision': (r) =>
      r.status === 200 &&
      typeof r.body === 'string' &&
      r.body.includes('"replayed":false') &&
      r.body.includes(`"eventId":"${eventId}"`),
  });
}

// The peak's batch (PEAK_BATCH=true): BATCH_SIZE fresh events of one game, the same bodies as batch() byte for byte
// in the same member order, made and checked as peak() does (template strings, one check on the raw body, no JSON
// parse, no tagged counter): every result a fresh decision of its own event, in order (each event's id found after
// the previous one's, BATCH_SIZE times `"replayed":false`).
export function peakBatch(data) {
  const game = peakGame(data);
  const ids = [];
  const occurredAt = new Date().toISOString();
  const iteration = exec.scenario.iterationInTest;
  let events = '';
  for (let i = 0; i < BATCH_SIZE; i++) {
    const eventId = uuidv4();
    ids.push(eventId);
    events +=
      `${i === 0 ? '' : ','}{"eventId":"${eventId}","playerId":${pick(game.players)},"eventType":${EVENT_TYPE_JSON},` +
      `"occurredAt":"${occurredAt}","metadata":${PEAK_METADATA_JSON}${iteration},"item":${i}}}`;
  }
  const res = http.post(EVENTS_BATCH_URL, `{"events":[${events}]}`, game.batchParams);
  check(res, {
    'peak: 200, a fresh decision per event, in order': (r) => {
      if (r.status !== 200 || typeof r.body !== 'string') return false;
      const body = r.body;
      let at = 0;
      for (const id of ids) {
        at = body.indexOf(`"eventId":"${id}"`, at);
        if (at < 0) return false;
      }
      return body.split('"replayed":false').length - 1 === BATCH_SIZE;
    },
  });
}

const EVENTS_BATCH_URL = `${INGEST_URL}/api/game-sdk/v2/events/batch`;
const EVENTS_URL = `${INGEST_URL}/api/game-sdk/v2/events`;
const EVENT_TYPE_JSON = JSON.stringify(EVENT_TYPE);
// eventBody()'s metadata for the peak, up to its last member's value: { source, profile, iteration }.
const PEAK_METADATA_JSON = `{"source":"k6","profile":${JSON.stringify(PROFILE)},"iteration":`;
let peakGames = null;
function peakGame(data) {
  if (peakGames === null) {
    peakGames = data.games.map((game) => ({
      params: {
        headers: { ...bearer(game.secret), 'Content-Type': 'application/json' },
        tags: { name: 'event:fresh' },
      },
      batchParams: {
        headers: { ...bearer(game.secret), 'Content-Type': 'application/json' },
        tags: { name: 'event:batch' },
      },
      players: game.players.map((playerId) => JSON.stringify(playerId)),
    }));
  }
  return pick(peakGames);
}

export function replay(data) {
  const r = pick(data.replays);
  const res = postEvent(r.secret, r.body, 'event:replay');
  let d = null;
  try {
    d = res.json().data;
  } catch (_) {
    d = null;
  }
  const same =
    d !== null &&
    d.replayed === true &&
    d.id === r.id &&
    d.status === r.status &&
    d.reason === r.reason &&
    d.rewardCredits === r.rewardCredits;
  replayConsistent.add(same);
  check(res, {
    'replay: 200': (x) => x.status === 200,
    'replay: replayed with the stored decision': () => same,
  });
}

export function consoleRead(data) {
  const headers = bearer(DEV_TOKEN);
  if (exec.scenario.iterationInTest % 2 === 0) {
    const res = http.get(`${GATEWAY_URL}/api/developer/v1/console`, { headers, tags: { name: 'console:snapshot' } });
    check(res, {
      'console: 200': (r) => r.status === 200,
      'console: snapshot': (r) => {
        try {
          return Array.isArray(r.json().data.games);
        } catch (_) {
          return false;
        }
      },
    });
    return;
  }
  const kind = Math.random() < 0.7 ? 'events' : 'players';
  const game = pick(data.games);
  const url = `${GATEWAY_URL}/api/developer/v1/records?kind=${kind}&gameId=${game.id}&limit=50`;
  const res = http.get(url, { headers, tags: { name: `records:${kind}` } });
  let page = null;
  try {
    page = res.json().data;
  } catch (_) {
    page = null;
  }
  check(res, {
    'records: 200': (r) => r.status === 200,
    'records: page': () => page !== null && page.kind === kind && Array.isArray(page.records),
  });
  if (page?.nextCursor) {
    const next = http.get(`${url}&cursor=${encodeURIComponent(page.nextCursor)}`, {
      headers,
      tags: { name: `records:${kind}:next` },
    });
    check(next, { 'records: next page 200': (r) => r.status === 200 });
  }
}

// ---------- summary ----------

function fmt(metric, stat) {
  const v = metric.values[stat];
  if (v === undefined) return '-';
  if (metric.type === 'trend') return `${v.toFixed(1)}ms`;
  if (metric.type === 'rate') return `${(v * 100).toFixed(2)}%`;
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

function textSummary(data) {
  const lines = [];
  const m = data.metrics;
  lines.push(
    '',
    `Sandbox Rewards load test: profile ${PROFILE}, base ${BASE_URL}, ${GAMES} games x ${PLAYERS_PER_GAME} players`,
  );
  lines.push(
    `rates per second: ingest ${RATES.ingest}, replay ${RATES.replay}, console ${RATES.console}; duration ${DURATION}`,
  );
  if (scenarios.peak) {
    const offered =
      PEAK.rate === 'closed'
        ? `in a closed loop of ${PEAK.vus} in flight`
        : `offered at ${PEAK.rate}/s, at most ${PEAK.vus} in flight`;
    lines.push(
      `peak: ${PEAK.exec === 'peakBatch' ? `batches of ${BATCH_SIZE} fresh events` : 'fresh events'} ${offered}, for ${PEAK.duration}`,
    );
  }
  if (scenarios.step) {
    lines.push(
      `step: fresh events offered at ${STEP.rate}/s (open model, up to ${STEP.vus} in flight), for ${STEP.duration}` +
        (scenarios.stepWarmup ? ` after ${STEP.warmup} of warm-up (stepWarmup)` : ''),
    );
  }
  lines.push('', 'THRESHOLDS');
  let failed = 0;
  for (const name of Object.keys(m).sort()) {
    const t = m[name].thresholds;
    if (!t) continue;
    for (const [expr, res] of Object.entries(t)) {
      if (expr === 'count>=0' || expr === 'max>=0') continue; // only there to report a sub-metric
      if (!res.ok) failed++;
      lines.push(`  ${res.ok ? 'PASS' : 'FAIL'}  ${name}  ${expr}`);
    }
  }
  lines.push('', 'LATENCY (http_req_duration)   p(50)      p(95)      p(99)      max     requests  failed');
  for (const name of Object.keys(scenarios)) {
    const d = m[`http_req_duration{scenario:${name}}`];
    const f = m[`http_req_failed{scenario:${name}}`];
    if (!d) continue;
    const count = f ? (f.values.passes || 0) + (f.values.fails || 0) : '-';
    lines.push(
      `  ${name.padEnd(25)} ${fmt(d, 'med').padStart(9)} ${fmt(d, 'p(95)').padStart(10)} ${fmt(d, 'p(99)').padStart(10)} ${fmt(d, 'max').padStart(10)} ${String(count).padStart(10)}  ${f ? fmt(f, 'rate') : '-'}`,
    );
  }
  if (m.http_reqs) lines.push('', `requests: ${m.http_reqs.values.count} (${m.http_reqs.values.rate.toFixed(1)}/s)`);
  if (m.ingest_decisions) {
    const c = (k) => (m[k] ? m[k].values.count : 0);
    lines.push(
      `ingest decisions: ${m.ingest_decisions.values.count} (accepted ${c('ingest_decisions{status:accepted}')}, ` +
        `rejected ${c('ingest_decisions{status:rejected}')}, of which rate_limited ${c('ingest_decisions{reason:rate_limited}')})`,
    );
  }
  const peakRequests = m['http_reqs{scenario:peak}'];
  if (peakRequests) {
    lines.push(
      `peak: ${peakRequests.values.count} ${PEAK.exec === 'peakBatch' ? 'batches' : 'events'} completed, ${(peakRequests.values.count / seconds(PEAK.duration)).toFixed(0)}/s` +
        (PEAK.rate === 'closed'
          ? ''
          : ` (dropped iterations: ${m.dropped_iterations ? m.dropped_iterations.values.count : 0}, offered beyond capacity)`),
    );
  }
  if (m.replay_consistent) lines.push(`replays consistent: ${fmt(m.replay_consistent, 'rate')}`);
  if (m.checks) lines.push(`checks passed: ${fmt(m.checks, 'rate')}`);
  lines.push('', failed === 0 ? 'RESULT: all thresholds passed' : `RESULT: ${failed} threshold(s) failed`, '');
  return lines.join('\n');
}

export function handleSummary(data) {
  return {
    stdout: textSummary(data),
    [`${RESULTS_DIR}/${PROFILE}-summary.json`]: JSON.stringify(data, null, 2),
  };
}
