// A text summary of a V8 CPU profile (node --cpu-prof): where the busy time went, by area (this project's files,
// each npm package, Node's internals, garbage collection) and by function (self time).

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The area a function belongs to: `npm:<package>`, `node:<module>`, `project:<folder>`, or V8's pseudo frames. */
export function areaOf(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `npm:${pkg[1]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, 2).join('/')}`;
  const project = /\/(services\/[^/]+|gateway)\/src\/([^/]+)/.exec(url);
  if (project) return `project:${project[1]}/${project[2]}`;
  return url;
}

export function summarizeCpuProfile(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const areas = new Map<string, number>();
  const functions = new Map<string, { us: number; area: string }>();
  let busyUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const area = areaOf(frame);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const where = frame.url
      ? `${frame.url.replace(/^.*\/(node_modules|services|gateway)\//, '$1/')}:${frame.lineNumber + 1}`
      : '';
    const key = `${frame.functionName || '(anonymous)'} ${where}`.trim();
    const entry = functions.get(key) ?? { us: 0, area };
    entry.us += us;
    functions.set(key, entry);
  }
  const pct = (us: number) => `${((us / busyUs) * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `  busy ${(busyUs / 1e6).toFixed(1)} s, idle ${(idleUs / 1e6).toFixed(1)} s; self time by area:`,
    ...[...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([area, us]) => `    ${pct(us)}  ${area}`),
    '  top functions (self time):',
    ...[...functions.entries()]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([key, { us }]) => `    ${pct(us)}  ${key}`),
  ];
  return lines.join('\n');
}

interface StackNode extends ProfileNode {
  children?: number[];
}

/** A stage of a program's work: a sample belongs to the first stage (in this order) found anywhere in its stack. */
export interface Stage {
  name: string;
  matches: (frame: CallFrame) => boolean;
}

const inFile = (part: string) => (f: CallFrame) => f.url.includes(part);
const named = (name: string, part?: string) => (f: CallFrame) =>
  f.functionName === name && (part === undefined || f.url.includes(part));

/**
 * The ingest edge's stages: socket writes first (their time in a profile is wall time in the system call,
 * which counts being preempted by the process it woke: read them beside the process's system CPU time), then garbage
 * collection, then our own steps from the most specific, then the frameworks underneath.
 */
export const EDGE_STAGES: Stage[] = [
  { name: 'socket writes to NATS (wall)', matches: named('_send', 'node_transport') },
  { name: 'socket writes of HTTP responses (wall)', matches: (f) => f.functionName === 'handleWriteReq' },
  { name: 'garbage collection', matches: named('(garbage collector)') },
  { name: 'body: read and UTF-8', matches: named('readJsonText') },
  { name: 'body: JSON.parse and the I-JSON check', matches: named('parseIJson') },
  { name: 'schema (ajv)', matches: (f) => /^validate\d*$/.test(f.functionName) || f.url.includes('/ajv/') },
  { name: 'occurredAt', matches: inFile('occurred-at') },
  { name: 'metadata limits', matches: inFile('domain/metadata') },
  {
    name: 'canonical JSON and SHA-256 (payload hash)',
    matches: (f) => ['payloadHash', 'eventCanonicalForms', 'sha256Fast'].includes(f.functionName),
  },
  {
    name: 'key: bearer, shape, SHA-256',
    matches: (f) => f.functionName === 'secretKey' || f.functionName === 'bearerGameKey',
  },
  { name: 'platform switch', matches: inFile('platform') },
  { name: 'protobuf', matches: inFile('@bufbuild') },
  { name: 'NATS client', matches: inFile('@nats-io') },
  // The OpenTelemetry API itself (trace-context.ts wraps every request, so it counts as the transport's own).
  { name: 'tracing hooks', matches: inFile('@opentelemetry') },
  { name: 'metrics (prom-client)', matches: inFile('prom-client') },
  { name: 'logging (pino)', matches: inFile('/pino') },
  { name: 'keyed batcher', matches: inFile('batcher') },
  { name: 'NATS transport (ours)', matches: inFile('runtime/src/transport') },
  {
    name: 'the events route and its answer',
    matches: (f) => f.url.includes('routes/events') || f.url.includes('event-record'),
  },
  {
    name: 'Koa router',
    matches: (f) =>
      f.url.includes('@koa/router') || f.url.includes('koa-compose') || f.url.includes('http/static-routes'),
  },
  {
    name: 'Koa and the shared HTTP middleware',
    matches: (f) => f.url.includes('/koa/') || f.url.includes('http/app.ts'),
  },
  { name: "Node's HTTP server", matches: (f) => f.url.startsWith('node:_http') || f.url.startsWith('node:http') },
  { name: "Node's streams and sockets", matches: (f) => f.url.startsWith('node:net') || f.url.includes('streams') },
  { name: 'other Node internals', matches: (f) => f.url.startsWith('node:') },
  { name: 'other packages', matches: inFile('node_modules/') },
];

/**
 * Busy time by stage (EDGE_STAGES by default): each sample counted once, for the first stage found in its stack;
 * with `events`, also in µs per event (the profile's whole life: start, steady load, peak and half-peak phases).
 */
export function summarizeStages(profile: CpuProfile, events?: number, stages: Stage[] = EDGE_STAGES): string {
  const nodes = profile.nodes as StackNode[];
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = stageOf.get(id);
    if (known !== undefined) return known;
    const stack: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame) stack.push(frame);
    }
    const stage = stages.find((s) => stack.some(s.matches))?.name ?? 'other';
    stageOf.set(id, stage);
    return stage;
  };
  const us = new Map<string, number>();
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    if (byId.get(id)?.callFrame.functionName === '(idle)') return;
    const d = profile.timeDeltas[i] ?? 0;
    busyUs += d;
    const stage = resolve(id);
    us.set(stage, (us.get(stage) ?? 0) + d);
  });
  return [
    `  busy ${(busyUs / 1e6).toFixed(1)} s by stage${events ? ` (µs per event over ${events} events)` : ''}:`,
    ...[...us.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(
        ([stage, t]) =>
          `    ${((t / busyUs) * 100).toFixed(1).padStart(5)}%${events ? `  ${(t / events).toFixed(1).padStart(6)} µs` : ''}  ${stage}`,
      ),
  ].join('\n');
}
