// A NATS cluster on loopback (TOOLCHAIN.md, "For the production topology"): `size` nats-servers, each with a client
// port, a cluster (route) port and a monitoring port (`-m`), routes to all the others and one cluster name. Any
// node can be killed and started again on its ports; the monitoring endpoint (/connz) tells which node a client
// (by its connection name) is connected to. A tool for development and CI machines, never part of a program.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { findNatsServer, freePort, portOpen, waitFor } from './servers.ts';

export interface NatsNode {
  /** 0-based. */
  readonly index: number;
  readonly name: string;
  readonly port: number;
  readonly clusterPort: number;
  readonly monitorPort: number;
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly pid: number | undefined;
  running(): boolean;
  /** Sends the signal (default SIGKILL) and waits until the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the node again on its ports (it must be gone); resolves once it accepts clients. */
  start(): Promise<void>;
  /** The names of the clients connected to this node now (/connz); empty when it does not answer. */
  connections(): Promise<string[]>;
  /** Routes to other nodes this node has now (/routez); 0 when it does not answer. */
  routes(): Promise<number>;
}

export interface NatsCluster {
  readonly nodes: NatsNode[];
  /** Every node's client URL. */
  readonly urls: string[];
  /** The URLs comma-separated, as NATS_URL takes them. */
  readonly url: string;
  /** The running nodes a client of this connection name is connected to now (by /connz). */
  nodesOf(connectionName: string): Promise<NatsNode[]>;
  /** Resolves once every running node has routes to all the other running ones. */
  waitRoutes(timeoutMs?: number): Promise<void>;
  /** SIGTERM to every node; waits for their exits. */
  stop(): Promise<void>;
}

export interface NatsClusterOptions {
  /** Nodes; default 3. */
  size?: number;
  /** `--cluster_name`; default `rewards`. */
  name?: string;
  /** Where each node's output goes (`nats-<n>.log`); nowhere when not given. */
  logDir?: string;
  /** How long a node may take to accept clients and the cluster to route; default 15 s. */
  timeoutMs?: number;
}

async function monitor<T>(port: number, path: string): Promise<T | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(1_000) });
    if (response.status !== 200) return undefined;
    return (await response.json()) as T;
  } catch {
    return undefined;
  }
}

export async function startNatsCluster(options: NatsClusterOptions = {}): Promise<NatsCluster> {
  const binary = findNatsServer();
  const size = options.size ?? 3;
  const clusterName = options.name ?? 'rewards';
  const timeoutMs = options.timeoutMs ?? 15_000;
  if (options.logDir) mkdirSync(options.logDir, { recursive: true });
  const ports: Array<{ port: number; clusterPort: number; monitorPort: number }> = [];
  for (let i = 0; i < size; i++) {
    ports.push({ port: await freePort(), clusterPort: await freePort(), monitorPort: await freePort() });
  }
  const logs: WriteStream[] = [];
  const nodes: NatsNode[] = ports.map(({ port, clusterPort, monitorPort }, index) => {
    const name = `nats-${index + 1}`;
    const log = options.logDir ? createWriteStream(join(options.logDir, `${name}.log`), { flags: 'a' }) : undefined;
    if (log) logs.push(log);
    let child: ChildProcess | undefined;
    let exited: Promise<void> = Promise.resolve();
    const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
    const routes = ports
      .filter((_, other) => other !== index)
      .map((p) => `nats://127.0.0.1:${p.clusterPort}`)
      .join(',');
    const node: NatsNode = {
      index,
      name,
      port,
      clusterPort,
      monitorPort,
      url: `nats://127.0.0.1:${port}`,
      get pid() {
        return child?.pid;
      },
      running,
      async kill(signal = 'SIGKILL') {
        if (!running()) return;
        const done = exited;
        child?.kill(signal);
        await done;
      },
      async start() {
        if (running()) throw new Error(`${name} is still running`);
        const args = ['-a', '127.0.0.1', '-p', String(port), '-m', String(monitorPort), '-n', name];
        args.push('--cluster', `nats://127.0.0.1:${clusterPort}`, '--routes', routes, '--cluster_name', clusterName);
        const started = spawn(binary, args, { stdio: ['ignore', log ? 'pipe' : 'ignore', log ? 'pipe' : 'ignore'] });
        child = started;
        if (log) {
          log.write(`--- ${new Date().toISOString()} start (pid ${started.pid}, port ${port})\n`);
          started.stdout?.pipe(log, { end: false });
          started.stderr?.pipe(log, { end: false });
        }
        // 'close', not 'exit': by then every byte it wrote reached its log, which is ended after this (a write after
        // the end would throw).
        exited = new Promise<void>((r) => started.once('close', () => r()));
        await waitFor(
          async () => {
            if (started.exitCode !== null || started.signalCode !== null) throw new Error(`${name} exited`);
            return portOpen(port);
          },
          `${name} (nats-server on ${port})`,
          timeoutMs,
        );
        if (started.exitCode !== null) throw new Error(`${name} exited while starting`);
      },
      async connections() {
        const connz = await monitor<{ connections?: Array<{ name?: string }> }>(monitorPort, '/connz?limit=1024');
        return (connz?.connections ?? []).map((c) => c.name ?? '');
      },
      async routes() {
        const routez = await monitor<{ num_routes?: number }>(monitorPort, '/routez');
        return routez?.num_routes ?? 0;
      },
    };
    return node;
  });

  const stop = async () => {
    await Promise.all(nodes.map((n) => n.kill('SIGTERM')));
    for (const log of logs) log.end();
  };
  const waitRoutes = async (waitMs = timeoutMs) => {
    await waitFor(
      async () => {
        const up = nodes.filter((n) => n.running());
        const counts = await Promise.all(up.map((n) => n.routes()));
        return counts.every((count) => count >= up.length - 1);
      },
      'the NATS cluster routes',
      waitMs,
    );
  };
  try {
    await Promise.all(nodes.map((n) => n.start()));
    await waitRoutes();
  } catch (error) {
    await stop();
    throw error;
  }
  const urls = nodes.map((n) => n.url);
  return {
    nodes,
    urls,
    url: urls.join(','),
    async nodesOf(connectionName) {
      const found: NatsNode[] = [];
      for (const node of nodes) {
        if (node.running() && (await node.connections()).includes(connectionName)) found.push(node);
      }
      return found;
    },
    waitRoutes,
    stop,
  };
}
