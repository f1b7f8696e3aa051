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
  const { clock } = options;
  const period = options.periodMs ?? RELIST_PERIOD_MS;
  const phase = (((options.phaseMs ?? 0) % period) + period) % period;
  const listeners = new Set<(uids: readonly string[]) => void>();
  // When each pod first changed since it was last handed out; none (no map) while nothing changed.
  let changes: Map<string, number> | undefined;
  let waiters: Array<{ since: number; fn: () => void }> = [];
  let timer: ClockTimer | undefined;
  // The relist the pending timer is for; the latest relist is before it until it fires.
  let scheduledFor: number | undefined;
  let stopped = false;

  const gridAtOrBefore = (t: number): number => phase + Math.floor((t - phase) / period) * period;

  function latest(): number {
    const onGrid = gridAtOrBefore(clock.monotonic());
    return scheduledFor !== undefined && onGrid >= scheduledFor ? scheduledFor - period : onGrid;
  }

  function schedule(): void {
    if (stopped || timer !== undefined) return;
    const at = latest() + period;
    scheduledFor = at;
    timer = clock.setTimeout(relist, Math.max(0, at - clock.monotonic()));
  }

  function relist(): void {
    timer = undefined;
    scheduledFor = undefined;
    if (stopped) return;
    // A late timer (a busy event loop) stands for the latest relist, as the kubelet's next one would.
    const at = gridAtOrBefore(clock.monotonic());
    // Changes first, then the cache's new timestamp: a worker told of a change syncs it at once
    // if it was idle, and a sync waiting for this relist runs after the events were handed out.
    const seen: string[] = [];
    let later: Map<string, number> | undefined;
    for (const [uid, t] of changes ?? []) {
      if (t < at) seen.push(uid);
      else (later ??= new Map()).set(uid, t);
    }
    changes = later;
    if (seen.length > 0) for (const listener of [...listeners]) listener(seen);
    const due = waiters.filter((w) => w.since < at);
    waiters = waiters.filter((w) => w.since >= at);
    for (const w of due) {
      if (stopped) return;
      w.fn();
    }
    if (changes !== undefined || waiters.length > 0) schedule();
  }

  return {
    runtimeChanged(uid) {
      if (stopped || changes?.has(uid) === true) return;
      (changes ??= new Map()).set(uid, clock.monotonic());
      schedule();
    },
    onChanges(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    whenNewerThan(since, fn) {
      if (stopped) return;
      if (latest() > since) {
        fn();
        return;
      }
      waiters.push({ since, fn });
      schedule();
    },
    latest,
    stop() {
      stopped = true;
      clock.clearTimeout(timer);
      timer = undefined;
      scheduledFor = undefined;
      changes = undefined;
      waiters = [];
    },
  };
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
