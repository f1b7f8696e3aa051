import type { V1Container, V1ContainerStatus, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { kpError } from '../errors.js';
import { containerResourceStatus, volumeMountStatuses } from './container-status.js';
import { createPodAddressAllocator, DEFAULT_POD_CIDR, parseIP, type PodAddressAllocator } from './pod-addresses.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import type { Pod } from '../pod/types.js';
import { createContainerLogBuffer, DEFAULT_CONTAINER_LOG_BYTES, type ContainerLogBuffer, type ContainerLogLine } from './container-log-buffer.js';

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
  /** The bound of each container's log; 64 KiB by default. */
  maxLogBytesPerContainer?: number;
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
 * - `startDelayMs` later the sandbox has its address and everything has started: phase
 *   Running, podIP/podIPs = `hostIP` on the host network, else the pod's address from
 *   `podCIDR`; regular init containers terminated (exit code 0, reason Completed, ready),
 *   sidecars (init containers with restartPolicy Always) and containers running, started and
 *   ready (probes are taken to succeed at once); all conditions True, except Ready when a
 *   readiness gate's condition is missing or not True in the static pod's own status.
 * - A container the runtime knows (running or terminated) has a containerID
 *   `kubelet-pods://<pod uid>/<container name>`, imageID = its image reference (no image is
 *   pulled, so there is no digest to report; kubemark's fake runtime reports the same),
 *   `resources` = its allocated resources and `allocatedResources` = their requests (see
 *   container-status.ts). Every container has `volumeMounts`, one per mount. restartCount 0.
 * - Not reported: qosClass (the API server sets it on the mirror from the same spec, and it
 *   cannot change), container `user` (the image's user is unknown) and `stopSignal`.
 *
 * A pod whose address cannot be allocated (its range is full) stays Pending with its sandbox not
 * ready until another pod is forgotten; it then gets the freed address, its start delay begins
 * and listeners hear about it. Times are whole seconds, as the API server stores them, so a
 * status read back compares equal to the one written. Listeners hear about every Pending →
 * Running step through a timer; `stop` clears every timer.
 *
 * Its runtime "writes" one log line per container as it starts (`started container "web"
 * (image nginx:1.27)`), and for each regular init container one as it exits
 * (`container "init" exited with code 0 (Completed)`), stamped with the start time;
 * `appendContainerLog` adds lines of the caller's. Each container's log is bounded
 * (`maxLogBytesPerContainer`) and forgotten with its pod.
 */
export function createSimulatedStatusProvider(options: SimulatedStatusProviderOptions = {}): StatusProvider & {
  forget(uid: string): void;
  stop(): void;
  onChange(listener: (uid: string) => void): () => void;
  containerLogs(uid: string, container: string): readonly ContainerLogLine[] | undefined;
  /** Adds a line (or lines, split at newlines) to a container's log, stamped `time` (now by default). */
  appendContainerLog(uid: string, container: string, text: string, time?: Date): void;
} {
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
  return new SimulatedStatusProvider(
    startDelayMs,
    options.clock ?? realClock,
    addresses,
    { hostIP: options.hostIP, recursiveReadOnlyMounts: options.recursiveReadOnlyMounts ?? false },
    createContainerLogBuffer({ maxBytesPerContainer: options.maxLogBytesPerContainer ?? DEFAULT_CONTAINER_LOG_BYTES }),
  );
}

interface Tracked {
  /** When the pod was first seen, in whole seconds: its startTime. */
  acceptedAt: Date;
  /** When it is Running; undefined while it waits for an address. */
  runningAt: number | undefined;
  timer: ClockTimer | undefined;
  /** The containers to log the start (and the init containers' exit) of. */
  containers: readonly LoggedContainer[];
}

interface LoggedContainer {
  readonly name: string;
  readonly image: string;
  /** A regular init container: it exits (code 0) once it started. */
  readonly exits: boolean;
}

class SimulatedStatusProvider implements StatusProvider {
  readonly #tracked = new Map<string, Tracked>();
  readonly #listeners = new Set<(uid: string) => void>();
  // Pods waiting for an address, in the order they were first seen.
  readonly #waitingForAddress = new Set<string>();
  #stopped = false;

  constructor(
    readonly startDelayMs: number,
    readonly clock: Clock,
    readonly addresses: PodAddressAllocator,
    readonly node: NodeFacts,
    readonly logs: ContainerLogBuffer,
  ) {}

  containerLogs(uid: string, container: string): readonly ContainerLogLine[] | undefined {
    return this.logs.lines(uid, container);
  }

  appendContainerLog(uid: string, container: string, text: string, time?: Date): void {
    this.logs.append(uid, container, time ?? this.clock.now(), text);
  }

  statusFor(pod: Pod, now: Date): V1PodStatus {
    const uid = pod.metadata?.uid ?? '';
    const tracked = this.#track(uid, pod, now);
    if (tracked.runningAt === undefined || now.getTime() < tracked.runningAt) return pendingStatus(pod, tracked.acceptedAt, this.node);
    const podIP = pod.spec?.hostNetwork === true ? this.node.hostIP : this.addresses.addressOf(uid);
    return runningStatus(pod, tracked.acceptedAt, wholeSeconds(new Date(tracked.runningAt)), podIP, this.node);
  }

  onChange(listener: (uid: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  forget(uid: string): void {
    const tracked = this.#tracked.get(uid);
    if (tracked?.timer !== undefined) this.clock.clearTimeout(tracked.timer);
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
    for (const tracked of this.#tracked.values()) {
      if (tracked.timer !== undefined) this.clock.clearTimeout(tracked.timer);
      tracked.timer = undefined;
    }
  }

  #track(uid: string, pod: Pod, now: Date): Tracked {
    let tracked = this.#tracked.get(uid);
    if (tracked) return tracked;
    tracked = { acceptedAt: wholeSeconds(now), runningAt: undefined, timer: undefined, containers: loggedContainers(pod) };
    this.#tracked.set(uid, tracked);
    const needsAddress = pod.spec?.hostNetwork !== true;
    if (needsAddress && this.addresses.allocate(uid) === undefined) {
      this.#waitingForAddress.add(uid);
      return tracked;
    }
    // Asked at the moment it starts (no delay): Running now, and nobody needs telling.
    if (this.startDelayMs === 0) {
      tracked.runningAt = now.getTime();
      this.#logStart(uid, tracked);
    } else {
      this.#startIn(uid, tracked, now.getTime());
    }
    return tracked;
  }

  /** Starts the pod's start delay at `from` and tells listeners when it ends. */
  #startIn(uid: string, entry: Tracked, from: number): void {
    entry.runningAt = from + this.startDelayMs;
    if (this.#stopped) return;
    entry.timer = this.clock.setTimeout(() => {
      entry.timer = undefined;
      if (this.#tracked.get(uid) !== entry || this.#stopped) return;
      this.#logStart(uid, entry);
      for (const listener of [...this.#listeners]) listener(uid);
    }, this.startDelayMs);
  }

  /** The runtime's lines for a pod whose containers just started. */
  #logStart(uid: string, entry: Tracked): void {
    const at = wholeSeconds(new Date(entry.runningAt ?? this.clock.now().getTime()));
    for (const c of entry.containers) {
      this.logs.append(uid, c.name, at, `started container ${JSON.stringify(c.name)} (image ${c.image})`);
      if (c.exits) this.logs.append(uid, c.name, at, `container ${JSON.stringify(c.name)} exited with code 0 (Completed)`);
    }
  }
}

function loggedContainers(pod: Pod): LoggedContainer[] {
  const entry = (c: V1Container, exits: boolean): LoggedContainer => ({ name: c.name, image: c.image ?? '', exits });
  return [...(pod.spec?.initContainers ?? []).map((c) => entry(c, !isSidecar(c))), ...(pod.spec?.containers ?? []).map((c) => entry(c, false))];
}

/** What the provider knows about its node. */
interface NodeFacts {
  readonly hostIP: string | undefined;
  readonly recursiveReadOnlyMounts: boolean;
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

const isSidecar = (c: V1Container): boolean => c.restartPolicy === 'Always';

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

function pendingStatus(pod: Pod, acceptedAt: Date, node: NodeFacts): V1PodStatus {
  const inits = pod.spec?.initContainers ?? [];
  const containers = pod.spec?.containers ?? [];
  const hasInits = inits.length > 0;
  const unready = nameList([...inits.filter(isSidecar), ...containers].map((c) => c.name));
  const waiting = (c: V1Container, reason: string): V1ContainerStatus => ({
    name: c.name,
    image: c.image ?? '',
    imageID: '',
    ready: false,
    restartCount: 0,
    started: false,
    state: { waiting: { reason } },
    ...mounts(c, node),
  });
  const status: V1PodStatus = {
    phase: 'Pending',
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
    containerStatuses: containers.map((c) => waiting(c, hasInits ? 'PodInitializing' : 'ContainerCreating')),
  };
  if (hasInits) status.initContainerStatuses = inits.map((c) => waiting(c, 'PodInitializing'));
  return status;
}

function runningStatus(pod: Pod, acceptedAt: Date, runningAt: Date, podIP: string | undefined, node: NodeFacts): V1PodStatus {
  const inits = pod.spec?.initContainers ?? [];
  const known = (c: V1Container): V1ContainerStatus => ({
    name: c.name,
    image: c.image ?? '',
    imageID: c.image ?? '',
    containerID: containerID(pod, c),
    ready: true,
    restartCount: 0,
    started: true,
    state: { running: { startedAt: runningAt } },
    ...containerResourceStatus(c),
    ...mounts(c, node),
  });
  const completed = (c: V1Container): V1ContainerStatus => ({
    ...known(c),
    started: false,
    state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: runningAt, finishedAt: runningAt, containerID: containerID(pod, c) } },
  });
  const gates = unmetReadinessGates(pod);
  const status: V1PodStatus = {
    phase: 'Running',
    startTime: acceptedAt,
    ...addressFields(node.hostIP, podIP),
    conditions: [
      cond('PodReadyToStartContainers', 'True', runningAt),
      cond('Initialized', 'True', inits.length > 0 ? runningAt : acceptedAt),
      gates.length > 0 ? cond('Ready', 'False', runningAt, 'ReadinessGatesNotReady', gates.join(', ')) : cond('Ready', 'True', runningAt),
      cond('ContainersReady', 'True', runningAt),
      cond('PodScheduled', 'True', acceptedAt),
    ],
    containerStatuses: (pod.spec?.containers ?? []).map(known),
  };
  if (inits.length > 0) status.initContainerStatuses = inits.map((c) => (isSidecar(c) ? known(c) : completed(c)));
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

function mounts(c: V1Container, node: NodeFacts): Pick<V1ContainerStatus, 'volumeMounts'> {
  const volumeMounts = volumeMountStatuses(c, node.recursiveReadOnlyMounts);
  return volumeMounts === undefined ? {} : { volumeMounts };
}

function containerID(pod: Pod, c: V1Container): string {
  return `kubelet-pods://${pod.metadata?.uid ?? ''}/${c.name}`;
}

function wholeSeconds(d: Date): Date {
  return new Date(Math.floor(d.getTime() / 1000) * 1000);
}
