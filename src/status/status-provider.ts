import type { V1Container, V1ContainerStateTerminated, V1ContainerStatus, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { kpError } from '../errors.js';
import { formatDuration } from '../values/go-duration.js';
import { containerResourceStatus, volumeMountStatuses } from './container-status.js';
import { crashLoopRestart, exitReason, podJitterFraction, shouldRestart, stopOutcome, type CrashLoopEntry } from './container-lifecycle.js';
import { isStaticPod } from '../pod/classify.js';
import { initializedCondition, isSidecar, kubeletPodPhase } from './pod-phase.js';
import { createPodAddressAllocator, type PodAddressAllocator } from './pod-addresses.js';
import { DEFAULT_POD_CIDR, parseIP } from '../values/ip.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import type { Pod } from '../pod/types.js';
import { createContainerLogBuffer, DEFAULT_CONTAINER_LOG_BYTES, type ContainerLogBuffer, type ContainerLogLine } from './container-log-buffer.js';
import { backOffEvent, containerFieldPath, killingEvent, missingClusterDNSEvent, sandboxChangedEvent, startEvents, type ContainerEvent, type ContainerEventListener } from './container-events.js';
import { createExitedContainers, type ExitedContainer, type ExitedContainers, type ExitedPod } from './exited-containers.js';
import { formatPod, podUID } from '../values/pod-format.js';

/**
 * Where pod statuses come from. kubelet-pods runs no containers, so the agent asks a provider
 * what each static pod's status is; the mirror status writer publishes the answer.
 *
 * `statusFor` must be a pure function of the provider's state and `now`: asked twice without a
 * state change in between, it returns equal statuses, so unchanged statuses are not re-sent.
 */
export interface StatusProvider {
  statusFor(pod: Pod, now: Date): V1PodStatus;
  /**
   * Subscribes to "this pod's status changed" (by the pod's own UID); returns an unsubscribe.
   * While subscribed, the writer asks again only about new pods and pods reported here, in its
   * full resync (10 s) too, so every change must be reported. A provider without it is asked
   * about every pod on each full resync.
   */
  onChange?(listener: (uid: string) => void): () => void;
  /**
   * Stops the pod's containers, honouring `gracePeriodSeconds` (at least 1; the runtime gives
   * each container at least 2 s after SIGTERM), and resolves once every container has stopped.
   * While it runs, `statusFor` reports the stopping pod and, once stopped, its final status
   * (containers terminated with their exit codes); each change is reported through `onChange`.
   * Called again while stopping, a shorter grace period shortens the stop (a longer one changes
   * nothing) and every call resolves when the pod has stopped; called after, it resolves at once.
   * It never rejects. A provider without it stops pods at once (the status stays as it was).
   * See docs/lifecycle.md for the whole contract.
   */
  terminate?(pod: Pod, gracePeriodSeconds: number): Promise<void>;
  /**
   * Lets go of a pod that is no longer run, cancelling anything scheduled for it. A runtime
   * may keep its exited containers for a while (see createSimulatedStatusProvider): a pod run
   * again with the same UID then continues their restart counts.
   */
  forget?(uid: string): void;
  /**
   * Subscribes to what the runtime reports about pods' containers as Kubernetes Events
   * (`Pulled`, `Created`, `Started`, `Killing`, `BackOff`, `SandboxChanged`); returns an
   * unsubscribe. The agent records them on the pod.
   */
  onContainerEvent?(listener: ContainerEventListener): () => void;

  /** Cancels every timer; the provider answers but no longer notifies. */
  stop?(): void;
  /**
   * What the runtime wrote for container `container` of the pod with UID `uid`, oldest first
   * (served by `/containerLogs`, so `kubectl logs` on the mirror pod shows it); undefined when
   * the container has written nothing.
   */
  containerLogs?(uid: string, container: string): readonly ContainerLogLine[] | undefined;
}

export interface SimulatedStatusProviderOptions {
  /** How long a pod stays Pending after it is first seen; 1000 ms by default. */
  startDelayMs?: number;
  clock?: Clock;
  /**
   * The node's IP (the kubelet's `--node-ip`): every pod's hostIP, and the pod IP of
   * host-network pods. Without it, statuses carry no hostIP and host-network pods no pod IP.
   */
  hostIP?: string;
  /**
   * Where the addresses of pods without host networking come from (the kubelet's `podCIDR`);
   * `DEFAULT_POD_CIDR` (10.88.0.0/16) by default. See createPodAddressAllocator.
   */
  podCIDR?: string;
  /**
   * Whether the simulated runtime supports recursive read-only mounts, which decides
   * `volumeMounts[].recursiveReadOnly` for mounts that ask for it; false by default, as a
   * runtime that does not announce the feature to the kubelet.
   */
  recursiveReadOnlyMounts?: boolean;
  /**
   * How long each container takes to exit after SIGTERM; 0 (at once) by default. A pod's
   * `simulation.kubelet-pods.io/stop-seconds` annotation overrides it. Beyond the kill budget
   * (max(grace period, 2 s)) the container is killed: exit code 137.
   */
  stopMs?: number;
  /**
   * Up to this much is added to each pod's start delay, a fraction fixed by the pod's UID
   * (the same pod starts as late in every run); 0 by default.
   */
  startJitterMs?: number;
  /** The bound of each container's log; 64 KiB by default. */
  maxLogBytesPerContainer?: number;
  /**
   * Whether the node no longer knows a pod UID, so that the container GC (every minute) may
   * remove the exited containers of a forgotten pod; the kubelet asks its pod workers
   * (`ShouldPodContentBeRemoved`). By default a forgotten pod's containers go at the next pass.
   */
  shouldPodContentBeRemoved?: (uid: string) => boolean;
  /**
   * The node's cluster DNS servers (the kubelet's `clusterDNS`). Without any, each sandbox of a
   * pod whose DNS policy asks for them reports `MissingClusterDNS`, as the kubelet does.
   */
  clusterDNS?: readonly string[];
}

/** Per-pod simulation settings, read from the static pod's (or pod's) annotations. */
export const SIMULATION_ANNOTATIONS = Object.freeze({
  /** Seconds each container takes to exit after SIGTERM (a decimal number). */
  stopSeconds: 'simulation.kubelet-pods.io/stop-seconds',
  /**
   * Containers that exit by themselves: `<container>=<exit code>@<seconds after each start>`,
   * comma-separated, e.g. `main=1@5,side=0@30`.
   */
  exit: 'simulation.kubelet-pods.io/exit',
});

/** The simulated runtime's own calls, beyond the StatusProvider contract. */
export interface SimulatedRuntime extends StatusProvider {
  forget(uid: string): void;
  stop(): void;
  onChange(listener: (uid: string) => void): () => void;
  onContainerEvent(listener: ContainerEventListener): () => void;
  terminate(pod: Pod, gracePeriodSeconds: number): Promise<void>;
  /**
   * Makes a running container of the pod (an init container or sidecar too) exit with
   * `exitCode` after `afterMs` (0: now); it is then restarted per the pod's restartPolicy (a
   * sidecar always) with the kubelet's crash-loop backoff, and an init container that exits 0
   * lets the next one start. Returns
   * false when the pod or container is unknown or not running (yet).
   */
  exitContainer(uid: string, container: string, exitCode: number, afterMs?: number): boolean;
  containerLogs(uid: string, container: string): readonly ContainerLogLine[] | undefined;
  /** Adds a line (or lines, split at newlines) to a container's log, stamped `time` (now by default). */
  appendContainerLog(uid: string, container: string, text: string, time?: Date): void;
}

/**
 * A documented simulation of a healthy pod start, shaped like the statuses the kubelet v1.34
 * generates (pkg/kubelet/kubelet_pods.go, status/generate.go, and the prober's started and
 * ready) for a runtime whose containers start at once and never stop. No container is run.
 *
 * - The first time the provider is asked about a pod UID, the pod counts as accepted: phase
 *   Pending, startTime = that moment, hostIP/hostIPs = `hostIP`, pod sandbox not ready yet
 *   (PodReadyToStartContainers False, no pod IP unless on the host network), every container
 *   waiting (reason PodInitializing when the pod has init containers, else ContainerCreating),
 *   started and ready false; Initialized False (ContainersNotInitialized) while there are init
 *   containers, Ready and ContainersReady False (ContainersNotReady), each message naming the
 *   containers as the kubelet's does; PodScheduled True.
 * - `startDelayMs` later the sandbox has its address (podIP/podIPs = `hostIP` on the host
 *   network, else the pod's address from `podCIDR`) and the init containers run in order, one
 *   at a time (each at once, unless the `exit` annotation plans its exit; a failure restarts it
 *   with the crash-loop backoff, or fails the pod under restartPolicy Never), then everything
 *   has started: phase Running, regular init containers terminated (exit code 0, reason
 *   Completed, ready), sidecars (init containers with restartPolicy Always) and containers
 *   running, started and ready (probes are taken to succeed at once); all conditions True,
 *   except Ready when a readiness gate's condition is missing or not True in the static pod's
 *   own status. Phase and Initialized follow from the container statuses (pod-phase.ts).
 * - A container the runtime knows (running or terminated) has a containerID
 *   `kubelet-pods://<pod uid>/<container name>`, imageID = its image reference (no image is
 *   pulled, so there is no digest to report; kubemark's fake runtime reports the same),
 *   `resources` = its allocated resources and `allocatedResources` = their requests (see
 *   container-status.ts). Every container has `volumeMounts`, one per mount. restartCount 0
 *   (but see below).
 * - A pod let go (`forget`) leaves its exited containers behind until the container GC pass
 *   (every minute) after `shouldPodContentBeRemoved` says the UID is gone, as the kubelet's
 *   runtime does. A pod that runs again with that UID meanwhile (a static pod with a fixed
 *   `metadata.uid` put back, a manifest written again) continues from them: each container
 *   (init containers too) starts at the newest attempt + 1 and shows the exited one as
 *   `lastState`; while its new sandbox starts its containers wait with those counts, and the
 *   phase is Running when the restart policy restarts them (the kubelet's getPhase).
 * - Not reported: qosClass (the API server sets it on the mirror from the same spec, and it
 *   cannot change), container `user` (the image's user is unknown) and `stopSignal`.
 *
 * It reports what the kubelet's runtime records as Events (`onContainerEvent`, see
 * container-events.ts): on each container start `Pulled` (with `Pulling` first when the image
 * is new to the node or its pull policy is Always), `Created`, `Started`; `SandboxChanged`
 * when a pod runs again while its old sandbox is kept; `BackOff` when a container waits out its
 * crash-loop back-off; `Killing` for each running container when its pod is stopped; and,
 * without `clusterDNS`, `MissingClusterDNS` at each sandbox of a pod that asks for cluster DNS.
 *
 * A pod whose address cannot be allocated (its range is full) stays Pending with its sandbox not
 * ready until another pod is forgotten; it then gets the freed address, its start delay begins
 * and listeners hear about it. Times are whole seconds, as the API server stores them, so a
 * status read back compares equal to the one written. Listeners hear about every Pending →
 * Running step through a timer; `stop` clears every timer.
 *
 * Its runtime "writes" each container's life to the container's log, each line stamped in whole
 * seconds: `started container "web" (image nginx:1.27)` as it starts (a regular init container
 * then `container "init" exited with code 0 (Completed)`); `container "web" exited with code 1
 * (Error)` when it exits by itself; `restarted container "web" (image nginx:1.27), restart 1`
 * on each restart; `stopping container "web" (grace period 30s)` when its pod is terminated,
 * then `container "web" stopped with code 0 (Completed)` or, past the kill budget,
 * `container "web" killed with code 137 (Error)`. `appendContainerLog` adds lines of the
 * caller's. Each container's log is bounded (`maxLogBytesPerContainer`) and forgotten with its
 * pod.
 */
export function createSimulatedStatusProvider(options: SimulatedStatusProviderOptions = {}): SimulatedRuntime {
  const startDelayMs = options.startDelayMs ?? 1000;
  if (!(startDelayMs >= 0) || !Number.isFinite(startDelayMs)) {
    throw kpError('KP_ERR_STATUS_OPTIONS', ['startDelayMs', String(options.startDelayMs)]);
  }
  if (options.hostIP !== undefined && parseIP(options.hostIP) === undefined) {
    throw kpError('KP_ERR_STATUS_OPTIONS', ['hostIP', JSON.stringify(options.hostIP)]);
  }
  const addresses = createPodAddressAllocator({
    cidr: options.podCIDR ?? DEFAULT_POD_CIDR,
    reserved: options.hostIP !== undefined ? [options.hostIP] : [],
  });
  for (const key of ['stopMs', 'startJitterMs'] as const) {
    const v = options[key];
    if (v !== undefined && !(v >= 0 && Number.isFinite(v))) throw kpError('KP_ERR_STATUS_OPTIONS', [key, String(v)]);
  }
  return new SimulatedStatusProvider(
    startDelayMs,
    options.clock ?? realClock,
    addresses,
    {
      hostIP: options.hostIP,
      recursiveReadOnlyMounts: options.recursiveReadOnlyMounts ?? false,
      stopMs: options.stopMs ?? 0,
      startJitterMs: options.startJitterMs ?? 0,
      clusterDNS: (options.clusterDNS ?? []).length > 0,
    },
    createContainerLogBuffer({ maxBytesPerContainer: options.maxLogBytesPerContainer ?? DEFAULT_CONTAINER_LOG_BYTES }),
    createExitedContainers({ clock: options.clock ?? realClock, shouldPodContentBeRemoved: options.shouldPodContentBeRemoved }),
  );
}

interface Terminated {
  exitCode: number;
  reason: string;
  startedAt: number;
  finishedAt: number;
}

/** One regular container's life once its pod has started. Times are wall milliseconds. */
interface ContainerRun {
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
}

interface Stopping {
  /** When the last container stops (wall ms). */
  at: number;
  exitCode: number;
  reason: string;
  timer: ClockTimer | undefined;
  waiters: Array<() => void>;
}

interface Tracked {
  /** When the pod was first seen, in whole seconds: its startTime. */
  acceptedAt: Date;
  /** When it is Running; undefined while it waits for an address. */
  runningAt: number | undefined;
  timer: ClockTimer | undefined;
  pod: Pod;
  /** Per regular container, once every init container has completed (the pod is initialized). */
  runs: Map<string, ContainerRun> | undefined;
  /** Per init container started so far, in spec order (sidecars stay in it while they run). */
  inits: Map<string, ContainerRun> | undefined;
  /** When the last init container completed and the containers started (wall ms). */
  initializedAt: number | undefined;
  /** When a container last changed state after the start (whole seconds), for conditions. */
  changedAt: number | undefined;
  stopping: Stopping | undefined;
  /** Every container has stopped (terminate() resolved). */
  stopped: boolean;
  /** The exited containers of an earlier run of this UID, which this run continues. */
  previous: ExitedPod | undefined;
}

class SimulatedStatusProvider implements SimulatedRuntime {
  readonly #tracked = new Map<string, Tracked>();
  readonly #listeners = new Set<(uid: string) => void>();
  readonly #eventListeners = new Set<ContainerEventListener>();
  // Images the node has "pulled": a later start finds them present.
  readonly #images = new Set<string>();
  // Pods waiting for an address, in the order they were first seen.
  readonly #waitingForAddress = new Set<string>();
  #stopped = false;

  constructor(
    readonly startDelayMs: number,
    readonly clock: Clock,
    readonly addresses: PodAddressAllocator,
    readonly node: NodeFacts,
    readonly logs: ContainerLogBuffer,
    readonly exited: ExitedContainers,
  ) {}

  containerLogs(uid: string, container: string): readonly ContainerLogLine[] | undefined {
    return this.logs.lines(uid, container);
  }

  appendContainerLog(uid: string, container: string, text: string, time?: Date): void {
    this.logs.append(uid, container, time ?? this.clock.now(), text);
  }

  statusFor(pod: Pod, now: Date): V1PodStatus {
    const uid = podUID(pod);
    const tracked = this.#track(uid, pod, now);
    if (tracked.runningAt === undefined || now.getTime() < tracked.runningAt) {
      return pendingStatus(pod, tracked.acceptedAt, this.node, tracked.previous);
    }
    const podIP = pod.spec?.hostNetwork === true ? this.node.hostIP : this.addresses.addressOf(uid);
    return runningStatus(pod, tracked, wholeSeconds(new Date(tracked.runningAt)), podIP, this.node);
  }

  onChange(listener: (uid: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  onContainerEvent(listener: ContainerEventListener): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  terminate(pod: Pod, gracePeriodSeconds: number): Promise<void> {
    const uid = podUID(pod);
    const tracked = this.#track(uid, pod, this.clock.now());
    if (tracked.stopped) return Promise.resolve();
    const now = this.clock.now().getTime();
    const grace = Math.max(1, gracePeriodSeconds);
    const started = tracked.runningAt !== undefined && now >= tracked.runningAt;
    // Nothing to signal when every container has already exited for good (a completed pod).
    const running = started && allRuns(tracked).some((r) => r.state !== 'exited');
    // A pod that has not started has nothing to stop: its start is cancelled.
    const outcome = running ? stopOutcome(stopMsOf(pod, this.node.stopMs), grace, preStopSleepOf(pod)) : { afterMs: 0, exitCode: 0, reason: 'Completed' };
    return new Promise<void>((resolve) => {
      const at = now + outcome.afterMs;
      let stopping = tracked.stopping;
      if (stopping === undefined) {
        stopping = { at, exitCode: outcome.exitCode, reason: outcome.reason, timer: undefined, waiters: [] };
        tracked.stopping = stopping;
        if (started) {
          this.#logRunning(uid, tracked, now, (name) => `stopping container ${JSON.stringify(name)} (grace period ${grace}s)`);
          this.#eachRunning(tracked, (name) => this.#event(tracked.pod, name, killingEvent(name)));
        }
      } else if (at < stopping.at) {
        // A shorter grace period restarts the countdown: the kill comes sooner.
        this.clock.clearTimeout(stopping.timer);
        Object.assign(stopping, { at, exitCode: outcome.exitCode, reason: outcome.reason, timer: undefined });
      }
      stopping.waiters.push(resolve);
      if (stopping.timer !== undefined) return;
      if (!started) {
        if (tracked.timer !== undefined) this.clock.clearTimeout(tracked.timer);
        tracked.timer = undefined;
        tracked.runningAt = undefined;
      }
      const entry = stopping;
      entry.timer = this.clock.setTimeout(() => this.#finishStop(uid, tracked, entry), Math.max(0, entry.at - now));
    });
  }

  exitContainer(uid: string, container: string, exitCode: number, afterMs = 0): boolean {
    const tracked = this.#tracked.get(uid);
    const run = tracked?.runs?.get(container) ?? tracked?.inits?.get(container);
    if (tracked === undefined || run === undefined || run.state !== 'running' || tracked.stopping !== undefined) return false;
    this.clock.clearTimeout(run.timer);
    run.timer = this.clock.setTimeout(() => this.#exit(uid, tracked, container, run, exitCode), Math.max(0, afterMs));
    return true;
  }

  forget(uid: string): void {
    const tracked = this.#tracked.get(uid);
    if (tracked !== undefined) {
      this.#clearTimers(tracked);
      const left = this.#leftBehind(tracked);
      if (left !== undefined) this.exited.keep(uid, left);
    }
    // Whoever waits for a forgotten pod to stop is not left waiting.
    for (const resolve of tracked?.stopping?.waiters.splice(0) ?? []) resolve();
    this.#tracked.delete(uid);
    this.#waitingForAddress.delete(uid);
    this.logs.forget(uid);
    if (this.addresses.addressOf(uid) === undefined) return;
    this.addresses.release(uid);
    // The freed address goes to the pod that has waited longest; its start delay begins now.
    const [next] = this.#waitingForAddress;
    const entry = next === undefined ? undefined : this.#tracked.get(next);
    if (next === undefined || entry === undefined || this.addresses.allocate(next) === undefined) return;
    this.#waitingForAddress.delete(next);
    this.#startIn(next, entry, this.clock.now().getTime());
  }

  stop(): void {
    this.#stopped = true;
    this.exited.stop();
    for (const tracked of this.#tracked.values()) {
      this.#clearTimers(tracked);
      for (const resolve of tracked.stopping?.waiters.splice(0) ?? []) resolve();
    }
  }

  #clearTimers(tracked: Tracked): void {
    if (tracked.timer !== undefined) this.clock.clearTimeout(tracked.timer);
    tracked.timer = undefined;
    if (tracked.stopping?.timer !== undefined) this.clock.clearTimeout(tracked.stopping.timer);
    for (const run of allRuns(tracked)) {
      this.clock.clearTimeout(run.timer);
      run.timer = undefined;
    }
  }

  #notify(uid: string): void {
    if (this.#stopped) return;
    for (const listener of [...this.#listeners]) listener(uid);
  }

  #track(uid: string, pod: Pod, now: Date): Tracked {
    let tracked = this.#tracked.get(uid);
    if (tracked) {
      tracked.pod = pod;
      return tracked;
    }
    tracked = {
      acceptedAt: wholeSeconds(now),
      runningAt: undefined,
      timer: undefined,
      pod,
      runs: undefined,
      inits: undefined,
      initializedAt: undefined,
      changedAt: undefined,
      stopping: undefined,
      stopped: false,
      previous: this.exited.take(uid),
    };
    this.#tracked.set(uid, tracked);
    const needsAddress = pod.spec?.hostNetwork !== true;
    if (needsAddress && this.addresses.allocate(uid) === undefined) {
      this.#waitingForAddress.add(uid);
      return tracked;
    }
    this.#startIn(uid, tracked, now.getTime());
    return tracked;
  }

  /** Starts the pod's start delay at `from` and tells listeners when it ends. */
  #startIn(uid: string, entry: Tracked, from: number): void {
    const delay = this.startDelayMs + Math.floor(this.node.startJitterMs * podJitterFraction(uid));
    entry.runningAt = from + delay;
    // Asked at the moment it starts (no delay): Running now, and nobody needs telling.
    if (delay === 0) {
      this.#startContainers(uid, entry, from);
      return;
    }
    if (this.#stopped) return;
    entry.timer = this.clock.setTimeout(() => {
      entry.timer = undefined;
      if (this.#tracked.get(uid) !== entry || this.#stopped) return;
      this.#startContainers(uid, entry, entry.runningAt ?? from);
      this.#notify(uid);
    }, delay);
  }

  /** The sandbox is up: init containers run in order, then the containers start. */
  #startContainers(uid: string, tracked: Tracked, at: number): void {
    // The old sandbox is still there: the kubelet replaces it and says so.
    if (tracked.previous !== undefined) this.#event(tracked.pod, undefined, sandboxChangedEvent());
    const dns = this.node.clusterDNS ? undefined : missingClusterDNSEvent(tracked.pod);
    if (dns !== undefined) this.#event(tracked.pod, undefined, dns);
    tracked.inits = new Map();
    this.#runInits(uid, tracked, 0, at);
  }

  /**
   * Starts the init containers from index `from` on, as the kubelet's computeInitContainerActions
   * does: a sidecar starts and the next one follows at once (its startup is taken to succeed);
   * a regular init container without a planned exit completes at once (exit 0); one with a plan
   * runs until it exits, and only an exit 0 lets the next one start. Past the last, the
   * containers start.
   */
  #runInits(uid: string, tracked: Tracked, from: number, at: number): void {
    const inits = tracked.pod.spec?.initContainers ?? [];
    const exits = exitPlan(tracked.pod);
    for (let i = from; i < inits.length; i++) {
      const c = inits[i]!;
      this.#containerStarts(tracked.pod, c);
      this.#log(uid, c.name, at, `started container ${JSON.stringify(c.name)} (image ${c.image ?? ''})`);
      // A completed init container's older instance is removed once the new one exits: no lastState.
      const run = continuedRun(at, tracked.previous?.get(c.name), isSidecar(c));
      tracked.inits!.set(c.name, run);
      const plan = exits.get(c.name);
      if (isSidecar(c)) {
        this.#scheduleExit(uid, tracked, c.name, run, plan);
        continue;
      }
      if (plan !== undefined) {
        this.#scheduleExit(uid, tracked, c.name, run, plan);
        return;
      }
      this.#complete(uid, c.name, run, at);
    }
    tracked.initializedAt = at;
    for (const c of tracked.pod.spec?.containers ?? []) {
      this.#containerStarts(tracked.pod, c);
      this.#log(uid, c.name, at, `started container ${JSON.stringify(c.name)} (image ${c.image ?? ''})`);
    }
    tracked.runs = new Map();
    for (const c of tracked.pod.spec?.containers ?? []) {
      const run = continuedRun(at, tracked.previous?.get(c.name), true);
      tracked.runs.set(c.name, run);
      this.#scheduleExit(uid, tracked, c.name, run, exits.get(c.name));
    }
  }

  /** A regular init container that exits 0 at `at`. */
  #complete(uid: string, name: string, run: ContainerRun, at: number): void {
    run.state = 'exited';
    run.terminated = { exitCode: 0, reason: 'Completed', startedAt: run.startedAt, finishedAt: at };
    this.#log(uid, name, at, `container ${JSON.stringify(name)} exited with code 0 (Completed)`);
  }

  #scheduleExit(uid: string, tracked: Tracked, name: string, run: ContainerRun, plan: { exitCode: number; afterMs: number } | undefined): void {
    if (plan === undefined || this.#stopped) return;
    run.timer = this.clock.setTimeout(() => this.#exit(uid, tracked, name, run, plan.exitCode), plan.afterMs);
  }

  #exit(uid: string, tracked: Tracked, name: string, run: ContainerRun, exitCode: number): void {
    run.timer = undefined;
    if (this.#tracked.get(uid) !== tracked || run.state !== 'running' || tracked.stopping !== undefined) return;
    const now = this.clock.now().getTime();
    const kind = containerKind(tracked.pod, name);
    if (kind === 'init' && exitCode === 0) {
      // Done: the next init container (or the containers) start now.
      tracked.changedAt = now;
      this.#complete(uid, name, run, now);
      const index = (tracked.pod.spec?.initContainers ?? []).findIndex((c) => c.name === name);
      this.#runInits(uid, tracked, index + 1, now);
      this.#notify(uid);
      return;
    }
    run.terminated = { exitCode, reason: exitReason(exitCode), startedAt: run.startedAt, finishedAt: now };
    tracked.changedAt = now;
    this.#log(uid, name, now, `container ${JSON.stringify(name)} exited with code ${exitCode} (${run.terminated.reason})`);
    // A sidecar is restarted whatever the pod's policy; a failed init container is unless the
    // policy is Never, which fails the pod (the kubelet kills it: the sidecars stop too).
    const policy = kind === 'sidecar' ? 'Always' : tracked.pod.spec?.restartPolicy;
    if (!shouldRestart(policy, exitCode)) {
      run.state = 'exited';
      if (kind === 'init') this.#stopSidecars(uid, tracked, now);
      this.#notify(uid);
      return;
    }
    const { restartAt, next } = crashLoopRestart(run.crashLoop, now);
    run.crashLoop = next;
    if (restartAt <= now) this.#restart(uid, tracked, name, run);
    else {
      run.state = 'waiting';
      this.#event(tracked.pod, name, backOffEvent(tracked.pod, name));
      run.timer = this.clock.setTimeout(() => {
        run.timer = undefined;
        if (this.#tracked.get(uid) === tracked && run.state === 'waiting' && tracked.stopping === undefined) this.#restart(uid, tracked, name, run);
      }, restartAt - now);
    }
    this.#notify(uid);
  }

  /** The pod failed in its init containers: its running sidecars are stopped with it, at once. */
  #stopSidecars(uid: string, tracked: Tracked, now: number): void {
    const { exitCode, reason } = stopOutcome(stopMsOf(tracked.pod, this.node.stopMs), 0);
    for (const c of tracked.pod.spec?.initContainers ?? []) {
      const run = tracked.inits?.get(c.name);
      if (!isSidecar(c) || run === undefined || run.state === 'exited') continue;
      this.clock.clearTimeout(run.timer);
      run.timer = undefined;
      if (run.state === 'running') {
        run.terminated = { exitCode, reason, startedAt: run.startedAt, finishedAt: now };
        this.#log(uid, c.name, now, `container ${JSON.stringify(c.name)} ${exitCode === 0 ? 'stopped' : 'killed'} with code ${exitCode} (${reason})`);
      }
      run.state = 'exited';
    }
  }

  #restart(uid: string, tracked: Tracked, name: string, run: ContainerRun): void {
    const now = this.clock.now().getTime();
    Object.assign(run, { state: 'running', restartCount: run.restartCount + 1, startedAt: now, last: run.terminated, terminated: undefined });
    tracked.changedAt = now;
    const spec = [...(tracked.pod.spec?.containers ?? []), ...(tracked.pod.spec?.initContainers ?? [])].find((c) => c.name === name);
    if (spec !== undefined) this.#containerStarts(tracked.pod, spec);
    this.#log(uid, name, now, `restarted container ${JSON.stringify(name)} (image ${spec?.image ?? ''}), restart ${run.restartCount}`);
    const plan = exitPlan(tracked.pod).get(name);
    // An init container restarted without a planned exit completes at once.
    if (plan === undefined && containerKind(tracked.pod, name) === 'init') this.#exit(uid, tracked, name, run, 0);
    else this.#scheduleExit(uid, tracked, name, run, plan);
    this.#notify(uid);
  }

  #finishStop(uid: string, tracked: Tracked, stopping: Stopping): void {
    stopping.timer = undefined;
    if (this.#tracked.get(uid) !== tracked) return;
    const now = this.clock.now().getTime();
    const verb = stopping.exitCode === 0 ? 'stopped' : 'killed';
    this.#logRunning(uid, tracked, now, (name) => `container ${JSON.stringify(name)} ${verb} with code ${stopping.exitCode} (${stopping.reason})`);
    for (const run of allRuns(tracked)) {
      this.clock.clearTimeout(run.timer);
      run.timer = undefined;
      if (run.state === 'running') {
        run.terminated = { exitCode: stopping.exitCode, reason: stopping.reason, startedAt: run.startedAt, finishedAt: now };
        run.state = 'exited';
      } else if (run.state === 'waiting') {
        run.state = 'exited';
      }
    }
    tracked.changedAt = now;
    tracked.stopped = true;
    this.#notify(uid);
    for (const resolve of stopping.waiters.splice(0)) resolve();
  }

  /** A line for each container running now: init containers and sidecars, then regular containers. */
  #logRunning(uid: string, tracked: Tracked, at: number, line: (name: string) => string): void {
    this.#eachRunning(tracked, (name) => this.#log(uid, name, at, line(name)));
  }

  #eachRunning(tracked: Tracked, fn: (name: string) => void): void {
    for (const runs of [tracked.inits, tracked.runs]) for (const [name, run] of runs ?? []) if (run.state === 'running') fn(name);
  }

  /** The image, create and start events of one container start; its image is then present. */
  #containerStarts(pod: Pod, c: V1Container): void {
    const image = c.image ?? '';
    for (const e of startEvents(c, this.#images.has(image))) this.#event(pod, c.name, e);
    this.#images.add(image);
  }

  #event(pod: Pod, container: string | undefined, e: Omit<ContainerEvent, 'pod' | 'fieldPath'>): void {
    if (this.#stopped || this.#eventListeners.size === 0) return;
    const event: ContainerEvent = { pod, fieldPath: container === undefined ? undefined : containerFieldPath(pod, container), ...e };
    for (const listener of [...this.#eventListeners]) listener(event);
  }

  /**
   * The newest instance of each container of a pod being let go, as its last status shows
   * them; a pod that never started leaves what its earlier run left, if anything.
   */
  #leftBehind(tracked: Tracked): ExitedPod | undefined {
    const now = this.clock.now().getTime();
    if (tracked.runningAt === undefined || now < tracked.runningAt || tracked.inits === undefined) return tracked.previous;
    const status = runningStatus(tracked.pod, tracked, wholeSeconds(new Date(tracked.runningAt)), undefined, this.node);
    const left = new Map<string, ExitedContainer>(tracked.previous ?? []);
    for (const c of [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])]) {
      // A container this run never started keeps what the earlier run left.
      if (c.containerID === undefined) continue;
      const terminated = c.state?.terminated ?? (c.state?.waiting !== undefined ? c.lastState?.terminated : undefined);
      left.set(c.name, { restartCount: c.restartCount, terminated });
    }
    return left.size > 0 ? left : undefined;
  }


  #log(uid: string, container: string, at: number, text: string): void {
    this.logs.append(uid, container, wholeSeconds(new Date(at)), text);
  }
}

/** The stop time of a pod's containers: its annotation, else the provider's. */
function stopMsOf(pod: Pod, fallbackMs: number): number {
  const raw = pod.metadata?.annotations?.[SIMULATION_ANNOTATIONS.stopSeconds];
  const seconds = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : fallbackMs;
}

/**
 * The longest preStop `sleep` hook of the pod's long-running containers (regular containers and
 * sidecars): the kubelet stops containers in parallel, so the pod stops with the slowest.
 * Other hook kinds run nothing here and take no time.
 */
function preStopSleepOf(pod: Pod): number {
  const containers = [...(pod.spec?.initContainers ?? []).filter(isSidecar), ...(pod.spec?.containers ?? [])];
  return Math.max(0, ...containers.map((c) => c.lifecycle?.preStop?.sleep?.seconds ?? 0));
}

/** The pod's planned container exits, from its annotation; malformed entries are ignored. */
function exitPlan(pod: Pod): Map<string, { exitCode: number; afterMs: number }> {
  const plan = new Map<string, { exitCode: number; afterMs: number }>();
  const raw = pod.metadata?.annotations?.[SIMULATION_ANNOTATIONS.exit];
  for (const item of raw?.split(',') ?? []) {
    const m = /^\s*([^=\s]+)=(\d+)@(\d+(?:\.\d+)?)\s*$/.exec(item);
    if (m !== null) plan.set(m[1]!, { exitCode: Number(m[2]), afterMs: Number(m[3]) * 1000 });
  }
  return plan;
}

function newRun(at: number): ContainerRun {
  return { state: 'running', restartCount: 0, startedAt: at, terminated: undefined, last: undefined, crashLoop: undefined, timer: undefined };
}

/**
 * A container's first instance in this run: it continues the earlier run's newest instance of
 * it, if the runtime kept one (attempt + 1; that instance as lastState when `showLast`).
 */
function continuedRun(at: number, before: ExitedContainer | undefined, showLast: boolean): ContainerRun {
  const run = newRun(at);
  if (before === undefined) return run;
  run.restartCount = before.restartCount + 1;
  if (showLast) run.last = fromAPI(before.terminated);
  return run;
}

/** Every container run of the pod: init containers (sidecars included), then the containers. */
function allRuns(tracked: Tracked): ContainerRun[] {
  return [...(tracked.inits?.values() ?? []), ...(tracked.runs?.values() ?? [])];
}

function containerKind(pod: Pod, name: string): 'container' | 'sidecar' | 'init' {
  const init = pod.spec?.initContainers?.find((c) => c.name === name);
  if (init === undefined) return 'container';
  return isSidecar(init) ? 'sidecar' : 'init';
}

/** What the provider knows about its node. */
interface NodeFacts {
  readonly hostIP: string | undefined;
  readonly recursiveReadOnlyMounts: boolean;
  readonly stopMs: number;
  readonly startJitterMs: number;
  /** Whether cluster DNS servers are configured. */
  readonly clusterDNS: boolean;
}

/** The kubelet's condition types; the mirror status writer treats exactly these as its own. */
export const KUBELET_OWNED_POD_CONDITIONS: ReadonlySet<string> = new Set([
  'PodScheduled',
  'Ready',
  'Initialized',
  'ContainersReady',
  'PodReadyToStartContainers',
  'DisruptionTarget',
]);

function cond(type: string, status: string, at: Date, reason?: string, message?: string): V1PodCondition {
  const c: V1PodCondition = { type, status, lastTransitionTime: at };
  if (reason !== undefined) c.reason = reason;
  if (message !== undefined) c.message = message;
  return c;
}

// Go prints a list of names as `[a b]`; the kubelet's condition messages use that form.
function nameList(names: readonly string[]): string {
  return `[${names.join(' ')}]`;
}


function addressFields(hostIP: string | undefined, podIP: string | undefined): Partial<V1PodStatus> {
  const out: Partial<V1PodStatus> = {};
  if (hostIP !== undefined) {
    out.hostIP = hostIP;
    out.hostIPs = [{ ip: hostIP }];
  }
  if (podIP !== undefined) {
    out.podIP = podIP;
    out.podIPs = [{ ip: podIP }];
  }
  return out;
}

/**
 * A container that has not started yet (no containerID, nothing allocated shown); `before`, the
 * earlier run's instance the runtime kept, gives its count and lastState.
 */
function waitingStatus(c: V1Container, reason: string, node: NodeFacts, before?: ExitedContainer): V1ContainerStatus {
  const status: V1ContainerStatus = { name: c.name, image: c.image ?? '', imageID: '', ready: false, restartCount: before?.restartCount ?? 0, started: false, state: { waiting: { reason } }, ...mounts(c, node) };
  if (before?.terminated !== undefined) status.lastState = { terminated: before.terminated };
  return status;
}

function pendingStatus(pod: Pod, acceptedAt: Date, node: NodeFacts, previous: ExitedPod | undefined): V1PodStatus {
  const inits = pod.spec?.initContainers ?? [];
  const containers = pod.spec?.containers ?? [];
  const hasInits = inits.length > 0;
  const unready = nameList([...inits.filter(isSidecar), ...containers].map((c) => c.name));
  const status: V1PodStatus = {
    phase: restartingPhase(pod, previous) ?? 'Pending',
    startTime: acceptedAt,
    // The sandbox has no address yet; a host-network pod has the node's from the start.
    ...addressFields(node.hostIP, pod.spec?.hostNetwork === true ? node.hostIP : undefined),
    conditions: [
      cond('PodReadyToStartContainers', 'False', acceptedAt),
      hasInits
        ? cond('Initialized', 'False', acceptedAt, 'ContainersNotInitialized', `containers with incomplete status: ${nameList(inits.map((c) => c.name))}`)
        : cond('Initialized', 'True', acceptedAt),
      cond('Ready', 'False', acceptedAt, 'ContainersNotReady', `containers with unready status: ${unready}`),
      cond('ContainersReady', 'False', acceptedAt, 'ContainersNotReady', `containers with unready status: ${unready}`),
      cond('PodScheduled', 'True', acceptedAt),
    ],
    containerStatuses: containers.map((c) => waitingStatus(c, hasInits ? 'PodInitializing' : 'ContainerCreating', node, previous?.get(c.name))),
  };
  if (hasInits) status.initContainerStatuses = inits.map((c) => waitingStatus(c, 'PodInitializing', node, previous?.get(c.name)));
  return status;
}

function runningStatus(pod: Pod, tracked: Tracked, runningAt: Date, podIP: string | undefined, node: NodeFacts): V1PodStatus {
  const inits = pod.spec?.initContainers ?? [];
  const containers = pod.spec?.containers ?? [];
  const changedAt = tracked.changedAt === undefined ? runningAt : wholeSeconds(new Date(tracked.changedAt));
  const terminatedState = (c: V1Container, t: Terminated): V1ContainerStatus['state'] => ({
    terminated: { exitCode: t.exitCode, reason: t.reason, startedAt: wholeSeconds(new Date(t.startedAt)), finishedAt: wholeSeconds(new Date(t.finishedAt)), containerID: containerID(pod, c) },
  });
  // A container the runtime has started, in whatever state it is now.
  const known = (c: V1Container, run: ContainerRun): V1ContainerStatus => {
    const status: V1ContainerStatus = {
      name: c.name,
      image: c.image ?? '',
      imageID: c.image ?? '',
      containerID: containerID(pod, c),
      ready: true,
      restartCount: run.restartCount,
      started: true,
      state: { running: { startedAt: wholeSeconds(new Date(run.startedAt)) } },
      ...containerResourceStatus(c),
      ...mounts(c, node),
    };
    if (run.last !== undefined) status.lastState = terminatedState(c, run.last);
    if (run.state === 'running' || run.terminated === undefined) return status;
    status.ready = false;
    status.started = false;
    if (run.state === 'waiting') {
      // The kubelet's doBackOff message: the wait armed for this restart, in Go's duration form.
      const waitMs = (run.crashLoop?.armedAt ?? run.terminated.finishedAt) - run.terminated.finishedAt;
      status.state = { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${formatDuration(waitMs)} restarting failed container=${c.name} pod=${formatPod(pod)}` } };
      status.lastState = terminatedState(c, run.terminated);
    } else {
      status.state = terminatedState(c, run.terminated);
    }
    return status;
  };
  // A regular init container is ready once it completed with 0, and started only while it runs.
  const initStatus = (c: V1Container): V1ContainerStatus => {
    const run = tracked.inits?.get(c.name);
    if (run === undefined) return waitingStatus(c, 'PodInitializing', node, tracked.previous?.get(c.name));
    const status = known(c, run);
    if (isSidecar(c)) return status;
    return { ...status, ready: run.state === 'exited' && run.terminated?.exitCode === 0, started: run.state === 'running' };
  };
  const initContainerStatuses = inits.map(initStatus);
  const containerStatuses = containers.map((c) => {
    const run = tracked.runs?.get(c.name);
    return run === undefined ? waitingStatus(c, 'PodInitializing', node, tracked.previous?.get(c.name)) : known(c, run);
  });
  let phase = kubeletPodPhase(pod, initContainerStatuses, containerStatuses, tracked.stopped, tracked.runs !== undefined, isStaticPod(pod));
  // The status manager's TerminatePod: an ordinary pod the kubelet stopped ends terminal.
  if (tracked.stopped && !isStaticPod(pod) && phase !== 'Succeeded' && phase !== 'Failed') phase = 'Failed';
  const initialized = initializedCondition(pod, initContainerStatuses, containerStatuses, phase);
  const unready = [...inits.filter(isSidecar).map((c) => initContainerStatuses[inits.indexOf(c)]!), ...containerStatuses].filter((s) => !s.ready).map((s) => s.name);
  const done = phase === 'Succeeded' || phase === 'Failed';
  const gates = unmetReadinessGates(pod);
  let ready: V1PodCondition;
  let containersReady: V1PodCondition;
  if (done) {
    const reason = phase === 'Succeeded' ? 'PodCompleted' : 'PodFailed';
    ready = cond('Ready', 'False', changedAt, reason);
    containersReady = cond('ContainersReady', 'False', changedAt, reason);
  } else if (unready.length > 0) {
    ready = cond('Ready', 'False', changedAt, 'ContainersNotReady', `containers with unready status: ${nameList(unready)}`);
    containersReady = cond('ContainersReady', 'False', changedAt, 'ContainersNotReady', `containers with unready status: ${nameList(unready)}`);
  } else {
    const readyAt = tracked.changedAt === undefined ? runningAt : changedAt;
    ready = gates.length > 0 ? cond('Ready', 'False', readyAt, 'ReadinessGatesNotReady', gates.join(', ')) : cond('Ready', 'True', readyAt);
    containersReady = cond('ContainersReady', 'True', readyAt);
  }
  // Initialized turns True when the last init container completed (at the start without any).
  const initializedAt = inits.length === 0 ? tracked.acceptedAt : tracked.initializedAt === undefined ? tracked.acceptedAt : wholeSeconds(new Date(tracked.initializedAt));
  // The sandbox goes once the pod has stopped or completed.
  const sandboxGone = tracked.stopped || done;
  const status: V1PodStatus = {
    phase,
    startTime: tracked.acceptedAt,
    ...addressFields(node.hostIP, podIP),
    conditions: [
      sandboxGone ? cond('PodReadyToStartContainers', 'False', changedAt) : cond('PodReadyToStartContainers', 'True', runningAt),
      cond('Initialized', initialized.status, initialized.status === 'True' ? initializedAt : tracked.acceptedAt, initialized.reason, initialized.message),
      ready,
      containersReady,
      cond('PodScheduled', 'True', tracked.acceptedAt),
    ],
    containerStatuses,
  };
  if (inits.length > 0) status.initContainerStatuses = initContainerStatuses;
  return status;
}

// The kubelet judges a static pod's readiness gates by the conditions of the static pod itself
// (from its manifest), not of its mirror: a gate is met only if the manifest's status says so.
function unmetReadinessGates(pod: Pod): string[] {
  const conditions = pod.status?.conditions ?? [];
  return (pod.spec?.readinessGates ?? []).flatMap((gate) => {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (c === undefined) return [`corresponding condition of pod readiness gate ${JSON.stringify(gate.conditionType)} does not exist.`];
    if (c.status !== 'True') return [`the status of pod readiness gate ${JSON.stringify(gate.conditionType)} is not "True", but ${c.status}`];
    return [];
  });
}

/**
 * A pod run again whose containers wait for their new sandbox: the kubelet's getPhase counts a
 * waiting container with a last termination as stopped, so the pod is Running when its restart
 * policy restarts them; undefined otherwise (Pending).
 */
function restartingPhase(pod: Pod, previous: ExitedPod | undefined): string | undefined {
  if (previous === undefined) return undefined;
  const ended = (pod.spec?.containers ?? []).map((c) => previous.get(c.name)?.terminated);
  if (ended.length === 0 || ended.some((t) => t === undefined)) return undefined;
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Always' || (policy === 'OnFailure' && ended.some((t) => t?.exitCode !== 0))) return 'Running';
  return undefined;
}

/** A kept termination as the runtime's own record (wall milliseconds). */
function fromAPI(t: V1ContainerStateTerminated | undefined): Terminated | undefined {
  if (t === undefined) return undefined;
  return { exitCode: t.exitCode, reason: t.reason ?? exitReason(t.exitCode), startedAt: new Date(t.startedAt ?? 0).getTime(), finishedAt: new Date(t.finishedAt ?? 0).getTime() };
}

function mounts(c: V1Container, node: NodeFacts): Pick<V1ContainerStatus, 'volumeMounts'> {
  const volumeMounts = volumeMountStatuses(c, node.recursiveReadOnlyMounts);
  return volumeMounts === undefined ? {} : { volumeMounts };
}

function containerID(pod: Pod, c: V1Container): string {
  return `kubelet-pods://${podUID(pod)}/${c.name}`;
}

function wholeSeconds(d: Date): Date {
  return new Date(Math.floor(d.getTime() / 1000) * 1000);
}
