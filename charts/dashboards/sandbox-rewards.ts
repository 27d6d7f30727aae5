// The Grafana dashboard of the chart, written against Grafana's own dashboard types (@grafana/schema) so that the
// compiler checks its shape, and generated into charts/sandbox-rewards/dashboards/ (the chart ships it as a ConfigMap
// for Grafana's dashboard sidecar). Every metric it reads is one the programs export: test/integration/observability
// checks that against a running service's /metrics.
//
//   node charts/dashboards/sandbox-rewards.ts           writes the JSON
//   node charts/dashboards/sandbox-rewards.ts --check   fails when the committed JSON differs (npm run check)
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Dashboard, Panel, RowPanel } from '@grafana/schema';

export const DASHBOARD_FILE = resolve(import.meta.dirname, '../sandbox-rewards/dashboards/sandbox-rewards.json');

const datasource = { type: 'prometheus', uid: '${datasource}' };
/**
 * Every query is scoped to the dashboard's namespace and program variables. The HTTP metrics carry a `program` label
 * of their own (the all-in-one serves all five); the others are told apart by the Service Prometheus scraped
 * (`<release>-<program>`), and event decisions come from ingest only.
 */
const scopeHttp = 'namespace=~"$namespace", program=~"$program"';
const scope = 'namespace=~"$namespace", service=~".*-$program"';
const scopeNs = 'namespace=~"$namespace"';

interface Query {
  expr: string;
  legend: string;
}

let nextId = 1;
let y = 0;

function row(title: string): RowPanel {
  const panel: RowPanel = {
    type: 'row',
    id: nextId++,
    title,
    collapsed: false,
    gridPos: { x: 0, y, w: 24, h: 1 },
    panels: [],
  };
  y += 1;
  return panel;
}

function timeseries(
  title: string,
  description: string,
  unit: string,
  queries: Query[],
  place: { x: number; w: number; h?: number; stacked?: boolean },
): Panel {
  return {
    type: 'timeseries',
    id: nextId++,
    title,
    description,
    datasource,
    gridPos: { x: place.x, y, w: place.w, h: place.h ?? 8 },
    fieldConfig: {
      defaults: {
        unit,
        custom: {
          drawStyle: 'line',
          fillOpacity: place.stacked ? 60 : 10,
          lineWidth: 1,
          stacking: { mode: place.stacked ? 'normal' : 'none', group: 'A' },
        },
      },
      overrides: [],
    },
    options: { legend: { displayMode: 'table', placement: 'bottom', showLegend: true, calcs: ['mean', 'max'] } },
    targets: queries.map((query, index) => ({
      refId: String.fromCharCode(65 + index),
      datasource,
      expr: query.expr,
      legendFormat: query.legend,
      range: true,
    })),
  };
}

/** A line of panels of the given widths (summing to 24). */
function line(...panels: Array<(x: number) => Panel>): Panel[] {
  let x = 0;
  const placed = panels.map((make) => {
    const panel = make(x);
    x += panel.gridPos?.w ?? 0;
    return panel;
  });
  y += Math.max(...placed.map((p) => p.gridPos?.h ?? 8));
  return placed;
}

const quantile = (q: number, metric: string, by: string, filter: string) =>
  `histogram_quantile(${q}, sum by (${by}, le) (rate(${metric}_bucket{${filter}}[$__rate_interval])))`;

/** A histogram's p50 and p99, one line per value of `by`. */
const percentiles = (metric: string, by: string, filter: string): Query[] =>
  [0.5, 0.99].map((q) => ({ expr: quantile(q, metric, by, filter), legend: `p${q * 100} {{${by}}}` }));

function build(): Dashboard {
  nextId = 1;
  y = 0;
  const panels: Array<Panel | RowPanel> = [
    row('Events (ingest)'),
    ...line(
      (x) =>
        timeseries(
          'Event decisions by status',
          'Decisions answered by ingest per second (accepted, rejected; replays separately).',
          'reqps',
          [
            {
              expr: `sum by (status, replayed) (rate(event_decisions_total{${scopeNs}}[$__rate_interval]))`,
              legend: '{{status}} replayed={{replayed}}',
            },
          ],
          { x, w: 12, stacked: true },
        ),
      (x) =>
        timeseries(
          'Rejections by reason',
          'Fresh rejected decisions per second, by the first failing check.',
          'reqps',
          [
            {
              expr: `sum by (reason) (rate(event_decisions_total{${scopeNs}, status="rejected", replayed="false"}[$__rate_interval]))`,
              legend: '{{reason}}',
            },
          ],
          { x, w: 12, stacked: true },
        ),
    ),
    row('HTTP'),
    ...line(
      (x) =>
        timeseries(
          'Requests per route',
          'HTTP requests per second by program and route.',
          'reqps',
          [
            {
              expr: `sum by (program, route) (rate(http_requests_total{${scopeHttp}}[$__rate_interval]))`,
              legend: '{{program}} {{route}}',
            },
          ],
          { x, w: 8 },
        ),
      (x) =>
        timeseries(
          'Latency per route (p50, p99)',
          'HTTP request duration percentiles per route.',
          's',
          percentiles('http_request_duration_seconds', 'route', scopeHttp),
          { x, w: 8 },
        ),
      (x) =>
        timeseries(
          '5xx ratio per program',
          'Share of answers with a 5xx status (the alert SandboxRewardsHighErrorRatio watches this).',
          'percentunit',
          [
            {
              expr:
                `sum by (program) (rate(http_requests_total{${scopeHttp}, status=~"5.."}[$__rate_interval]))` +
                ` / sum by (program) (rate(http_requests_total{${scopeHttp}}[$__rate_interval]))`,
              legend: '{{program}}',
            },
          ],
          { x, w: 8 },
        ),
    ),
    row('NATS requests to the state owners'),
    ...line(
      (x) =>
        timeseries(
          'Latency per operation (p50, p99)',
          'Duration of request-reply calls per subject, seen by the caller.',
          's',
          percentiles('transport_request_duration_seconds', 'subject', scope),
          { x, w: 12 },
        ),
      (x) =>
        timeseries(
          'Errors and timeouts per operation',
          'Request-reply calls that did not end ok, by subject and outcome (timeouts and no responders are 503s).',
          'reqps',
          [
            {
              expr: `sum by (subject, outcome) (rate(transport_requests_total{${scope}, outcome!="ok"}[$__rate_interval]))`,
              legend: '{{subject}} {{outcome}}',
            },
          ],
          { x, w: 12 },
        ),
    ),
    row('Database pool of the state owners (ledger, identity-admission)'),
    ...line(
      (x) =>
        timeseries(
          'Pool connections',
          'Open and idle connections of each state owner\'s PostgreSQL pool (DATABASE_POOL_MAX caps the total).',
          'short',
          [{ expr: `sum by (pod, state) (database_pool_connections{${scope}, state!="waiting"})`, legend: '{{pod}} {{state}}' }],
          { x, w: 12 },
        ),
      (x) =>
        timeseries(
          'Queries waiting for a connection',
          'Queries queued for a free connection: a pool that is too small, or a database that is too slow.',
          'short',
          [{ expr: `sum by (pod) (database_pool_connections{${scope}, state="waiting"})`, legend: '{{pod}}' }],
          { x, w: 12 },
        ),
    ),
    ...line(
      (x) =>
        timeseries(
          'Contention rollbacks',
          'Transactions PostgreSQL rolled back with a deadlock (40P01) or serialization failure (40001): retried inside the state owner, or given up after three attempts (a 503, or a batch of events decided again one by one). Normally zero.',
          'ops',
          [
            {
              expr: `sum by (pod, sqlstate, outcome) (rate(database_contention_failures_total{${scope}}[$__rate_interval]))`,
              legend: '{{pod}} {{sqlstate}} {{outcome}}',
            },
          ],
          { x, w: 12 },
        ),
      (x) =>
        timeseries(
          'Event decision calls (ledger)',
          "Round trip of one call of ledger.record_events (one transaction, the commit's WAL flush included): every event of the call waits for it, and the ledger sends one call at a time until a call is full.",
          's',
          percentiles('ledger_event_call_duration_seconds', 'pod', scope),
          { x, w: 12 },
        ),
    ),
    ...line(
      (x) =>
        timeseries(
          'Late work dropped',
          "Requests a state owner did not do because their deadline had passed (the caller has given up, and its answer said the outcome is unknown): on arrival, when the ledger's batch queue took them, or before or right after a transaction's BEGIN. Normally zero; a burst follows a database or NATS outage.",
          'ops',
          [
            {
              expr: `sum by (pod, stage) (rate(late_work_dropped_total{${scope}}[$__rate_interval]))`,
              legend: '{{pod}} {{stage}}',
            },
          ],
          { x, w: 12 },
        ),
      (x) =>
        timeseries(
          'In the queue groups',
          'Whether each state owner is in its queue groups (1) or has left them because its database or NATS connection failed its health check (0): NATS then sends its requests to the other replicas.',
          'short',
          [{ expr: `min by (pod, service) (queue_group_member{${scope}})`, legend: '{{pod}} {{service}}' }],
          { x, w: 12 },
        ),
    ),
    row('Batching of events (ingest, ledger)'),
    ...line(
      (x) =>
        timeseries(
          'Events per batch',
          'Mean events per RecordEvents request of ingest and per ledger.record_events call of the ledger: about one at low load, larger as the load grows (docs/ingest.md, "Batched decisions").',
          'short',
          [
            {
              expr: `sum by (pod) (rate(ingest_event_batch_size_sum{${scope}}[$__rate_interval])) / sum by (pod) (rate(ingest_event_batch_size_count{${scope}}[$__rate_interval]))`,
              legend: 'ingest {{pod}}',
            },
            {
              expr: `sum by (pod) (rate(ledger_event_batch_size_sum{${scope}}[$__rate_interval])) / sum by (pod) (rate(ledger_event_batch_size_count{${scope}}[$__rate_interval]))`,
              legend: 'ledger {{pod}}',
            },
          ],
          { x, w: 6 },
        ),
      (x) =>
        timeseries(
          'Games per shared transaction',
          'While a call of a ledger is in the database, the games that become ready wait and share the next transaction (up to EVENT_GROUP_KEYS_MAX): such transactions per second, and their mean number of games.',
          'short',
          [
            {
              expr: `sum by (pod) (rate(ledger_event_transaction_keys_count{${scope}}[$__rate_interval]))`,
              legend: 'shared transactions/s {{pod}}',
            },
            {
              expr: `sum by (pod) (rate(ledger_event_transaction_keys_sum{${scope}}[$__rate_interval])) / sum by (pod) (rate(ledger_event_transaction_keys_count{${scope}}[$__rate_interval]))`,
              legend: 'games each {{pod}}',
            },
          ],
          { x, w: 6 },
        ),
      (x) =>
        timeseries(
          'Events waiting',
          "Events queued in ingest for a free RecordEvents slot, event requests of a game at INGEST_EVENT_KEY_REQUESTS_MAX waiting in front of ingest's app, that game's connections ingest leaves unread meanwhile, and events queued in the ledger for the database (the ledger refuses beyond 10,000 with 503 retry_later).",
          'short',
          [
            { expr: `sum by (pod) (ingest_event_queue_depth{${scope}})`, legend: 'ingest {{pod}}' },
            { expr: `sum by (pod) (ingest_event_requests_waiting{${scope}})`, legend: 'ingest unread requests {{pod}}' },
            { expr: `sum by (pod) (ingest_event_connections_held{${scope}})`, legend: 'ingest held connections {{pod}}' },
            { expr: `sum by (pod) (ledger_event_queue_depth{${scope}})`, legend: 'ledger {{pod}}' },
          ],
          { x, w: 6 },
        ),
      (x) =>
        timeseries(
          'Flood pacing',
          "While other games' RecordEvents round trips take more than INGEST_FLOOD_PACING_TARGET_PERCENT of their quiet one, a flooding game's next request waits this many of its last request's durations (0: none paced), and such waits per second (docs/ingest.md, \"Fair ingest\").",
          'short',
          [
            { expr: `max by (pod) (ingest_flood_pace{${scope}})`, legend: 'pace {{pod}}' },
            { expr: `sum by (pod) (rate(ingest_flood_pauses_total{${scope}}[$__rate_interval]))`, legend: 'waits/s {{pod}}' },
          ],
          { x, w: 6 },
        ),
    ),
    row('Processes'),
    ...line(
      (x) =>
        timeseries(
          'Resident memory',
          'Resident set size of every pod.',
          'bytes',
          [{ expr: `sum by (pod) (process_resident_memory_bytes{${scope}})`, legend: '{{pod}}' }],
          { x, w: 8 },
        ),
      (x) =>
        timeseries(
          'Event-loop lag (p99)',
          'The 99th percentile of the Node.js event-loop delay: above 0.1 s a program is CPU-bound.',
          's',
          [{ expr: `max by (pod) (nodejs_eventloop_lag_p99_seconds{${scope}})`, legend: '{{pod}}' }],
          { x, w: 8 },
        ),
      (x) =>
        timeseries(
          'CPU',
          'CPU seconds per second of every pod.',
          'percentunit',
          [
            {
              expr: `sum by (pod) (rate(process_cpu_seconds_total{${scope}}[$__rate_interval]))`,
              legend: '{{pod}}',
            },
          ],
          { x, w: 8 },
        ),
    ),
  ];
  return {
    title: 'Sandbox Rewards',
    uid: 'sandbox-rewards',
    description: 'Events, HTTP, NATS requests and processes of the five programs (docs/deploy.md, "Observability").',
    tags: ['sandbox-rewards'],
    editable: false,
    schemaVersion: 41,
    version: 1,
    refresh: '30s',
    time: { from: 'now-1h', to: 'now' },
    timezone: 'utc',
    links: [],
    annotations: { list: [] },
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus' },
        {
          name: 'namespace',
          label: 'Namespace',
          type: 'query',
          datasource,
          query: 'label_values(http_requests_total, namespace)',
          refresh: 2,
          includeAll: true,
          multi: true,
        },
        {
          name: 'program',
          label: 'Program',
          type: 'query',
          datasource,
          query: 'label_values(http_requests_total{namespace=~"$namespace"}, program)',
          refresh: 2,
          includeAll: true,
          multi: true,
        },
      ],
    },
    panels,
  };
}

export const dashboard = build();
export const dashboardJson = `${JSON.stringify(dashboard, null, 2)}\n`;

/** The metric names the dashboard's queries read (histogram series reduced to their metric). */
export function dashboardMetrics(): string[] {
  const names = new Set<string>();
  for (const panel of dashboard.panels ?? []) {
    for (const target of (panel as Panel).targets ?? []) {
      for (const match of String(target.expr).matchAll(/([a-z_][a-z0-9_]*)\{/g)) {
        names.add(match[1]!.replace(/_(bucket|sum|count)$/, ''));
      }
    }
  }
  return [...names].sort();
}

if (import.meta.main) {
  if (process.argv.includes('--check')) {
    const committed = readFileSync(DASHBOARD_FILE, 'utf8');
    if (committed !== dashboardJson) {
      process.stderr.write(`${DASHBOARD_FILE} is stale: run node charts/dashboards/sandbox-rewards.ts\n`);
      process.exit(1);
    }
    process.stdout.write('Grafana dashboard is up to date\n');
  } else {
    writeFileSync(DASHBOARD_FILE, dashboardJson);
    process.stdout.write(`wrote ${DASHBOARD_FILE}\n`);
  }
}
