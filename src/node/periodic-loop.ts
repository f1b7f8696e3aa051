import { backoffDelay } from '../time/backoff.js';
import type { Clock, ClockTimer } from '../time/clock.js';

/**
 * Runs `attempt` at once on start, then every `periodMs` after it succeeds, or after an
 * exponential backoff from `retryInitialMs` (capped at `periodMs`) after it fails. One attempt
 * at a time: `runNow()` during an attempt shares its result. The node registration and the
 * node lease are both such loops.
 */
export class PeriodicLoop {
  readonly #attempt: () => Promise<boolean>;
  readonly #periodMs: number;
  readonly #retryInitialMs: number;
  readonly #clock: Clock;
  #running = false;
  #timer: ClockTimer | undefined;
  #inFlight: Promise<boolean> | undefined;
  #failures = 0;

  constructor(options: { attempt: () => Promise<boolean>; periodMs: number; retryInitialMs: number; clock: Clock }) {
    this.#attempt = options.attempt;
    this.#periodMs = options.periodMs;
    this.#retryInitialMs = options.retryInitialMs;
    this.#clock = options.clock;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#schedule(0);
  }

  /** Stops scheduling and waits for an attempt in flight to finish. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#inFlight;
  }

  runNow(): Promise<boolean> {
    this.#inFlight ??= this.#attempt().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  #schedule(delayMs: number): void {
    if (!this.#running) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      void this.runNow().then((ok) => {
        this.#failures = ok ? 0 : this.#failures + 1;
        this.#schedule(ok ? this.#periodMs : backoffDelay(this.#failures, { initialMs: this.#retryInitialMs, maxMs: this.#periodMs }));
      });
    }, delayMs);
  }
}
