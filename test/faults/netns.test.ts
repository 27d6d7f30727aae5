// The partitions' pure parts, without root: namespace addresses stay inside their /24, and the delay proxy's output
// is kept as a bounded tail, each chunk scanned once.
import { createPartitions, linkAddresses, NAMESPACES_MAX, OutputTail } from './netns.ts';

describe('linkAddresses', () => {
  it('gives each namespace its /30 of 10.200.B.0/24, and refuses one past the last', () => {
    expect(linkAddresses(7, 0)).toEqual({ hostAddress: '10.200.7.1', address: '10.200.7.2' });
    expect(linkAddresses(7, NAMESPACES_MAX - 1)).toEqual({ hostAddress: '10.200.7.253', address: '10.200.7.254' });
    expect(() => linkAddresses(7, NAMESPACES_MAX)).toThrow(/does not fit in a \/24: at most 64 namespaces/);
  });

  it('createPartitions refuses more namespaces than fit before making any', async () => {
    await expect(createPartitions(NAMESPACES_MAX + 1)).rejects.toThrow(
      '65 namespaces do not fit in a /24: at most 64 (a /30 each)',
    );
  });
});

describe('OutputTail', () => {
  it('finds a word in a chunk or across two, and only in text it has not scanned before', () => {
    const tail = new OutputTail();
    expect(tail.append('starting\n', 'listening')).toBe(false);
    expect(tail.append('proxy list', 'listening')).toBe(false);
    expect(tail.append('ening on 127.0.0.1\n', 'listening')).toBe(true);
    // The word is in the tail already: a chunk without it does not find it again.
    expect(tail.append('a chunk later\n', 'listening')).toBe(false);
    expect(tail.toString()).toBe('starting\nproxy listening on 127.0.0.1\na chunk later\n');
  });

  it('keeps the last `max` characters of a long life’s output', () => {
    const tail = new OutputTail(64);
    for (let i = 0; i < 10_000; i++) tail.append(`line ${i}\n`);
    expect(tail.toString()).toHaveLength(64);
    expect(tail.toString().endsWith('line 9999\n')).toBe(true);
  });
});
