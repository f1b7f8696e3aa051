// One full GC when a fleet goes quiet after busy work, so that it holds what it uses.
//
// A burst (the nodes' start, a wave of pods starting or stopping) promotes its short-lived
// objects into the old generation, and with the fleet's headroom (gc-settings.ts) V8 waits for
// the old generation to reach twice the live heap before it marks again. An idle fleet promotes
// so little that this can take minutes, and until then it holds the burst's garbage in RSS
// (docs/fleet.md, "Tuning"); V8 did not collect it sooner of its own accord.
//
// Busy phases keep V8's own timing: a collection there costs CPU when the API server needs it
// most. A collection here stops the event loop for its whole length (no incremental marking),
// so once the live heap is large enough for that pause to delay renewals it runs only once
// after a wave, only after a longer quiet spell, and only while the heap holds a wave's worth
// of pages beyond the live heap: past the full compaction's limit (gc-settings.ts) V8's own
// collections keep the wave's emptied pages committed, several times the live heap at 100,000
// pods (docs/performance.md, "Beside kwok at 1,000 × 100"). An idle fleet has a busy window
// now and then too, and a collection after one paused it for nothing to give back
// (docs/performance.md, "The idle window's pauses").

/** What the policy reads and does; the real process's in gc-settings.ts, fakes in tests. */
export interface SettleGcProbes {
  /** The event loop's busy share (0 to 1) since the last call. */
  utilization(): number;
  /** Bytes of the heap in use, garbage included until it is collected. */
  heapUsed(): number;
  /** Bytes the heap holds committed: what a compacting collection could give back lies between it and the live heap. */
  heapCommitted(): number;
  /** A full, blocking collection. */
  collect(): void;
}

export interface SettleGcLimits {
  /** A window whose event loop was busy less than this share of it is quiet. */
  readonly quietUtilization: number;
  /** Quiet windows in a row before a collection. */
  readonly quietWindows: number;
  /**
   * Windows between two collections after busy work: a long wave whose event loop is busy one
   * window and waits on the API server the next would otherwise collect at each lull.
   */
  readonly windowsApart: number;
  /**
   * Once quiet, collect after a busy window, or when the heap has grown past the live heap by
   * this share of it (promotions while idle)…
   */
  readonly growth: number;
  /** …and in both cases by at least this many bytes. */
  readonly minGarbageBytes: number;
  /**
   * A live heap larger than this is large: its pause holds renewals back, so it is collected
   * only after busy work, never for growth while quiet, only after `largeQuietWindows`, and
   * only when the committed heap exceeds it by `growth` of it and `minGarbageBytes`.
   */
  readonly largeLiveBytes: number;
  /** Quiet windows in a row before a collection of a live heap past `largeLiveBytes`. */
  readonly largeQuietWindows: number;
}

export const SETTLE_GC_LIMITS: SettleGcLimits = Object.freeze({
  quietUtilization: 0.25,
  quietWindows: 2,
  windowsApart: 12,
  growth: 0.5,
  minGarbageBytes: 16 * 2 ** 20,
  largeLiveBytes: 192 * 2 ** 20,
  largeQuietWindows: 6,
});

/** How often the policy looks: a quiet phase is noticed within two of these. */
export const SETTLE_GC_WINDOW_MS = 5_000;

export interface SettleGcResult {
  beforeBytes: number;
  afterBytes: number;
}

export class SettleGcPolicy {
  readonly #probes: SettleGcProbes;
  readonly #limits: SettleGcLimits;
  // The heap in use after the last full collection, V8's or ours; 0 before the first. A full
  // GC of V8's during a burst counts the burst's objects as live: hence `#busy`.
  #live = 0;
  #quiet = 0;
  // A busy window since our last collection.
  #busy = false;
  // Windows since our last collection.
  #since = Infinity;

  constructor(probes: SettleGcProbes, limits: SettleGcLimits = SETTLE_GC_LIMITS) {
    this.#probes = probes;
    this.#limits = limits;
  }

  /** V8 finished a full collection of its own: what is in use now is the live heap. */
  majorGcDone(): void {
    this.#live = this.#probes.heapUsed();
  }

  /**
   * Called once a window: collects when the fleet has been quiet for `quietWindows` after busy
   * work, or after the heap grew while quiet; a live heap past `largeLiveBytes` only after busy
   * work, quiet for `largeQuietWindows`, with as many pages committed beyond it as a grown heap
   * would have. The probes must not count the collection's own pause as the next window's work.
   */
  window(): SettleGcResult | undefined {
    const limits = this.#limits;
    this.#since++;
    if (this.#probes.utilization() >= limits.quietUtilization) {
      this.#quiet = 0;
      this.#busy = true;
      return undefined;
    }
    const large = this.#live > limits.largeLiveBytes;
    if (++this.#quiet < (large ? limits.largeQuietWindows : limits.quietWindows)) return undefined;
    const used = this.#probes.heapUsed();
    if (used < limits.minGarbageBytes) return undefined;
    const garbage = used - this.#live;
    const grown = !large && garbage >= limits.minGarbageBytes && garbage >= this.#live * limits.growth;
    let afterBusy = this.#busy && this.#since >= limits.windowsApart;
    if (afterBusy && large && !this.#worthGivingBack(limits)) {
      // Busy work that left no wave's pages behind owes nothing, then or later: the heap
      // growing afterwards is growth while quiet, which a large heap leaves to V8.
      this.#busy = false;
      afterBusy = false;
    }
    if (!afterBusy && !grown) return undefined;
    this.#probes.collect();
    this.#busy = false;
    this.#since = 0;
    this.#live = this.#probes.heapUsed();
    return { beforeBytes: used, afterBytes: this.#live };
  }

  /** Whether the heap holds committed pages beyond the live heap by the share a grown heap would. */
  #worthGivingBack(limits: SettleGcLimits): boolean {
    const slack = this.#probes.heapCommitted() - this.#live;
    return slack >= limits.minGarbageBytes && slack >= this.#live * limits.growth;
  }
}
