import type { V1ContainerStateTerminated } from '@kubernetes/client-node';
import type { Clock, ClockTimer } from '../time/clock.js';

/**
 * The exited containers a runtime still holds for pods it no longer runs, as the kubelet's
 * runtime keeps them: a pod that runs again with the same UID (a static pod with a fixed
 * `metadata.uid`, or a manifest written again) continues each container's attempts from the
 * newest one left (`startContainer` in kuberuntime_container.go: restartCount = the newest
 * container's + 1), shows it as `lastState`, and its new sandbox replaces the old one
 * (`SandboxChanged`). They go at the container GC pass (every minute, `ContainerGCPeriod`) once
 * the node no longer knows the pod UID (`ShouldPodContentBeRemoved` of the pod workers).
 */

/** The newest instance of one container of a pod that is not run any more. */
export interface ExitedContainer {
  readonly restartCount: number;
  /** How it ended; undefined when it was still running when its pod was let go. */
  readonly terminated: V1ContainerStateTerminated | undefined;
}

export type ExitedPod = ReadonlyMap<string, ExitedContainer>;

export interface ExitedContainers {
  /** Keeps a let-go pod's containers (the newest instance of each, by container name). */
  keep(uid: string, containers: ExitedPod): void;
  /** The containers kept for `uid`, which the caller now runs again: no longer kept here. */
  take(uid: string): ExitedPod | undefined;
  /** Whether containers of `uid` are kept. */
  has(uid: string): boolean;
  /** Pod UIDs with containers kept (tests, metrics). */
  readonly size: number;
  /** Cancels the GC timer; kept containers stay until the next `keep`. */
  stop(): void;
}

export interface ExitedContainersOptions {
  clock: Clock;
  /** The GC period; 60 s as the kubelet's `ContainerGCPeriod`. */
  periodMs?: number;
  /**
   * Whether a pod's content may go (the kubelet asks its pod workers): a pod the node still
   * knows keeps its exited containers. By default every kept pod goes at the next pass.
   */
  shouldPodContentBeRemoved?: (uid: string) => boolean;
}

export const CONTAINER_GC_PERIOD_MS = 60_000;

export function createExitedContainers(options: ExitedContainersOptions): ExitedContainers {
  const { clock } = options;
  const periodMs = options.periodMs ?? CONTAINER_GC_PERIOD_MS;
  const removable = options.shouldPodContentBeRemoved ?? (() => true);
  // The kubelet's GC ticks every period from its start; passes keep that phase.
  const origin = clock.now().getTime();
  const kept = new Map<string, ExitedPod>();
  let timer: ClockTimer | undefined;
  let stopped = false;

  function arm(): void {
    if (timer !== undefined || stopped || kept.size === 0) return;
    const now = clock.now().getTime();
    const next = origin + (Math.floor((now - origin) / periodMs) + 1) * periodMs;
    timer = clock.setTimeout(collect, next - now);
  }

  function collect(): void {
    timer = undefined;
    for (const uid of [...kept.keys()]) if (removable(uid)) kept.delete(uid);
    arm();
  }

  return {
    keep(uid, containers) {
      if (containers.size === 0) return;
      stopped = false;
      kept.set(uid, containers);
      arm();
    },
    take(uid) {
      const containers = kept.get(uid);
      kept.delete(uid);
      return containers;
    },
    has: (uid) => kept.has(uid),
    get size() {
      return kept.size;
    },
    stop() {
      stopped = true;
      clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
