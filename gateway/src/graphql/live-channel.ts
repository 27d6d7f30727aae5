// The bounded queue behind one `decisions` subscription: the decision feed pushes, graphql-ws pulls (one `next`
// message per value, each written to the socket before the next is pulled). A push past the bound is refused, and the
// caller drops the consumer (live.ts): the queue never grows without limit for a client that does not read.

export class LiveChannel<T> implements AsyncIterableIterator<T> {
  private readonly queue: T[] = [];
  private readonly max: number;
  private waiting: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  private ended: { error?: unknown } | undefined;
  private readonly onEnd: () => void;

  /** `onEnd` runs once, however the channel ends (return, fail, or the consumer going away). */
  constructor(max: number, onEnd: () => void) {
    if (!(max >= 1)) throw new Error(`invalid channel bound ${max}`);
    this.max = max;
    this.onEnd = onEnd;
  }

  /** Queues a value; false (nothing queued) when the channel is full or has ended. */
  push(value: T): boolean {
    if (this.ended) return false;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting.resolve({ value, done: false });
      return true;
    }
    if (this.queue.length >= this.max) return false;
    this.queue.push(value);
    return true;
  }

  /** Values waiting to be pulled. */
  get depth(): number {
    return this.queue.length;
  }

  /** Ends the subscription with an error (what is still queued is dropped: the error is what the client must see). */
  fail(error: unknown): void {
    if (this.ended) return;
    this.queue.length = 0;
    this.finish({ error });
    const waiting = this.waiting;
    this.waiting = undefined;
    if (!waiting) return;
    // The waiting pull gets the error; later pulls are done.
    this.ended = {};
    waiting.reject(error);
  }

  next(): Promise<IteratorResult<T>> {
    const value = this.queue.shift();
    if (value !== undefined) return Promise.resolve({ value, done: false });
    if (this.ended) {
      const { error } = this.ended;
      // The error is thrown once; after it the iterator is done.
      this.ended = {};
      return error === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  /** The consumer stopped (complete message, closed socket). */
  return(): Promise<IteratorResult<T>> {
    this.queue.length = 0;
    if (!this.ended) this.finish({});
    this.ended = {};
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private finish(ended: { error?: unknown }): void {
    this.ended = ended;
    this.onEnd();
  }
}
