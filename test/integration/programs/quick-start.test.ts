// The README's quick start, typed as a newcomer would, on a port that is not the default: the real `npm start`
// (embedded default, no ADMIN_TOKEN), then the commands its banner prints, the demo, and the demo's own sign-in
// command. Every command runs through a shell exactly as printed, in an environment that does not carry PORT,
// DATA_DIR or ADMIN_TOKEN: what the banner prints must be enough.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CommandResult, runCommand } from '../../support/cli.ts';
import { freePort } from '../../support/servers.ts';

const root = process.cwd();
/** The environment of a new terminal: nothing of the service's configuration. */
const terminalEnv = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? tmpdir(),
});

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function npmStart(env: Record<string, string>): Started {
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { ...terminalEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
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

/** Polls the output until `pattern` appears (or the process exits, or the deadline passes). */
async function waitForOutput(started: Started, pattern: RegExp, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void started.exited.then(() => {
    exited = true;
  });
  while (!pattern.test(started.output())) {
    if (exited) throw new Error(`npm start exited:\n${started.output()}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${started.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stop(started: Started): Promise<void> {
  if (started.child.exitCode !== null) return;
  // npm runs the program as its child: signal the whole process group, as a terminal's Ctrl-C does.
  process.kill(-started.child.pid!, 'SIGINT');
  await started.exited;
}

/** Runs one line in bash, as typed in a new terminal in the repository's folder. */
function shell(line: string): Promise<CommandResult> {
  return runCommand('bash', ['-c', line], terminalEnv(), root);
}

/** The printed (indented) command line that contains `marker`, without its indentation and trailing comment. */
function printedCommand(output: string, ...markers: string[]): string {
  const line = output.split('\n').find((l) => l.startsWith('  ') && markers.every((marker) => l.includes(marker)));
  if (!line) throw new Error(`no printed command with ${markers.join(' and ')} in:\n${output}`);
  return line.replace(/\s+#.*$/, '').trim();
}

describe('the quick start on a port that is not the default', () => {
  let dataDir: string;
  let port: number;
  let server: Started;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rewards-quick-start-'));
    port = await freePort();
    server = npmStart({ PORT: String(port), DATA_DIR: dataDir });
    await waitForOutput(server, /Sandbox Rewards is running[\s\S]*npm run demo/);
  }, 180_000);

  afterAll(async () => {
    await stop(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('generates an operator token, keeps it owner-only under DATA_DIR and shows it once', () => {
    const output = server.output();
    const file = join(dataDir, 'admin-token');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(output).toContain(`Operator API open (token generated now, stored in ${file})`);
    expect(output).toMatch(/Generated operator token[^\n]*\n[^\n]*\n {2}[A-Za-z0-9_-]{43}\n/);
  });

  it('prints commands for the port and data folder in use, and they work as printed', async () => {
    const output = server.output();
    const invite = printedCommand(output, 'npm run admin -- invite');
    expect(invite).toBe(`PORT=${port} DATA_DIR=${dataDir} npm run admin -- invite you@example.com`);
    const invited = await shell(invite);
    expect({ code: invited.code, stderr: invited.stderr }).toEqual({ code: 0, stderr: '' });
    expect(invited.stdout).toContain('you@example.com');

    const signIn = printedCommand(output, 'npm run -s dev:token');
    const access = printedCommand(output, 'curl', 'api/developer/v1/access');
    const accessed = await shell(`${signIn} && ${access}`);
    expect(accessed.code).toBe(0);
    expect(JSON.parse(accessed.stdout)).toMatchObject({ data: expect.anything() });
  }, 60_000);

  it('runs the demo as printed, and the demo tells how to read its data, which then works', async () => {
    const demo = await shell(printedCommand(server.output(), 'npm run demo'));
    expect({ code: demo.code, stderr: demo.stderr }).toEqual({ code: 0, stderr: '' });
    expect(demo.stdout).toContain('Decision: accepted, rewardCredits 250, replayed false');
    const email = /The demo signed in as (demo-[0-9a-f]+@example\.com)/.exec(demo.stdout)?.[1];
    expect(email).toBeDefined();
    const signIn = printedCommand(demo.stdout, 'npm run -s dev:token');
    expect(signIn).toBe(`TOKEN=$(PORT=${port} DATA_DIR=${dataDir} npm run -s dev:token -- --email ${email})`);
    const console = printedCommand(demo.stdout, 'curl', 'api/developer/v1/console');
    const read = await shell(`${signIn} && ${console}`);
    expect({ code: read.code, stderr: read.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const snapshot = JSON.parse(read.stdout).data;
    expect(snapshot.organizations.map((o: { name: string }) => o.name)).toEqual(['Demo Studio']);
    expect(snapshot.events).toHaveLength(1);
  }, 120_000);

  it('writes logs as JSON lines with one key per meaning', () => {
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const parsed = JSON.parse(line);
      expect(parsed).toMatchObject({ level: expect.any(Number), msg: expect.any(String) });
      // JSON.parse keeps the last of duplicated keys: count them in the text.
      expect(line.match(/"program":/g)?.length ?? 0).toBeLessThanOrEqual(1);
      expect(line.match(/"process":/g)?.length ?? 0).toBeLessThanOrEqual(1);
    }
    expect(lines.some((line) => /"process":"all-in-one","program":"[a-z-]+"/.test(line))).toBe(true);
  });

  it('on the next start, keeps the stored token without printing it again', async () => {
    await stop(server);
    const token = /Generated operator token[^\n]*\n[^\n]*\n {2}([A-Za-z0-9_-]{43})\n/.exec(server.output())?.[1];
    server = npmStart({ PORT: String(port), DATA_DIR: dataDir });
    await waitForOutput(server, /Sandbox Rewards is running[\s\S]*npm run demo/);
    expect(server.output()).toContain(`token in ${join(dataDir, 'admin-token')}`);
    expect(server.output()).not.toContain(token!);
    const listed = await shell(
      printedCommand(server.output(), 'npm run admin -- invite').replace(/invite .*/, 'invitations'),
    );
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('you@example.com');
  }, 180_000);
});
