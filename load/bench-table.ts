// npm run bench:table: the current figures of `npm run bench` in docs/benchmarks.md, generated from the recorded JSON
// of the last set of runs (docs/bench-runs/bench.json: the files `npm run bench -- --json FILE` wrote), never typed
// by hand. It writes two places between markers: the summary table's `npm run bench` row and the section's table of
// runs. Earlier sets stay in git history.
//
//   npm run bench -- --json /tmp/run1.json          # as many runs as the set has (three in a row is the custom)
//   npm run bench:table -- /tmp/run1.json ...       # records them as the current set, then writes the tables
//   npm run bench:table                             # writes the tables from the recorded set
//   node load/bench-table.ts --check                # fails when the tables differ from the recorded set (npm run check)
import { readFileSync, writeFileSync } from 'node:fs';

const RUNS_FILE = new URL('../docs/bench-runs/bench.json', import.meta.url);
const DOC_FILE = new URL('../docs/benchmarks.md', import.meta.url);
const SUMMARY = { start: '<!-- bench:summary:start -->', end: '<!-- bench:summary:end -->' };
const RUNS = { start: '<!-- bench:runs:start -->', end: '<!-- bench:runs:end -->' };
/** The summary table's row that the runs replace (the other rows are other benches', kept by hand). */
const SUMMARY_ROW_PREFIX = '| [end to end against pgbench]';
/** Processes of a run that are not the service's programs (their peak RSS is not the programs'). */
const NOT_PROGRAMS = new Set(['k6', 'nats-server', 'postgres', 'pgbench']);

/** What the tables read of one run's JSON (load/bench.ts writes much more). */
interface Run {
  measuredAt: string;
  command: string;
  machine: { loadAverage1m: number; loadAverage1mAfter: number };
  endToEnd: { eventsPerSecond: number; peakLatencyMs: { p99: number } };
  pgbench: { perSecond: number };
  ratio: number;
  rateAtP99: {
    boundMs: number;
    service: { ratePerSecond: number };
    pgbench: { ratePerSecond: number };
    /** null when no step of pgbench's held (JSON has no NaN). */
    ratio: number | null;
  };
  batches: { size: number; eventsPerSecond: number; ratio: number; cpuPerEventUs: Record<string, number> };
  cpuPerEventUs: { endToEnd: Record<string, number> };
  peakRssMiB: Record<string, number>;
}

interface RecordedSet {
  /** Where the figures come from, when not the files of the runs themselves. */
  source?: string;
  runs: Run[];
}

function assertRun(value: unknown, where: string): asserts value is Run {
  const run = value as Partial<Run> | null;
  const numbers = [
    run?.machine?.loadAverage1m,
    run?.machine?.loadAverage1mAfter,
    run?.endToEnd?.eventsPerSecond,
    run?.endToEnd?.peakLatencyMs?.p99,
    run?.pgbench?.perSecond,
    run?.ratio,
    run?.rateAtP99?.boundMs,
    run?.rateAtP99?.service?.ratePerSecond,
    run?.rateAtP99?.pgbench?.ratePerSecond,
    run?.batches?.size,
    run?.batches?.eventsPerSecond,
    run?.batches?.ratio,
    run?.batches?.cpuPerEventUs?.ingest,
  ];
  if (
    typeof run?.measuredAt !== 'string' ||
    typeof run.command !== 'string' ||
    numbers.some((n) => typeof n !== 'number' || !Number.isFinite(n)) ||
    typeof run.cpuPerEventUs?.endToEnd !== 'object' ||
    typeof run.peakRssMiB !== 'object'
  ) {
    throw new Error(`${where}: not the JSON of npm run bench -- --json (a figure the tables need is missing)`);
  }
}

const n = (value: number | null, digits = 0) =>
  value === null || !Number.isFinite(value)
    ? '-'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const range = (values: number[], digits = 0) => {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return low === high ? n(low, digits) : `${n(low, digits)}-${n(high, digits)}`;
};
const day = (run: Run) => run.measuredAt.slice(0, 10);
const programsPeak = (run: Run) =>
  Math.max(...Object.entries(run.peakRssMiB).flatMap(([name, mib]) => (NOT_PROGRAMS.has(name) ? [] : [mib])));

export function summaryRow(set: RecordedSet): string {
  const runs = set.runs;
  const days = [...new Set(runs.map(day))].join(', ');
  const figures =
    `**${runs.map((r) => n(r.ratio, 2)).join(', ')} x** pgbench (the service ${range(runs.map((r) => r.endToEnd.eventsPerSecond))} ` +
    `events/s, pgbench ${range(runs.map((r) => r.pgbench.perSecond))} decisions/s); at p99 ≤ ${runs[0]?.rateAtP99.boundMs} ms ` +
    `**${runs.map((r) => n(r.rateAtP99.ratio, 2)).join(', ')} x** (the service ${range(runs.map((r) => r.rateAtP99.service.ratePerSecond))}/s, ` +
    `pgbench ${range(runs.map((r) => r.rateAtP99.pgbench.ratePerSecond))}/s); batches of ${runs[0]?.batches.size} ` +
    `**${runs.map((r) => n(r.batches.ratio, 2)).join(', ')} x**, ingest **${range(
      runs.map((r) => r.batches.cpuPerEventUs.ingest ?? Number.NaN),
      1,
    )} µs** CPU per event; programs at most ` +
    `**${n(Math.max(...runs.map(programsPeak)))} MiB** ([the runs](#current-figures-of-npm-run-bench))`;
  const loads = runs.map((r) => n(r.machine.loadAverage1m, 2)).join(', ');
  return `${SUMMARY_ROW_PREFIX}(#npm-run-bench-the-whole-service-end-to-end-against-pgbench) | \`npm run bench\` | ${figures} | ${days} | ${loads} before the runs |`;
}

export function runsTable(set: RecordedSet): string {
  const lines = [
    '| run | measured | command | load before / after | events/s end to end | pgbench | **ratio** | p99 at the peak | rate at p99 ≤ 25 ms: service, pgbench, **ratio** | batches of 20: events/s, **ratio**, ingest CPU µs per event | CPU µs per event at the peak: ingest, ledger, PostgreSQL | peak RSS of the programs |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  set.runs.forEach((r, index) => {
    const bound = r.rateAtP99;
    const batches = r.batches;
    const cpu = ['ingest', 'ledger', 'postgres'].map((name) => {
      const us = r.cpuPerEventUs.endToEnd[name];
      return us === undefined ? '-' : n(us);
    });
    const rss = Object.entries(r.peakRssMiB)
      .filter(([name]) => !NOT_PROGRAMS.has(name))
      .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
      .map(([name, mib]) => `${name} ${n(mib)}`)
      .join(', ');
    lines.push(
      `| ${index + 1} | ${day(r)} | \`${r.command}\` | ${n(r.machine.loadAverage1m, 2)} / ${n(r.machine.loadAverage1mAfter, 2)} | ` +
        `${n(r.endToEnd.eventsPerSecond)} | ${n(r.pgbench.perSecond)} | **${n(r.ratio, 2)}** | ${n(r.endToEnd.peakLatencyMs.p99, 1)} ms | ` +
        `${n(bound.service.ratePerSecond)}/s, ${n(bound.pgbench.ratePerSecond)}/s, **${n(bound.ratio, 2)}** | ` +
        `${n(batches.eventsPerSecond)}, **${n(batches.ratio, 2)}**, ${n(batches.cpuPerEventUs.ingest ?? Number.NaN, 1)} | ` +
        `${cpu.join(', ')} | ${rss} MiB |`,
    );
  });
  if (set.source) lines.push('', `Recorded figures: ${set.source}.`);
  return lines.join('\n');
}

/** The document with the text between `markers` replaced by `render(the text there now)`. */
function between(doc: string, markers: { start: string; end: string }, render: (current: string) => string): string {
  const start = doc.indexOf(markers.start);
  const end = doc.indexOf(markers.end);
  if (start < 0 || end < start) throw new Error(`docs/benchmarks.md lacks ${markers.start} ... ${markers.end}`);
  const inner = doc.slice(start + markers.start.length, end);
  return `${doc.slice(0, start + markers.start.length)}\n${render(inner.trim())}\n${doc.slice(end)}`;
}

export function renderDoc(doc: string, set: RecordedSet): string {
  const withSummary = between(doc, SUMMARY, (current) => {
    const lines = current.split('\n');
    const index = lines.findIndex((line) => line.startsWith(SUMMARY_ROW_PREFIX));
    if (index < 0) throw new Error(`the summary table has no row starting ${SUMMARY_ROW_PREFIX}`);
    lines[index] = summaryRow(set);
    return lines.join('\n');
  });
  return between(withSummary, RUNS, () => runsTable(set));
}

function readSet(): RecordedSet {
  const set = JSON.parse(readFileSync(RUNS_FILE, 'utf8')) as RecordedSet;
  if (!Array.isArray(set.runs) || set.runs.length === 0) throw new Error('docs/bench-runs/bench.json has no runs');
  for (const [index, run] of set.runs.entries()) assertRun(run, `docs/bench-runs/bench.json run ${index + 1}`);
  return set;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const files = args.filter((arg) => arg !== '--check');
  if (files.length > 0) {
    const runs = files.map((file) => {
      const run = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      assertRun(run, file);
      return run;
    });
    writeFileSync(RUNS_FILE, `${JSON.stringify({ runs } satisfies RecordedSet, null, 2)}\n`);
  }
  const doc = readFileSync(DOC_FILE, 'utf8');
  const rendered = renderDoc(doc, readSet());
  if (check) {
    if (rendered !== doc) {
      console.error(
        "docs/benchmarks.md's npm run bench tables differ from docs/bench-runs/bench.json: run npm run bench:table",
      );
      process.exit(1);
    }
    console.log('docs/benchmarks.md: the npm run bench tables are those of docs/bench-runs/bench.json');
  } else {
    writeFileSync(DOC_FILE, rendered);
  }
}
