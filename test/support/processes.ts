// Programs as real child processes for the program tests, through the launcher's process mode
// (services/launcher/tools/processes.ts: Node 24 with the start:* scripts' flags, like `npm run start:<program>`), one
// process per call, its output in a log file of its own.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LaunchedProgram, type ProgramReplica, startPrograms } from '../../services/launcher/tools/processes.ts';
import { freePort } from './servers.ts';
import { TEST_WEBHOOK_SECRET_KEY } from './webhook-key.ts';

export { extraNodeOptions, PROGRAM_NODE_OPTIONS } from '../../services/launcher/tools/processes.ts';

export type ProgramProcess = ProgramReplica;

/**
 * Starts a program on a free port (or `port`) and waits until it is ready (/readyz 200), until it listens
 * (`until: 'alive'`, /healthz 200) or not at all (`until: 'started'`). No drain after SIGTERM unless the environment
 * asks for one (SHUTDOWN_DRAIN_MS): nothing balances these processes. WEBHOOK_SECRET_KEY is the fixed test key unless
 * `env` names it (undefined: unset). A failure to start throws with its output.
 */
export async function startProgram(
  program: LaunchedProgram,
  env: Record<string, string | undefined>,
  timeoutMs = 90_000,
  until: 'ready' | 'alive' | 'started' = 'ready',
  port?: number,
): Promise<ProgramProcess> {
  const defined = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const launched = await startPrograms({
    programs: { [program]: { ports: [port ?? (await freePort())] } },
    env: {
      SHUTDOWN_DRAIN_MS: '0',
      ...(Object.hasOwn(env, 'WEBHOOK_SECRET_KEY') ? {} : { WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY }),
      ...defined,
    },
    logDir: mkdtempSync(join(tmpdir(), `rewards-${program}-`)),
    startTimeoutMs: timeoutMs,
    wait: 'none',
  });
  const replica = launched.get(program);
  if (until === 'started') return replica;
  try {
    await replica.waitReady(timeoutMs, until === 'alive' ? 'healthz' : 'readyz');
  } catch (error) {
    await launched.stop(1_000);
    throw new Error(`${(error as Error).message}:\n${replica.output()}`);
  }
  return replica;
}
