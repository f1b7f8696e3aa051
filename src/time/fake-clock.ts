// A manual clock: time moves only when a test calls advance(), which fires the timers that
// fall due in order and lets the promise jobs they start settle. Exported from
// `kubelet-pods/testing` so that users can drive the agent's parts the way our tests do.

import { sleepOnTimers, type Clock, type ClockTimer } from './clock.js';

interface Pending {
  readonly id: number;
  at: number;
  readonly fn: () => void;
  /** Set for an interval: the period after which it fires again. */
  readonly everyMs?: number;
}

export class FakeClock implements Clock {
  #wall: number;
  #monotonic = 0;
  #nextId = 1;
  #timers = new Map<number, Pending>();

  constructor(start = Date.parse('2026-01-01T00:00:00Z')) {
    this.#wall = start;
  }

  now(): Date {
    return new Date(this.#wall);
  }

  monotonic(): number {
    return this.#monotonic;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    return this.#add(fn, ms);
  }

  clearTimeout(timer: ClockTimer | undefined): void {
    if (typeof timer === 'number') this.#timers.delete(timer);
  }

  setInterval(fn: () => void, ms: number): ClockTimer {
    return this.#add(fn, ms, Math.max(1, ms));
  }

  clearInterval(timer: ClockTimer | undefined): void {
    this.clearTimeout(timer);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOnTimers(this, ms, signal);
  }

  /** Timers (and intervals) waiting to fire. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due (including ones set meanwhile). */
  async advance(ms: number): Promise<void> {
    const target = this.#monotonic + ms;
    for (;;) {
      await settle();
      const due = this.#nextDue(target);
      if (!due) break;
      this.#moveTo(due.at);
      if (due.everyMs !== undefined) due.at += due.everyMs;
      else this.#timers.delete(due.id);
      due.fn();
    }
    this.#moveTo(target);
    await settle();
  }

  /** Sets the wall clock alone (a clock step); monotonic time and timers are not affected. */
  setWallTime(date: Date): void {
    this.#wall = date.getTime();
  }

  #add(fn: () => void, ms: number, everyMs?: number): number {
    const id = this.#nextId++;
    const delay = Math.max(0, Number.isFinite(ms) ? ms : 0);
    this.#timers.set(id, everyMs === undefined ? { id, at: this.#monotonic + delay, fn } : { id, at: this.#monotonic + delay, fn, everyMs });
    return id;
  }

  #nextDue(target: number): Pending | undefined {
    let best: Pending | undefined;
    for (const t of this.#timers.values()) {
      if (t.at > target) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
    }
    return best;
  }

  #moveTo(monotonic: number): void {
    if (monotonic <= this.#monotonic) return;
    this.#wall += monotonic - this.#monotonic;
    this.#monotonic = monotonic;
  }
}

/** Lets queued promise jobs and immediates run (a flush, not a timing wait). */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}
