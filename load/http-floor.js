// k6 script of `node load/http-floor.ts` (the HTTP floor, docs/benchmarks.md): the peak phase of load/ingest.js
// against a server that does nothing but HTTP and JSON. The same request (a fresh event's body, bearer key,
// JSON content type, keep-alive), the same executor (constant arrival rate, at most VUS in flight), the same check on
// the raw body. No setup work: setup() only logs `setup: done`, the mark http-floor.ts times its window from.
//
//   BASE_URL=http://127.0.0.1:PORT RATE=3000|0 VUS=64 DURATION=25s PROFILE=<name> RESULTS_DIR=<dir> k6 run load/http-floor.js

import { check } from 'k6';
import exec from 'k6/execution';
import http from 'k6/http';

const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const RATE = Number.parseInt(__ENV.RATE || '3000', 10);
const VUS = Number.parseInt(__ENV.VUS || '64', 10);
const DURATION = __ENV.DURATION || '25s';
const PROFILE = __ENV.PROFILE || 'http-floor';
const RESULTS_DIR = __ENV.RESULTS_DIR || 'load/results';
// A secret key of the shape the edge accepts (the servers here do not read it; the bytes on the wire are the same).
const SECRET = `sk_test_${'a1b2c3d4e5f6a7b8'.repeat(2)}`;

export const options = {
  scenarios: {
    // RATE 0: a closed loop instead (VUS requests always in flight, each sent when the one before is answered),
    // which keeps the machine as busy as the bench's peak keeps it.
    peak:
      RATE > 0
        ? {
            executor: 'constant-arrival-rate',
            exec: 'peak',
            rate: RATE,
            timeUnit: '1s',
            duration: DURATION,
            preAllocatedVUs: VUS,
            maxVUs: VUS,
            gracefulStop: '5s',
          }
        : { executor: 'constant-vus', exec: 'peak', vus: VUS, duration: DURATION, gracefulStop: '5s' },
  },
  thresholds: { 'http_req_failed{scenario:peak}': ['rate<0.01'], 'checks{scenario:peak}': ['rate>0.99'] },
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
  discardResponseBodies: false,
  systemTags: ['status', 'method', 'name', 'scenario', 'check', 'error', 'error_code', 'expected_response'],
  userAgent: 'sandbox-rewards-k6/1.0',
};

// Linked players' ids are UUIDs, as in the bench; as JSON, as load/ingest.js's peak() keeps them.
const PLAYERS = Array.from({ length: 10 }, () => JSON.stringify(crypto.randomUUID()));
const EVENTS_URL = `${BASE_URL}/api/game-sdk/v2/events`;
const PARAMS = {
  headers: { Authorization: `Bearer ${SECRET}`, 'Content-Type': 'application/json' },
  tags: { name: 'event:fresh' },
};

export function setup() {
  const offered = RATE > 0 ? `${RATE}/s offered, at most ${VUS} in flight` : `${VUS} in flight (closed loop)`;
  console.log(`setup: done, ${BASE_URL}, ${offered}, for ${DURATION}`);
}

// load/ingest.js's peak(): a fresh event (the same body, made the same way), checked on the raw body.
export function peak() {
  const eventId = crypto.randomUUID();
  const body =
    `{"eventId":"${eventId}","playerId":${PLAYERS[Math.floor(Math.random() * PLAYERS.length)]},` +
    `"eventType":"level_complete","occurredAt":"${new Date().toISOString()}",` +
    `"metadata":{"source":"k6","profile":"full","iteration":${exec.scenario.iterationInTest}}}`;
  const res = http.post(EVENTS_URL, body, PARAMS);
  check(res, {
    'peak: 200, a fresh decision': (r) =>
      r.status === 200 &&
      typeof r.body === 'string' &&
      r.body.includes('"replayed":false') &&
      r.body.includes(`"eventId":"${eventId}"`),
  });
}

export function handleSummary(data) {
  return { [`${RESULTS_DIR}/${PROFILE}-summary.json`]: JSON.stringify(data, null, 2) };
}
