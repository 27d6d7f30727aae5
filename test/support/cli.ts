// Runs a command line tool of this repository (or any command) to its end, as a person would in a terminal, and
// returns what it printed: for the tests of `npm run admin`, `npm run demo` and the README's commands.
import { spawn } from 'node:child_process';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` in `cwd` (the repository by default) with exactly `env` (PATH added unless given). */
export function runCommand(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('error', reject);
    // 'close': every byte printed has been read.
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a TypeScript entry file of this repository with the Node running the tests (Node 24). */
export function runScript(file: string, args: string[], env: Record<string, string | undefined>) {
  return runCommand(process.execPath, [file, ...args], env);
}
