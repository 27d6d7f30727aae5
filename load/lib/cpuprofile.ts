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
