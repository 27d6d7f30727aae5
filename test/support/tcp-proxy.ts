// A TCP proxy between a program and PostgreSQL that can cut one connection at a chosen moment: when a chunk going
// one way contains given bytes, both sides of that connection are destroyed instead of forwarding it. Cutting the
// server's answer to a statement leaves the statement committed (PostgreSQL flushes an implicit transaction's result
// only after its commit) while the program sees its connection break. Or, until healed, it cuts everything (the
// database refuses that program alone) or freezes everything (the path to it went silent).
import * as net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Cuts the next connection whose traffic in `direction` contains `bytes` (once). Resolves when it happened. */
  cutWhen(direction: 'toServer' | 'toClient', bytes: Buffer): Promise<void>;
  /** Cuts every connection and refuses new ones (closed as soon as they open) until heal(). */
  cutAll(): void;
  /** Forwards nothing, either way, and closes nothing until heal(): a path that went silent (packets dropped). */
  freeze(): void;
  /** Accepts connections again and forwards what a freeze held back. */
  heal(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let armed: { direction: 'toServer' | 'toClient'; bytes: Buffer; done: () => void } | undefined;
  const sockets = new Set<net.Socket>();
  let down = false;
  let held: Array<() => void> | undefined;
  const server = net.createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    const pipe = (from: net.Socket, to: net.Socket, direction: 'toServer' | 'toClient') => {
      from.on('data', (chunk: Buffer) => {
        const trap = armed;
        if (trap && trap.direction === direction && chunk.includes(trap.bytes)) {
          armed = undefined;
          cut();
          trap.done();
          return;
        }
        if (held) held.push(() => to.write(chunk));
        else to.write(chunk);
      });
      from.on('close', cut);
      from.on('error', cut);
    };
    pipe(client, upstream, 'toServer');
    pipe(upstream, client, 'toClient');
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    cutWhen(direction, bytes) {
      return new Promise((resolve) => {
        armed = { direction, bytes, done: resolve };
      });
    },
    cutAll() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    freeze() {
      held ??= [];
    },
    heal() {
      down = false;
      const writes = held ?? [];
      held = undefined;
      for (const write of writes) write();
    },
    async close() {
      down = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
