// Console reads take turns per organization in the ledger process: at most CONSOLE_READS_PER_ORGANIZATION_MAX reads
// of one organization's members run at once here; the rest wait (without a database connection), first come first
// served within an organization. The gateway already bounds each developer; this bounds a team of developers, so the
// members of one organization together never hold more than their share of the ledger's connections.
//
// A read runs on behalf of a developer and covers the organizations the developer is a member of: it takes one turn
// in each of them, all at once or not at all (never a partial hold, so no two reads wait on each other). The
// developer's organizations come from `ledger.members`, remembered for a few seconds (a membership change regroups
// reads that little later; what a read may see is still decided by its own query).
import type { DescMessage } from '@bufbuild/protobuf';
import { Gauge } from 'prom-client';
import { consoleReadOperations } from '#runtime/contracts/operations.ts';
import { invariant } from '#runtime/invariant.ts';
import type { Metrics } from '#runtime/metrics.ts';
import type { EndpointBinding, Handler } from '#runtime/transport/operation.ts';

/** CONSOLE_READS_PER_ORGANIZATION_MAX's default: a third of a production ledger's ten connections, less than any pool. */
export const CONSOLE_READS_PER_ORGANIZATION_DEFAULT = 3;

interface Waiter {
  organizations: readonly string[];
  start: () => void;
}

/** Bounded concurrency per organization; a unit of work holds a turn in each of its organizations. */
export class OrganizationTurns {
  readonly perOrganizationMax: number;
  private readonly running = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(perOrganizationMax: number) {
    this.perOrganizationMax = perOrganizationMax;
  }

  /** Organizations with reads running, and reads waiting (tests and metrics). */
  get counts(): { organizations: number; waiting: number } {
    return { organizations: this.running.size, waiting: this.waiting.length };
  }

  /** Runs `work` once each of `organizations` has a turn free (at once when it names none). */
  async run<T>(organizations: readonly string[], work: () => Promise<T>): Promise<T> {
    await this.enter(organizations);
    try {
      return await work();
    } finally {
      this.leave(organizations);
    }
  }

  private enter(organizations: readonly string[]): Promise<void> {
    // First come, first served: a read never overtakes an earlier one waiting for one of the same organizations.
    if (this.fits(organizations) && !this.waiting.some((w) => shares(w.organizations, organizations))) {
      this.take(organizations);
      return Promise.resolve();
    }
    return new Promise((start) => this.waiting.push({ organizations, start }));
  }

  private leave(organizations: readonly string[]): void {
    for (const organization of organizations) {
      const left = (this.running.get(organization) ?? 0) - 1;
      invariant(left >= 0, 'organization_turns', () => ({ organization, left }));
      if (left <= 0) this.running.delete(organization);
      else this.running.set(organization, left);
    }
    this.dispatch();
  }

  /** Starts the waiting reads that fit, in arrival order; one that does not fit holds back later ones of its organizations. */
  private dispatch(): void {
    const held = new Set<string>();
    for (let i = 0; i < this.waiting.length; ) {
      const waiter = this.waiting[i] as Waiter;
      if (!waiter.organizations.some((o) => held.has(o)) && this.fits(waiter.organizations)) {
        this.waiting.splice(i, 1);
        this.take(waiter.organizations);
        waiter.start();
        continue;
      }
      for (const organization of waiter.organizations) held.add(organization);
      i += 1;
    }
  }

  private fits(organizations: readonly string[]): boolean {
    return organizations.every((o) => (this.running.get(o) ?? 0) < this.perOrganizationMax);
  }

  private take(organizations: readonly string[]): void {
    for (const organization of organizations) {
      const now = (this.running.get(organization) ?? 0) + 1;
      invariant(now <= this.perOrganizationMax, 'organization_turns', () => ({ organization, now }));
      this.running.set(organization, now);
    }
  }
}

const NO_ORGANIZATIONS: readonly string[] = [];

function shares(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.includes(x));
}

/** A developer's organizations, remembered for `ttlMs`, at most `max` developers (the oldest forgotten first). */
export class MemberOrganizations {
  private readonly known = new Map<string, { organizations: readonly string[]; until: number }>();
  private readonly lookup: (identityUserId: string) => Promise<readonly string[]>;
  private readonly ttlMs: number;
  private readonly max: number;
  private readonly now: () => number;

  constructor(
    lookup: (identityUserId: string) => Promise<readonly string[]>,
    options: { ttlMs?: number; max?: number; now?: () => number } = {},
  ) {
    this.lookup = lookup;
    this.ttlMs = options.ttlMs ?? 5_000;
    this.max = options.max ?? 10_000;
    this.now = options.now ?? (() => performance.now());
  }

  get size(): number {
    return this.known.size;
  }

  async of(identityUserId: string): Promise<readonly string[]> {
    const now = this.now();
    const hit = this.known.get(identityUserId);
    if (hit && hit.until > now) return hit.organizations;
    const organizations = [...(await this.lookup(identityUserId))].sort();
    this.known.delete(identityUserId);
    while (this.known.size >= this.max) {
      const oldest = this.known.keys().next().value;
      if (oldest === undefined) break;
      this.known.delete(oldest);
    }
    this.known.set(identityUserId, { organizations, until: now + this.ttlMs });
    return organizations;
  }
}

/**
 * `endpoints` with the console reads (consoleReadOperations, requests carrying the developer as `principal`) run in
 * their developer's organizations' turns; every other endpoint unchanged.
 */
export function withOrganizationTurns(
  endpoints: EndpointBinding[],
  turns: OrganizationTurns,
  members: MemberOrganizations,
  metrics?: Metrics,
): EndpointBinding[] {
  if (metrics && !metrics.registry.getSingleMetric('ledger_console_reads_waiting')) {
    new Gauge({
      name: 'ledger_console_reads_waiting',
      help: 'Console reads of this ledger process waiting for a turn of their organizations',
      registers: [metrics.registry],
      collect() {
        this.set(turns.counts.waiting);
      },
    });
  }
  return endpoints.map((binding) => {
    if (!consoleReadOperations.has(binding.operation)) return binding;
    const inner = binding.handle;
    const handle: Handler<DescMessage, DescMessage> = async (request, ctx) => {
      const developer = (request as { principal?: { identityUserId?: string } }).principal?.identityUserId;
      if (!developer) return inner(request, ctx);
      // A failed lookup (the database unreachable) leaves the read to fail as reads do, with the console's own error.
      const organizations = await members.of(developer).catch(() => NO_ORGANIZATIONS);
      return turns.run(organizations, () => inner(request, ctx));
    };
    return { ...binding, handle };
  });
}
