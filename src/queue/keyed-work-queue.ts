import { backoffDelay, type BackoffPolicy } from '../time/backoff.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';

export interface KeyedWorkQueueOptions<K> {
  /**
   * One pass of the work for `key`. Resolves true when the key is done, false when it should be
   * retried after a backoff; a rejection counts as false (and is told to `onError`). A pass must
   * read the current state of the world, never a value captured when the key was queued: keys
   * are coalesced, so one pass stands for every request made before it started.
   */
  process: (key: K) => Promise<boolean>;
  /** Passes running at once, over different keys. 1 by default. */
  concurrency?: number;
  /** Wait before retrying a failed key; doubles per consecutive failure. 500 ms up to 30 s by default. */
  backoff?: BackoffPolicy;
  /** Retry timers run on it. The real clock by default. */
  clock?: Clock;
  /** Told when `process` rejected; the key is then retried like after a false. */
  onError?: (key: K, err: unknown) => void;
  /**
   * Runs `start` when queued work should begin. By default `setImmediate`, so work begins on the
   * next turn of the event loop, after the code that enqueued it has finished: a caller applying a
   * batch of changes (a manifest edit arrives as a removal then an addition) never has a key
   * processed halfway through the batch. Pass `(start) => start()` to begin at once.
   */
  schedule?: (start: () => void) => void;
}

/**
 * A work queue keyed by `K`, in the role of client-go's workqueue: each key is processed by one
 * pass at a time; requests for a key already queued are merged into that entry; a request for a
 * key being processed marks it dirty, and one more pass runs right after the current one; a
 * failed key is retried after an exponential backoff, unless a request arrives meanwhile, which
 * runs it at once (also when it arrives during the failed pass itself). A key that succeeds
 * forgets its failures.
 */
export interface KeyedWorkQueue<K> {
  /**
   * Asks for `key` to be processed soon. Cheap; ignored once stopped. `low` keys start only
   * when no `high` key is queued (a key queued as both is `high`); within a class, in order.
   */
  enqueue(key: K, priority?: WorkPriority): void;
  /** Resolves when nothing is queued, running, or waiting for a retry. */
  idle(): Promise<void>;
  /**
   * Stops taking work: drops queued keys and pending retries, and resolves when the passes
   * already running have finished.
   */
  stop(): Promise<void>;
}

export type WorkPriority = 'high' | 'low';

interface KeyState {
  running: boolean;
  dirty: boolean;
  /** Consecutive failed passes; sets the next backoff. */
  failures: number;
  retryTimer?: ClockTimer;
}

export function createKeyedWorkQueue<K>(options: KeyedWorkQueueOptions<K>): KeyedWorkQueue<K> {
  const work = options.process;
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
  const backoff = options.backoff ?? { initialMs: 500, maxMs: 30_000 };
  const clock = options.clock ?? realClock;
  const schedule = options.schedule ?? ((start: () => void) => void setImmediate(start));

  // A key has a state from its first request until it is done (or stopped): while queued,
  // running, or waiting for a retry.
  const states = new Map<K, KeyState>();
  const queue: Record<WorkPriority, K[]> = { high: [], low: [] };
  // The class each queued key waits in. A key raised from low to high stays in the low array
  // too, and is skipped there (cheaper than removing it from the middle).
  const queued = new Map<K, WorkPriority>();
  let active = 0;
  let startScheduled = false;
  let stopped = false;
  let idleWaiters: Array<() => void> = [];

  function enqueue(key: K, priority: WorkPriority = 'high'): void {
    if (stopped) return;
    let state = states.get(key);
    if (!state) {
      state = { running: false, dirty: false, failures: 0 };
      states.set(key, state);
    }
    if (state.running) {
      state.dirty = true;
      return;
    }
    const waiting = queued.get(key);
    if (waiting === 'high' || waiting === priority) return;
    if (state.retryTimer !== undefined) {
      clock.clearTimeout(state.retryTimer);
      delete state.retryTimer;
    }
    queued.set(key, priority);
    queue[priority].push(key);
    scheduleStart();
  }

  function scheduleStart(): void {
    if (startScheduled) return;
    startScheduled = true;
    schedule(() => {
      startScheduled = false;
      startQueued();
      notifyIdle();
    });
  }

  function startQueued(): void {
    while (!stopped && active < concurrency) {
      const key = nextKey();
      if (key === undefined) return;
      queued.delete(key);
      active++;
      void run(key).finally(() => {
        active--;
        startQueued();
        notifyIdle();
      });
    }
  }

  function nextKey(): K | undefined {
    if (queue.high.length > 0) return queue.high.shift();
    while (queue.low.length > 0) {
      const key = queue.low.shift()!;
      if (queued.get(key) === 'low') return key;
    }
    return undefined;
  }

  async function run(key: K): Promise<void> {
    const state = states.get(key);
    if (!state) return;
    state.running = true;
    try {
      do {
        state.dirty = false;
        let ok: boolean;
        try {
          ok = await work(key);
        } catch (err) {
          options.onError?.(key, err);
          ok = false;
        }
        if (!ok) {
          state.failures++;
          // A request that arrived during the failed pass (typically the news that explains the
          // failure) is served now, as one arriving during the backoff would be.
          if (state.dirty && !stopped) continue;
          scheduleRetry(key, state);
          return;
        }
        state.failures = 0;
      } while (state.dirty && !stopped);
    } finally {
      state.running = false;
      if (state.retryTimer === undefined && !state.dirty) states.delete(key);
    }
  }

  function scheduleRetry(key: K, state: KeyState): void {
    if (stopped) return;
    state.retryTimer = clock.setTimeout(() => {
      delete state.retryTimer;
      enqueue(key);
    }, backoffDelay(state.failures, backoff));
  }

  function isIdle(): boolean {
    if (startScheduled || queued.size > 0 || active > 0) return false;
    for (const state of states.values()) if (state.retryTimer !== undefined || state.running) return false;
    return true;
  }

  function notifyIdle(): void {
    if (!isIdle()) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  function idle(): Promise<void> {
    if (isIdle()) return Promise.resolve();
    return new Promise((resolve) => idleWaiters.push(resolve));
  }

  return {
    enqueue,
    idle,
    stop() {
      stopped = true;
      queue.high.length = 0;
      queue.low.length = 0;
      queued.clear();
      for (const state of states.values()) clock.clearTimeout(state.retryTimer);
      states.clear();
      notifyIdle();
      return idle();
    },
  };
}
