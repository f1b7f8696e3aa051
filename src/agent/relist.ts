import type { StatusProvider } from '../status/status-provider.js';
import type { Clock, ClockTimer } from '../time/clock.js';

/** The kubelet's generic PLEG relists its runtime every second (`genericPlegRelistPeriod`). */
export const RELIST_PERIOD_MS = 1000;

export interface RelistOptions {
  clock: Clock;
  /** 1 s, as the kubelet's. */
  periodMs?: number;
  /** Where in the period this node relists (ms on `clock.monotonic()`): the fleet spreads its nodes. */
  phaseMs?: number;
}

/**
 * The kubelet's PLEG and pod cache (pkg/kubelet/pleg/generic.go, pkg/kubelet/container/cache.go)
 * for a simulated runtime, under `--simulated-lifecycle=kubelet`. The kubelet learns what its
 * runtime did only by relisting it every second, and each pod worker syncs a pod only once the
 * cache holds a status newer than its last sync (`GetNewerThan`); this is what makes the
 * kubelet's reactions take one or two seconds. Here the relists are the instants
 * `phase + k·period` of the clock: the runtime's changes are handed out at the first of them
 * after the change, and a sync waiting for a newer status runs at the first one after its
 * `since`. A relist costs nothing unless something waits for it: its timer is set only then.
 */
export interface Relist {
  /** The runtime changed this pod; the agent hears of it at the next relist. */
  runtimeChanged(uid: string): void;
  /** Tells `listener` the pods each relist found changed (the PLEG's events); returns an unsubscribe. */
  onChanges(listener: (uids: readonly string[]) => void): () => void;
  /**
   * The pod cache's GetNewerThan: runs `fn` once a relist later than `since` (monotonic ms) has
   * happened, at once (synchronously) if one has, else at the next relist.
   */
  whenNewerThan(since: number, fn: () => void): void;
  /** The time of the latest relist (monotonic ms). */
  latest(): number;
  /** Drops every waiter and change and clears the timer. */
  stop(): void;
}

export function createRelist(options: RelistOptions): Relist {
  return new GridRelist(options);
}

// A class rather than a closure per function, and its listeners and waiters made at the first:
// a fleet node has one relist, idle while the node has no pods (docs/performance.md, "An empty
// node's pod machinery").
class GridRelist implements Relist {
  readonly #clock: Clock;
  readonly #period: number;
  readonly #phase: number;
  #listeners: Set<(uids: readonly string[]) => void> | undefined;
  // When each pod first changed since it was last handed out; none (no map) while nothing changed.
  #changes: Map<string, number> | undefined;
  // Syncs waiting for a relist later than `since`; none (no array) while nothing waits.
  #waiters: Array<{ since: number; fn: () => void }> | undefined;
  #timer: ClockTimer | undefined;
  // The relist the pending timer is for; the latest relist is before it until it fires.
  #scheduledFor: number | undefined;
  #stopped = false;

  constructor(options: RelistOptions) {
    this.#clock = options.clock;
    this.#period = options.periodMs ?? RELIST_PERIOD_MS;
    this.#phase = (((options.phaseMs ?? 0) % this.#period) + this.#period) % this.#period;
  }

  runtimeChanged(uid: string): void {
    if (this.#stopped || this.#changes?.has(uid) === true) return;
    (this.#changes ??= new Map()).set(uid, this.#clock.monotonic());
    this.#schedule();
  }

  onChanges(listener: (uids: readonly string[]) => void): () => void {
    const listeners = (this.#listeners ??= new Set());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  whenNewerThan(since: number, fn: () => void): void {
    if (this.#stopped) return;
    if (this.latest() > since) {
      fn();
      return;
    }
    (this.#waiters ??= []).push({ since, fn });
    this.#schedule();
  }

  latest(): number {
    const onGrid = this.#gridAtOrBefore(this.#clock.monotonic());
    return this.#scheduledFor !== undefined && onGrid >= this.#scheduledFor ? this.#scheduledFor - this.#period : onGrid;
  }

  stop(): void {
    this.#stopped = true;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#scheduledFor = undefined;
    this.#changes = undefined;
    this.#waiters = undefined;
  }

  #gridAtOrBefore(t: number): number {
    return this.#phase + Math.floor((t - this.#phase) / this.#period) * this.#period;
  }

  #schedule(): void {
    if (this.#stopped || this.#timer !== undefined) return;
    const at = this.latest() + this.#period;
    this.#scheduledFor = at;
    this.#timer = this.#clock.setTimeout(() => this.#relist(), Math.max(0, at - this.#clock.monotonic()));
  }

  #relist(): void {
    this.#timer = undefined;
    this.#scheduledFor = undefined;
    if (this.#stopped) return;
    // A late timer (a busy event loop) stands for the latest relist, as the kubelet's next one would.
    const at = this.#gridAtOrBefore(this.#clock.monotonic());
    // Changes first, then the cache's new timestamp: a worker told of a change syncs it at once
    // if it was idle, and a sync waiting for this relist runs after the events were handed out.
    const seen: string[] = [];
    let later: Map<string, number> | undefined;
    for (const [uid, t] of this.#changes ?? []) {
      if (t < at) seen.push(uid);
      else (later ??= new Map()).set(uid, t);
    }
    this.#changes = later;
    if (seen.length > 0 && this.#listeners !== undefined) for (const listener of [...this.#listeners]) listener(seen);
    const waiters = this.#waiters;
    if (waiters !== undefined) {
      const due = waiters.filter((w) => w.since < at);
      const rest = waiters.filter((w) => w.since >= at);
      this.#waiters = rest.length > 0 ? rest : undefined;
      for (const w of due) {
        if (this.#stopped) return;
        w.fn();
      }
    }
    if (this.#changes !== undefined || this.#waiters !== undefined) this.#schedule();
  }
}

/**
 * The runtime as the status writer sees it under the kubelet lifecycle: its changes reach the
 * writer only through the pod workers' syncs (which invalidate the pod's status, as the
 * kubelet's SetPodStatus), never straight from the runtime. The subscription stays, and hears
 * nothing, so that the writer still asks only about the pods it is told of.
 */
export function statusThroughSyncs(inner: StatusProvider): StatusProvider {
  const provider: StatusProvider = {
    statusFor: (pod, now) => inner.statusFor(pod, now),
    onChange: () => () => {},
  };
  if (inner.forget) provider.forget = (uid) => inner.forget!(uid);
  return provider;
}
