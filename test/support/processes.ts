// Programs as real child processes (Node 24 from node_modules, like `npm run start:<program>`).
import { type ChildProcess, spawn } from 'node:child_process';
import { PROGRAM_NODE_OPTIONS } from '../../services/launcher/src/processes.ts';
import { freePort } from './servers.ts';

export interface ProgramProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export const PROGRAM_ENTRIES = {
  gateway: 'gateway/src/main.ts',
  ingest: 'services/ingest/src/main.ts',
  links: 'services/links/src/main.ts',
  ledger: 'services/ledger/src/main.ts',
  'identity-admission': 'services/identity-admission/src/main.ts',
  'all-in-one': 'services/all-in-one/src/main.ts',
} as const;

// Node's options for every program (as `npm run start:<program>`, the image and the chart use them) and the
// benchmarks' NODE_OPTIONS_EXTRA: one list, the launcher's (services/launcher/src/processes.ts).
export { extraNodeOptions, PROGRAM_NODE_OPTIONS } from '../../services/launcher/src/processes.ts';

export function runProgram(
  entry: string,
  env: Record<string, string | undefined>,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [...PROGRAM_NODE_OPTIONS, entry], {
    cwd: process.cwd(),
    // No drain after SIGTERM unless a test asks for one (SHUTDOWN_DRAIN_MS): nothing balances these processes.
    env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', SHUTDOWN_DRAIN_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/**
 * Starts a program on a free port and waits until it is ready (GET /readyz 200; a program run alone answers /healthz
 * as soon as it listens, before NATS and its database), or only until /healthz answers with `until: 'alive'`.
 */
export async function startProgram(
  program: keyof typeof PROGRAM_ENTRIES,
  env: Record<string, string | undefined>,
  timeoutMs = 90_000,
  until: 'ready' | 'alive' = 'ready',
): Promise<ProgramProcess> {
  const port = await freePort();
  const portVariable = program === 'all-in-one' ? 'PORT' : 'HTTP_PORT';
  const run = runProgram(PROGRAM_ENTRIES[program], { ...env, [portVariable]: String(port) });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void run.exited.then((code) => {
    exitCode = code;
  });
  for (;;) {
    if (exitCode !== undefined) throw new Error(`${program} exited with ${exitCode}:\n${run.output()}`);
    try {
      const response = await fetch(`${url}/${until === 'ready' ? 'readyz' : 'healthz'}`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      run.child.kill('SIGKILL');
      throw new Error(`${program} was not ${until} within ${timeoutMs} ms:\n${run.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child: run.child,
    output: run.output,
    async stop() {
      if (run.child.exitCode === null) run.child.kill('SIGTERM');
      return run.exited;
    },
  };
}
