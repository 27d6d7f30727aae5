// `npm run dev:split` (services/launcher/tools/split.ts): the five programs apart on one machine, on a given
// PostgreSQL and NATS, with the development identity provider, as a newcomer types it: it prints where each program
// listens and the next commands; `npm run dev:token` and `npm run demo` (given each edge's URL) work against it; Ctrl-C
// stops all five.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../../support/cli.ts';
import { createTestDatabase } from '../../support/database.ts';
import { freePorts } from '../../support/servers.ts';

const root = process.cwd();

describe('npm run dev:split', () => {
  let dataDir: string;
  let child: ChildProcess;
  let output = '';
  let exited: Promise<number | null>;
  /** Every process that held the output (npm and the launcher under it) has exited. */
  let closed: Promise<void>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rewards-split-'));
    // The split's five programs on basePort .. basePort + 4.
    const basePort = await freePorts(5);
    child = spawn('npm', ['run', 'dev:split', '--', '--base-port', String(basePort)], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME ?? tmpdir(),
        DATA_DIR: dataDir,
        DATABASE_URL: await createTestDatabase(),
        NATS_URL: process.env.TEST_NATS_URL,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    closed = new Promise((resolve) => child.once('close', () => resolve()));
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    while (!output.includes('Ctrl-C stops all five.')) {
      if (gone) throw new Error(`dev:split exited:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  afterAll(async () => {
    try {
      process.kill(-child.pid!, 'SIGINT');
      await closed;
    } catch {
      // gone already
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints where each of the five listens, each ready', async () => {
    for (const program of ['gateway', 'ingest', 'links', 'identity-admission', 'ledger']) {
      const url = new RegExp(`^ {2}${program} +(http://\\S+)$`, 'm').exec(output)?.[1];
      expect({ program, url }).toEqual({ program, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    }
  });

  it('runs the printed invitation, dev:token and demo lines as typed', async () => {
    const printed = (marker: string) => {
      const line = output.split('\n').find((l) => l.startsWith('  ') && l.includes(marker));
      if (!line) throw new Error(`no printed line with ${marker} in:\n${output}`);
      return line.trim();
    };
    const terminal = { PATH: process.env.PATH, HOME: process.env.HOME ?? tmpdir() };
    const invited = await runCommand('bash', ['-c', printed('npm run admin -- invite')], terminal, root);
    expect({ code: invited.code, stderr: invited.stderr }).toEqual({ code: 0, stderr: '' });
    const signIn = printed('dev:token');
    const access = printed('/api/developer/v1/access');
    const read = await runCommand('bash', ['-c', `${signIn} && ${access} -fsS`], terminal, root);
    expect(read.code).toBe(0);
    expect(JSON.parse(read.stdout)).toMatchObject({ data: { authorized: true, email: 'you@example.com' } });

    const demo = await runCommand('bash', ['-c', printed('npm run demo')], terminal, root);
    expect({ code: demo.code, stderr: demo.stderr }).toEqual({ code: 0, stderr: '' });
    expect(demo.stdout).toContain('Decision: accepted');
    // The event went to the ingest program, not the gateway: the curl line it prints names ingest's URL.
    const ingestUrl = /^ {2}ingest +(http:\/\/\S+)$/m.exec(output)?.[1];
    expect(demo.stdout).toContain(`curl -sS -X POST ${ingestUrl}/api/game-sdk/v2/events`);
  });

  it('stops all five on Ctrl-C', async () => {
    const urls = [...output.matchAll(/^ {2}[a-z-]+ +(http:\/\/127\.0\.0\.1:\d+)$/gm)].map((m) => m[1]);
    expect(urls).toHaveLength(5);
    // A terminal's Ctrl-C: the whole process group (npm, the launcher, the five programs) gets SIGINT.
    process.kill(-child.pid!, 'SIGINT');
    await closed;
    expect(output).toContain('Stopping the five programs');
    for (const url of urls) await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
