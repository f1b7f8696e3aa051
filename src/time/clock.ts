/**
 * The one time source of the whole program. The composition root creates it (the real one,
 * or a fake in tests) and hands it to every part through its options, so that every period,
 * deadline, retry and timestamp can be driven by a test without waiting, and so that many
 * nodes in one process share one clock.
 */
export interface Clock {
  /** Wall-clock time: what is written to the API server and compared with file times. */
  now(): Date;
  /** Milliseconds on a clock that never goes back: intervals, deadlines, latencies. */
  monotonic(): number;
  /** Runs `fn` once after `ms`. A pending timer never keeps the process alive by itself. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  /** Cancels a timer from setTimeout or setInterval; unknown or undefined handles are ignored. */
  clearTimeout(timer: ClockTimer | undefined): void;
  /** Runs `fn` every `ms` until cleared (fixed rate, like the kubelet's wait.Until). */
  setInterval(fn: () => void, ms: number): ClockTimer;
  clearInterval(timer: ClockTimer | undefined): void;
  /** Resolves after `ms`; rejects with the signal's reason as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Opaque handle returned by `Clock.setTimeout` and `Clock.setInterval`. */
export type ClockTimer = unknown;

export const realClock: Clock = {
  now: () => new Date(),
  monotonic: () => performance.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    // Parts stop their timers in stop(); the process is kept alive by its servers, watches and
    // the CLI's signal wait, never by a forgotten heartbeat.
    timer.unref();
    return timer;
  },
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout | undefined),
  setInterval: (fn, ms) => {
    const timer = setInterval(fn, ms);
    timer.unref();
    return timer;
  },
  clearInterval: (timer) => clearInterval(timer as NodeJS.Timeout | undefined),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/**
 * `Clock.sleep` over a clock's own timers: resolves after `ms`, rejects with the signal's
 * reason as soon as it aborts (the timer then cleared). For clocks whose timers are their own
 * (the fake clock, the fleet's shared timer clock).
 */
export function sleepOnTimers(clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
