import { realClock, type Clock } from '../time/clock.js';

/**
 * Which of the agent's requests goes first when tokens are scarce (the node's heartbeats take
 * none: `isHeartbeat` in request-timeout.ts). `high`: mirror creates and deletes, the Node's
 * registration: what the kubelet's own client sends and what users wait for.
 * `low`: pod status writes, which the kubelet's status manager sends one at a time well behind
 * its pod workers; given an equal share they made our creation bursts twice as slow.
 */
export type RequestPriority = 'high' | 'low';

/**
 * A token bucket like client-go's, for `kubeAPIQPS` / `kubeAPIBurst`: up to `burst` requests at
 * once, refilled at `qps` per second.
 */
export interface RateLimiter {
  /** Resolves when the caller may send one request. `high` by default. */
  acquire(priority?: RequestPriority): Promise<void>;
}

export const unlimited: RateLimiter = { acquire: () => Promise.resolve() };

export interface TokenBucketOptions {
  /** Requests per second; ≤ 0 means no limit, as a negative QPS does in client-go. */
  qps: number;
  /** Requests allowed at once after an idle period; at least 1. */
  burst: number;
  /**
   * A `low` request waits until no `high` one has been granted for this long (250 ms by
   * default): a burst of creates arrives as a stream with short gaps, and a status write slipped
   * into a gap would take a token a later create needs.
   */
  lowQuietMs?: number;
  /**
   * A `low` request that has waited this long (5 s by default) is no longer held back by the
   * quiet rule and gets one token in `starvedShare` while `high` ones wait, so a steady stream
   * of `high` requests cannot starve status writes.
   */
  lowMaxWaitMs?: number;
  /** 10 by default: one token in ten. */
  starvedShare?: number;
  /** Refill follows its monotonic time; waits are its timers. The real clock by default. */
  clock?: Clock;
}

interface Waiter {
  resolve: () => void;
  since: number;
}

/**
 * Within a class, waiters are served in arrival order; `high` waiters before `low` ones, except
 * that a starved `low` waiter gets a token now and then (see `lowMaxWaitMs`).
 */
export function createTokenBucket(options: TokenBucketOptions): RateLimiter {
  const { qps, burst } = options;
  if (!(qps > 0)) return unlimited;
  const clock = options.clock ?? realClock;
  const capacity = Math.max(1, burst);
  const quietMs = options.lowQuietMs ?? 250;
  const maxWaitMs = options.lowMaxWaitMs ?? 5000;
  const share = Math.max(1, Math.floor(options.starvedShare ?? 10));
  let tokens = capacity;
  let last = clock.monotonic();
  let lastHigh = -Infinity;
  // Tokens given to `high` waiters since a starved `low` one was last served.
  let highSinceStarved = 0;
  const high: Waiter[] = [];
  const low: Waiter[] = [];
  let timer: ReturnType<Clock['setTimeout']> | undefined;
  let timerAt = Infinity;

  const refill = (now: number): void => {
    tokens = Math.min(capacity, tokens + ((now - last) / 1000) * qps);
    last = now;
  };
  const starved = (now: number): boolean => low.length > 0 && now - low[0]!.since >= maxWaitMs;
  /** When the first `low` waiter may go ahead on its own, without competing with `high` ones. */
  const lowFreeAt = (): number => Math.min(lastHigh + quietMs, low[0]!.since + maxWaitMs);

  const grant = (now: number): void => {
    while (tokens >= 1) {
      if (starved(now) && (high.length === 0 || highSinceStarved >= share - 1)) {
        highSinceStarved = 0;
      } else if (high.length > 0) {
        tokens -= 1;
        lastHigh = now;
        if (low.length > 0) highSinceStarved++;
        high.shift()!.resolve();
        continue;
      } else if (low.length === 0 || now < lowFreeAt()) {
        break;
      }
      tokens -= 1;
      low.shift()!.resolve();
    }
  };
  const drain = (): void => {
    timer = undefined;
    timerAt = Infinity;
    const now = clock.monotonic();
    refill(now);
    grant(now);
    arm(now);
  };
  const arm = (now: number): void => {
    if (high.length === 0 && low.length === 0) return;
    const tokenAt = now + (tokens >= 1 ? 0 : ((1 - tokens) / qps) * 1000);
    const at = high.length > 0 ? tokenAt : Math.max(tokenAt, lowFreeAt());
    if (timer !== undefined && timerAt <= at) return;
    if (timer !== undefined) clock.clearTimeout(timer);
    timerAt = at;
    timer = clock.setTimeout(drain, Math.max(1, Math.ceil(at - now)));
  };

  return {
    acquire(priority = 'high') {
      const now = clock.monotonic();
      refill(now);
      if (priority === 'high' && high.length === 0 && !starved(now) && tokens >= 1) {
        tokens -= 1;
        lastHigh = now;
        return Promise.resolve();
      }
      if (priority === 'low' && high.length === 0 && low.length === 0 && tokens >= 1 && now >= lastHigh + quietMs) {
        tokens -= 1;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        (priority === 'high' ? high : low).push({ resolve, since: now });
        grant(now);
        arm(now);
      });
    },
  };
}
