// HAProxy in front of HTTP replicas, standing in for a Kubernetes Service with a readiness probe (TOOLCHAIN.md, "For
// the production topology"): one frontend port per backend, `balance roundrobin`, a health check of GET /readyz every
// `checkIntervalMs` that takes a replica out after one failure and back after one success, and `retries 0` without
// `option redispatch` (a Service does not retry a request). Run in the foreground (`haproxy -f cfg -db`) as a child
// of this process; a stats frontend tells each server's state. A tool for development and CI machines only.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary, freePort, portOpen, waitFor } from './servers.ts';

export interface HaproxyServer {
  name: string;
  port: number;
  host?: string;
}

export interface HaproxyOptions {
  /** Backend name to its servers; each backend gets a frontend of its own on a free port. */
  backends: Record<string, HaproxyServer[]>;
  /** The health check's path; default /readyz. */
  checkPath?: string;
  /** `inter` of every server's check; default 500 ms (with `fall 1 rise 1`). */
  checkIntervalMs?: number;
  /** Where the configuration and HAProxy's log (one line per request and per state change) go. */
  logDir: string;
  /** How long one health check may take before it counts as failed; default 1 s (as a Kubernetes probe). */
  checkTimeoutMs?: number;
  /** `timeout server`: how long a server may take to answer; default 30 s. */
  serverTimeoutMs?: number;
}

export interface HaproxyServerState {
  backend: string;
  server: string;
  /** HAProxy's status: UP, DOWN, `UP 1/2` (going down), `DOWN 1/2` (going up), MAINT, no check, ... */
  status: string;
}

export interface StartedHaproxy {
  /** `http://127.0.0.1:<port>` of each backend's frontend. */
  urls: Record<string, string>;
  ports: Record<string, number>;
  /** The stats page (`;csv` for CSV). */
  statsUrl: string;
  configPath: string;
  logPath: string;
  /** Every server's state now, from the stats page. */
  states(): Promise<HaproxyServerState[]>;
  /** Resolves once the server's status is exactly `status` (UP or DOWN); throws after timeoutMs. */
  waitStatus(backend: string, server: string, status: 'UP' | 'DOWN', timeoutMs?: number): Promise<void>;
  /** SIGUSR1 (soft stop: finishes the requests in flight) with a hard stop after 5 s; removes the config. */
  stop(): Promise<void>;
}

export async function startHaproxy(options: HaproxyOptions): Promise<StartedHaproxy> {
  const binary = findBinary('haproxy');
  if (!binary) throw new Error('haproxy not found. Install it with `apt-get install haproxy`.');
  const checkPath = options.checkPath ?? '/readyz';
  const inter = options.checkIntervalMs ?? 500;
  const dir = mkdtempSync(join(tmpdir(), 'rewards-haproxy-'));
  mkdirSync(options.logDir, { recursive: true });
  const ports: Record<string, number> = {};
  for (const name of Object.keys(options.backends)) ports[name] = await freePort();
  const statsPort = await freePort();
  const lines = [
    'global',
    '  maxconn 4096',
    '  log stdout format raw local0',
    '',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  option log-health-checks',
    // X-Forwarded-For on every request, as a Kubernetes ingress controller sends: ingest then knows a connection is
    // a proxy's, shared by its clients, and never leaves one unread for a flooding key (http/key-admission.ts).
    '  option forwardfor',
    '  timeout connect 2s',
    '  timeout client 60s',
    `  timeout server ${options.serverTimeoutMs ?? 30_000}ms`,
    '  timeout http-keep-alive 10s',
    // A readiness probe's timeout (Kubernetes' default is 1 s): a check of a replica that is merely slow (a starved
    // event loop) fails only after this; without it HAProxy would use `inter`.
    `  timeout check ${options.checkTimeoutMs ?? 1_000}ms`,
    '  retries 0',
    '',
  ];
  for (const [name, servers] of Object.entries(options.backends)) {
    lines.push(`frontend ${name}`, `  bind 127.0.0.1:${ports[name]}`, `  default_backend ${name}`, '');
    lines.push(`backend ${name}`, '  balance roundrobin', `  option httpchk GET ${checkPath}`);
    for (const server of servers) {
      lines.push(
        `  server ${server.name} ${server.host ?? '127.0.0.1'}:${server.port} check inter ${inter}ms fall 1 rise 1`,
      );
    }
    lines.push('');
  }
  lines.push('listen stats', `  bind 127.0.0.1:${statsPort}`, '  stats enable', '  stats uri /stats', '');
  const configPath = join(dir, 'haproxy.cfg');
  writeFileSync(configPath, lines.join('\n'));
  writeFileSync(join(options.logDir, 'haproxy.cfg'), lines.join('\n'));
  const logPath = join(options.logDir, 'haproxy.log');
  const log = createWriteStream(logPath, { flags: 'a' });
  const child: ChildProcess = spawn(binary, ['-f', configPath, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  // 'close', not 'exit': by then every byte it wrote reached its log, which is ended after this (a write after
  // the end would throw).
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  const statsUrl = `http://127.0.0.1:${statsPort}/stats`;

  const states = async (): Promise<HaproxyServerState[]> => {
    const response = await fetch(`${statsUrl};csv`, { signal: AbortSignal.timeout(2_000) });
    const text = await response.text();
    const [header = '', ...rows] = text.split('\n');
    const columns = header.replace(/^# /, '').split(',');
    const at = (name: string) => columns.indexOf(name);
    return rows
      .filter((row) => row.trim() !== '')
      .map((row) => row.split(','))
      .filter((cells) => cells[at('svname')] !== 'FRONTEND' && cells[at('svname')] !== 'BACKEND')
      .map((cells) => ({
        backend: cells[at('pxname')] ?? '',
        server: cells[at('svname')] ?? '',
        status: cells[at('status')] ?? '',
      }));
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGUSR1');
      const timer = setTimeout(() => child.kill('SIGTERM'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    log.end();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error('haproxy exited');
        return portOpen(statsPort);
      },
      `haproxy (see ${logPath})`,
      10_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    urls: Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, `http://127.0.0.1:${port}`])),
    ports,
    statsUrl,
    configPath,
    logPath,
    states,
    async waitStatus(backend, server, status, timeoutMs = 10_000) {
      await waitFor(
        async () => (await states()).some((s) => s.backend === backend && s.server === server && s.status === status),
        `haproxy: ${backend}/${server} ${status}`,
        timeoutMs,
      );
    },
    stop,
  };
}
