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
  /**
   * Of those, how many may be passes begun for `low` keys; `concurrency` by default. Below it,
   * the rest of the slots stay open for `high` keys, so one arriving behind a long run of `low`
   * ones starts at once instead of waiting for a `low` pass to end.
   */
  lowConcurrency?: number;
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
  /**
   * The class it waits in while queued. A key raised from low to high stays in the low array
   * too, and is skipped there (cheaper than removing it from the middle).
   */
  queued: WorkPriority | undefined;
  /** Consecutive failed passes; sets the next backoff. */
  failures: number;
  retryTimer?: ClockTimer;
}

export function createKeyedWorkQueue<K>(options: KeyedWorkQueueOptions<K>): KeyedWorkQueue<K> {
  return new KeyQueue(options);
}

const DEFAULT_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 500, maxMs: 30_000 });
const nextTurn = (start: () => void): void => void setImmediate(start);

// A class, not a function returning closures, and its tables made when work comes and let go
// when it is done: every node of a fleet keeps a queue or two once it has had pods, and the
// closures with their context and two maps made up front weighed about 1.6 KB a queue
// (docs/performance.md, "The fleet's cost per pod").
class KeyQueue<K> implements KeyedWorkQueue<K> {
  readonly #work: (key: K) => Promise<boolean>;
  readonly #onError: ((key: K, err: unknown) => void) | undefined;
  readonly #concurrency: number;
  readonly #lowConcurrency: number;
  readonly #backoff: BackoffPolicy;
  readonly #clock: Clock;
  readonly #schedule: (start: () => void) => void;
  // A key has a state from its first request until it is done (or stopped): while queued,
  // running, or waiting for a retry.
  #states: Map<K, KeyState> | undefined;
  #high: K[] | undefined;
  #low: K[] | undefined;
  #active = 0;
  #activeLow = 0;
  #startScheduled = false;
  #stopped = false;
  #idleWaiters: Array<() => void> | undefined;

  constructor(options: KeyedWorkQueueOptions<K>) {
    this.#work = options.process;
    this.#onError = options.onError;
    this.#concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    this.#lowConcurrency = Math.min(this.#concurrency, Math.max(1, Math.floor(options.lowConcurrency ?? this.#concurrency)));
    this.#backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.#clock = options.clock ?? realClock;
    this.#schedule = options.schedule ?? nextTurn;
  }

  enqueue(key: K, priority: WorkPriority = 'high'): void {
    if (this.#stopped) return;
    const states = (this.#states ??= new Map());
    let state = states.get(key);
    if (!state) {
      state = { running: false, dirty: false, queued: undefined, failures: 0 };
      states.set(key, state);
    }
    if (state.running) {
      state.dirty = true;
      return;
    }
    const waiting = state.queued;
    if (waiting === 'high' || waiting === priority) return;
    if (state.retryTimer !== undefined) {
      this.#clock.clearTimeout(state.retryTimer);
      delete state.retryTimer;
    }
    state.queued = priority;
    (priority === 'high' ? (this.#high ??= []) : (this.#low ??= [])).push(key);
    this.#scheduleStart();
  }

  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => (this.#idleWaiters ??= []).push(resolve));
  }

  stop(): Promise<void> {
    this.#stopped = true;
    for (const state of this.#states?.values() ?? []) this.#clock.clearTimeout(state.retryTimer);
    this.#letGoOfTables();
    this.#notifyIdle();
    return this.idle();
  }

  #scheduleStart(): void {
    if (this.#startScheduled) return;
    this.#startScheduled = true;
    this.#schedule(() => {
      this.#startScheduled = false;
      this.#startQueued();
      this.#notifyIdle();
    });
  }

  #startQueued(): void {
    while (!this.#stopped && this.#active < this.#concurrency) {
      const high = this.#take(this.#high, 'high');
      const key = high ?? (this.#activeLow < this.#lowConcurrency ? this.#take(this.#low, 'low') : undefined);
      if (key === undefined) return;
      const low = high === undefined;
      const state = this.#states!.get(key)!;
      state.queued = undefined;
      this.#active++;
      if (low) this.#activeLow++;
      void this.#run(key, state).finally(() => {
        this.#active--;
        if (low) this.#activeLow--;
        this.#startQueued();
        this.#notifyIdle();
      });
    }
  }

  /** The next key of `list` still queued in that class; the others are skipped. */
  #take(list: K[] | undefined, priority: WorkPriority): K | undefined {
    while (list !== undefined && list.length > 0) {
      const key = list.shift()!;
      if (this.#states?.get(key)?.queued === priority) return key;
    }
    return undefined;
  }

  async #run(key: K, state: KeyState): Promise<void> {
    state.running = true;
    try {
      do {
        state.dirty = false;
        let ok: boolean;
        try {
          ok = await this.#work(key);
        } catch (err) {
          this.#onError?.(key, err);
          ok = false;
        }
        if (!ok) {
          state.failures++;
          // A request that arrived during the failed pass (typically the news that explains the
          // failure) is served now, as one arriving during the backoff would be.
          if (state.dirty && !this.#stopped) continue;
          this.#scheduleRetry(key, state);
          return;
        }
        state.failures = 0;
      } while (state.dirty && !this.#stopped);
    } finally {
      state.running = false;
      const states = this.#states;
      if (states !== undefined && state.retryTimer === undefined && !state.dirty && states.get(key) === state) {
        states.delete(key);
        if (states.size === 0) this.#letGoOfTables();
      }
    }
  }

  /** No key has a state: the arrays hold only keys raised from low to high, already run. */
  #letGoOfTables(): void {
    this.#states = undefined;
    this.#high = undefined;
    this.#low = undefined;
  }

  #scheduleRetry(key: K, state: KeyState): void {
    if (this.#stopped) return;
    state.retryTimer = this.#clock.setTimeout(() => {
      delete state.retryTimer;
      this.enqueue(key);
    }, backoffDelay(state.failures, this.#backoff));
  }

  #isIdle(): boolean {
    if (this.#startScheduled || this.#active > 0) return false;
    for (const state of this.#states?.values() ?? []) if (state.queued !== undefined || state.retryTimer !== undefined || state.running) return false;
    return true;
  }

  #notifyIdle(): void {
    if (this.#idleWaiters === undefined || !this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = undefined;
    for (const resolve of waiters) resolve();
  }
}
