// A TCP proxy that can delay (the fault suite's `delay` fault, inside a network namespace: the kernel here has no
// sch_netem). Usage: node delay-proxy.ts LISTEN_PORT=HOST:PORT ...; listens on 127.0.0.1 and prints "listening".
// SIGUSR1: from now on every chunk, in both directions, is delivered 200 +/- 50 ms after it arrived, in order;
// SIGUSR2: no delay for new chunks (those queued are still delivered in order).
import * as net from 'node:net';

const DELAY_MS = 200;
const JITTER_MS = 50;
let delaying = false;
process.on('SIGUSR1', () => {
  delaying = true;
});
process.on('SIGUSR2', () => {
  delaying = false;
});

/** Forwards `from`'s data to `to`, each chunk due at the later of its delay and the previous chunk's due time. */
function forward(from: net.Socket, to: net.Socket): void {
  const queue: Array<{ due: number; chunk: Buffer }> = [];
  let lastDue = 0;
  let scheduled = false;
  const schedule = (ms: number) => {
    scheduled = true;
    setTimeout(flush, Math.max(0, ms));
  };
  let ended = false;
  const flush = () => {
    scheduled = false;
    const now = Date.now();
    while (queue.length > 0 && queue[0]!.due <= now) to.write(queue.shift()!.chunk);
    if (queue.length > 0) schedule(queue[0]!.due - now);
    else if (ended) to.end();
  };
  from.on('data', (chunk: Buffer) => {
    const now = Date.now();
    const delay = delaying ? DELAY_MS + (Math.random() * 2 - 1) * JITTER_MS : 0;
    lastDue = Math.max(lastDue, now + delay);
    if (queue.length === 0 && lastDue <= now) {
      to.write(chunk);
      return;
    }
    queue.push({ due: lastDue, chunk });
    if (!scheduled) schedule(queue[0]!.due - now);
  });
  from.on('end', () => {
    ended = true;
    if (queue.length === 0) to.end();
  });
}

const servers = process.argv.slice(2).map((route) => {
  const match = /^(\d+)=([^:]+):(\d+)$/.exec(route);
  if (!match) throw new Error(`bad route ${route}: LISTEN_PORT=HOST:PORT`);
  const [, listenPort, host, port] = match;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), host);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  return new Promise<void>((done) => server.listen(Number(listenPort), '127.0.0.1', done));
});
await Promise.all(servers);
process.stdout.write('listening\n');
