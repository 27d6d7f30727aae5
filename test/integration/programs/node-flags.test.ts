// Node's flags and start environment of the programs are written once, in services/runtime/node-flags, and every way
// a program starts goes through what reads it: the npm start scripts and the image (ENTRYPOINT, compile-cache step)
// through services/runtime/start.sh, the launcher's processes (tests, benchmarks) through PROGRAM_NODE_OPTIONS and
// PROGRAM_ENVIRONMENT. V8 and glibc read them at start, and `--liftoff-only` is not allowed in NODE_OPTIONS.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PROGRAM_ENTRIES, PROGRAM_ENVIRONMENT, PROGRAMS } from '../../../services/launcher/tools/processes.ts';
import { PROGRAM_NODE_OPTIONS } from '../../support/processes.ts';

const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };

describe("the programs' node flags", () => {
  const startScripts = Object.entries(packageJson.scripts).filter(([name]) => /^start(:|$)/.test(name));

  test('every npm start script is start.sh with its entry', () => {
    expect(startScripts.map(([name]) => name).sort()).toEqual([
      'start',
      'start:gateway',
      'start:identity-admission',
      'start:ingest',
      'start:ledger',
      'start:links',
    ]);
    for (const [name, script] of startScripts) {
      expect({ name, script }).toEqual({
        name,
        script: expect.stringMatching(/^sh services\/runtime\/start\.sh \S+\/src\/main\.ts$/),
      });
    }
  });

  test('start.sh starts node with PROGRAM_NODE_OPTIONS and PROGRAM_ENVIRONMENT, then the entry and its arguments', () => {
    const folder = mkdtempSync(join(tmpdir(), 'node-flags-'));
    try {
      const probe = join(folder, 'probe.mjs');
      writeFileSync(
        probe,
        `console.log(JSON.stringify({ flags: process.execArgv, environment: { ${Object.keys(PROGRAM_ENVIRONMENT)
          .map((key) => `${JSON.stringify(key)}: process.env[${JSON.stringify(key)}]`)
          .join(', ')} }, argv: process.argv.slice(1) }));`,
      );
      const run = spawnSync('sh', ['services/runtime/start.sh', probe, '--warm-compile-cache'], {
        env: { PATH: process.env.PATH ?? '', PROGRAM_NODE: process.execPath },
        encoding: 'utf8',
      });
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toEqual({
        flags: PROGRAM_NODE_OPTIONS.map((flag) => (flag.startsWith('./') ? resolve(flag) : flag)),
        environment: PROGRAM_ENVIRONMENT,
        argv: [probe, '--warm-compile-cache'],
      });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test("the image's ENTRYPOINT and its compile-cache step start every program through start.sh", () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    const line = dockerfile.split('\n').find((l) => l.startsWith('ENTRYPOINT '));
    expect(JSON.parse((line as string).slice('ENTRYPOINT '.length))).toEqual(['sh', '/app/services/runtime/start.sh']);
    // The RUN step's lines, joined at their continuations.
    const run = dockerfile
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .find((l) => l.startsWith('RUN ') && l.includes('--warm-compile-cache'));
    expect(run?.replace(/ +/g, ' ')).toContain('sh /app/services/runtime/start.sh "$entry" --warm-compile-cache');
    for (const program of PROGRAMS) expect(run).toContain(PROGRAM_ENTRIES[program]);
    expect(dockerfile).toMatch(/NODE_COMPILE_CACHE=\/app\//);
  });
});
