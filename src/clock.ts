/**
 * The time source the agent's loops (node status, lease, status writer, simulated status
 * provider) take through their options, so tests can drive them with a fake clock instead of
 * waiting. `realClock` is the default everywhere.
 */
export interface Clock {
  now(): Date;
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

/** Opaque handle returned by `Clock.setTimeout`. */
export type ClockTimer = unknown;

export const realClock: Clock = {
  now: () => new Date(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    // A pending heartbeat must not keep a process alive that is otherwise done.
    timer.unref();
    return timer;
  },
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** Exponential backoff for retrying API calls: initial, doubling, capped at `maxMs`. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt));
}
