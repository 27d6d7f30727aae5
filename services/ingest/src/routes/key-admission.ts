// Per-key admission in front of the HTTP app: at most `inAppMax` requests of one key are in the
// app at once; the others wait here, as Node parsed them (its request and response objects, the body unread in the
// request's buffer), until one of that key's requests in the app is answered, and then enter in arrival order.
//
// Why before the app: a flooding game's requests past the edge's per-key bound (the batcher's `keyInFlightMax`)
// wait anyway. Waiting inside the app, each held Koa's context, the middleware chain's promises and frames, the parsed
// and checked body and the batcher's entry, for as long as the flood's backlog takes to drain (under a second): long
// enough to be promoted out of V8's young generation and die in the old one, the costliest garbage there is. With a
// thousand such requests the edge spent a quarter of its CPU collecting them, on the CPUs the other games' events
// need (docs/reliability.md, "Fair ingest"). Waiting here, a request holds only what Node made when it read it.
//
// Waiting parsed still costs a request and a response object per request, and with a thousand of them the young
// generation promotes those too (docs/reliability.md, "Fair ingest", has the figures). So a key
// at its bound also stops being read: when one of its requests is answered on a connection that is its client's own
// (see below) while the key is at its bound, that connection is held (not read: its client's next request, whatever
// it is, stays in the kernel's socket buffer, unparsed) and joins the key's held connections; each time the key has
// room and no parsed request waits, the connection held longest is read again; when the key has nothing in the app,
// all are. A held connection has no keep-alive timeout (Node arms it when an answer ends; it would close the
// connection under a request its client sent): it is armed again when the connection is read again.
//
// Only a connection that looks like one client's own is held: every request it carried had the same client (its key,
// or what clientOf says, such as the credential as presented) and none came through a proxy (Forwarded,
// X-Forwarded-For, Via). A proxy's pooled connection (HAProxy in mode http, an ingress controller's upstream
// keep-alive) carries any client's next request, and holding it would make another key's request wait behind the
// flood. Such connections are never held; their requests wait parsed, as above.
//
// Nothing is refused and nothing is reordered within a key: each request gets the answer it would have had, later.
// A request whose client went away while it waited is dropped unanswered (there is no one to answer). Requests
// without a key (keyOf answers undefined) pass straight through. At shutdown (release), every held connection is read
// again and none is held any more, so each request its client sent is answered.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { arrivals, type RequestAdmission, type RequestHandler } from '#runtime/http/admission.ts';

export interface KeyAdmissionOptions {
  /** The request's key (e.g. its credential), or undefined for a request this admission does not hold. */
  keyOf(request: IncomingMessage): string | undefined;
  /**
   * The client a request comes from (e.g. its credential as presented), for telling one client's own connection from a
   * proxy's shared one (see the top); default: its key. Two keys of one client (a credential whose key became its
   * game's once the game was known) keep its connection its own.
   */
  clientOf?(request: IncomingMessage): string | undefined;
  /** Most requests of one key in the app at once. */
  inAppMax: number;
  /** Hold a key's own connections while the key is at its bound (default true). */
  holdConnections?: boolean;
}

interface Waiter {
  request: IncomingMessage;
  response: ServerResponse;
  next: RequestHandler;
}

interface KeyState {
  inApp: number;
  line: Waiter[];
  /** Connections held while the key was at its bound, longest held first. */
  held: Socket[];
}

/** Headers a proxy adds: a connection carrying one is a proxy's, shared by its clients. */
function proxied(request: IncomingMessage): boolean {
  const headers = request.headers;
  return headers.forwarded !== undefined || headers['x-forwarded-for'] !== undefined || headers.via !== undefined;
}

/**
 * Whether the connection of a request just answered can be held: it stays open (not Connection: close, its client
 * still there), and nothing of Node's will read it again behind the hold's back: the request's body was read to its
 * end (Node reads the rest of an unread one, resuming the socket) and no write waits for 'drain' (after which Node
 * resumes a socket it paused). Then no request is parsed on it until it is read again, and re-arming its keep-alive
 * timeout then is what Node itself would have done.
 */
function holdable(request: IncomingMessage): boolean {
  const socket = request.socket;
  return request.readableEnded && !socket.writableEnded && !socket.destroyed && !socket.writableNeedDrain;
}

/**
 * The socket's keep-alive timeout as Node arms it when an answer ends: the server's keepAliveTimeout plus its
 * keepAliveTimeoutBuffer (Node's defaults if the socket has no server).
 */
function keepAliveTimeoutOf(socket: Socket): number {
  const server = (socket as Socket & { server?: { keepAliveTimeout?: number; keepAliveTimeoutBuffer?: number } })
    .server;
  return (server?.keepAliveTimeout ?? 5_000) + (server?.keepAliveTimeoutBuffer ?? 1_000);
}

export class KeyAdmission implements RequestAdmission {
  private readonly options: KeyAdmissionOptions;
  /** Keys with requests in the app or waiting (a key leaves when it has neither). */
  private readonly keys = new Map<string, KeyState>();
  /**
   * What a connection carried: the client of its requests (clientOf), or null once it carried two clients or a
   * proxy's request.
   */
  private readonly carried = new WeakMap<Socket, string | null>();
  private waitingCount = 0;
  private heldCount = 0;
  private holding: boolean;

  constructor(options: KeyAdmissionOptions) {
    if (!(Number.isInteger(options.inAppMax) && options.inAppMax >= 1)) {
      throw new Error(`invalid key admission bound ${options.inAppMax}`);
    }
    this.options = options;
    this.holding = options.holdConnections ?? true;
  }

  /** Requests waiting to enter the app now. */
  get waiting(): number {
    return this.waitingCount;
  }

  /** Connections not read now, their key being at its bound. */
  get held(): number {
    return this.heldCount;
  }

  /** Keys with requests in the app or waiting (its map's entries). */
  get keysKept(): number {
    return this.keys.size;
  }

  release(): void {
    this.holding = false;
    for (const state of this.keys.values()) this.readAgain(state, state.held.length);
  }

  admit(request: IncomingMessage, response: ServerResponse, next: RequestHandler): void {
    const key = this.options.keyOf(request);
    if (key === undefined) {
      next(request, response);
      return;
    }
    const socket = request.socket;
    const client = this.clientOf(request, key);
    const before = this.carried.get(socket);
    if (before === undefined) this.carried.set(socket, proxied(request) ? null : client);
    else if (before !== null && (before !== client || proxied(request))) this.carried.set(socket, null);
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { inApp: 0, line: [], held: [] };
      this.keys.set(key, state);
    }
    if (state.inApp < this.options.inAppMax) {
      this.enter(key, state, { request, response, next });
      return;
    }
    arrivals.set(request, performance.now());
    state.line.push({ request, response, next });
    this.waitingCount++;
  }

  private clientOf(request: IncomingMessage, key: string): string {
    return this.options.clientOf?.(request) ?? key;
  }

  private enter(key: string, state: KeyState, waiter: Waiter): void {
    state.inApp++;
    // 'close' comes once the response is sent, or when the connection is lost before: either way the request left.
    waiter.response.once('close', () => this.left(key, state, waiter.request));
    waiter.next(waiter.request, waiter.response);
  }

  private left(key: string, state: KeyState, request: IncomingMessage): void {
    state.inApp--;
    while (state.line.length > 0) {
      const waiter = state.line.shift() as Waiter;
      this.waitingCount--;
      // Its client went away while it waited: no one to answer, nothing to decide.
      if (waiter.request.socket.destroyed) continue;
      this.enter(key, state, waiter);
      break;
    }
    const atBound = state.inApp >= this.options.inAppMax || state.line.length > 0 || state.held.length > 0;
    const socket = request.socket;
    if (atBound && this.holding && this.carried.get(socket) === this.clientOf(request, key) && holdable(request)) {
      // Its next request would wait: leave it unread. No keep-alive timeout while held (see the top).
      socket.setTimeout(0);
      socket.pause();
      state.held.push(socket);
      this.heldCount++;
    }
    if (state.inApp === 0 && state.line.length === 0) {
      this.readAgain(state, state.held.length);
      this.keys.delete(key);
    } else if (state.inApp < this.options.inAppMax && state.line.length === 0) {
      this.readAgain(state, 1);
    }
  }

  /** Reads again the `count` connections held longest (a connection its client closed meanwhile does not count). */
  private readAgain(state: KeyState, count: number): void {
    let remaining = count;
    while (remaining > 0 && state.held.length > 0) {
      const socket = state.held.shift() as Socket;
      this.heldCount--;
      if (socket.destroyed) continue;
      socket.setTimeout(keepAliveTimeoutOf(socket));
      socket.resume();
      remaining--;
    }
  }
}
