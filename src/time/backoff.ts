/**
 * The one retry-delay rule of the program (client-go's exponential backoff): the first retry
 * waits `initialMs`, each further consecutive failure doubles the wait, never beyond `maxMs`.
 * `jitter` (0 by default) adds up to that fraction of the delay at random, so that many nodes
 * that failed together do not retry in step.
 */
export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly jitter?: number;
}

/**
 * The wait before the retry that follows `failures` consecutive failures (1 for the first
 * failure). `random` is injectable for tests.
 */
export function backoffDelay(failures: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(0, failures - 1), 30);
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  const jitter = policy.jitter ?? 0;
  return jitter > 0 ? base + base * jitter * random() : base;
}
