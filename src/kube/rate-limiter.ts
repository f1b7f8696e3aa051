import { realClock, type Clock } from '../time/clock.js';

/**
 * A token bucket like client-go's, for `kubeAPIQPS` / `kubeAPIBurst`: up to `burst` requests at
 * once, refilled at `qps` per second. Waiters are served in arrival order.
 */
export interface RateLimiter {
  /** Resolves when the caller may send one request. */
  acquire(): Promise<void>;
}

export const unlimited: RateLimiter = { acquire: () => Promise.resolve() };

export interface TokenBucketOptions {
  /** Requests per second; ≤ 0 means no limit, as a negative QPS does in client-go. */
  qps: number;
  /** Requests allowed at once after an idle period; at least 1. */
  burst: number;
  /** Refill follows its monotonic time; waits are its timers. The real clock by default. */
  clock?: Clock;
}

export function createTokenBucket(options: TokenBucketOptions): RateLimiter {
  const { qps, burst } = options;
  if (!(qps > 0)) return unlimited;
  const clock = options.clock ?? realClock;
  const capacity = Math.max(1, burst);
  let tokens = capacity;
  let last = clock.monotonic();
  const waiters: Array<() => void> = [];
  let timerPending = false;

  const refill = (): void => {
    const t = clock.monotonic();
    tokens = Math.min(capacity, tokens + ((t - last) / 1000) * qps);
    last = t;
  };
  const drain = (): void => {
    timerPending = false;
    refill();
    while (waiters.length > 0 && tokens >= 1) {
      tokens -= 1;
      waiters.shift()!();
    }
    if (waiters.length > 0) {
      const waitMs = ((1 - tokens) / qps) * 1000;
      timerPending = true;
      clock.setTimeout(drain, Math.max(1, Math.ceil(waitMs)));
    }
  };

  return {
    acquire() {
      refill();
      if (waiters.length === 0 && tokens >= 1) {
        tokens -= 1;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        waiters.push(resolve);
        if (!timerPending) drain();
      });
    },
  };
}
