import { ledgerOps } from '#runtime/contracts/operations.ts';
import { bind } from '#runtime/transport/operation.ts';
import { MemberOrganizations, OrganizationTurns, withOrganizationTurns } from './organization-turns.ts';

/** Work that ends when its `finish` is called. */
function held() {
  let finish = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { done, finish: () => finish() };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('OrganizationTurns', () => {
  it("bounds one organization's reads and lets another organization's read start at once", async () => {
    const turns = new OrganizationTurns(2);
    const started: string[] = [];
    const works = Array.from({ length: 5 }, () => held());
    const a = works.map((work, i) =>
      turns.run(['org-a'], async () => {
        started.push(`a${i}`);
        await work.done;
      }),
    );
    await flush();
    expect(started).toEqual(['a0', 'a1']);
    expect(turns.counts).toEqual({ organizations: 1, waiting: 3 });
    // Another organization is not behind A's queue.
    await turns.run(['org-b'], async () => {
      started.push('b');
    });
    expect(started).toEqual(['a0', 'a1', 'b']);
    // A's waiting reads start in arrival order as turns free up.
    works[1]?.finish();
    await flush();
    expect(started).toEqual(['a0', 'a1', 'b', 'a2']);
    for (const work of works) work.finish();
    await Promise.all(a);
    expect(started).toEqual(['a0', 'a1', 'b', 'a2', 'a3', 'a4']);
    expect(turns.counts).toEqual({ organizations: 0, waiting: 0 });
  });

  it('a read of several organizations takes a turn in each, all at once, and keeps its place', async () => {
    const turns = new OrganizationTurns(1);
    const started: string[] = [];
    const first = held();
    const running = turns.run(['org-a'], async () => {
      started.push('a');
      await first.done;
    });
    await flush();
    const both = turns.run(['org-a', 'org-b'], async () => {
      started.push('ab');
    });
    // A later read of A waits behind the earlier one that covers A (first come, first served) ...
    const laterA = turns.run(['org-a'], async () => {
      started.push('a-later');
    });
    // ... and so does a read of B alone, behind 'ab' (which holds nothing while it waits): a read of several
    // organizations is never starved by reads of one of them.
    const laterB = turns.run(['org-b'], async () => {
      started.push('b');
    });
    await flush();
    expect(started).toEqual(['a']);
    expect(turns.counts).toEqual({ organizations: 1, waiting: 3 });
    first.finish();
    await Promise.all([running, both, laterA, laterB]);
    expect(started).toEqual(['a', 'ab', 'a-later', 'b']);
    expect(turns.counts).toEqual({ organizations: 0, waiting: 0 });
  });

  it('a developer without organizations is never held, and a failed read gives its turn back', async () => {
    const turns = new OrganizationTurns(1);
    await expect(turns.run([], async () => 'free')).resolves.toBe('free');
    await expect(
      turns.run(['org-a'], async () => {
        throw new Error('read failed');
      }),
    ).rejects.toThrow('read failed');
    await expect(turns.run(['org-a'], async () => 'next')).resolves.toBe('next');
    expect(turns.counts).toEqual({ organizations: 0, waiting: 0 });
  });
});

describe('MemberOrganizations', () => {
  it('remembers a developer for the time given, at most `max` developers', async () => {
    let now = 0;
    const lookups: string[] = [];
    const members = new MemberOrganizations(
      async (id) => {
        lookups.push(id);
        return id === 'dev-1' ? ['org-b', 'org-a'] : [];
      },
      { ttlMs: 1_000, max: 2, now: () => now },
    );
    expect(await members.of('dev-1')).toEqual(['org-a', 'org-b']);
    expect(await members.of('dev-1')).toEqual(['org-a', 'org-b']);
    expect(lookups).toEqual(['dev-1']);
    now = 1_000;
    await members.of('dev-1');
    expect(lookups).toEqual(['dev-1', 'dev-1']);
    await members.of('dev-2');
    await members.of('dev-3');
    expect(members.size).toBe(2);
    // dev-1 was the oldest: forgotten, looked up again.
    await members.of('dev-1');
    expect(lookups).toEqual(['dev-1', 'dev-1', 'dev-2', 'dev-3', 'dev-1']);
  });
});

describe('withOrganizationTurns', () => {
  it("a read whose developer's organizations cannot be looked up runs and answers as it would (its own error)", async () => {
    const members = new MemberOrganizations(async () => {
      throw new Error('connection refused');
    });
    const [snapshot, other] = withOrganizationTurns(
      [
        bind(ledgerOps.getSnapshot, async () => {
          throw new Error('the console is temporarily unavailable');
        }),
        bind(ledgerOps.listAuditEntries, async () => ({ entries: [], nextCursor: '', cursors: [] })),
      ],
      new OrganizationTurns(1),
      members,
    );
    const ctx = {} as never;
    await expect(snapshot?.handle({ principal: { identityUserId: 'dev-1' } } as never, ctx)).rejects.toThrow(
      'the console is temporarily unavailable',
    );
    await expect(other?.handle({ principal: { identityUserId: 'dev-1' } } as never, ctx)).resolves.toBeDefined();
  });
});
