// The subject of the edge's event writes (event-write-route.ts): the proposed-id subject, RecordEvent(s) while no
// ledger serves it, one fallback for requests that found none together, and every other failure passed on as it is.
import type { CallOptions } from '#runtime/transport/operation.ts';
import { EventWriteRoute } from './event-write-route.ts';

/** A call as the transport makes it: on the proposed-id subject no ledger answers (`noResponders`), `failure` else. */
function transport(options: CallOptions, sent: boolean[], failure?: Error) {
  return (proposedIds: boolean): Promise<string> => {
    sent.push(proposedIds);
    if (failure) return Promise.reject(failure);
    if (!proposedIds) return Promise.resolve('decided');
    expect(options.failNoResponders).toBe(true);
    options.noResponders = true;
    return Promise.reject(new Error('no responders'));
  };
}

describe('the route of event writes', () => {
  it('tells one fallback for requests out together that each found no ledger, and sends each on RecordEvent(s)', async () => {
    let told = 0;
    const route = new EventWriteRoute(() => told++);
    const sent: boolean[] = [];
    const calls = [1, 2, 3].map(() => {
      const options: CallOptions = {};
      return route.send(options, transport(options, sent));
    });
    expect(await Promise.all(calls)).toEqual(['decided', 'decided', 'decided']);
    expect(sent).toEqual([true, true, true, false, false, false]);
    expect(told).toBe(1);
  });

  it('passes any other failure on, without a fallback (it may have been delivered)', async () => {
    let told = 0;
    const route = new EventWriteRoute(() => told++);
    const sent: boolean[] = [];
    const options: CallOptions = {};
    await expect(route.send(options, transport(options, sent, new Error('timed out')))).rejects.toThrow('timed out');
    expect(sent).toEqual([true]);
    expect(told).toBe(0);
    expect(options).toEqual({ failNoResponders: false, noResponders: false });
  });
});
