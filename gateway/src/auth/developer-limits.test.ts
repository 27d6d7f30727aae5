// The developer limits' bookkeeping (developer-limits.ts), without a gateway: buckets, requests in flight, dry-run
// slots, the remembered Authorization values and the bound on memory. Refill is one token per 1,000 s here, so that no
// test depends on how fast it runs.
import {
  type DeveloperLimitSettings,
  DeveloperLimits,
  REFUSAL_HOLD_MAX_MS,
  REFUSALS_BEFORE_HOLD,
  REFUSALS_HELD_PER_DEVELOPER_MAX,
  TooManyRequestsError,
} from './developer-limits.ts';

const SLOW: DeveloperLimitSettings = {
  ratePerSecond: 0.001,
  burst: 5,
  inFlightMax: 3,
  simulationsPerDeveloperMax: 1,
  simulationsMax: 2,
};

function refusal(run: () => unknown): TooManyRequestsError {
  try {
    run();
  } catch (error) {
    if (error instanceof TooManyRequestsError) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('DeveloperLimits', () => {
  it('takes each request its cost, refuses what the bucket cannot pay, and keeps developers apart', () => {
    const limits = new DeveloperLimits(SLOW);
    limits.acquire('a', 2).release();
    const lease = limits.acquire('a', 3);
    expect(lease.fields()).toEqual({ policy: '"developer";q=5;w=5000', state: '"developer";r=0;t=5000' });
    lease.release();
    const refused = refusal(() => limits.acquire('a', 1));
    expect(refused.status).toBe(429);
    expect(refused.code).toBe('TOO_MANY_REQUESTS');
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(999);
    expect(refused.fields.state).toMatch(/^"developer";r=0;t=\d+$/);
    // Another developer has a full bucket of its own.
    limits.acquire('b', 5).release();
  });

  it('refuses a cost above the bucket as the bucket itself, not for ever', () => {
    const limits = new DeveloperLimits(SLOW);
    // 10 is more than the bucket holds: it costs the whole bucket.
    limits.acquire('a', 10).release();
    expect(refusal(() => limits.acquire('a', 1)).code).toBe('TOO_MANY_REQUESTS');
  });

  it('bounds the requests in flight, and a released one frees its slot', () => {
    const limits = new DeveloperLimits({ ...SLOW, burst: 100 });
    const held = [limits.acquire('a', 1), limits.acquire('a', 1), limits.acquire('a', 1)];
    const refused = refusal(() => limits.acquire('a', 1));
    expect(refused.retryAfterSeconds).toBe(1);
    expect(refused.message).toMatch(/in flight/);
    limits.acquire('b', 1).release();
    held[0]?.release();
    held[0]?.release();
    limits.acquire('a', 1).release();
    expect(refusal(() => limits.acquire('a', 1) && limits.acquire('a', 1)).message).toMatch(/in flight/);
  });

  it('charges more to a request that holds its slot, and refuses without taking', () => {
    const limits = new DeveloperLimits(SLOW);
    const lease = limits.acquire('a', 1);
    lease.charge(3);
    expect(refusal(() => lease.charge(2)).code).toBe('TOO_MANY_REQUESTS');
    lease.charge(1);
    lease.release();
  });

  it('runs one dry-run per developer and two in all; a released lease gives its slot back', () => {
    const limits = new DeveloperLimits({ ...SLOW, burst: 100 });
    const a = limits.acquire('a', 1);
    a.takeSimulation();
    const again = limits.acquire('a', 1);
    expect(refusal(() => again.takeSimulation()).message).toMatch(/one developer/);
    again.release();
    const b = limits.acquire('b', 1);
    b.takeSimulation();
    const c = limits.acquire('c', 1);
    expect(refusal(() => c.takeSimulation()).message).toMatch(/gateway/);
    a.release();
    c.takeSimulation();
    c.release();
    b.release();
    const d = limits.acquire('d', 1);
    d.takeSimulation();
    d.release();
  });

  it('remembers admitted Authorization values until their exp, the least recently used forgotten first', () => {
    const limits = new DeveloperLimits(SLOW);
    const later = Date.now() + 3_600_000;
    expect(limits.subjectOf('Bearer never-admitted')).toBeUndefined();
    limits.remember('Bearer first', 'a', 0, later);
    for (let i = 0; i < 10_000; i++) limits.remember(`Bearer t${i}`, `s${i}`, 0, later);
    expect(limits.subjectOf('Bearer first')).toBeUndefined();
    expect(limits.subjectOf('Bearer t0')).toBe('s0');
    // t0 was just used: t1 is now the oldest and goes first.
    limits.remember('Bearer newest', 'n', 0, later);
    expect(limits.subjectOf('Bearer t1')).toBeUndefined();
    expect(limits.subjectOf('Bearer t0')).toBe('s0');
    expect(limits.subjectOf('')).toBeUndefined();
    // A value without a readable exp (not a JWT), or expired already, is not remembered.
    expect(limits.remember('Bearer not-a-jwt', 'x')).toBeUndefined();
    expect(limits.remember('Bearer gone', 'x', 0, Date.now() - 1)).toBeUndefined();
    expect(limits.subjectOf('Bearer gone')).toBeUndefined();
  });

  it("charges a remembered token's own bucket before admission, never its developer's", () => {
    const limits = new DeveloperLimits({ ...SLOW, burst: 3 });
    const token = limits.remember('Bearer stolen', 'victim', 1, Date.now() + 3_600_000);
    // Its own bucket: 3 less the admitted request; two more, then refused, and the developer's bucket is untouched.
    expect(limits.beforeAdmission('Bearer stolen', 1)).toBe(token);
    expect(limits.beforeAdmission('Bearer stolen', 1)).toBe(token);
    expect(refusal(() => limits.beforeAdmission('Bearer stolen', 1)).code).toBe('TOO_MANY_REQUESTS');
    const victim = limits.acquire('victim', 3);
    victim.release();
    // Refused by the identity service (revoked): forgotten, and from then on it takes nothing from anyone.
    limits.forget('Bearer stolen');
    expect(limits.beforeAdmission('Bearer stolen', 1)).toBeUndefined();
    // A never-admitted value is not counted before admission.
    expect(limits.beforeAdmission('Bearer forged', 100)).toBeUndefined();
  });

  it('forgets a remembered token at its exp', async () => {
    const limits = new DeveloperLimits(SLOW);
    limits.remember('Bearer short', 'a', 0, Date.now() + 30);
    expect(limits.subjectOf('Bearer short')).toBe('a');
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(limits.beforeAdmission('Bearer short', 1)).toBeUndefined();
    expect(limits.tokensRemembered).toBe(0);
  });

  it("a remembered token pays its request's later charges too, without being refused for them", () => {
    const limits = new DeveloperLimits({ ...SLOW, burst: 10 });
    const token = limits.remember('Bearer t', 'a', 1, Date.now() + 3_600_000);
    const lease = limits.acquire('a', 1, token);
    lease.charge(8);
    lease.release();
    // The token's bucket: 10 - 1 - 8 = 1 left.
    limits.beforeAdmission('Bearer t', 1);
    expect(refusal(() => limits.beforeAdmission('Bearer t', 1)).code).toBe('TOO_MANY_REQUESTS');
  });

  it('a handed-over lease keeps its in-flight slot until the function it returned is called', () => {
    const limits = new DeveloperLimits({ ...SLOW, burst: 100, inFlightMax: 1 });
    const lease = limits.acquire('a', 1);
    const done = lease.handOver();
    lease.release();
    expect(refusal(() => limits.acquire('a', 1)).message).toMatch(/in flight/);
    done();
    done();
    limits.acquire('a', 1).release();
  });

  it('forgets idle developers once many are held, and keeps those with something in flight or spent', () => {
    const limits = new DeveloperLimits(SLOW);
    const busy = limits.acquire('busy', 0);
    limits.acquire('spent', 1).release();
    for (let i = 0; i < 10_000; i++) limits.acquire(`idle-${i}`, 0).release();
    // The sweep ran when the 10,000th was about to be added: the busy and the spent stayed, and the two that came
    // after it.
    expect(limits.size).toBe(4);
    busy.release();
  });

  it('holds the refusals of a developer that keeps sending past its Retry-After, within bounds; others answer at once', async () => {
    const limits = new DeveloperLimits({ ...SLOW, burst: 100 });
    const slots = [limits.acquire('a', 1), limits.acquire('a', 1), limits.acquire('a', 1)];
    // The first refusals of a run are answered at once: held() takes no hold.
    for (let i = 0; i < REFUSALS_BEFORE_HOLD; i++) {
      const waited = refusal(() => limits.acquire('a', 1)).held();
      expect(limits.refusalsHeld).toBe(0);
      await waited;
    }
    // Past them, within the first one's Retry-After (1 s for requests in flight), each is held.
    const held = refusal(() => limits.acquire('a', 1)).held();
    expect(limits.refusalsHeld).toBe(1);
    // Another developer's refusals are its own: its first ones are not held.
    const other = [limits.acquire('b', 1), limits.acquire('b', 1), limits.acquire('b', 1)];
    const otherWaited = refusal(() => limits.acquire('b', 1)).held();
    expect(limits.refusalsHeld).toBe(1);
    await Promise.all([held, otherWaited]);
    expect(limits.refusalsHeld).toBe(0);
    // At most REFUSALS_HELD_PER_DEVELOPER_MAX of one developer at once; the rest are answered at once.
    const many = Array.from({ length: REFUSALS_HELD_PER_DEVELOPER_MAX + 10 }, () =>
      refusal(() => limits.acquire('a', 1)),
    ).map((error) => error.held());
    expect(limits.refusalsHeld).toBe(REFUSALS_HELD_PER_DEVELOPER_MAX);
    await Promise.all(many);
    expect(limits.refusalsHeld).toBe(0);
    for (const lease of [...slots, ...other]) lease.release();
  });

  it('answers held refusals one by one, as far apart as the bucket takes to refill what each asked for', async () => {
    // 4 tokens a second: a 2-token read's refusal is answered 500 ms after the one held before it.
    const limits = new DeveloperLimits({ ...SLOW, ratePerSecond: 4, burst: 2, inFlightMax: 100 });
    const lease = limits.acquire('a', 2);
    const read = () => refusal(() => limits.acquire('a', 2));
    for (let i = 0; i < REFUSALS_BEFORE_HOLD; i++) expect(read().holdMs).toBe(0);
    const first = read();
    const second = read();
    const third = read();
    // Not all at the end of the first Retry-After (1 s): the first after one refill, the next one refill later, the
    // third at the most a refusal is held (REFUSAL_HOLD_MAX_MS) rather than later still.
    expect(first.holdMs).toBeGreaterThan(0);
    // 500 ms, to within the floating point of the bucket's arithmetic (a hold of 500.00000000000045 ms was seen).
    expect(first.holdMs).toBeLessThanOrEqual(500 + 1e-6);
    expect(second.holdMs).toBeGreaterThan(first.holdMs);
    expect(third.holdMs).toBeLessThanOrEqual(REFUSAL_HOLD_MAX_MS);
    await Promise.all([first.held(), second.held(), third.held()]);
    expect(limits.refusalsHeld).toBe(0);
    lease.release();
  });
});
