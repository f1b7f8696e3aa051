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
  /** Spreads many loops of one process over the period (the fleet); none by default. */
  spread?: LoopSpread;
}

/**
 * How a loop that shares a process with many others keeps off their beat: after a success
 * that follows the start or a failure it waits `firstPeriodMs` (a per-node phase in
 * (0, periodMs]) instead of the period, so loops started or recovered together renew apart;
 * after every other success it waits the period plus `jitterMs()` (as the kubelet's lease
 * controller jitters its renewals by up to 4 %).
 */
export interface LoopSpread {
  readonly firstPeriodMs: number;
  jitterMs(): number;
  /**
   * When set, each wait after a success ends on a multiple of this many milliseconds of the
   * clock, so the loops of many nodes that fall due close together run in the same turn of
   * the event loop.
   */
  readonly alignMs?: number;
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
  return new Loop(options);
}

// A class rather than a closure per function: a fleet node has two loops (registration and
// Lease), and methods on the prototype cost nothing per loop (docs/performance.md, "An empty
// node's pod machinery").
class Loop implements PeriodicLoop {
  readonly #o: PeriodicLoopOptions;
  #running = false;
  #timer: ClockTimer | undefined;
  #inFlight: Promise<boolean> | undefined;
  #failures = 0;
  // True until the first success after the start or after a failure (see LoopSpread).
  #resuming = true;

  constructor(options: PeriodicLoopOptions) {
    this.#o = options;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#resuming = true;
    this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#inFlight;
  }

  runNow(): Promise<boolean> {
    this.#inFlight ??= this.#o.attempt().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  #schedule(delayMs: number): void {
    if (!this.#running) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined;
      void this.runNow().then((ok) => this.#attempted(ok));
    }, delayMs);
  }

  #attempted(ok: boolean): void {
    const { periodMs, retryInitialMs, clock, spread } = this.#o;
    this.#failures = ok ? 0 : this.#failures + 1;
    if (!ok) {
      this.#resuming = true;
      this.#schedule(backoffDelay(this.#failures, { initialMs: retryInitialMs, maxMs: periodMs }));
      return;
    }
    const wait = spread === undefined ? periodMs : this.#resuming ? spread.firstPeriodMs : periodMs + spread.jitterMs();
    this.#schedule(spread?.alignMs ? aligned(clock.now().getTime(), wait, spread.alignMs) : wait);
    this.#resuming = false;
  }
}

/** The wait from `now` that ends at the first multiple of `alignMs` at least `waitMs` away. */
export function aligned(now: number, waitMs: number, alignMs: number): number {
  return Math.ceil((now + waitMs) / alignMs) * alignMs - now;
}
