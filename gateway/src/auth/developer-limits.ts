// Developer API limits (CONTRACT section 11.1): every developer request of this gateway process (REST console,
// records and access; GraphQL over HTTP; WebSocket connection attempts and subscribe messages) counts toward limits of
// its developer, the session's subject (the principal's identityUserId):
//
// - a token bucket: DEVELOPER_BURST tokens at most, DEVELOPER_RATE_PER_SECOND given back per second; a request takes
//   its cost (DEVELOPER_COSTS: 1, the snapshot and every record page more, simulateRule and an export most);
// - requests in flight: at most DEVELOPER_IN_FLIGHT_MAX at once (a WebSocket counts only while it is being admitted
//   or a subscription checked; LIVE_CONNECTIONS_PER_DEVELOPER_MAX bounds open sockets);
// - rule dry-runs in flight: SIMULATE_RULE_PER_DEVELOPER_MAX per developer and SIMULATE_RULE_IN_FLIGHT_MAX in the
//   whole process, refused past them rather than queued.
//
// Past a limit: 429 TOO_MANY_REQUESTS with Retry-After and the IETF RateLimit-Policy / RateLimit fields of the bucket
// (`"developer";q=<burst>;w=<seconds to fill it>` and `"developer";r=<whole tokens left>;t=<seconds until full>`);
// a WebSocket connection attempt is closed with 4029 TOO_MANY_REQUESTS instead (docs/graphql.md).
//
// A developer that keeps sending past its refusals gets them later: once REFUSALS_BEFORE_HOLD refusals came within
// the Retry-After of the first, each further refusal is answered (429, or the WebSocket closed) only when the bucket
// has refilled the tokens it asked for after those of the refusals held before it (one answer per cost / rate: at the
// defaults a read's refusal every 50 ms), REFUSAL_HOLD_MAX_MS at most, for at most REFUSALS_HELD_PER_DEVELOPER_MAX of
// its requests at once (REFUSALS_HELD_MAX in the process; past those, at once). Answered one by one at the rate the
// bucket admits, a flood's clients come back spread out, not all at once when one Retry-After ends (a burst of
// admitted reads that every other developer's request would wait behind). A client that waits as told never meets the hold; one
// that does not can no longer make the gateway refuse thousands of requests a second, each one CPU time that other
// developers' requests wait for (docs/decisions.md, "Refusals held").
//
// Credentials are checked before they are charged: a developer's bucket and in-flight slots are taken only after the
// identity service has admitted the request (a valid, unexpired token of an invited developer). So that a flood of
// a token admitted before still costs no admission each, an admitted Authorization value is remembered (as a SHA-256
// digest) with its subject, its `exp` and a bucket of its own (the same settings, paid with the same costs): a request
// carrying it pays that bucket first, and is refused there (429) without asking the identity service. That bucket is
// the token's, not the developer's: an expired token is forgotten at its `exp`, and a token the identity service
// refuses (401, 403: revoked invitation, another Origin) is forgotten at once, so neither is ever counted against the
// developer whose subject it names, whose live sessions keep their own bucket. A forged or never-admitted value is
// not remembered: it is admitted (and refused) every time and spends no one's bucket. Memory is bounded: a developer
// whose bucket is full and who has nothing in flight is the same as one never seen, and is forgotten once more than
// SUBJECTS_SWEEP_AT are held; at most TOKENS_REMEMBERED_MAX values are kept (the least recently used goes first).
// The limits hold per gateway process (docs/decisions.md).
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { Counter } from 'prom-client';
import { AppError } from '#runtime/errors.ts';
import type { Metrics } from '#runtime/metrics.ts';

/** Tokens one request takes (documented in docs/graphql.md and README.md). */
export const DEVELOPER_COSTS = {
  /** Any request: access, a console action or mutation, a subscribe message. */
  request: 1,
  /** A WebSocket connection attempt: an admission (a JWT check and an identity call) and a socket held. */
  connection: 2,
  /** The snapshot (REST GET console, GraphQL `snapshot`, once per request however often it is asked for). */
  snapshot: 2,
  /** A record page: REST GET records; GraphQL `records`, `decisions`, `linkIntents` and `decisionStats`, each. */
  recordPage: 2,
  /** A rule dry-run (GraphQL `simulateRule`): it may replay SIMULATE_RULE_MAX_EVENTS decisions. */
  simulation: 10,
  /** A decision export (REST GET decisions/export): up to 31 days of a game's decisions, page after page. */
  export: 10,
} as const;

export interface DeveloperLimitSettings {
  /** DEVELOPER_RATE_PER_SECOND: tokens given back per second. */
  ratePerSecond: number;
  /** DEVELOPER_BURST: tokens a developer may spend at once. */
  burst: number;
  /** DEVELOPER_IN_FLIGHT_MAX: requests of one developer in flight at once. */
  inFlightMax: number;
  /** SIMULATE_RULE_PER_DEVELOPER_MAX: rule dry-runs of one developer at once. */
  simulationsPerDeveloperMax: number;
  /** SIMULATE_RULE_IN_FLIGHT_MAX: rule dry-runs of everyone at once on this gateway process. */
  simulationsMax: number;
}

export const DEVELOPER_LIMIT_DEFAULTS: DeveloperLimitSettings = {
  ratePerSecond: 40,
  burst: 100,
  inFlightMax: 16,
  simulationsPerDeveloperMax: 1,
  simulationsMax: 4,
};

/** Developers held before idle ones are forgotten. */
const SUBJECTS_SWEEP_AT = 10_000;
/** Authorization values remembered with their subject (least recently used forgotten first). */
const TOKENS_REMEMBERED_MAX = 10_000;
/** Longer Authorization values are not remembered (they are admitted, and counted, every time). */
const TOKEN_REMEMBERED_MAX_CHARS = 8_192;

/** The bucket's RateLimit-Policy and RateLimit field values. */
export interface RateLimitFields {
  policy: string;
  state: string;
}

/** Refusals of one developer within its first refusal's Retry-After before further ones are held. */
export const REFUSALS_BEFORE_HOLD = 8;
/** The longest a refusal is held before it is answered. */
export const REFUSAL_HOLD_MAX_MS = 1000;
/** Refusals of one developer held at once (more are answered at once). */
export const REFUSALS_HELD_PER_DEVELOPER_MAX = 256;
/** Refusals held at once in the process. */
const REFUSALS_HELD_MAX = 4096;

const notHeld = async () => undefined;

/** Tokens a refused dry-run asked for (how far apart its held refusals are answered). */
const SIMULATION_TOKENS = DEVELOPER_COSTS.simulation;

/** 429 TOO_MANY_REQUESTS: with when to retry and the bucket's fields (headers of an HTTP answer). */
export class TooManyRequestsError extends AppError {
  readonly retryAfterSeconds: number;
  readonly fields: RateLimitFields;
  /**
   * Resolves when the refusal may be answered: at once, or after its hold when its developer keeps sending past
   * its refusals (see above). Every place that answers a refusal awaits it first.
   */
  held: () => Promise<void> = notHeld;
  /** How long held() holds the refusal, in ms (0: answered at once). */
  holdMs = 0;

  constructor(message: string, retryAfterSeconds: number, fields: RateLimitFields) {
    super('TOO_MANY_REQUESTS', message, undefined, 429);
    this.name = 'TooManyRequestsError';
    this.retryAfterSeconds = retryAfterSeconds;
    this.fields = fields;
  }
}

type RefusalReason = 'rate' | 'in_flight' | 'simulations';

class SubjectState {
  tokens: number;
  /** When `tokens` was last topped up (performance.now(), monotonic). */
  at: number;
  inFlight = 0;
  simulations = 0;
  /** Until when (performance.now()) the first refusal of the current run asked it to wait; 0: none. */
  refusedUntil = 0;
  /** Refusals since that first one. */
  refusals = 0;
  /** When (performance.now()) the last refusal held is answered: the next is answered one spacing later. */
  heldUntil = 0;
  /** Its refusals being held now. */
  held = 0;

  constructor(burst: number, now: number) {
    this.tokens = burst;
    this.at = now;
  }
}

/** An admitted Authorization value: its subject, when it expires, and its own bucket (paid before admission). */
export interface RememberedToken {
  readonly subject: string;
  readonly expiresAtMs: number;
  /** @internal */
  readonly state: SubjectState;
}

/** One request's hold on its developer's limits: its in-flight slot (and dry-run slot), given back by release(). */
export class DeveloperLease {
  readonly subject: string;
  private readonly limits: DeveloperLimits;
  private readonly state: SubjectState;
  private readonly token: RememberedToken | undefined;
  private simulation = false;
  private released = false;
  private handedOver = false;

  constructor(limits: DeveloperLimits, subject: string, state: SubjectState, token?: RememberedToken) {
    this.limits = limits;
    this.subject = subject;
    this.state = state;
    this.token = token;
  }

  /**
   * More tokens for the same request (GraphQL: the cost of its document's fields); 429 when they are not there. The
   * request's remembered token pays them too (without refusing), so that its own bucket keeps pace with the
   * developer's and a flood of it is refused before admission.
   */
  charge(cost: number): void {
    if (cost <= 0) return;
    this.limits.spend(this.state, cost);
    if (this.token) this.limits.debit(this.token.state, cost);
  }

  /**
   * Keeps the request's slots past the middleware that took them (a response streamed after its handler returned):
   * release() is ignored from then on, and the function returned gives the slots back (idempotent).
   */
  handOver(): () => void {
    this.handedOver = true;
    return () => this.giveBack();
  }

  /** A dry-run slot for this request (at most one); 429 past the developer's or the process's bound. */
  takeSimulation(): void {
    if (this.simulation || this.released) return;
    this.limits.takeSimulation(this.state);
    this.simulation = true;
  }

  /** The bucket's fields now. */
  fields(): RateLimitFields {
    return this.limits.fieldsOf(this.state);
  }

  /** Gives the slots back, unless they were handed over; idempotent. */
  release(): void {
    if (!this.handedOver) this.giveBack();
  }

  private giveBack(): void {
    if (this.released) return;
    this.released = true;
    this.state.inFlight -= 1;
    if (this.simulation) this.limits.simulationEnded(this.state);
  }
}

export class DeveloperLimits {
  readonly settings: DeveloperLimitSettings;
  private readonly subjects = new Map<string, SubjectState>();
  private readonly tokens = new Map<string, RememberedToken>();
  private simulations = 0;
  private held = 0;
  private lastSweep = 0;
  private readonly refusals: Counter<'reason'> | undefined;
  private readonly heldRefusals: Counter | undefined;
  private readonly policy: string;

  constructor(settings: DeveloperLimitSettings, metrics?: Metrics) {
    this.settings = settings;
    this.policy = `"developer";q=${settings.burst};w=${Math.ceil(settings.burst / settings.ratePerSecond)}`;
    this.refusals = metrics
      ? new Counter({
          name: 'developer_limit_refusals_total',
          help: 'Developer requests refused with 429 TOO_MANY_REQUESTS, by limit (rate, in_flight, simulations)',
          labelNames: ['reason'],
          registers: [metrics.registry],
        })
      : undefined;
    this.heldRefusals = metrics
      ? new Counter({
          name: 'developer_limit_refusals_held_total',
          help: 'Refusals answered only after a hold: their developer kept sending past its Retry-After',
          registers: [metrics.registry],
        })
      : undefined;
  }

  /** Refusals being held now (tests and metrics). */
  get refusalsHeld(): number {
    return this.held;
  }

  /** Developers currently held (tests and metrics). */
  get size(): number {
    return this.subjects.size;
  }

  /** Authorization values remembered (tests and metrics). */
  get tokensRemembered(): number {
    return this.tokens.size;
  }

  /**
   * The remembered admission of exactly this Authorization value, if it is remembered and unexpired (an expired one
   * is forgotten here). Most recently used last: the first key is the one to forget.
   */
  private known(authorization: string): RememberedToken | undefined {
    if (authorization === '' || authorization.length > TOKEN_REMEMBERED_MAX_CHARS) return undefined;
    const key = digest(authorization);
    const token = this.tokens.get(key);
    if (token === undefined) return undefined;
    this.tokens.delete(key);
    if (Date.now() >= token.expiresAtMs) return undefined;
    this.tokens.set(key, token);
    return token;
  }

  /** The subject an earlier admission of exactly this Authorization value gave, if it is remembered and unexpired. */
  subjectOf(authorization: string): string | undefined {
    return this.known(authorization)?.subject;
  }

  /**
   * Before admission: an Authorization value admitted before (and unexpired) pays `cost` from its own bucket, or is
   * refused with 429 there, the identity service not asked. Its developer's bucket is not touched: that is paid after
   * admission (acquire). Any other value: nothing is taken, undefined.
   */
  beforeAdmission(authorization: string, cost: number): RememberedToken | undefined {
    const token = this.known(authorization);
    if (token) this.spend(token.state, cost);
    return token;
  }

  /** Forgets an Authorization value the identity service refused (revoked, expired, another Origin). */
  forget(authorization: string): void {
    if (authorization === '' || authorization.length > TOKEN_REMEMBERED_MAX_CHARS) return;
    this.tokens.delete(digest(authorization));
  }

  /**
   * Remembers an admitted Authorization value with its subject until its `exp` (read from the token, which was just
   * verified; a value without one is not remembered). A value remembered already keeps its bucket; a new one starts
   * with a full bucket less `cost`, the request that was just admitted.
   */
  remember(
    authorization: string,
    subject: string,
    cost = 0,
    expiresAtMs = expiryOf(authorization),
  ): RememberedToken | undefined {
    if (authorization === '' || authorization.length > TOKEN_REMEMBERED_MAX_CHARS) return undefined;
    if (expiresAtMs === undefined || Date.now() >= expiresAtMs) return undefined;
    const key = digest(authorization);
    const known = this.tokens.get(key);
    this.tokens.delete(key);
    let token: RememberedToken;
    if (known && known.subject === subject) {
      token = known;
    } else {
      const state = new SubjectState(this.settings.burst, performance.now());
      this.debit(state, cost);
      token = { subject, expiresAtMs, state };
    }
    this.tokens.set(key, token);
    if (this.tokens.size > TOKENS_REMEMBERED_MAX) {
      const oldest = this.tokens.keys().next().value;
      if (oldest !== undefined) this.tokens.delete(oldest);
    }
    return token;
  }

  /**
   * Takes `cost` tokens and one in-flight slot of `subject`, in this turn (no await: a burst cannot pass the check),
   * or throws 429 TOO_MANY_REQUESTS and takes nothing. Only for an admitted subject: `token` is the request's
   * remembered Authorization value, which pays later charges too.
   */
  acquire(subject: string, cost: number, token?: RememberedToken): DeveloperLease {
    const now = performance.now();
    let state = this.subjects.get(subject);
    if (!state) {
      this.sweep(now);
      state = new SubjectState(this.settings.burst, now);
      this.subjects.set(subject, state);
    }
    if (state.inFlight >= this.settings.inFlightMax) {
      this.refuse(
        'in_flight',
        `At most ${this.settings.inFlightMax} requests of one developer may be in flight at once; retry later.`,
        1,
        state,
        cost,
      );
    }
    this.spend(state, cost);
    state.inFlight += 1;
    return new DeveloperLease(this, subject, state, token);
  }

  /** @internal Takes `cost` tokens (at most the bucket's size), or throws 429 and takes none. */
  spend(state: SubjectState, cost: number): void {
    this.refill(state, performance.now());
    const needed = Math.min(cost, this.settings.burst);
    if (state.tokens < needed) {
      const seconds = Math.max(1, Math.ceil((needed - state.tokens) / this.settings.ratePerSecond));
      this.refuse(
        'rate',
        `Too many requests for this developer (${this.settings.ratePerSecond} per second, bursts of ${this.settings.burst}); retry in ${seconds} s.`,
        seconds,
        state,
        needed,
      );
    }
    state.tokens -= needed;
  }

  /** @internal Takes up to `cost` tokens without refusing (a remembered token keeping pace with its developer). */
  debit(state: SubjectState, cost: number): void {
    this.refill(state, performance.now());
    state.tokens = Math.max(0, state.tokens - Math.min(cost, this.settings.burst));
  }

  /** @internal */
  takeSimulation(state: SubjectState): void {
    if (state.simulations >= this.settings.simulationsPerDeveloperMax) {
      this.refuse(
        'simulations',
        `At most ${this.settings.simulationsPerDeveloperMax} simulateRule of one developer may run at once; retry when it has answered.`,
        1,
        state,
        SIMULATION_TOKENS,
      );
    }
    if (this.simulations >= this.settings.simulationsMax) {
      this.refuse(
        'simulations',
        'The gateway is running as many simulateRule as it may; retry shortly.',
        1,
        state,
        SIMULATION_TOKENS,
      );
    }
    state.simulations += 1;
    this.simulations += 1;
  }

  /** @internal */
  simulationEnded(state: SubjectState): void {
    state.simulations -= 1;
    this.simulations -= 1;
  }

  /** @internal The bucket's fields for `state`, topped up to now. */
  fieldsOf(state: SubjectState): RateLimitFields {
    this.refill(state, performance.now());
    const untilFull = Math.ceil((this.settings.burst - state.tokens) / this.settings.ratePerSecond);
    return { policy: this.policy, state: `"developer";r=${Math.floor(state.tokens)};t=${untilFull}` };
  }

  /** Throws the refusal of a request that asked for `tokens`; held (see above) past the first refusals of a run. */
  private refuse(
    reason: RefusalReason,
    message: string,
    retryAfterSeconds: number,
    state: SubjectState,
    tokens: number,
  ): never {
    this.refusals?.inc({ reason });
    // A refusal is an answer, not a fault: no stack trace is captured (a flood makes thousands a second, and a 4xx
    // is never logged with its stack).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    let error: TooManyRequestsError;
    try {
      error = new TooManyRequestsError(message, retryAfterSeconds, this.fieldsOf(state));
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    const now = performance.now();
    if (now >= state.refusedUntil) {
      state.refusedUntil = now + retryAfterSeconds * 1000;
      state.refusals = 1;
    } else if (++state.refusals > REFUSALS_BEFORE_HOLD) {
      // Answered when the bucket has refilled what it asked for, after the refusals held before it: one by one.
      const spacingMs = (Math.min(tokens, this.settings.burst) * 1000) / this.settings.ratePerSecond;
      const holdMs = Math.min(REFUSAL_HOLD_MAX_MS, Math.max(now, state.heldUntil) + spacingMs - now);
      state.heldUntil = now + holdMs;
      error.holdMs = holdMs;
      error.held = () => this.hold(state, holdMs);
    }
    throw error;
  }

  /** Waits `ms` before a refusal of `state`'s developer is answered, within the bounds of held refusals. */
  private async hold(state: SubjectState, ms: number): Promise<void> {
    if (state.held >= REFUSALS_HELD_PER_DEVELOPER_MAX || this.held >= REFUSALS_HELD_MAX) return;
    state.held += 1;
    this.held += 1;
    this.heldRefusals?.inc();
    try {
      await new Promise((resolve) => setTimeout(resolve, ms));
    } finally {
      state.held -= 1;
      this.held -= 1;
    }
  }

  private refill(state: SubjectState, now: number): void {
    if (state.tokens < this.settings.burst) {
      state.tokens = Math.min(
        this.settings.burst,
        state.tokens + ((now - state.at) * this.settings.ratePerSecond) / 1000,
      );
    }
    state.at = now;
  }

  /** Forgets developers that are as if never seen (full bucket, nothing in flight), at most once a second. */
  private sweep(now: number): void {
    if (this.subjects.size < SUBJECTS_SWEEP_AT || now - this.lastSweep < 1000) return;
    this.lastSweep = now;
    for (const [subject, state] of this.subjects) {
      if (state.inFlight > 0 || state.simulations > 0 || state.held > 0) continue;
      this.refill(state, now);
      if (state.tokens >= this.settings.burst) this.subjects.delete(subject);
    }
  }
}

/** When a bearer JWT expires (its `exp`, in ms), read without verifying: only called for a value just admitted. */
function expiryOf(authorization: string): number | undefined {
  try {
    const exp = decodeJwt(authorization.replace(/^Bearer\s+/i, '')).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

function digest(authorization: string): string {
  return createHash('sha256').update(authorization).digest('base64url');
}
