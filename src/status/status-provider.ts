import type { V1Container, V1ContainerStatus, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { kpError } from '../errors.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import type { Pod } from '../pod/types.js';

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
  /** Forgets a pod that is no longer run, cancelling anything scheduled for it. */
  forget?(uid: string): void;
  /** Cancels every timer; the provider answers but no longer notifies. */
  stop?(): void;
}

export interface SimulatedStatusProviderOptions {
  /** How long a pod stays Pending after it is first seen; 1000 ms by default. */
  startDelayMs?: number;
  clock?: Clock;
  /** The node's IP, reported as hostIP (and as podIP for host-network pods). */
  hostIP?: string;
  /** The pod IP reported for pods not on the host network; hostIP when not given. */
  podIP?: string;
}

/**
 * A documented simulation of a healthy pod start — no container is run:
 *
 * - the first time the provider is asked about a pod UID, the pod counts as accepted at that
 *   moment: phase Pending, PodScheduled and Initialized True, ContainersReady and Ready False
 *   (reason ContainersNotReady), every container waiting with reason ContainerCreating;
 * - `startDelayMs` later it is Running: all four conditions True, every container running,
 *   ready, started, restartCount 0, its spec image, imageID '', containerID
 *   `kubelet-pods://<uid>/<name>`; init containers terminated with reason Completed;
 *   restartable init containers (sidecars) running;
 * - startTime is the acceptance time; hostIP/podIP come from the options.
 *
 * Times are whole seconds, as the API server stores them, so a status read back compares equal
 * to the one written. Listeners hear about the Pending → Running step through a timer; `stop`
 * clears every timer.
 */
export function createSimulatedStatusProvider(options: SimulatedStatusProviderOptions = {}): StatusProvider & {
  forget(uid: string): void;
  stop(): void;
  onChange(listener: (uid: string) => void): () => void;
} {
  const startDelayMs = options.startDelayMs ?? 1000;
  if (!(startDelayMs >= 0) || !Number.isFinite(startDelayMs)) {
    throw kpError('KP_ERR_STATUS_OPTIONS', ['startDelayMs', String(options.startDelayMs)]);
  }
  return new SimulatedStatusProvider(startDelayMs, options.clock ?? realClock, options.hostIP, options.podIP);
}

interface Tracked {
  acceptedAt: Date;
  runningAt: Date;
  timer: ClockTimer | undefined;
}

class SimulatedStatusProvider implements StatusProvider {
  readonly #tracked = new Map<string, Tracked>();
  readonly #listeners = new Set<(uid: string) => void>();
  #stopped = false;

  constructor(
    readonly startDelayMs: number,
    readonly clock: Clock,
    readonly hostIP: string | undefined,
    readonly podIP: string | undefined,
  ) {}

  statusFor(pod: Pod, now: Date): V1PodStatus {
    const uid = pod.metadata?.uid ?? '';
    const tracked = this.#track(uid, now);
    const running = now.getTime() >= tracked.runningAt.getTime();
    return running ? this.#running(pod, tracked) : this.#pending(pod, tracked);
  }

  onChange(listener: (uid: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  forget(uid: string): void {
    const tracked = this.#tracked.get(uid);
    if (tracked?.timer !== undefined) this.clock.clearTimeout(tracked.timer);
    this.#tracked.delete(uid);
  }

  stop(): void {
    this.#stopped = true;
    for (const tracked of this.#tracked.values()) {
      if (tracked.timer !== undefined) this.clock.clearTimeout(tracked.timer);
      tracked.timer = undefined;
    }
  }

  #track(uid: string, now: Date): Tracked {
    let tracked = this.#tracked.get(uid);
    if (tracked) return tracked;
    const acceptedAt = wholeSeconds(now);
    tracked = { acceptedAt, runningAt: new Date(now.getTime() + this.startDelayMs), timer: undefined };
    this.#tracked.set(uid, tracked);
    if (this.startDelayMs > 0 && !this.#stopped) {
      const entry = tracked;
      entry.timer = this.clock.setTimeout(() => {
        entry.timer = undefined;
        if (this.#tracked.get(uid) !== entry || this.#stopped) return;
        for (const listener of [...this.#listeners]) listener(uid);
      }, this.startDelayMs);
    }
    return tracked;
  }

  #ips() {
    return { hostIP: this.hostIP, podIP: this.podIP ?? this.hostIP };
  }

  #base(pod: Pod, tracked: Tracked, phase: string): V1PodStatus {
    const { hostIP, podIP: simulatedPodIP } = this.#ips();
    const podIP = pod.spec?.hostNetwork ? hostIP : simulatedPodIP;
    const status: V1PodStatus = { phase, startTime: tracked.acceptedAt };
    if (hostIP) {
      status.hostIP = hostIP;
      status.hostIPs = [{ ip: hostIP }];
    }
    if (podIP) {
      status.podIP = podIP;
      status.podIPs = [{ ip: podIP }];
    }
    return status;
  }

  #pending(pod: Pod, tracked: Tracked): V1PodStatus {
    const at = tracked.acceptedAt;
    const status = this.#base(pod, tracked, 'Pending');
    status.conditions = [
      cond('PodReadyToStartContainers', 'True', at),
      cond('Initialized', 'True', at),
      cond('Ready', 'False', at, 'ContainersNotReady'),
      cond('ContainersReady', 'False', at, 'ContainersNotReady'),
      cond('PodScheduled', 'True', at),
    ];
    status.containerStatuses = (pod.spec?.containers ?? []).map((c) => ({
      ...containerBase(pod, c),
      ready: false,
      started: false,
      state: { waiting: { reason: 'ContainerCreating' } },
    }));
    const inits = pod.spec?.initContainers ?? [];
    if (inits.length > 0) {
      status.initContainerStatuses = inits.map((c) => ({
        ...containerBase(pod, c),
        ready: false,
        started: false,
        state: { waiting: { reason: 'PodInitializing' } },
      }));
    }
    return status;
  }

  #running(pod: Pod, tracked: Tracked): V1PodStatus {
    const acceptedAt = tracked.acceptedAt;
    const startedAt = wholeSeconds(tracked.runningAt);
    const status = this.#base(pod, tracked, 'Running');
    status.conditions = [
      cond('PodReadyToStartContainers', 'True', acceptedAt),
      cond('Initialized', 'True', acceptedAt),
      cond('Ready', 'True', startedAt),
      cond('ContainersReady', 'True', startedAt),
      cond('PodScheduled', 'True', acceptedAt),
    ];
    status.containerStatuses = (pod.spec?.containers ?? []).map((c) => ({
      ...containerBase(pod, c),
      ready: true,
      started: true,
      state: { running: { startedAt } },
    }));
    const inits = pod.spec?.initContainers ?? [];
    if (inits.length > 0) {
      status.initContainerStatuses = inits.map((c): V1ContainerStatus => {
        if (c.restartPolicy === 'Always') {
          return { ...containerBase(pod, c), ready: true, started: true, state: { running: { startedAt: acceptedAt } } };
        }
        return {
          ...containerBase(pod, c),
          ready: true,
          started: false,
          state: {
            terminated: { exitCode: 0, reason: 'Completed', startedAt: acceptedAt, finishedAt: acceptedAt, containerID: containerID(pod, c) },
          },
        };
      });
    }
    return status;
  }
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

function cond(type: string, status: string, at: Date, reason?: string): V1PodCondition {
  return reason ? { type, status, lastTransitionTime: at, reason } : { type, status, lastTransitionTime: at };
}

function containerBase(pod: Pod, c: V1Container): V1ContainerStatus {
  return { name: c.name, image: c.image ?? '', imageID: '', containerID: containerID(pod, c), restartCount: 0, ready: false };
}

function containerID(pod: Pod, c: V1Container): string {
  return `kubelet-pods://${pod.metadata?.uid ?? ''}/${c.name}`;
}

function wholeSeconds(d: Date): Date {
  return new Date(Math.floor(d.getTime() / 1000) * 1000);
}
