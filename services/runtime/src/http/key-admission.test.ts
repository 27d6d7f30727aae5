// Per-key admission over a real HTTP server: at most the bound of one key's requests in the app, the rest entering in
// arrival order as earlier ones are answered; other keys and keyless requests never wait; a waiting request whose
// client left is dropped. The app holds each request until the test releases it: counting, no timing.
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { admitted, arrivedAt, KeyAdmission } from './key-admission.ts';

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
    for (const id of ['a1', 'a2']) release(id);
    await until(() => entered.includes('a3'));
    release('a3');
    expect((await Promise.all(a.map((s) => s.answer))).sort()).toEqual(['a1', 'a2', 'a3']);
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
});
