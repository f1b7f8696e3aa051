/**
 * A token bucket like client-go's, for `kubeAPIQPS` / `kubeAPIBurst`: up to `burst` requests at
 * once, refilled at `qps` per second. Waiters are served in arrival order.
 */
export interface RateLimiter {
  /** Resolves when the caller may send one request. */
  acquire(): Promise<void>;
}

export const unlimited: RateLimiter = { acquire: () => Promise.resolve() };

export interface TokenBucketClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
}

const realClock: TokenBucketClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
};

/** `qps` ≤ 0 means no limit, as a negative QPS does in client-go. */
export function createTokenBucket(qps: number, burst: number, clock: TokenBucketClock = realClock): RateLimiter {
  if (!(qps > 0)) return unlimited;
  const now = (): number => clock.now();
  const capacity = Math.max(1, burst);
  let tokens = capacity;
  let last = now();
  const waiters: Array<() => void> = [];
  let timer: unknown;

  const refill = (): void => {
    const t = now();
    tokens = Math.min(capacity, tokens + ((t - last) / 1000) * qps);
    last = t;
  };
  const drain = (): void => {
    timer = undefined;
    refill();
    while (waiters.length > 0 && tokens >= 1) {
      tokens -= 1;
      waiters.shift()!();
    }
    if (waiters.length > 0) {
      const waitMs = ((1 - tokens) / qps) * 1000;
      timer = clock.setTimeout(drain, Math.max(1, Math.ceil(waitMs)));
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
        if (!timer) drain();
      });
    },
  };
}
