import { backoffDelay } from '../time/backoff.js';
import type { Clock, ClockTimer } from '../time/clock.js';

export interface PeriodicLoopOptions {
  /** One attempt; resolves true on success. Must not reject. */
  attempt: () => Promise<boolean>;
  /** Wait after a success, and the cap of the backoff after failures. */
  periodMs: number;
  /** Wait after the first failure; doubles per consecutive failure up to `periodMs`. */
  retryInitialMs: number;
  clock: Clock;
}

/**
 * Runs `attempt` at once on start, then every `periodMs` after it succeeds, or after an
 * exponential backoff from `retryInitialMs` (capped at `periodMs`) after it fails. One attempt
 * at a time: `runNow()` during an attempt shares its result. The node registration and the
 * node lease are both such loops.
 */
export interface PeriodicLoop {
  start(): void;
  /** Stops scheduling and waits for an attempt in flight to finish. */
  stop(): Promise<void>;
  /** One attempt now, outside the schedule (or the one in flight). */
  runNow(): Promise<boolean>;
}

export function createPeriodicLoop(options: PeriodicLoopOptions): PeriodicLoop {
  const { attempt, periodMs, retryInitialMs, clock } = options;
  let running = false;
  let timer: ClockTimer | undefined;
  let inFlight: Promise<boolean> | undefined;
  let failures = 0;

  function runNow(): Promise<boolean> {
    inFlight ??= attempt().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  function schedule(delayMs: number): void {
    if (!running) return;
    timer = clock.setTimeout(() => {
      timer = undefined;
      void runNow().then((ok) => {
        failures = ok ? 0 : failures + 1;
        schedule(ok ? periodMs : backoffDelay(failures, { initialMs: retryInitialMs, maxMs: periodMs }));
      });
    }, delayMs);
  }

  return {
    start() {
      if (running) return;
      running = true;
      schedule(0);
    },
    async stop() {
      running = false;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      await inFlight;
    },
    runNow,
  };
}
