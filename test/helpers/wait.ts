import { setTimeout as delay } from 'node:timers/promises';

/**
 * Polls `condition` until it returns a truthy value or `timeoutMs` passes; then fails with
 * `what` ("what did not happen"). Returns the truthy value.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  what: string,
  { timeoutMs = 5_000, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await delay(intervalMs);
  }
}

/**
 * A recorder for anything pushed to a callback: `push` is the callback; `next()` waits (with
 * a deadline) for the next item not yet taken.
 */
export class Recorder<T> {
  readonly items: T[] = [];
  private taken = 0;
  readonly push = (item: T): void => {
    this.items.push(item);
  };

  /** The next item not yet taken, waiting up to `timeoutMs`. */
  async next(what = 'the next update', timeoutMs = 5_000): Promise<T> {
    await waitFor(() => this.items.length > this.taken, what, { timeoutMs });
    return this.items[this.taken++]!;
  }

  /** Skips items until one matches, waiting up to `timeoutMs` in all. */
  async nextMatching(match: (item: T) => boolean, what: string, timeoutMs = 5_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const item = await this.next(what, Math.max(1, deadline - Date.now()));
      if (match(item)) return item;
    }
  }

  /** Items received and not yet taken. */
  get pending(): number {
    return this.items.length - this.taken;
  }
}

/** Lets queued promise jobs, immediates and I/O callbacks run (a flush, not a timing wait). */
export async function flush(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}
