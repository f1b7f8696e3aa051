import { sleepOnTimers, type Clock, type ClockTimer } from './clock.js';

/**
 * A clock whose timers and intervals all wait on one timer of the clock under it: each is an
 * entry of a binary heap ordered by due time (then by the order they were set, as Node fires
 * timers due together). A fleet's thousand nodes keep six periodic timers each; a Node.js
 * Timeout costs several times this entry (docs/performance.md, "What an empty node costs").
 * Time, wall and monotonic, is the clock's under it; so are the periods: nothing is rounded
 * but, with a slot, the instant the clock under it wakes.
 */
export function createSharedTimerClock(base: Clock, options: SharedTimerClockOptions = {}): Clock {
  return new SharedTimerClock(base, options.slotMs ?? 0);
}

export interface SharedTimerClockOptions {
  /**
   * Entries due in the same slot of this many milliseconds fire together at the slot's end, each
   * at most this late: many nodes' timers fall due at instants of their own, and one wake-up for
   * them costs less than one each. Due times, and so the periods, stay exact. 0: no slots.
   */
  slotMs?: number;
}

/** One waiting timer; `index` is its place in the heap, -1 once fired or cleared. */
class Entry {
  constructor(
    public due: number,
    public seq: number,
    readonly fn: () => void,
    /** Set for an interval: the period after which it is due again. */
    readonly everyMs: number | undefined,
    public index: number,
  ) {}
}

class SharedTimerClock implements Clock {
  readonly #base: Clock;
  readonly #heap: Entry[] = [];
  #seq = 0;
  /** The base clock's one timer, and when it is due; none while the heap is empty. */
  #timer: ClockTimer | undefined;
  #timerDue = Infinity;
  readonly #slotMs: number;

  constructor(base: Clock, slotMs: number) {
    this.#base = base;
    this.#slotMs = slotMs;
  }

  now(): Date {
    return this.#base.now();
  }

  monotonic(): number {
    return this.#base.monotonic();
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    return this.#add(new Entry(this.#base.monotonic() + delayOf(ms), this.#seq++, fn, undefined, -1));
  }

  setInterval(fn: () => void, ms: number): ClockTimer {
    const every = delayOf(ms);
    return this.#add(new Entry(this.#base.monotonic() + every, this.#seq++, fn, every, -1));
  }

  clearTimeout(timer: ClockTimer | undefined): void {
    if (!(timer instanceof Entry) || timer.index < 0) return;
    this.#remove(timer.index);
    timer.index = -1;
  }

  clearInterval(timer: ClockTimer | undefined): void {
    this.clearTimeout(timer);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOnTimers(this, ms, signal);
  }

  #add(entry: Entry): Entry {
    entry.index = this.#heap.length;
    this.#heap.push(entry);
    this.#up(entry.index);
    this.#arm();
    return entry;
  }

  /** Fires every entry due by now, in order; intervals go back in at their next due time. */
  #fire(): void {
    this.#timer = undefined;
    this.#timerDue = Infinity;
    const now = this.#base.monotonic();
    // Entries set while firing are due later than now (delays are ≥ 1 ms), so the loop ends.
    for (let top = this.#heap[0]; top !== undefined && top.due <= now; top = this.#heap[0]) {
      if (top.everyMs !== undefined) {
        // Fixed rate, as setInterval: the next due time counts from this one's, not from now.
        top.due = Math.max(top.due + top.everyMs, now + 1);
        top.seq = this.#seq++;
        this.#down(0);
      } else {
        this.#remove(0);
        top.index = -1;
      }
      try {
        top.fn();
      } catch (err) {
        // As a throwing Node timer: the error is the process's, the other timers still run.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    this.#arm();
  }

  /** Keeps the base timer on the earliest due time, or the end of its slot. */
  #arm(): void {
    const first = this.#heap[0];
    if (first === undefined) {
      if (this.#timer !== undefined) this.#base.clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#timerDue = Infinity;
      return;
    }
    const wake = this.#slotMs > 0 ? Math.ceil(first.due / this.#slotMs) * this.#slotMs : first.due;
    if (this.#timer !== undefined && this.#timerDue <= wake) return;
    if (this.#timer !== undefined) this.#base.clearTimeout(this.#timer);
    this.#timerDue = wake;
    this.#timer = this.#base.setTimeout(() => this.#fire(), Math.max(1, Math.ceil(wake - this.#base.monotonic())));
  }

  #remove(index: number): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (index < heap.length) {
      heap[index] = last;
      last.index = index;
      this.#down(index);
      this.#up(last.index);
    }
    if (heap.length === 0) this.#arm();
  }

  #up(index: number): void {
    const heap = this.#heap;
    const entry = heap[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex]!;
      if (!before(entry, parent)) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }

  #down(index: number): void {
    const heap = this.#heap;
    const entry = heap[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, entry)) break;
      heap[index] = heap[child]!;
      heap[index]!.index = index;
      index = child;
    }
    heap[index] = entry;
    entry.index = index;
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}

/** As Node's timers: a delay below 1 ms (or not a number) is 1 ms. */
function delayOf(ms: number): number {
  return ms >= 1 ? ms : 1;
}
