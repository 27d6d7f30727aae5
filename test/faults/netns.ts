// Network partitions for the fault suite (docs/reliability.md, "The production topology"): programs in network
// namespaces of their own, each joined to the host by a veth pair on addresses of a private /24 (10.200.B.0/24, B
// chosen unused). The servers (PostgreSQL, nats-server) listen on the first link's host address as well, which every
// namespace reaches over its own link. Faults are iptables rules inside a namespace (its own tables: the host's are
// never touched): DROP in both directions or one, DROP with the `statistic` match (loss); delay is a TCP proxy inside
// the namespace (delay-proxy.ts), since this kernel has no sch_netem. Needs root, `ip` and `iptables`.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Traffic of one server port to drop: both ways, only towards the server, or only its answers. */
export interface Drop {
  port: number;
  direction: 'both' | 'to-server' | 'from-server';
  /** Drop this share of the packets (iptables `-m statistic --mode random`); all when not given. */
  probability?: number;
}

export interface NetworkNamespace {
  name: string;
  /** The namespace's end of its link: what a program inside listens on. */
  address: string;
  /** The host's end of its link. */
  hostAddress: string;
  /** Adds DROP rules for the servers' ports (inside the namespace only). */
  drop(drops: Drop[]): Promise<void>;
  /** Removes every rule added by drop(). */
  heal(): Promise<void>;
  /** Starts a process inside the namespace. */
  spawn(command: string[], options?: { env?: Record<string, string> }): ChildProcess;
}

export interface Partitions {
  /** The servers' address (on the host, reachable from every namespace and from the host itself). */
  serversAddress: string;
  /** The network every namespace's address is in (for pg_hba). */
  network: string;
  namespaces: NetworkNamespace[];
  /** Deletes the namespaces and their links (synchronous: also run when this process exits). */
  remove(): void;
}

/** True when this process can make network namespaces (root, `ip` and `iptables` installed). */
export function partitionsPossible(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  for (const tool of ['ip', 'iptables']) {
    try {
      execFileSync(tool, ['-V'], { stdio: 'pipe' });
    } catch {
      return `${tool} not found (apt-get install ${tool === 'ip' ? 'iproute2' : 'iptables'})`;
    }
  }
  return undefined;
}

/** A third octet B such that no address of 10.200.B.0/24 is in use on this machine. */
function freeNetwork(): number {
  const used = execFileSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'utf8' });
  for (let attempt = 0; attempt < 64; attempt++) {
    const b = 1 + Math.floor(Math.random() * 250);
    if (!used.includes(` 10.200.${b}.`)) return b;
  }
  throw new Error('no free 10.200.B.0/24 network');
}

/** Namespaces one /24 holds: a /30 each (4 addresses), 10.200.B.0/30 to 10.200.B.252/30. */
export const NAMESPACES_MAX = 64;

/** Namespace i's link in 10.200.B.0/24: its host end 10.200.B.(4i+1), its own end 10.200.B.(4i+2). */
export function linkAddresses(b: number, i: number): { hostAddress: string; address: string } {
  if (!Number.isInteger(i) || i < 0 || i >= NAMESPACES_MAX) {
    throw new Error(`namespace ${i} does not fit in a /24: at most ${NAMESPACES_MAX} namespaces (a /30 each)`);
  }
  return { hostAddress: `10.200.${b}.${4 * i + 1}`, address: `10.200.${b}.${4 * i + 2}` };
}

/** Makes `count` namespaces, each with its veth pair (linkAddresses), at most NAMESPACES_MAX. */
export async function createPartitions(count: number): Promise<Partitions> {
  if (count > NAMESPACES_MAX) {
    throw new Error(`${count} namespaces do not fit in a /24: at most ${NAMESPACES_MAX} (a /30 each)`);
  }
  const why = partitionsPossible();
  if (why) throw new Error(why);
  const tag = `rwf${randomBytes(2).toString('hex')}`;
  const b = freeNetwork();
  const ip = (...args: string[]) => run('ip', args);
  const made: string[] = [];
  const remove = () => {
    for (const name of made.splice(0)) {
      for (const args of [
        ['link', 'del', `${name}h`],
        ['netns', 'del', name],
      ]) {
        try {
          execFileSync('ip', args, { stdio: 'pipe' });
        } catch {
          // already gone
        }
      }
    }
    process.removeListener('exit', remove);
  };
  process.on('exit', remove);
  const namespaces: NetworkNamespace[] = [];
  const serversAddress = `10.200.${b}.1`;
  try {
    for (let i = 0; i < count; i++) {
      const name = `${tag}${i}`;
      const { hostAddress, address } = linkAddresses(b, i);
      await ip('netns', 'add', name);
      made.push(name);
      await ip('link', 'add', `${name}h`, 'type', 'veth', 'peer', 'name', `${name}n`);
      await ip('link', 'set', `${name}n`, 'netns', name);
      await ip('addr', 'add', `${hostAddress}/30`, 'dev', `${name}h`);
      await ip('link', 'set', `${name}h`, 'up');
      const inside = (...args: string[]) => run('ip', ['netns', 'exec', name, ...args]);
      await inside('ip', 'addr', 'add', `${address}/30`, 'dev', `${name}n`);
      await inside('ip', 'link', 'set', `${name}n`, 'up');
      await inside('ip', 'link', 'set', 'lo', 'up');
      if (i > 0) await inside('ip', 'route', 'add', `${serversAddress}/32`, 'via', hostAddress);
      namespaces.push({
        name,
        address,
        hostAddress,
        async drop(drops) {
          for (const d of drops) {
            const statistic =
              d.probability === undefined
                ? []
                : ['-m', 'statistic', '--mode', 'random', '--probability', String(d.probability)];
            if (d.direction !== 'from-server') {
              await inside(
                'iptables',
                '-w',
                '-A',
                'OUTPUT',
                '-p',
                'tcp',
                '-d',
                serversAddress,
                '--dport',
                String(d.port),
                ...statistic,
                '-j',
                'DROP',
              );
            }
            if (d.direction !== 'to-server') {
              await inside(
                'iptables',
                '-w',
                '-A',
                'INPUT',
                '-p',
                'tcp',
                '-s',
                serversAddress,
                '--sport',
                String(d.port),
                ...statistic,
                '-j',
                'DROP',
              );
            }
          }
        },
        async heal() {
          await inside('iptables', '-w', '-F', 'INPUT');
          await inside('iptables', '-w', '-F', 'OUTPUT');
        },
        spawn(command, options = {}) {
          return spawn('ip', ['netns', 'exec', name, ...command], {
            env: { PATH: process.env.PATH ?? '', ...options.env },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
        },
      });
    }
  } catch (error) {
    remove();
    throw error;
  }
  return { serversAddress, network: `10.200.${b}.0/24`, namespaces, remove };
}

/** The last `max` characters of a process's output, and whether a word has appeared in it, reading each chunk once. */
export class OutputTail {
  private readonly max: number;
  private text = '';

  constructor(max = 4096) {
    this.max = max;
  }

  /**
   * Appends a chunk; true when `word` is in it or spans it and the text before (only the new text is scanned, with the
   * `word.length - 1` characters before it).
   */
  append(chunk: string, word?: string): boolean {
    const before = this.text;
    this.text = (before + chunk).slice(-this.max);
    if (word === undefined) return false;
    const carried = word.length > 1 ? before.slice(-(word.length - 1)) : '';
    return (carried + chunk).includes(word);
  }

  toString(): string {
    return this.text;
  }
}

/** The delay proxy's script (run inside a namespace with node). */
export const DELAY_PROXY = resolve(import.meta.dirname, 'delay-proxy.ts');

export interface DelayProxy {
  /** 200 +/- 50 ms on every chunk in both directions from now on (SIGUSR1). */
  delay(): void;
  /** No delay from now on (SIGUSR2; what is queued is still delivered in order). */
  undelay(): void;
  stop(): Promise<void>;
}

/**
 * Starts the delay proxy inside a namespace: each route `listenPort=host:port` listens on 127.0.0.1:listenPort there
 * and forwards to host:port. Resolves once it listens.
 */
export async function startDelayProxy(ns: NetworkNamespace, routes: string[]): Promise<DelayProxy> {
  const child = ns.spawn([process.execPath, DELAY_PROXY, ...routes]);
  // The proxy's last words, for the errors below: it writes for its whole life, so only a bounded tail is kept.
  const output = new OutputTail();
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the delay proxy did not start: ${output}`)), 15_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (output.append(chunk.toString('utf8'), 'listening')) {
        clearTimeout(timer);
        done();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => output.append(chunk.toString('utf8')));
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`the delay proxy exited ${code}: ${output}`));
    });
  });
  child.stdout!.resume();
  return {
    delay: () => child.kill('SIGUSR1'),
    undelay: () => child.kill('SIGUSR2'),
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGKILL');
      }),
  };
}
