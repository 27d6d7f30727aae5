import { proposedDecisionId } from './event-decision.ts';

describe('proposedDecisionId', () => {
  it('gives version 4 ids, all different, none changed after its pool is replaced', () => {
    const first = proposedDecisionId();
    const kept = Uint8Array.from(first);
    const seen = new Set<string>();
    // Several pools' worth (256 ids each).
    for (let i = 0; i < 1_000; i++) {
      const id = proposedDecisionId();
      expect(id.length).toBe(16);
      expect((id[6] as number) >> 4).toBe(4);
      expect((id[8] as number) >> 6).toBe(0b10);
      seen.add(Buffer.from(id).toString('hex'));
    }
    expect(seen.size).toBe(1_000);
    expect(seen.has(Buffer.from(kept).toString('hex'))).toBe(false);
    expect(Uint8Array.from(first)).toEqual(kept);
  });
});
