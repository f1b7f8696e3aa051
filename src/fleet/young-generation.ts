// The young generation of a fleet whose GC settings hold it small (gc-settings.ts): free to grow
// while the fleet is busy, given back once it is quiet.
//
// Held at its starting size, the young generation keeps an idle fleet's RSS down. In a wave of
// pods the same size makes the fleet scavenge many times as often, each scavenge visiting the
// old generation's pages, and promote objects that a larger one would have let die young: the
// collector took a large share of the fleet's CPU in a wave, CPU the API server needed on a
// small machine (docs/performance.md, "The young generation in a wave"). So while the event
// loop is busy V8 may grow it as it would by itself, and once the fleet has been quiet for a few
// windows it is held again and V8 is asked to give it back. Grown to its largest size, it would
// also let V8 pretenure allocation sites that a wave kept alive, so gc-settings.ts turns
// pretenuring off with this policy. On unless turned off (docs/fleet.md, "Tuning").
//
// V8 shrinks its young generation only in a collection that finds the allocation rate low or
// that reduces memory, and an idle fleet of many nodes allocates faster than V8's "low". With
// V8 optimizing for size its memory reducer runs such a collection at its next look (within 8 s
// of a full GC; the settle GC runs one as the fleet goes quiet), so the fleet asks for that
// until the young generation is small again, and for no longer: the setting also makes V8
// compile and collect for memory rather than speed.

/** What the policy reads and does; the real process's in gc-settings.ts, fakes in tests. */
export interface YoungGenerationProbes {
  /** Bytes the young generation holds committed now. */
  youngBytes(): number;
  /** Lets V8 grow the young generation (true), or holds it at the size it has (false). */
  allowGrowth(allowed: boolean): void;
  /** Has V8 favour memory over speed (true), or not (false). */
  optimizeForSize(on: boolean): void;
}

export interface YoungGenerationLimits {
  /** Quiet windows in a row before the young generation is held again and given back. */
  readonly quietWindows: number;
  /** Windows to wait for V8 to give it back before V8 is let be. */
  readonly giveBackWindows: number;
  /** Given back once no larger than this many times its size when it was last held. */
  readonly heldFactor: number;
}

// Two quiet windows, as the settle GC waits (docs/performance.md, "The young generation in a wave").
export const YOUNG_GENERATION_LIMITS: YoungGenerationLimits = Object.freeze({ quietWindows: 2, giveBackWindows: 6, heldFactor: 2 });

/** What a window changed, for the fleet's log. */
export type YoungGenerationChange =
  | { readonly change: 'may grow'; readonly youngBytes: number }
  | { readonly change: 'given back' | 'not given back'; readonly fromBytes: number; readonly toBytes: number };

export class YoungGenerationPolicy {
  readonly #probes: YoungGenerationProbes;
  readonly #limits: YoungGenerationLimits;
  #state: 'held' | 'growing' | 'giving back' = 'held';
  // The young generation's smallest size when growth was let begin: what giving back aims for.
  #heldBytes = 0;
  #grownBytes = 0;
  #quiet = 0;
  #waited = 0;

  constructor(probes: YoungGenerationProbes, limits: YoungGenerationLimits = YOUNG_GENERATION_LIMITS) {
    this.#probes = probes;
    this.#limits = limits;
  }

  /**
   * Called once a window with whether its event loop was busy, and whether the young
   * generation is the policy's to manage (not while the heap is large enough that V8 grows it
   * anyway, gc-settings.ts).
   */
  window(busy: boolean, managed: boolean): YoungGenerationChange | undefined {
    if (!managed) {
      // The heap's own watch decides the growth now; only undo what this policy set.
      if (this.#state === 'giving back') this.#probes.optimizeForSize(false);
      this.#state = 'held';
      this.#quiet = 0;
      return undefined;
    }
    if (busy) return this.#busy();
    if (this.#state === 'growing') return this.#quietAfterGrowth();
    if (this.#state === 'giving back') return this.#givingBack();
    return undefined;
  }

  /** True while the young generation is held and nothing is being given back: the fleet's memory is as it will stay. */
  get settled(): boolean {
    return this.#state === 'held';
  }

  /** Undoes what the policy has set: the young generation held, V8 back to favouring speed. */
  release(): void {
    if (this.#state === 'growing') this.#probes.allowGrowth(false);
    if (this.#state === 'giving back') this.#probes.optimizeForSize(false);
    this.#state = 'held';
    this.#quiet = 0;
  }

  #busy(): YoungGenerationChange | undefined {
    this.#quiet = 0;
    if (this.#state === 'growing') return undefined;
    if (this.#state === 'giving back') this.#probes.optimizeForSize(false);
    // Its smallest held size, so that one wave not given back does not become the aim.
    const held = this.#probes.youngBytes();
    if (this.#heldBytes === 0 || held < this.#heldBytes) this.#heldBytes = held;
    this.#state = 'growing';
    this.#probes.allowGrowth(true);
    return { change: 'may grow', youngBytes: held };
  }

  #quietAfterGrowth(): YoungGenerationChange | undefined {
    if (++this.#quiet < this.#limits.quietWindows) return undefined;
    this.#probes.allowGrowth(false);
    this.#grownBytes = this.#probes.youngBytes();
    if (this.#small(this.#grownBytes)) {
      this.#state = 'held';
      return undefined;
    }
    this.#state = 'giving back';
    this.#waited = 0;
    this.#probes.optimizeForSize(true);
    return undefined;
  }

  #givingBack(): YoungGenerationChange | undefined {
    const now = this.#probes.youngBytes();
    const small = this.#small(now);
    if (!small && ++this.#waited < this.#limits.giveBackWindows) return undefined;
    this.#probes.optimizeForSize(false);
    this.#state = 'held';
    return { change: small ? 'given back' : 'not given back', fromBytes: this.#grownBytes, toBytes: now };
  }

  #small(bytes: number): boolean {
    return bytes <= this.#heldBytes * this.#limits.heldFactor;
  }
}
