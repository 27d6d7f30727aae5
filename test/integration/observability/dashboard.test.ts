// The Grafana dashboard and the alerts read only metrics the programs export: every metric name in their queries is
// in the /metrics of a running service (the all-in-one registers what each of the five programs does).
import { readFileSync } from 'node:fs';
import {
  DASHBOARD_FILE,
  dashboard,
  dashboardJson,
  dashboardMetrics,
} from '../../../charts/dashboards/sandbox-rewards.ts';
import { startTestSystem, type TestSystem } from '../../support/system.ts';

let system: TestSystem;

beforeAll(async () => {
  system = await startTestSystem();
});

afterAll(async () => {
  await system?.stop();
});

async function exportedMetrics(): Promise<Set<string>> {
  const text = await (await fetch(`${system.url}/metrics`)).text();
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
}

describe('Grafana dashboard', () => {
  it('is the committed JSON of its source', () => {
    expect(readFileSync(DASHBOARD_FILE, 'utf8')).toBe(dashboardJson);
  });

  it('reads only metrics the programs export', async () => {
    const exported = await exportedMetrics();
    const used = dashboardMetrics();
    expect(used).toEqual(
      expect.arrayContaining([
        'event_decisions_total',
        'http_request_duration_seconds',
        'transport_requests_total',
        'database_pool_connections',
        'nodejs_eventloop_lag_p99_seconds',
      ]),
    );
    expect(used.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('has unique panel ids and panels on a 24-column grid without overlaps', () => {
    const panels = dashboard.panels ?? [];
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const cells = new Set<string>();
    for (const panel of panels) {
      const { x = 0, y = 0, w = 0, h = 0 } = panel.gridPos ?? {};
      expect(x + w).toBeLessThanOrEqual(24);
      for (let row = y; row < y + h; row++) {
        for (let column = x; column < x + w; column++) {
          const cell = `${row}:${column}`;
          expect(cells.has(cell)).toBe(false);
          cells.add(cell);
        }
      }
    }
  });
});

describe('PrometheusRule alerts', () => {
  it('read only metrics the programs export (and kube-state-metrics)', async () => {
    const template = readFileSync('charts/sandbox-rewards/templates/prometheusrule.yaml', 'utf8');
    const used = new Set(
      [...template.matchAll(/\b([a-z_][a-z0-9_]*)\{/g)]
        .map((m) => m[1]!.replace(/_(bucket|sum|count)$/, ''))
        .filter((name) => !['by', 'rate', 'sum', 'changes', 'histogram_quantile'].includes(name)),
    );
    const exported = await exportedMetrics();
    const missing = [...used].filter((name) => !exported.has(name) && !name.startsWith('kube_'));
    expect(missing).toEqual([]);
    expect([...used]).toEqual(expect.arrayContaining(['http_requests_total', 'transport_requests_total']));
  });

  it('each link to their runbook section in docs/deploy.md', () => {
    const template = readFileSync('charts/sandbox-rewards/templates/prometheusrule.yaml', 'utf8');
    const deploy = readFileSync('docs/deploy.md', 'utf8');
    const alerts = [...template.matchAll(/- alert: (\w+)/g)].map((m) => m[1]!);
    expect(alerts.length).toBeGreaterThanOrEqual(4);
    for (const alert of alerts) {
      expect(template).toContain(`#runbook-${alert.toLowerCase()}`);
      expect(deploy).toContain(`### Runbook: ${alert}\n`);
    }
  });
});
