// Per-key admission in front of the HTTP app (issue 44, item 3): at most `inAppMax` requests of one key are in the
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
// Nothing is refused and nothing is reordered within a key: each request gets the answer it would have had, later.
// A request whose client went away while it waited is dropped unanswered (there is no one to answer). Requests
// without a key (keyOf answers undefined) pass straight through.

import type { IncomingMessage, ServerResponse } from 'node:http';

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** Something in front of the app that hands each request to `next`, now or later. */
export interface RequestAdmission {
  admit(request: IncomingMessage, response: ServerResponse, next: RequestHandler): void;
}

export interface KeyAdmissionOptions {
  /** The request's key (e.g. its credential), or undefined for a request this admission does not hold. */
  keyOf(request: IncomingMessage): string | undefined;
  /** Most requests of one key in the app at once. */
  inAppMax: number;
}

/** When each request that waited here arrived (performance.now()): the app's duration counts from then. */
const arrivals = new WeakMap<IncomingMessage, number>();

/** When the request arrived, if it waited in front of the app (undefined: it entered as it arrived). */
export function arrivedAt(request: IncomingMessage): number | undefined {
  return arrivals.get(request);
}

interface Waiter {
  request: IncomingMessage;
  response: ServerResponse;
  next: RequestHandler;
}

interface KeyState {
  inApp: number;
  line: Waiter[];
}

export class KeyAdmission implements RequestAdmission {
  private readonly options: KeyAdmissionOptions;
  /** Keys with requests in the app or waiting (a key leaves when it has neither). */
  private readonly keys = new Map<string, KeyState>();
  private waitingCount = 0;

  constructor(options: KeyAdmissionOptions) {
    if (!(Number.isInteger(options.inAppMax) && options.inAppMax >= 1)) {
      throw new Error(`invalid key admission bound ${options.inAppMax}`);
    }
    this.options = options;
  }

  /** Requests waiting to enter the app now. */
  get waiting(): number {
    return this.waitingCount;
  }

  admit(request: IncomingMessage, response: ServerResponse, next: RequestHandler): void {
    const key = this.options.keyOf(request);
    if (key === undefined) {
      next(request, response);
      return;
    }
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { inApp: 0, line: [] };
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

  private enter(key: string, state: KeyState, waiter: Waiter): void {
    state.inApp++;
    // 'close' comes once the response is sent, or when the connection is lost before: either way the request left.
    waiter.response.once('close', () => this.left(key, state));
    waiter.next(waiter.request, waiter.response);
  }

  private left(key: string, state: KeyState): void {
    state.inApp--;
    while (state.line.length > 0) {
      const waiter = state.line.shift() as Waiter;
      this.waitingCount--;
      // Its client went away while it waited: no one to answer, nothing to decide.
      if (waiter.request.socket.destroyed) continue;
      this.enter(key, state, waiter);
      return;
    }
    if (state.inApp === 0) this.keys.delete(key);
  }
}

/** The app's handler behind the admissions, the first one outermost. */
export function admitted(admissions: readonly RequestAdmission[], app: RequestHandler): RequestHandler {
  return admissions.reduceRight<RequestHandler>(
    (next, admission) => (request, response) => admission.admit(request, response, next),
    app,
  );
}
