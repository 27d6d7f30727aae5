// A game server's ingest test, to copy and adapt (load/README.md, "Your own ingest test"). It needs nothing but a
// game's secret key: setup() links nobody but creates PLAYERS players through link intents (POST
// /api/game-sdk/v2/link-intents), then the scenario posts fresh events at RATE per second for DURATION, with every
// REPLAY_EVERY-th request re-sending an earlier event (which must answer its stored decision, replayed: true).
//
//   BASE_URL=http://localhost:8080 SECRET_KEY=cr_sk_sandbox_... EVENT_TYPE=level.completed k6 run load/examples/game-server.js
//
// Players that never linked an account are decided `rejected` with reason `player_not_linked` (HTTP 200): the
// ingest path does the same work either way. Link players in your app first to see `accepted` decisions.
// Mind the game's rate limit (EVENT_RATE_LIMIT_PER_MINUTE fresh events per game per minute, 120 by default): past
// it, decisions are `rejected` with `rate_limited`, still 200; set the variable higher on the service you test.

import { check, fail } from 'k6';
import http from 'k6/http';
import { Counter } from 'k6/metrics';

const BASE_URL = __ENV.BASE_URL || 'http://localhost:8080';
const SECRET_KEY = __ENV.SECRET_KEY || fail('SECRET_KEY is required: a secret key of the game (issueKey)');
const EVENT_TYPE = __ENV.EVENT_TYPE || 'level.completed';
const PLAYERS = Number(__ENV.PLAYERS || 20);
const RATE = Number(__ENV.RATE || 10);
const DURATION = __ENV.DURATION || '30s';
const REPLAY_EVERY = Number(__ENV.REPLAY_EVERY || 10);

const headers = { Authorization: `Bearer ${SECRET_KEY}`, 'Content-Type': 'application/json' };
const decisions = new Counter('decisions');

export const options = {
  scenarios: {
    events: {
      executor: 'constant-arrival-rate',
      rate: RATE,
      timeUnit: '1s',
      duration: DURATION,
      preAllocatedVUs: Math.max(2, RATE),
      maxVUs: Math.max(10, RATE * 4),
    },
  },
  thresholds: {
    // 503 retry_later is a failed request here; 200 (accepted or rejected) is not.
    http_req_failed: ['rate<0.01'],
    'http_req_duration{name:event}': ['p(99)<500'],
    checks: ['rate>0.99'],
  },
};

export function setup() {
  const players = [];
  for (let i = 0; i < PLAYERS; i += 1) {
    const res = http.post(
      `${BASE_URL}/api/game-sdk/v2/link-intents`,
      JSON.stringify({ externalPlayerId: `k6-player-${i}` }),
      { headers, tags: { name: 'link-intent' } },
    );
    if (res.status !== 200) fail(`link intent: ${res.status} ${res.body}`);
    players.push(res.json('data.playerId'));
  }
  return { players };
}

const sent = [];

export default function (data) {
  const replay = REPLAY_EVERY > 0 && sent.length > 0 && Math.random() < 1 / REPLAY_EVERY;
  const body = replay
    ? sent[Math.floor(Math.random() * sent.length)]
    : JSON.stringify({
        eventId: crypto.randomUUID(),
        playerId: data.players[Math.floor(Math.random() * data.players.length)],
        eventType: EVENT_TYPE,
        occurredAt: new Date().toISOString(),
      });
  const res = http.post(`${BASE_URL}/api/game-sdk/v2/events`, body, { headers, tags: { name: 'event' } });
  const ok = check(res, {
    'status 200': (r) => r.status === 200,
    'a decision': (r) => r.json('data.status') === 'accepted' || r.json('data.status') === 'rejected',
    'replayed as expected': (r) => r.json('data.replayed') === replay,
  });
  if (ok) decisions.add(1, { status: res.json('data.status'), reason: String(res.json('data.reason')) });
  if (!replay && sent.length < 100) sent.push(body);
}
