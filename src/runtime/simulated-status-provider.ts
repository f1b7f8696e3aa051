import { isTerminalPhase } from '../pod/classify.js';
import type { V1Container, V1PodStatus } from '@kubernetes/client-node';
import type { Clock } from '../time/clock.js';
import type { Pod } from '../pod/types.js';
import type { ContainerEvent, ContainerEventListener, ContainerLogLine } from '../status/status-provider.js';
import { containerFieldPath, startEvents } from './container-events.js';
import { podJitterFraction } from './container-lifecycle.js';
import type { ContainerLogBuffer } from './container-log-buffer.js';
import { containerExited, resumeAdopted, startContainers } from './container-runs.js';
import { adoptedPod, exitedOf } from './adopted-pods.js';
import type { ExitedContainer, ExitedContainers, ExitedPod } from './exited-containers.js';
import { pendingStatus } from './pending-status.js';
import type { PodAddressAllocator } from './pod-addresses.js';
import { wholeSeconds } from './pod-status-parts.js';
import { stopPod } from './pod-termination.js';
import type { RuntimeContext } from './runtime-context.js';
import { allRuns, runtimeView, updateRuntimeView, type NodeFacts, type TrackedPod } from './runtime-state.js';
import { runningStatus } from './running-status.js';
import type { PodPlan } from './scenario-plan.js';
import type { SimulatedRuntime } from './simulated-runtime.js';

/**
 * The simulated runtime's pod table (createSimulatedStatusProvider documents its behaviour):
 * which pods it runs, their start delay and pod address, what each status is, and letting go of
 * a pod. Containers' lives are container-runs.ts's, a pod's stop pod-termination.ts's; both get
 * this provider's RuntimeContext.
 */
export class SimulatedStatusProvider implements SimulatedRuntime {
  readonly #tracked = new Map<string, TrackedPod>();
  readonly #listeners = new Set<(uid: string) => void>();
  readonly #eventListeners = new Set<ContainerEventListener>();
  // Images the node has "pulled": a later start finds them present.
  readonly #images = new Set<string>();
  // Pods waiting for an address, in the order they were first seen.
  readonly #waitingForAddress = new Set<string>();
  #stopped = false;
  // What the container runs and the termination may use of this provider.
  readonly #context: RuntimeContext;

  constructor(
    readonly startDelayMs: number,
    readonly clock: Clock,
    readonly addresses: PodAddressAllocator,
    readonly node: NodeFacts,
    readonly logs: ContainerLogBuffer,
    readonly exited: ExitedContainers,
    // What the configured scenarios ask of a pod (scenario-plan.ts), asked once per pod.
    readonly planFor: (pod: Pod) => PodPlan | undefined = () => undefined,
    readonly onRangeFull: (() => void) | undefined = undefined,
  ) {
    this.#context = {
      clock,
      node,
      isStopped: () => this.#stopped,
      isCurrent: (uid, tracked) => this.#tracked.get(uid) === tracked,
      notify: (uid) => this.#notify(uid),
      log: (uid, container, at, text) => this.#log(uid, container, at, text),
      event: (pod, container, e) => this.#event(pod, container, e),
      containerStarts: (pod, c) => this.#containerStarts(pod, c),
    };
  }

  containerLogs(uid: string, container: string): readonly ContainerLogLine[] | undefined {
    return this.logs.lines(uid, container);
  }

  appendContainerLog(uid: string, container: string, text: string, time?: Date): void {
    this.logs.append(uid, container, time ?? this.clock.now(), text);
  }

  statusFor(pod: Pod, now: Date): V1PodStatus {
    const uid = pod.metadata?.uid ?? '';
    const tracked = this.#track(uid, pod, now);
    if (tracked.runningAt === undefined || now.getTime() < tracked.runningAt) {
      return pendingStatus(pod, tracked.acceptedAt, this.node, tracked.previous);
    }
    const podIP = pod.spec?.hostNetwork === true ? this.node.hostIP : this.addresses.addressOf(uid);
    return runningStatus(pod, tracked, wholeSeconds(new Date(tracked.runningAt)), podIP, this.node);
  }

  adopt(pod: Pod, published: V1PodStatus): void {
    const uid = pod.metadata?.uid ?? '';
    // A pod it runs, or one whose exited containers it keeps, is its own to go on with.
    if (uid === '' || this.#tracked.has(uid) || this.exited.has(uid)) return;
    const now = this.clock.now().getTime();
    const tracked = adoptedPod(pod, published, now);
    if (tracked === undefined) {
      // Not started then, but run before (its containers waiting for a new sandbox): the counts go on.
      const exited = exitedOf(published);
      if (exited !== undefined) this.exited.keep(uid, exited);
      return;
    }
    // The sandbox keeps its address; one taken since (or outside the range) gives way to a new one.
    if (pod.spec?.hostNetwork !== true) {
      const kept = published.podIP ? this.addresses.claim(uid, published.podIP) : undefined;
      if (kept === undefined && this.addresses.allocate(uid) === undefined) return;
    }
    const plan = this.planFor(pod);
    if (plan !== undefined) tracked.plan = plan;
    this.#tracked.set(uid, tracked);
    const phase = published.phase;
    resumeAdopted(this.#context, uid, tracked, now, isTerminalPhase(phase));
    // Listeners look once more (a completed pod is then terminated by its pod worker).
    if (!this.#stopped) {
      tracked.timer = this.clock.setTimeout(() => {
        tracked.timer = undefined;
        if (this.#tracked.get(uid) === tracked) this.#notify(uid);
      }, 0);
    }
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
    const uid = pod.metadata?.uid ?? '';
    const tracked = this.#track(uid, pod, this.clock.now());
    if (tracked.stopped) return Promise.resolve();
    return stopPod(this.#context, uid, tracked, gracePeriodSeconds);
  }

  exitContainer(uid: string, container: string, exitCode: number, afterMs = 0): boolean {
    const tracked = this.#tracked.get(uid);
    const run = tracked?.runs?.get(container) ?? tracked?.inits?.get(container);
    if (tracked === undefined || run === undefined || run.state !== 'running' || tracked.stopping !== undefined) return false;
    this.clock.clearTimeout(run.timer);
    run.timer = this.clock.setTimeout(() => containerExited(this.#context, uid, tracked, container, run, exitCode), Math.max(0, afterMs));
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

  #clearTimers(tracked: TrackedPod): void {
    if (tracked.timer !== undefined) this.clock.clearTimeout(tracked.timer);
    tracked.timer = undefined;
    if (tracked.stopping?.timer !== undefined) this.clock.clearTimeout(tracked.stopping.timer);
    for (const run of allRuns(tracked)) {
      this.clock.clearTimeout(run.timer);
      run.timer = undefined;
    }
    this.clock.clearTimeout(tracked.pullTimer);
    tracked.pullTimer = undefined;
    for (const timer of tracked.probeTimers?.values() ?? []) this.clock.clearTimeout(timer);
    tracked.probeTimers?.clear();
  }

  #notify(uid: string): void {
    if (this.#stopped) return;
    for (const listener of [...this.#listeners]) listener(uid);
  }

  #track(uid: string, pod: Pod, now: Date): TrackedPod {
    let tracked = this.#tracked.get(uid);
    if (tracked) {
      updateRuntimeView(tracked, pod);
      return tracked;
    }
    tracked = {
      acceptedAt: wholeSeconds(now),
      runningAt: undefined,
      timer: undefined,
      pod: runtimeView(pod),
      runs: undefined,
      inits: undefined,
      initializedAt: undefined,
      changedAt: undefined,
      stopping: undefined,
      stopped: false,
      previous: this.exited.take(uid),
    };
    const plan = this.planFor(pod);
    if (plan !== undefined) tracked.plan = plan;
    this.#tracked.set(uid, tracked);
    const needsAddress = pod.spec?.hostNetwork !== true;
    if (needsAddress && this.addresses.allocate(uid) === undefined) {
      if (this.#waitingForAddress.size === 0) this.onRangeFull?.();
      this.#waitingForAddress.add(uid);
      return tracked;
    }
    this.#startIn(uid, tracked, now.getTime());
    return tracked;
  }

  /** Starts the pod's start delay at `from` and tells listeners when it ends. */
  #startIn(uid: string, entry: TrackedPod, from: number): void {
    const delay = this.startDelayMs + Math.floor(this.node.startJitterMs * podJitterFraction(uid)) + (entry.plan?.startDelayMs ?? 0);
    entry.runningAt = from + delay;
    // Asked at the moment it starts (no delay): Running now, and nobody needs telling.
    if (delay === 0) {
      startContainers(this.#context, uid, entry, from);
      return;
    }
    if (this.#stopped) return;
    entry.timer = this.clock.setTimeout(() => {
      entry.timer = undefined;
      if (this.#tracked.get(uid) !== entry || this.#stopped) return;
      startContainers(this.#context, uid, entry, entry.runningAt ?? from);
      this.#notify(uid);
    }, delay);
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
  #leftBehind(tracked: TrackedPod): ExitedPod | undefined {
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
