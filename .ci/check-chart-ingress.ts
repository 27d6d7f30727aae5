// Usage: node .ci/check-chart-ingress.ts HELM CHART — renders the chart's Ingresses with `helm template` and checks
// what the public edge lets through (run by .ci/check-deploy.sh, step 3):
//   - the body limit the proxy enforces (nginx.ingress.kubernetes.io/proxy-body-size) is above the largest body the
//     service takes, the event batch's (BATCH_BODY_LIMIT_BYTES), so the service answers an oversized body itself;
//     an annotation of the values' own wins over the chart's;
//   - the operator API (/api/admin/v1) is off the public Ingress by default; ingress.exposeAdminApi puts it there,
//     adminIngress on an Ingress of its own that carries nothing else;
//   - the web console (/console, Prefix) and the public routes go to their programs.
// Exits non-zero with the differences.
import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { BATCH_BODY_LIMIT_BYTES } from '../services/ingest/src/domain/event-batch.ts';

const [helm = '', chart = ''] = process.argv.slice(2);
if (!helm || !chart) {
  console.error('usage: node .ci/check-chart-ingress.ts HELM CHART');
  process.exit(2);
}

interface Path {
  path: string;
  pathType: string;
  backend: { service: { name: string } };
}
interface Ingress {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { rules: { host?: string; http: { paths: Path[] } }[] };
}

const BODY_SIZE = 'nginx.ingress.kubernetes.io/proxy-body-size';
const failures: string[] = [];
const check = (what: string, ok: boolean, detail: unknown) => {
  if (!ok) failures.push(`${what}: ${JSON.stringify(detail)}`);
};

function render(...set: string[]): Ingress[] {
  const args = ['template', 'check', chart, '--namespace', 'check', '--set', 'ingress.enabled=true'];
  for (const value of set) args.push(value.startsWith('-f ') ? '-f' : '--set', value.replace(/^-f /, ''));
  const out = execFileSync(helm, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return parseAllDocuments(out)
    .map((document) => document.toJS())
    .filter((object) => object?.kind === 'Ingress');
}

/** nginx's size syntax (client_max_body_size): bytes, or k/m/g. */
function bytes(size: string | undefined): number {
  const match = /^([0-9]+)([kKmMgG]?)$/.exec(size ?? '');
  if (!match) return Number.NaN;
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase()]!;
  return Number(match[1]) * unit;
}

const paths = (ingress: Ingress) => ingress.spec.rules.flatMap((rule) => rule.http.paths.map((p) => p.path));
const named = (ingresses: Ingress[], suffix: string) =>
  ingresses.find((ingress) => ingress.metadata.name === `check-sandbox-rewards${suffix}`);

// Defaults with the Ingress on.
const defaults = render();
check(
  'one Ingress by default',
  defaults.length === 1,
  defaults.map((i) => i.metadata.name),
);
const publicIngress = named(defaults, '')!;
const size = publicIngress.metadata.annotations?.[BODY_SIZE];
check(
  `${BODY_SIZE} above the batch limit (${BATCH_BODY_LIMIT_BYTES} bytes)`,
  bytes(size) > BATCH_BODY_LIMIT_BYTES,
  size,
);
check(
  'no /api/admin/v1 on the public Ingress by default',
  !paths(publicIngress).includes('/api/admin/v1'),
  paths(publicIngress),
);
const consolePath = publicIngress.spec.rules[0]!.http.paths.find((p) => p.path === '/console');
check(
  '/console (Prefix) to the gateway',
  consolePath?.pathType === 'Prefix' && consolePath.backend.service.name === 'check-sandbox-rewards-gateway',
  consolePath,
);
for (const [path, program] of [
  ['/api/game-sdk/v2/events/batch', 'ingest'],
  ['/api/game-sdk/v2/events', 'ingest'],
  ['/api/native/v1', 'links'],
  ['/graphql', 'gateway'],
  ['/openapi.json', 'gateway'],
]) {
  const route = publicIngress.spec.rules[0]!.http.paths.find((p) => p.path === path);
  check(`${path} to ${program}`, route?.backend.service.name === `check-sandbox-rewards-${program}`, route);
}

// The values' own annotation wins; an empty proxyBodySize sets none.
const own = named(render(`ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/proxy-body-size=4m`), '')!;
check('an annotation of the values wins', own.metadata.annotations?.[BODY_SIZE] === '4m', own.metadata.annotations);
const none = named(render('ingress.proxyBodySize='), '')!;
check('proxyBodySize empty: no annotation', none.metadata.annotations?.[BODY_SIZE] === undefined, none.metadata);

// The operator API: on the public Ingress when asked; on an Ingress of its own with adminIngress.
const exposed = named(render('ingress.exposeAdminApi=true'), '')!;
check(
  'exposeAdminApi puts /api/admin/v1 on the public Ingress',
  paths(exposed).includes('/api/admin/v1'),
  paths(exposed),
);
const separate = render('adminIngress.enabled=true', 'adminIngress.hosts[0]=admin.example.com');
const admin = named(separate, '-admin');
check(
  'adminIngress renders an Ingress of its own',
  admin !== undefined,
  separate.map((i) => i.metadata.name),
);
if (admin) {
  check(
    'the admin Ingress carries /api/admin/v1 only',
    JSON.stringify(paths(admin)) === '["/api/admin/v1"]',
    paths(admin),
  );
  check('the admin Ingress has its host', admin.spec.rules[0]?.host === 'admin.example.com', admin.spec.rules);
  check(
    'the admin Ingress routes to the gateway',
    admin.spec.rules[0]!.http.paths[0]!.backend.service.name === 'check-sandbox-rewards-gateway',
    admin.spec.rules[0]!.http.paths[0],
  );
}
check(
  'adminIngress leaves the public Ingress without /api/admin/v1',
  !paths(named(separate, '')!).includes('/api/admin/v1'),
  paths(named(separate, '')!),
);

if (failures.length) {
  for (const failure of failures) console.error(`    FAILED: ${failure}`);
  process.exit(1);
}
console.log(
  `    Ingress: ${BODY_SIZE} ${size} (> ${BATCH_BODY_LIMIT_BYTES} bytes, the batch limit), /console routed, ` +
    '/api/admin/v1 only when asked (exposeAdminApi, adminIngress)',
);
