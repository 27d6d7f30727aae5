// `npm run test:repeat -- [--times N] [--together] [--jobs J] [files or folders...]`: runs test files again and again
// to find the flaky ones. By default every integration file runs alone (one jest run per file per time), N = 20
// times; `--together` runs the given files as one jest run per time instead (the whole suite when none is given).
// PostgreSQL and nats-server are started once for all runs (or taken from DATABASE_URL / NATS_URL, as in `npm test`);
// every test system makes its own database and nats-server, so runs do not see each other's data.
// Prints one line per run that failed (file, time, failed tests), a table per file and the plain closing line.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startServers } from './servers.ts';

const USAGE = `Usage: npm run test:repeat -- [--times N] [--together] [--jobs J] [FILE_OR_FOLDER...]

Runs test files repeatedly to find flaky tests.
  --times N     how many times (default 20)
  --together    one jest run of all the given files per time (default: each file alone, one jest run each)
  --jobs J      jest runs side by side (default 1; 2 puts the machine under load)
  FILE...       test files or folders (default: test/integration with each file alone, everything with --together)

Examples:
  npm run test:repeat -- --times 20 test/integration/console/snapshot.test.ts
  npm run test:repeat -- --times 20 test/integration            # every integration file alone, 20 times each
  npm run test:repeat -- --times 5 --together                    # the whole suite 5 times in a row`;

const root = resolve(import.meta.dirname, '../..');

function fail(message: string): never {
  process.stderr.write(`test:repeat: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

let values: { times?: string; together?: boolean; jobs?: string; help?: boolean };
let positionals: string[];
try {
  ({ values, positionals } = parseArgs({
    options: {
      times: { type: 'string', default: '20' },
      together: { type: 'boolean', default: false },
      jobs: { type: 'string', default: '1' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  }));
} catch (error) {
  fail((error as Error).message);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const times = Number(values.times);
const jobs = Number(values.jobs);
if (!Number.isInteger(times) || times < 1 || times > 1000) fail('--times must be an integer from 1 to 1000');
if (!Number.isInteger(jobs) || jobs < 1 || jobs > 8) fail('--jobs must be an integer from 1 to 8');

function testFiles(path: string): string[] {
  const full = resolve(root, path);
  if (!statSync(full, { throwIfNoEntry: false })) fail(`no such file or folder: ${path}`);
  if (statSync(full).isFile()) return [relative(root, full)];
  return readdirSync(full, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts') && !name.split('/').includes('node_modules'))
    .map((name) => relative(root, join(full, name)))
    .sort();
}

const files = positionals.flatMap(testFiles);
if (!values.together && files.length === 0) files.push(...testFiles('test/integration'));
/** One unit of work: the files of one jest run. */
const units: string[][] = values.together ? [files] : files.map((file) => [file]);
const unitName = (unit: string[]) => (unit.length === 0 ? 'the whole suite' : unit.join(' '));

interface RunResult {
  unit: string[];
  time: number;
  ok: boolean;
  seconds: number;
  passed: number;
  failed: number;
  failures: string[];
}

const servers = await startServers();
const outputDir = mkdtempSync(join(tmpdir(), 'rewards-repeat-'));
const env = { ...process.env, DATABASE_URL: servers.databaseUrl, NATS_URL: servers.natsUrl };
const jest = join(root, 'node_modules/jest/bin/jest.js');

// Ctrl-C (or SIGTERM): no new runs, the running jest runs are stopped and dropped, PostgreSQL and NATS are stopped,
// and the table of the runs that finished is printed.
const running = new Set<ChildProcess>();
let interrupted = false;

async function runOnce(unit: string[], time: number, slot: number): Promise<RunResult> {
  const output = join(outputDir, `run-${slot}-${time}.json`);
  const started = performance.now();
  const args = ['--experimental-vm-modules', jest, '--ci', '--silent', '--json', `--outputFile=${output}`];
  if (unit.length > 0) args.push('--runTestsByPath', ...unit);
  const code = await new Promise<number>((done) => {
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
    running.add(child);
    let tail = '';
    child.stderr.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-20_000);
    });
    child.on('exit', (status) => {
      running.delete(child);
      if (interrupted) return done(status ?? 1);
      if (status !== 0 && !statSync(output, { throwIfNoEntry: false })) process.stderr.write(tail);
      done(status ?? 1);
    });
  });
  const seconds = (performance.now() - started) / 1000;
  let passed = 0;
  let failed = 0;
  const failures: string[] = [];
  try {
    const report = JSON.parse(readFileSync(output, 'utf8'));
    passed = report.numPassedTests;
    failed = report.numFailedTests;
    for (const suite of report.testResults) {
      for (const test of suite.assertionResults) {
        if (test.status === 'failed') {
          // The test's name and the first line of its first failure (the assertion or the error).
          const first = String(test.failureMessages?.[0] ?? '')
            .split('\n')
            .find((text: string) => text.trim() !== '');
          failures.push(
            `${relative(root, suite.name)} › ${test.fullName}\n          ${first?.trim().slice(0, 300) ?? ''}`,
          );
        }
      }
      if (suite.status === 'failed' && suite.assertionResults.length === 0) {
        failures.push(`${relative(root, suite.name)}: ${String(suite.message).split('\n').slice(0, 3).join(' ')}`);
      }
    }
  } catch {
    failures.push(`${unitName(unit)}: jest exited ${code} without a report`);
  }
  return { unit, time, ok: code === 0 && failures.length === 0, seconds, passed, failed, failures };
}

const queue: Array<{ unit: string[]; time: number }> = [];
for (let time = 1; time <= times; time++) for (const unit of units) queue.push({ unit, time });
const total = queue.length;
const results: RunResult[] = [];
const started = performance.now();
process.stdout.write(
  `test:repeat: ${units.length} unit(s) x ${times} time(s) = ${total} jest run(s), ${jobs} at a time` +
    ` (${values.together ? 'files together' : 'each file alone'})\n`,
);

async function worker(slot: number): Promise<void> {
  for (let next = queue.shift(); next; next = queue.shift()) {
    const result = await runOnce(next.unit, next.time, slot);
    if (interrupted) break;
    results.push(result);
    const mark = result.ok ? 'ok  ' : 'FAIL';
    process.stdout.write(
      `[${String(results.length).padStart(String(total).length)}/${total}] ${mark} ${unitName(result.unit)} ` +
        `#${result.time} (${result.passed} passed, ${result.failed} failed, ${result.seconds.toFixed(1)} s)\n`,
    );
    for (const failure of result.failures) process.stdout.write(`        ${failure}\n`);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    queue.length = 0;
    for (const child of running) child.kill('SIGTERM');
  });
}
try {
  await Promise.all(Array.from({ length: jobs }, (_, slot) => worker(slot)));
} finally {
  await servers.stop();
  rmSync(outputDir, { recursive: true, force: true });
}

process.stdout.write('\nper unit: runs passed / runs\n');
for (const unit of units) {
  const mine = results.filter((r) => r.unit === unit);
  const good = mine.filter((r) => r.ok).length;
  process.stdout.write(`  ${good === mine.length ? '   ' : '!! '}${good}/${mine.length}  ${unitName(unit)}\n`);
}
const failedRuns = results.filter((r) => !r.ok);
const minutes = ((performance.now() - started) / 60_000).toFixed(1);
process.stdout.write(`\n${results.length} runs in ${minutes} min, ${failedRuns.length} with a failure\n`);
const passedTests = results.reduce((sum, r) => sum + r.passed, 0);
const failedTests = results.reduce((sum, r) => sum + r.failed, 0);
process.stdout.write(`repeat: ${passedTests} passed, ${failedTests} failed\n`);
if (interrupted) process.stdout.write('interrupted: the runs above are the ones that finished\n');
process.exitCode = interrupted ? 130 : failedRuns.length > 0 ? 1 : 0;
