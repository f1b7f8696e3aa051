// A manual clock for the agent's loops: time moves only when a test calls advance(), which
// fires due timers in order and lets the promise jobs they start settle.

import type { Clock, ClockTimer } from '../../src/clock.js';

interface Pending {
  id: number;
  at: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: Pending[] = [];

  constructor(start = Date.parse('2026-01-01T00:00:00Z')) {
    this.#now = start;
  }

  now(): Date {
    return new Date(this.#now);
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const timer = { id: this.#nextId++, at: this.#now + Math.max(0, ms), fn };
    this.#timers.push(timer);
    return timer.id;
  }

  clearTimeout(timer: ClockTimer): void {
    this.#timers = this.#timers.filter((t) => t.id !== timer);
  }

  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due (including ones set meanwhile). */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await settle();
      const due = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = target;
    await settle();
  }
}

/** Lets queued promise jobs and immediates run (a flush, not a timing wait). */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}
