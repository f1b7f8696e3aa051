/**
 * An unbounded FIFO of updates with one consumer: `for await (const u of stream)`, or
 * `next()` / `tryNext()` for tests. Producers never block (the kubelet's channel holds 50).
 */
export class UpdateStream<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private readonly waiters: ((result: IteratorResult<T>) => void)[] = [];
  private closed = false;

  push(item: T): void {
    if (this.closed) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter({ value: item, done: false });
    else this.items.push(item);
  }

  /** Ends every pending and future iteration (queued items are still delivered first). */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter({ value: undefined, done: true });
  }

  /** How many updates are queued and not yet consumed. */
  get size(): number {
    return this.items.length;
  }

  /** The next queued update, if any, without waiting. */
  tryNext(): T | undefined {
    return this.items.shift();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift()!, done: false });
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return { next: () => this.next() };
  }
}
