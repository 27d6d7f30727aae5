import { readFileSync } from 'node:fs';
import { startLoadSystem } from './lib/system.ts';
const sys = await startLoadSystem({ mode: 'programs', env: {}, logDir: '/tmp/s49/probe-logs' });
await new Promise((r) => setTimeout(r, 8000));
for (const p of sys.processes) {
  const status = readFileSync(`/proc/${p.pid}/status`, 'utf8').split('\n').filter((l) => /^(VmRSS|RssAnon|RssFile|Threads|VmHWM)/.test(l)).map((l) => l.replace(/\s+/g, ' ')).join(', ');
  console.log(p.name, status);
  if (p.name.startsWith('ledger') || p.name.startsWith('gateway')) {
    const maps = readFileSync(`/proc/${p.pid}/smaps`, 'utf8');
    const regions: { name: string; rss: number }[] = [];
    let cur = '';
    for (const line of maps.split('\n')) {
      if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) cur = line.split(/\s+/).slice(5).join(' ') || '[anon]';
      else if (line.startsWith('Rss:')) regions.push({ name: cur, rss: Number(line.split(/\s+/)[1]) });
    }
    const by = new Map<string, number>();
    for (const r of regions) by.set(r.name, (by.get(r.name) ?? 0) + r.rss);
    console.log([...by].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([n, k]) => `  ${(k / 1024).toFixed(1)} MiB ${n}`).join('\n'));
    const anon = regions.filter((r) => r.name === '[anon]').map((r) => r.rss).sort((a, b) => b - a);
    console.log('  anon regions', anon.length, 'largest', anon.slice(0, 10).map((k) => (k / 1024).toFixed(1)).join(' '));
  }
}
await sys.stop();
