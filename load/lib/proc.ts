// What a process costs, read from /proc (Linux): CPU seconds, peak and current resident memory, system calls, and
// the PostgreSQL backends serving one database. Shared by the benchmarks in load/.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return 0;
  }
}

/** CPU seconds a process has spent in user and in system (kernel) mode so far, from /proc/<pid>/stat; 0 once gone. */
export function cpuSecondsSplit(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return { user: 0, system: 0 };
  }
}

/**
 * Peak (VmHWM) or current (VmRSS) resident memory of a process, or its anonymous part (RssAnon: the heap and malloc's
 * memory, without the binary's and libraries' pages), in MiB; NaN once it is gone.
 */
export function rssMiB(pid: number, field: 'VmHWM' | 'VmRSS' | 'RssAnon' = 'VmHWM'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

/** Read and write system calls a process has made so far (/proc/<pid>/io). */
export function syscalls(pid: number): { reads: number; writes: number } {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    return { reads: Number(/syscr: (\d+)/.exec(io)?.[1]), writes: Number(/syscw: (\d+)/.exec(io)?.[1]) };
  } catch {
    return { reads: Number.NaN, writes: Number.NaN };
  }
}

/** The PostgreSQL backends serving one database (their command line names it), with their CPU seconds. */
export function backends(database: string): Map<number, number> {
  const found = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.startsWith('postgres: ') && cmdline.includes(` ${database} `)) {
        found.set(Number(entry), cpuSeconds(Number(entry)));
      }
    } catch {
      // gone
    }
  }
  return found;
}

/**
 * CPU seconds spent by the database's backends while it runs: sampled every 200 ms, so that backends that exit
 * before the end (pgbench's) are counted up to their last sample.
 */
export function sampleBackendCpu(database: string): { stop: () => number } {
  const first = backends(database);
  const last = new Map(first);
  const timer = setInterval(() => {
    for (const [pid, cpu] of backends(database)) last.set(pid, cpu);
  }, 200);
  return {
    stop: () => {
      clearInterval(timer);
      for (const [pid, cpu] of backends(database)) last.set(pid, cpu);
      let total = 0;
      for (const [pid, cpu] of last) total += cpu - (first.get(pid) ?? 0);
      return total;
    },
  };
}

/** The p-th percentile of sorted values (nearest rank); NaN when empty. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The machine, for the record: CPU model, logical CPUs, memory, 1-minute load average. */
export function machine(): { cpuModel: string; cpus: number; memoryGiB: number; loadAverage1m: number } {
  let cpuModel = 'unknown';
  let cpus = 0;
  try {
    const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpuModel;
    cpus = (cpuinfo.match(/^processor\s*:/gm) ?? []).length;
  } catch {
    // not Linux
  }
  let memoryGiB = Number.NaN;
  let loadAverage1m = Number.NaN;
  try {
    memoryGiB = Number(/MemTotal:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]) / 1024 / 1024;
    loadAverage1m = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    // not Linux
  }
  return { cpuModel, cpus, memoryGiB, loadAverage1m };
}

/** CPU seconds the whole machine has been busy (all CPUs: user, nice, system, irq, softirq, steal), /proc/stat. */
export function machineBusySeconds(): number {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return (user + nice + system + irq + softirq + steal) / 100;
  } catch {
    return Number.NaN;
  }
}
