// Node's flags of the programs are one rule written in three places that must agree: PROGRAM_NODE_OPTIONS (tests and
// benchmarks), the npm start scripts and the image's ENTRYPOINT (so the chart). V8 reads them at start, and
// `--liftoff-only` is not allowed in NODE_OPTIONS, so they cannot come from one environment variable. The same for
// the environment glibc reads at start (PROGRAM_ENVIRONMENT: the launcher, the start scripts, the image's ENV).
import { readFileSync } from 'node:fs';
import { PROGRAM_ENTRIES, PROGRAM_ENVIRONMENT, PROGRAMS } from '../../../services/launcher/tools/processes.ts';
import { PROGRAM_NODE_OPTIONS } from '../../support/processes.ts';

const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };

describe("the programs' node flags", () => {
  const startScripts = Object.entries(packageJson.scripts).filter(([name]) => /^start(:|$)/.test(name));

  test('every npm start script runs node with PROGRAM_ENVIRONMENT and PROGRAM_NODE_OPTIONS, then its entry', () => {
    expect(startScripts.map(([name]) => name).sort()).toEqual([
      'start',
      'start:gateway',
      'start:identity-admission',
      'start:ingest',
      'start:ledger',
      'start:links',
    ]);
    const assignments = Object.entries(PROGRAM_ENVIRONMENT).map(([key, value]) => `${key}=${value}`);
    for (const [name, script] of startScripts) {
      const words = script.split(/\s+/);
      const command = words.indexOf('node');
      expect({
        name,
        environment: words.slice(0, command),
        command: words[command],
        flags: words.slice(command + 1, -1),
      }).toEqual({ name, environment: assignments, command: 'node', flags: [...PROGRAM_NODE_OPTIONS] });
      expect(words.at(-1)).toMatch(/\/src\/main\.ts$/);
    }
  });

  test("the image's ENTRYPOINT is node with the same flags (the register file under /app)", () => {
    const line = readFileSync('Dockerfile', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('ENTRYPOINT '));
    expect(line).toBeDefined();
    const entrypoint = JSON.parse((line as string).slice('ENTRYPOINT '.length)) as string[];
    expect(entrypoint).toEqual(['node', ...PROGRAM_NODE_OPTIONS.map((f) => f.replace(/^\.\//, '/app/'))]);
  });

  test("the image's compile cache is filled with the same flags, for every program's entry", () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    // The RUN step's lines, joined at their continuations.
    const run = dockerfile
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .find((l) => l.startsWith('RUN ') && l.includes('--warm-compile-cache'));
    expect(run?.replace(/ +/g, ' ')).toContain(
      `node ${PROGRAM_NODE_OPTIONS.map((f) => f.replace(/^\.\//, '/app/')).join(' ')} "$entry"`,
    );
    for (const program of PROGRAMS) expect(run).toContain(PROGRAM_ENTRIES[program]);
    expect(dockerfile).toMatch(/NODE_COMPILE_CACHE=\/app\//);
  });

  test("the image's ENV sets PROGRAM_ENVIRONMENT", () => {
    // The runtime stage's ENV instruction, joined at its continuations.
    const runtime = readFileSync('Dockerfile', 'utf8').split(/^FROM .* AS runtime$/m)[1] ?? '';
    const env = runtime
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .find((l) => l.startsWith('ENV '));
    const words = env?.split(/\s+/).slice(1) ?? [];
    for (const [key, value] of Object.entries(PROGRAM_ENVIRONMENT)) expect(words).toContain(`${key}=${value}`);
  });
});
