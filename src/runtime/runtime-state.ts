import type { V1ContainerStateTerminated } from '@kubernetes/client-node';
import type { ClockTimer } from '../time/clock.js';
import { ContainerRunsByName } from './container-runs-by-name.js';
import type { Pod } from '../pod/types.js';
import { isSidecar } from '../status/pod-phase.js';
import { exitReason, type CrashLoopEntry } from './container-lifecycle.js';
import type { ExitedContainer, ExitedPod } from './exited-containers.js';
import type { FailingPull } from './image-pulls.js';
import type { PodPlan } from './scenario-plan.js';

/**
 * What the simulated runtime holds: facts about its node, and per pod and container the state
 * its timers move along. The status rendering only reads these records; the provider, the
 * container runs and the termination write them.
 */

/** What the provider knows about its node. */
export interface NodeFacts {
  readonly hostIP: string | undefined;
  readonly recursiveReadOnlyMounts: boolean;
  readonly stopMs: number;
  readonly startJitterMs: number;
  /** Whether cluster DNS servers are configured. */
  readonly clusterDNS: boolean;
}

export interface Terminated {
  exitCode: number;
  reason: string;
  startedAt: number;
  finishedAt: number;
  /** The ID another run of the runtime gave the container (adopted-pods.ts); ours otherwise. */
  containerID?: string;
}

/** One regular container's life once its pod has started. Times are wall milliseconds. */
export interface ContainerRun {
  /** running; waiting (crash-loop backoff before a restart); exited (for good, or stopped). */
  state: 'running' | 'waiting' | 'exited';
  restartCount: number;
  /** The current instance's start. */
  startedAt: number;
  /** The exited instance (state exited or waiting). */
  terminated: Terminated | undefined;
  /** The previous instance, shown as lastState while the container runs again. */
  last: Terminated | undefined;
  crashLoop: CrashLoopEntry | undefined;
  /** A scheduled exit or restart. */
  timer: ClockTimer | undefined;
  /**
   * The current instance's ID when the runtime took it over from before an agent restart
   * (adopted-pods.ts); `kubelet-pods://<pod uid>/<name>` otherwise.
   */
  containerID?: string;
}

/** A pod being stopped: when, how its containers end, and who waits for it. */
export interface Stopping {
  /** When the last container stops (wall ms). */
  at: number;
  exitCode: number;
  reason: string;
  timer: ClockTimer | undefined;
  waiters: Array<() => void>;
}

/** One pod the runtime runs, from the first time it is asked about it until `forget`. */
export interface TrackedPod {
  /** When the pod was first seen, in whole seconds: its startTime. */
  acceptedAt: Date;
  /** When it is Running; undefined while it waits for an address. */
  runningAt: number | undefined;
  timer: ClockTimer | undefined;
  pod: Pod;
  /** Per regular container, once every init container has completed (the pod is initialized). */
  runs: ContainerRunsByName | undefined;
  /** Per init container started so far, in spec order (sidecars stay in it while they run). */
  inits: ContainerRunsByName | undefined;
  /** When the last init container completed and the containers started (wall ms). */
  initializedAt: number | undefined;
  /** When a container last changed state after the start (whole seconds), for conditions. */
  changedAt: number | undefined;
  stopping: Stopping | undefined;
  /** Every container has stopped (terminate() resolved). */
  stopped: boolean;
  /** The exited containers of an earlier run of this UID, which this run continues. */
  previous: ExitedPod | undefined;
  /** What the configured scenarios ask of this pod (scenario-plan.ts); none by default. */
  plan?: PodPlan;
  /** Containers whose image pull keeps failing (image-pulls.ts), and the pod's sync retry. */
  pulls?: Map<string, FailingPull>;
  pullTimer?: ClockTimer;
  /** Containers whose readiness probe fails now (readiness-probes.ts), and their flap timers. */
  unready?: Set<string>;
  probeTimers?: Map<string, ClockTimer>;
}

/**
 * The pod as the runtime keeps it: its metadata and spec, which the merger shares between the
 * versions of a pod whose status alone changed. The pod's status is read only for its
 * readiness gates, so a pod without them is kept without it: the runtime does not learn of
 * later versions until asked, and holding the version it last saw kept that version's status
 * and top level alive beside the current ones (docs/performance.md, "The fleet's cost per pod").
 */
export function runtimeView(pod: Pod): Pod {
  return hasReadinessGates(pod) ? pod : { metadata: pod.metadata, spec: pod.spec };
}

function hasReadinessGates(pod: Pod): boolean {
  return pod.spec?.readinessGates !== undefined && pod.spec.readinessGates !== null;
}

/** `tracked.pod` for a newer version of its pod; the same object while the parts it keeps did not change. */
export function updateRuntimeView(tracked: TrackedPod, pod: Pod): void {
  const held = tracked.pod;
  if (held === pod) return;
  if (!hasReadinessGates(pod) && held.metadata === pod.metadata && held.spec === pod.spec && held.status === undefined) return;
  tracked.pod = runtimeView(pod);
}

/**
 * The init containers' runs of every started pod without init containers: one empty list for
 * all of them, which refuses entries.
 */
export const NO_INIT_RUNS: ContainerRunsByName = new (class extends ContainerRunsByName {
  override set(): this {
    throw new Error('a pod without init containers has no init container runs');
  }
})();

function newRun(at: number): ContainerRun {
  return { state: 'running', restartCount: 0, startedAt: at, terminated: undefined, last: undefined, crashLoop: undefined, timer: undefined };
}

/**
 * A container's first instance in this run: it continues the earlier run's newest instance of
 * it, if the runtime kept one (attempt + 1; that instance as lastState when `showLast`).
 */
export function continuedRun(at: number, before: ExitedContainer | undefined, showLast: boolean): ContainerRun {
  const run = newRun(at);
  if (before === undefined) return run;
  run.restartCount = before.restartCount + 1;
  if (showLast) run.last = fromAPI(before.terminated);
  return run;
}

/** Every container run of the pod: init containers (sidecars included), then the containers. */
export function allRuns(tracked: TrackedPod): ContainerRun[] {
  return [...(tracked.inits?.values() ?? []), ...(tracked.runs?.values() ?? [])];
}

export function containerKind(pod: Pod, name: string): 'container' | 'sidecar' | 'init' {
  const init = pod.spec?.initContainers?.find((c) => c.name === name);
  if (init === undefined) return 'container';
  return isSidecar(init) ? 'sidecar' : 'init';
}

/** A termination as the API shows it, as the runtime's own record (wall milliseconds). */
export function fromAPI(t: V1ContainerStateTerminated | undefined): Terminated | undefined {
  if (t === undefined || t === null) return undefined;
  const out: Terminated = { exitCode: t.exitCode, reason: t.reason ?? exitReason(t.exitCode), startedAt: new Date(t.startedAt ?? 0).getTime(), finishedAt: new Date(t.finishedAt ?? 0).getTime() };
  if (t.containerID) out.containerID = t.containerID;
  return out;
}
