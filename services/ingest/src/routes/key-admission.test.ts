// Per-key admission over a real HTTP server: at most the bound of one key's requests in the app, the rest entering in
// arrival order as earlier ones are answered; other keys and keyless requests never wait; a waiting request whose
// client left is dropped; a key's own keep-alive connections are not read while it is at its bound, and are read
// again in turn, none closed under a request its client sent. The app holds each request until the test releases it:
// counting, no timing (one pause outlasts the keep-alive timeout on purpose).
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { admitted, arrivedAt } from '#runtime/http/admission.ts';
import { closeServer } from '#runtime/program.ts';
import { KeyAdmission } from './key-admission.ts';

interface Held {
  id: string;
  key: string | undefined;
  response: ServerResponse;
}

describe('KeyAdmission', () => {
  let server: Server;
  let port: number;
  let admission: KeyAdmission;
  const arrived: string[] = [];
  const entered: string[] = [];
  /** The requests that entered after waiting (their arrival time kept for the app's duration). */
  const waited = new Set<string>();
  const inApp: Held[] = [];
  let waiters: Array<() => void> = [];

  const app = (request: IncomingMessage, response: ServerResponse) => {
    const id = String(request.headers['x-id']);
    entered.push(id);
    // The body read to its end, as the routes' body parser does (a connection is held only then), unless asked not to.
    if (request.headers['x-unread'] === undefined) request.resume();
    if (arrivedAt(request) !== undefined) waited.add(id);
    inApp.push({ id, key: request.headers['x-key'] as string | undefined, response });
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };

  /** Resolves once `test` holds (checked whenever a request enters the app). */
  const until = (test: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => (test() ? resolve() : waiters.push(check));
      check();
    });

  /** Resolves once `test` holds, checked every 5 ms (for what the app does not see: arrivals, closed connections). */
  const poll = async (test: () => Promise<boolean>) => {
    while (!(await test())) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  const connections = () =>
    new Promise<number>((resolve, reject) =>
      server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );

  const release = (id: string) => {
    const at = inApp.findIndex((held) => held.id === id);
    const [held] = inApp.splice(at, 1);
    held!.response.end(id);
  };

  const send = (id: string, key?: string) => {
    const request = httpRequest({
      port,
      method: 'POST',
      path: '/',
      headers: { 'x-id': id, ...(key === undefined ? {} : { 'x-key': key }), 'content-length': 2 },
      agent: false,
    });
    const answer = new Promise<string>((resolve, reject) => {
      request.on('response', (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        response.on('end', () => resolve(body));
      });
      request.on('error', reject);
    });
    request.end('{}');
    return { request, answer };
  };

  beforeEach(async () => {
    arrived.length = 0;
    entered.length = 0;
    waited.clear();
    inApp.length = 0;
    admission = new KeyAdmission({
      inAppMax: 2,
      keyOf: (request) => {
        arrived.push(String(request.headers['x-id']));
        return request.headers['x-key'] as string | undefined;
      },
    });
    server = createServer(admitted([admission], app));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    for (const held of inApp.splice(0)) held.response.end();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("holds a key's requests past its bound and lets them in, in arrival order, as earlier ones are answered", async () => {
    const sent = ['a1', 'a2', 'a3', 'a4', 'a5'].map((id) => send(id, 'A'));
    await until(() => entered.length === 2);
    await poll(async () => arrived.length === 5);
    expect(admission.waiting).toBe(3);
    expect(entered).toEqual(arrived.slice(0, 2));

    // Each answer lets exactly one more in: never more than two of A in the app.
    for (let answered = 0; answered < 5; answered++) {
      release(inApp[0]!.id);
      await until(() => entered.length === Math.min(5, 3 + answered));
      expect(inApp.length).toBeLessThanOrEqual(2);
    }
    expect(entered).toEqual(arrived);
    expect(admission.waiting).toBe(0);
    expect([...waited].sort()).toEqual(arrived.slice(2).sort());
    const answers = await Promise.all(sent.map((s) => s.answer));
    expect(answers.sort()).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
  });

  it('never holds another key or a request without a key behind a key at its bound', async () => {
    const a = ['a1', 'a2', 'a3'].map((id) => send(id, 'A'));
    await until(() => entered.length === 2);
    const b = send('b1', 'B');
    const none = send('n1');
    await until(() => entered.includes('b1') && entered.includes('n1'));
    expect(admission.waiting).toBe(1);
    release('b1');
    release('n1');
    expect(await b.answer).toBe('b1');
    expect(await none.answer).toBe('n1');
    // Whichever two of A's requests arrived first are in (the connections may reach the server in any order).
    const first = entered.filter((id) => id.startsWith('a'));
    expect(first).toHaveLength(2);
    for (const id of first) release(id);
    const last = ['a1', 'a2', 'a3'].find((id) => !first.includes(id)) as string;
    await until(() => entered.includes(last));
    release(last);
    expect((await Promise.all(a.map((s) => s.answer))).sort()).toEqual(['a1', 'a2', 'a3']);
  });

  it('forgets a key once it has nothing in the app or waiting: keys seen once leave nothing behind', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `k${i}`);
    const sent = ids.map((id) => send(id, id));
    await until(() => entered.length === ids.length);
    expect(admission.keysKept).toBe(ids.length);
    for (const id of ids) release(id);
    expect((await Promise.all(sent.map((s) => s.answer))).sort()).toEqual([...ids].sort());
    await poll(async () => admission.keysKept === 0);
  });

  it('drops a waiting request whose client went away, and lets the next one in', async () => {
    const a1 = send('a1', 'A');
    const a2 = send('a2', 'A');
    await until(() => entered.length === 2);
    const gone = send('gone', 'A');
    gone.answer.catch(() => undefined);
    await poll(async () => admission.waiting === 1);
    gone.request.destroy();
    // The server saw the connection close (three connections before: a1, a2 and the one that went away).
    await poll(async () => (await connections()) === 2);
    const a3 = send('a3', 'A');
    await poll(async () => admission.waiting === 2);
    release('a1');
    await until(() => entered.includes('a3'));
    expect(entered).not.toContain('gone');
    expect(admission.waiting).toBe(0);
    release('a2');
    release('a3');
    expect(await a1.answer).toBe('a1');
    expect(await a2.answer).toBe('a2');
    expect(await a3.answer).toBe('a3');
  });

  describe('holding connections', () => {
    let opened: Connection[] = [];
    const open = (count: number) => {
      const made = Array.from({ length: count }, () => new Connection(port));
      opened.push(...made);
      return made;
    };
    /** One more turn of the server's event loop (what a poll of the sockets read is handled by then). */
    const turn = () => new Promise((resolve) => setImmediate(resolve));

    beforeEach(() => {
      // Shorter than the pause below: a held connection must outlast it (Node arms keepAliveTimeout + this buffer).
      server.keepAliveTimeout = 50;
      (server as Server & { keepAliveTimeoutBuffer: number }).keepAliveTimeoutBuffer = 0;
    });

    afterEach(() => {
      for (const connection of opened) connection.socket.destroy();
      opened = [];
    });

    it("leaves a key's own connections unread at its bound and reads them again in turn, oldest first", async () => {
      const c = open(4);
      const first = ['a1', 'a2', 'a3', 'a4'].map((id, i) => c[i]!.send(id, 'A'));
      await until(() => entered.length === 2);
      await poll(async () => arrived.length === 4);
      expect(admission.waiting).toBe(2);

      // a1 answered: a3 enters from the line, and a1's connection, A being still at its bound, is held.
      release('a1');
      expect(await first[0]).toBe('a1');
      expect(admission.held).toBe(1);
      // Its client sends its next request: it is not read, and the connection outlives the keep-alive timeout
      // (50 ms) while held. Another key's request, sent after it on another connection, is read meanwhile: a5's
      // bytes were there before b1's, so had its connection been read, a5 would have arrived with b1 at the latest.
      const a5 = c[0]!.send('a5', 'A');
      await c[0]!.flushed();
      const [other] = open(1);
      const b1 = other!.send('b1', 'B');
      await until(() => entered.includes('b1'));
      expect(arrived).not.toContain('a5');
      // b1's connection is the clock: answered after a1's, its keep-alive timeout closes it after a1's would have.
      release('b1');
      expect(await b1).toBe('b1');
      await poll(async () => other!.closed);
      await turn();
      expect(arrived).not.toContain('a5');
      expect(c[0]!.closed).toBe(false);

      // a2 answered: a4 enters, a2's connection is held after a1's. a3 answered: no one waits parsed, so its
      // connection is held behind the others and the one held longest (a1's) is read: a5 enters.
      release('a2');
      await until(() => entered.includes('a4'));
      expect(admission.held).toBe(2);
      release('a3');
      await until(() => entered.includes('a5'));
      expect(admission.held).toBe(2);
      expect(admission.waiting).toBe(0);

      // A goes quiet: every held connection is read again, and each is then closed by its keep-alive timeout.
      release('a4');
      release('a5');
      expect(await Promise.all([...first, a5])).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
      expect(admission.held).toBe(0);
      expect(entered.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
      await poll(async () => c.every((connection) => connection.closed));
    });

    it("never holds a proxy's connection or one that carried two keys: their next requests are read", async () => {
      const forwarded = { 'x-forwarded-for': '203.0.113.7' };
      const p = open(3);
      const answers = ['p1', 'p2', 'p3'].map((id, i) => p[i]!.send(id, 'A', forwarded));
      await until(() => entered.length === 2);
      await poll(async () => admission.waiting === 1);
      release('p1');
      expect(await answers[0]).toBe('p1');
      expect(admission.held).toBe(0);
      const p4 = p[0]!.send('p4', 'A', forwarded);
      await poll(async () => arrived.includes('p4'));
      expect(admission.waiting).toBe(1);
      for (const id of ['p2', 'p3']) release(id);
      await until(() => entered.includes('p4'));
      release('p4');
      expect(await Promise.all([...answers, p4])).toEqual(['p1', 'p2', 'p3', 'p4']);

      // A connection that carried A's request, then B's, then A's again is not held when that one is answered at
      // A's bound.
      const [own1, own2, mixed] = open(3);
      const a0 = mixed!.send('a0', 'A');
      await until(() => entered.includes('a0'));
      release('a0');
      expect(await a0).toBe('a0');
      const a1 = own1!.send('a1', 'A');
      const a2 = own2!.send('a2', 'A');
      await until(() => entered.includes('a1') && entered.includes('a2'));
      const b1 = mixed!.send('b1', 'B');
      await until(() => entered.includes('b1'));
      release('b1');
      expect(await b1).toBe('b1');
      const a3 = mixed!.send('a3', 'A');
      await poll(async () => admission.waiting === 1);
      release('a1');
      await until(() => entered.includes('a3'));
      expect(admission.held).toBe(1);
      release('a3');
      expect(await a3).toBe('a3');
      // Held was a1's connection only, and a3's answer (A no longer at its bound) read it again.
      expect(admission.held).toBe(0);
      const a4 = mixed!.send('a4', 'A');
      await until(() => entered.includes('a4'));
      for (const id of ['a2', 'a4']) release(id);
      expect(await Promise.all([a1, a2, a4])).toEqual(['a1', 'a2', 'a4']);
    });

    it('never holds a connection whose request was answered with its body unread (Node reads on past it)', async () => {
      const c = open(3);
      const first = [c[0]!.send('a1', 'A', { 'x-unread': '1' }), c[1]!.send('a2', 'A'), c[2]!.send('a3', 'A')];
      await until(() => entered.length === 2);
      await poll(async () => admission.waiting === 1);
      release('a1');
      expect(await first[0]).toBe('a1');
      expect(admission.held).toBe(0);
      const a4 = c[0]!.send('a4', 'A');
      await poll(async () => arrived.includes('a4'));
      for (const id of ['a2', 'a3']) release(id);
      await until(() => entered.includes('a4'));
      release('a4');
      expect(await Promise.all([...first, a4])).toEqual(['a1', 'a2', 'a3', 'a4']);
    });

    it('reads every held connection when the server closes, so each request its client sent is answered', async () => {
      const c = open(3);
      const first = ['a1', 'a2', 'a3'].map((id, i) => c[i]!.send(id, 'A'));
      await until(() => entered.length === 2);
      await poll(async () => admission.waiting === 1);
      release('a1');
      expect(await first[0]).toBe('a1');
      expect(admission.held).toBe(1);
      const a4 = c[0]!.send('a4', 'A');
      await c[0]!.flushed();

      const closed = closeServer(server, [admission]);
      await poll(async () => arrived.includes('a4'));
      expect(admission.held).toBe(0);
      for (const id of ['a2', 'a3']) release(id);
      await until(() => entered.includes('a4'));
      release('a4');
      expect(await Promise.all([...first, a4])).toEqual(['a1', 'a2', 'a3', 'a4']);
      await closed;
    });
  });
});

/**
 * A keep-alive HTTP/1.1 client connection written by hand: each request goes when the test sends it, and the
 * connection closes only when the server closes it (a client library would close it early on the server's short
 * keep-alive hint). Its answers come in order; each answer's promise fails if the connection closes first.
 */
class Connection {
  readonly socket: Socket;
  closed = false;
  private received = '';
  private readonly answers: Array<{ resolve: (body: string) => void; reject: (error: Error) => void }> = [];

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => {
      this.received += chunk;
      this.takeAnswers();
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
      for (const answer of this.answers.splice(0)) answer.reject(new Error('connection closed before its answer'));
    });
  }

  /** Sends request `id` with `key`; resolves with its answer's body. */
  send(id: string, key: string, headers: Record<string, string> = {}): Promise<string> {
    const lines = ['POST / HTTP/1.1', 'host: test', `x-id: ${id}`, `x-key: ${key}`, 'content-length: 2'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    const answer = new Promise<string>((resolve, reject) => this.answers.push({ resolve, reject }));
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n{}`);
    return answer;
  }

  /** Resolves once what was sent is in the kernel (on its way to the server). */
  flushed(): Promise<void> {
    return new Promise((resolve) => this.socket.write('', () => resolve()));
  }

  private takeAnswers(): void {
    for (;;) {
      const headEnd = this.received.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      const length = Number(/content-length: (\d+)/i.exec(this.received.slice(0, headEnd))?.[1] ?? 0);
      const end = headEnd + 4 + length;
      if (this.received.length < end) return;
      const body = this.received.slice(headEnd + 4, end);
      this.received = this.received.slice(end);
      this.answers.shift()?.resolve(body);
    }
  }
}
