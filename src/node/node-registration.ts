import type { V1Node, V1NodeCondition, V1Taint } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '../kube/request-options.js';
import type { CoreV1Api } from '../kube/typed-apis.js';
import { childLogger, type Logger } from '../logger.js';
import { kpError } from '../errors.js';
import { KUBELET_VERSION } from '../constants.js';
import { isAlreadyExists, isNotFound } from '../kube/api-error.js';
import { logApiFailure } from '../kube/log-api-failure.js';
import { withoutManagedFields } from '../kube/managed-fields.js';
import { versionBefore } from '../kube/object-version.js';
import { canonicalJSON } from '../values/canonical-json.js';
import { validateNodeName } from '../values/node-name.js';
import { quantityValue } from '../values/quantity.js';
import { realClock, type Clock } from '../time/clock.js';
import { binaryQuantity, hugePageResource, readMachineInfo, type MachineInfo } from './machine-info.js';
import type { NodeWatch } from './node-watch.js';
import { createPeriodicLoop, type LoopSpread, type PeriodicLoop } from './periodic-loop.js';

/** The few Node calls registration makes; a `CoreV1Api` fits, and so does a test fake. */
export type NodeApi = Pick<CoreV1Api, 'readNode' | 'createNode' | 'patchNodeStatus'>;

export interface NodeRegistrationOptions {
  /** This node's name (already lower-cased); the client must be authenticated as `system:node:<nodeName>`. */
  nodeName: string;
  api: NodeApi;
  /** Extra labels for the Node at creation; the standard hostname/os/arch labels are always set. */
  labels?: Record<string, string>;
  /** Taints of the Node at creation (the kubelet's `registerWithTaints`); none by default. */
  taints?: readonly V1Taint[];
  /**
   * Resources that replace the machine's in the Node's capacity (`cpu`, `memory`, …) and, when
   * `allocatable` is absent, in its allocatable. `pods` comes from `maxPods` unless named here.
   */
  capacity?: Readonly<Record<string, string>>;
  /** The Node's allocatable; the capacity by default (no reservations). */
  allocatable?: Readonly<Record<string, string>>;
  /** Keeps the status loops of many nodes in one process apart; none by default. */
  spread?: LoopSpread;
  /**
   * The Node is someone else's creation that this node takes over (a fleet's adopted node,
   * docs/fleet.md): it is never created here, only read, and the capacity and allocatable its
   * creator set are kept (each written only when the Node has none); labels, taints and the
   * rest of the spec are never written anyway. The conditions, addresses, daemon endpoints and
   * nodeInfo are ours, as for a Node this node created.
   */
  adopted?: boolean;
  /** The node's InternalIP; none by default. */
  internalIP?: string;
  /** Hostname address; `nodeName` by default. */
  hostname?: string;
  /** Capacity, nodeInfo: the machine's, read once (`readMachineInfo()`) by default. */
  machine?: MachineInfo;
  /** The `pods` capacity; 110, the kubelet's default. */
  maxPods?: number;
  /**
   * `daemonEndpoints.kubeletEndpoint.Port`; 10250, the kubelet's default. A function is asked
   * at each status computation (the agent's port is known once it listens).
   */
  kubeletPort?: number | (() => number);
  kubeletVersion?: string;
  /** How often the status is computed (and the Node read back); 10 s like the kubelet. */
  nodeStatusUpdateFrequencyMs?: number;
  /**
   * How often the status is written when nothing in it changed (heartbeat times aside);
   * 5 min like the kubelet. The Lease is the heartbeat in between.
   */
  nodeStatusReportFrequencyMs?: number;
  /**
   * In [0, 1); spreads the report times of many nodes, as the kubelet does after a change or a
   * start. `Math.random` by default; tests pin it (0.5 means no spread).
   */
  random?: () => number;
  /**
   * This node's Node as a watch shows it (src/node/node-watch.ts; the kubelet's node
   * informer). With it, a deletion is seen at once: `getNode` answers undefined, `nodeGone`
   * true, and no status is written, until a Node of this name exists again (taken at once
   * too). Without it, both are seen at the next read, every `nodeStatusUpdateFrequencyMs`.
   */
  watch?: NodeWatch;
  /**
   * The conditions gone bad at `now` (a scenario's window: docs/lifecycle.md, "Scenarios"):
   * `Ready` is then False, a pressure condition True, each with the kubelet's reason and
   * message. Asked at each status computation; none by default.
   */
  conditionsGoneBad?: (now: Date) => ReadonlySet<NodeConditionType>;
  /** First retry delay after a failure; doubles up to `nodeStatusUpdateFrequencyMs`. 500 ms by default. */
  retryInitialMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/**
 * Registers this node's Node object once per start and keeps its status true, as the kubelet
 * does for its own node: create it (or adopt the one a previous run left), then every
 * `nodeStatusUpdateFrequency` read it back and compute the status (Ready, the three pressure
 * conditions, addresses, capacity, nodeInfo, the kubelet endpoint), writing it only when
 * something other than the heartbeat times changed or `nodeStatusReportFrequency` has passed
 * since the last write. If the Node is deleted it is not registered again (the kubelet does
 * not either, until it restarts): `getNode` answers undefined, which holds mirror creation,
 * and nothing is written for it until a Node of that name appears again (seen at once with a
 * `watch`, else at the next read). Failures are logged and retried with backoff; the loop
 * never throws.
 */
export interface NodeRegistration {
  /**
   * Starts the loop; the first registration attempt runs at once. The watch starts with it,
   * unless `{ watch: false }`: then `startWatch()` starts it.
   */
  start(options?: { watch?: boolean }): void;
  /** Starts the watch `start` left out; a second call, or one after `stop()`, does nothing. */
  startWatch(): void;
  /** Stops the loop and waits for an attempt in flight to finish. */
  stop(): Promise<void>;
  /**
   * The Node as last read or written by this loop, or undefined before it exists (or after it
   * was found gone). Cheap: no API call. Mirror pods must not be created while this is
   * undefined or has a deletionTimestamp.
   */
  getNode(): Promise<V1Node | undefined>;
  /** Same as `getNode`, synchronously. */
  currentNode(): V1Node | undefined;
  /**
   * Called each time the Node goes from unknown/absent to present — the registration, and a
   * Node of this name found again after it was gone — right after the call that found it
   * returns, so mirror pods can be created without waiting. Returns an unsubscribe function.
   */
  onReady(listener: (node: V1Node) => void): () => void;
  /** Runs one register-or-update attempt now (the loop's own step); resolves true on success. */
  syncNow(): Promise<boolean>;
  /** Status writes (PATCH) sent since start, successful or not; for tests and metrics. */
  statusWrites(): number;
  /**
   * True once the Node registered in this run was found deleted, until a Node of this name
   * exists again: nothing is to be written for it (no mirror pod, no status, no Event).
   */
  nodeGone(): boolean;
}

export function createNodeRegistration(options: NodeRegistrationOptions): NodeRegistration {
  return new NodeRegistrationLoop(options);
}

const CONDITION_TYPES = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'] as const;
export type NodeConditionType = (typeof CONDITION_TYPES)[number];

type NodeStatus = NonNullable<V1Node['status']>;

class NodeRegistrationLoop implements NodeRegistration {
  readonly #name: string;
  readonly #api: NodeApi;
  readonly #options: NodeRegistrationOptions;
  readonly #machine: MachineInfo;
  readonly #reportMs: number;
  readonly #random: () => number;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #loop: PeriodicLoop;
  readonly #listeners = new Set<(node: V1Node) => void>();
  #watchState: 'idle' | 'started' | 'stopped' = 'idle';

  #node: V1Node | undefined;
  /** Set once the create (or adoption) went through: never registered again in this run. */
  #registered = false;
  /** Logged once per disappearance, not every period. */
  #goneLogged = false;
  /**
   * The UID of the Node found deleted: a read or a write answered after the deletion may still
   * carry it, and must not bring it back.
   */
  #goneUID: string | undefined;
  /** Monotonic ms of the last successful status write; undefined before the first. */
  #lastReport: number | undefined;
  /** The spread added to the report period after a change or the first write. */
  #reportDelayMs = 0;
  #writes = 0;
  /**
   * The Node status last found to need no write, with the kubelet port it was compared for. A
   * fleet reads its Nodes from a watch, so the same object comes back every 10 s until someone
   * writes the Node; comparing it again would give the same answer (the heartbeat times, the
   * only inputs that move, are not compared).
   */
  #settled: { status: NodeStatus; port: number; bad: string } | undefined;

  constructor(options: NodeRegistrationOptions) {
    validateNodeName(options.nodeName);
    const period = options.nodeStatusUpdateFrequencyMs ?? 10_000;
    if (!(period > 0)) throw kpError('KP_ERR_NODE_OPTIONS', ['nodeStatusUpdateFrequencyMs', String(period)]);
    const report = options.nodeStatusReportFrequencyMs ?? 300_000;
    if (!(report > 0)) throw kpError('KP_ERR_NODE_OPTIONS', ['nodeStatusReportFrequencyMs', String(report)]);
    const maxPods = options.maxPods ?? 110;
    if (!Number.isInteger(maxPods) || maxPods < 0) throw kpError('KP_ERR_NODE_OPTIONS', ['maxPods', String(maxPods)]);
    this.#name = options.nodeName;
    this.#api = options.api;
    this.#options = options;
    this.#machine = options.machine ?? readMachineInfo();
    this.#reportMs = report;
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? realClock;
    this.#loop = createPeriodicLoop({ attempt: () => this.#attempt(), periodMs: period, retryInitialMs: options.retryInitialMs ?? 500, clock: this.#clock, ...(options.spread ? { spread: options.spread } : {}) });
    this.#log = childLogger(options.logger, { component: 'node-registration', node: this.#name });
  }

  start(options: { watch?: boolean } = {}): void {
    this.#loop.start();
    if (options.watch !== false) this.startWatch();
  }

  startWatch(): void {
    if (this.#watchState !== 'idle') return;
    this.#watchState = 'started';
    this.#options.watch?.start((node, resourceVersion) => this.#watched(node, resourceVersion));
  }

  async stop(): Promise<void> {
    const watching = this.#watchState === 'started';
    this.#watchState = 'stopped';
    await Promise.all([this.#loop.stop(), watching ? this.#options.watch?.stop() : undefined]);
  }

  nodeGone(): boolean {
    return this.#registered && this.#node === undefined;
  }

  getNode(): Promise<V1Node | undefined> {
    return Promise.resolve(this.#node);
  }

  currentNode(): V1Node | undefined {
    return this.#node;
  }

  onReady(listener: (node: V1Node) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  syncNow(): Promise<boolean> {
    return this.#loop.runNow();
  }

  statusWrites(): number {
    return this.#writes;
  }

  async #attempt(): Promise<boolean> {
    try {
      let current: V1Node | undefined;
      if (!this.#registered) {
        current = await this.#register();
        if (current === undefined) return true;
      } else {
        current = await this.#read();
        if (current === undefined) return true;
      }
      await this.#updateStatus(current);
      return true;
    } catch (err) {
      logApiFailure(this.#log, err, { code: 'KP_ERR_NODE_REGISTER', subject: this.#name, message: 'node registration or status update failed' });
      return false;
    }
  }

  // What the watch shows. Before the registration (create or adoption, once per start) there
  // is nothing to follow; after it, a deletion and a Node created again are taken at once.
  #watched(node: V1Node | undefined, resourceVersion: string): void {
    if (!this.#registered) return;
    if (node === undefined) {
      // A list taken before the create answered only after it: not a deletion.
      const have = this.#node;
      if (have !== undefined && versionBefore(resourceVersion, have.metadata?.resourceVersion)) return;
      this.#lost();
      return;
    }
    if (node.metadata?.uid === this.#goneUID) return;
    // An older version than the one a write of ours returned says nothing new.
    const have = this.#node;
    if (have !== undefined && have.metadata?.uid === node.metadata?.uid && versionBefore(node.metadata?.resourceVersion, have.metadata?.resourceVersion)) return;
    this.#goneUID = undefined;
    this.#goneLogged = false;
    this.#setNode(node);
  }

  /** The Node is gone: forget it, and log that once per disappearance. */
  #lost(): void {
    this.#goneUID = this.#node?.metadata?.uid ?? this.#goneUID;
    this.#node = undefined;
    if (this.#goneLogged) return;
    // Registration happens once per start, as in the kubelet: mirror creation waits until
    // the agent is restarted or a Node of this name is created again.
    this.#log.warn({}, 'node object is gone; it is not registered again until the agent restarts');
    this.#goneLogged = true;
  }

  async #register(): Promise<V1Node | undefined> {
    if (this.#options.adopted) {
      // Someone else's Node: taken as it is and never created; one already gone stays gone.
      this.#registered = true;
      return this.#read();
    }
    let node: V1Node;
    try {
      node = await this.#api.createNode({ body: this.#initialNode() });
      this.#log.info({}, 'registered node');
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Registered before (a restart of the agent): adopt the existing object.
      node = await this.#api.readNode({ name: this.#name });
    }
    this.#registered = true;
    this.#setNode(node);
    return node;
  }

  // The Node as the API server has it now: the status is compared with it, so a change made by
  // someone else (the node lifecycle controller marking it Unknown) is put right at once.
  async #read(): Promise<V1Node | undefined> {
    let node: V1Node;
    try {
      node = await this.#api.readNode({ name: this.#name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.#lost();
      return undefined;
    }
    // Read before the deletion the watch has already reported: still gone.
    if (node.metadata?.uid !== undefined && node.metadata.uid === this.#goneUID) return undefined;
    this.#goneUID = undefined;
    this.#goneLogged = false;
    this.#setNode(node);
    return node;
  }

  async #updateStatus(current: V1Node): Promise<void> {
    const nowMs = this.#clock.monotonic();
    const port = this.#kubeletPort();
    const have = current.status;
    // A condition window opening or closing is an input that moves too.
    const bad = [...(this.#options.conditionsGoneBad?.(this.#clock.now()) ?? [])].sort().join(',');
    const settled = have !== undefined && this.#settled?.status === have && this.#settled.port === port && this.#settled.bad === bad;
    let desired = settled ? undefined : this.#status(this.#clock.now(), have, port);
    const changed = desired !== undefined && statusChanged(have ?? {}, desired);
    if (!changed && have !== undefined) this.#settled = { status: have, port, bad };
    const due = this.#lastReport === undefined || nowMs - this.#lastReport >= this.#reportMs + this.#reportDelayMs;
    if (!changed && !due) return;
    desired ??= this.#status(this.#clock.now(), have, port);
    // Deleted since it was read (the watch said so): nothing to write to.
    if (this.#node === undefined && current.metadata?.uid === this.#goneUID) return;
    // As the kubelet: a write caused by a change (or the first one) starts a spread-out
    // period; a write that was merely due keeps the plain period from then on.
    this.#reportDelayMs = changed || this.#lastReport === undefined ? Math.round(this.#reportMs * (this.#random() - 0.5)) : 0;
    this.#writes++;
    try {
      const node = await this.#api.patchNodeStatus(
        { name: this.#name, body: { status: desired } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      this.#lastReport = nowMs;
      if (node.metadata?.uid === undefined || node.metadata.uid !== this.#goneUID) this.#setNode(node);
    } catch (err) {
      if (isNotFound(err)) this.#lost();
      throw err;
    }
  }

  #setNode(received: V1Node): void {
    // A Node of this name created again while the old one was still held counts as new too.
    const wasAbsent = this.#node === undefined || this.#node.metadata?.uid !== received.metadata?.uid;
    const node = withoutManagedFields(received);
    this.#node = node;
    if (!wasAbsent) return;
    for (const listener of [...this.#listeners]) {
      try {
        listener(node);
      } catch (err) {
        this.#log.error({ err: err instanceof Error ? err : new Error(String(err)) }, 'node ready listener threw');
      }
    }
  }

  #initialNode(): V1Node {
    const arch = this.#machine.architecture;
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: this.#name,
        labels: {
          ...this.#options.labels,
          'kubernetes.io/hostname': this.#options.hostname ?? this.#name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': arch,
          // The deprecated twins, which the kubelet still sets.
          'beta.kubernetes.io/os': 'linux',
          'beta.kubernetes.io/arch': arch,
        },
      },
      spec: this.#options.taints !== undefined && this.#options.taints.length > 0 ? { taints: [...this.#options.taints] } : {},
      // The whole status, conditions included, as the kubelet's initialNode fills it before its
      // create: Ready is False until the first status write, which follows at once. Its times
      // are the RFC 3339 text that goes on the wire, where client-node's model says Date.
      status: this.#status(this.#clock.now(), undefined, this.#kubeletPort(), true) as unknown as NodeStatus,
    };
  }

  /** The status this node reports now, keeping the transition times of `previous`. */
  #kubeletPort(): number {
    const port = this.#options.kubeletPort;
    return typeof port === 'function' ? port() : (port ?? 10250);
  }

  #status(now: Date, previous: NodeStatus | undefined, port = this.#kubeletPort(), creating = false) {
    const byType = new Map((previous?.conditions ?? []).map((c) => [c.type, c]));
    // An adopted Node keeps the resources its creator gave it; left out, a merge patch keeps them.
    const keep = (have: Record<string, string> | undefined): boolean => this.#options.adopted === true && have !== undefined && Object.keys(have).length > 0;
    const bad = this.#options.conditionsGoneBad?.(now);
    return {
      conditions: CONDITION_TYPES.map((type) => condition(type, byType.get(type), now, conditionText(type, bad?.has(type) === true, creating))),
      addresses: this.#addresses(),
      ...(keep(previous?.capacity) ? {} : { capacity: this.#resources() }),
      ...(keep(previous?.allocatable) ? {} : { allocatable: this.#options.allocatable !== undefined ? { ...this.#resources(), ...this.#options.allocatable } : this.#resources() }),
      daemonEndpoints: { kubeletEndpoint: { Port: port } },
      nodeInfo: this.#nodeInfo(),
    };
  }

  // No reservations are configurable, so allocatable equals capacity, as on a kubelet
  // without systemReserved/kubeReserved.
  #resources(): Record<string, string> {
    const m = this.#machine;
    const resources: Record<string, string> = {
      cpu: String(m.cpus),
      'ephemeral-storage': binaryQuantity(m.ephemeralStorageBytes),
      memory: binaryQuantity(m.memoryBytes),
      pods: String(this.#options.maxPods ?? 110),
    };
    for (const [size, bytes] of m.hugePages) resources[hugePageResource(size)] = binaryQuantity(bytes);
    return this.#options.capacity !== undefined ? { ...resources, ...this.#options.capacity } : resources;
  }

  #addresses() {
    const addresses: { type: string; address: string }[] = [];
    if (this.#options.internalIP) addresses.push({ type: 'InternalIP', address: this.#options.internalIP });
    addresses.push({ type: 'Hostname', address: this.#options.hostname ?? this.#name });
    return addresses;
  }

  #nodeInfo() {
    const m = this.#machine;
    return {
      architecture: m.architecture,
      operatingSystem: 'linux',
      kubeletVersion: this.#options.kubeletVersion ?? KUBELET_VERSION,
      kubeProxyVersion: '',
      bootID: m.bootID,
      machineID: m.machineID,
      systemUUID: m.systemUUID,
      kernelVersion: m.kernelVersion,
      osImage: m.osImage,
      containerRuntimeVersion: 'kubelet-pods://simulated',
    };
  }
}

/**
 * Whether writing `desired` would change the Node's status `current`, heartbeat times aside:
 * the fields we set are compared with what the server holds; fields we do not set (written by
 * others) are left out, since a merge patch leaves them alone.
 */
export function statusChanged(current: NodeStatus, desired: Record<string, unknown>): boolean {
  // Canonical JSON sorts keys, so the server's key order is not a change. It reads a null field
  // as absent; the server never sends null in the fields compared that way (addresses,
  // nodeInfo, daemonEndpoints).
  for (const [key, value] of Object.entries(desired)) {
    const have = (current as Record<string, unknown>)[key];
    if (key === 'conditions') {
      if (conditionsChanged((have ?? []) as V1NodeCondition[], value as V1NodeCondition[])) return true;
    } else if (key === 'capacity' || key === 'allocatable') {
      if (resourcesChanged((have ?? {}) as Record<string, string>, value as Record<string, string>)) return true;
    } else if (canonicalJSON(have) !== canonicalJSON(value)) {
      return true;
    }
  }
  return false;
}

function conditionsChanged(have: readonly V1NodeCondition[], want: readonly V1NodeCondition[]): boolean {
  if (have.length !== want.length) return true;
  const key = (c: V1NodeCondition) =>
    canonicalJSON({ type: c.type, status: c.status, reason: c.reason ?? '', message: c.message ?? '', lastTransitionTime: timeText(c.lastTransitionTime) });
  const a = have.map(key).sort();
  const b = want.map(key).sort();
  return a.some((k, i) => k !== b[i]);
}

function resourcesChanged(have: Record<string, string>, want: Record<string, string>): boolean {
  const names = new Set([...Object.keys(have), ...Object.keys(want)]);
  for (const name of names) {
    const a = have[name];
    const b = want[name];
    if (a === undefined || b === undefined) return true;
    // The server may spell a quantity its own way ("1024Mi" back as "1Gi").
    if (quantityValue(String(a)) !== quantityValue(String(b))) return true;
  }
  return false;
}

function timeText(t: unknown): string {
  if (t === undefined || t === null) return '';
  const d = t instanceof Date ? t : new Date(String(t));
  return Number.isNaN(d.getTime()) ? String(t) : toRFC3339(d);
}

interface ConditionText {
  status: string;
  reason: string;
  message: string;
}

const CONDITION_TEXT: Record<NodeConditionType, ConditionText> = {
  MemoryPressure: { status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
  DiskPressure: { status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  PIDPressure: { status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
  Ready: { status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
};

/**
 * The conditions gone bad (a scenario's), in the kubelet's words: the pressure setters of
 * pkg/kubelet/nodestatus/setters.go, and for Ready its `KubeletNotReady` with the runtime's
 * error of pkg/kubelet/runtime.go (the runtime status check failing).
 */
const BAD_CONDITION_TEXT: Record<NodeConditionType, ConditionText> = {
  MemoryPressure: { status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available' },
  DiskPressure: { status: 'True', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure' },
  PIDPressure: { status: 'True', reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available' },
  Ready: { status: 'False', reason: 'KubeletNotReady', message: 'container runtime is down' },
};

/**
 * The kubelet's storage error until its CSINode object exists (pkg/volume/csi), which it can
 * only create once its Node does: the Node it creates is never Ready.
 */
const CSINODE_PENDING = 'CSINode is not yet initialized';

function conditionText(type: NodeConditionType, bad: boolean, creating: boolean): ConditionText {
  const text = bad ? BAD_CONDITION_TEXT[type] : CONDITION_TEXT[type];
  if (type !== 'Ready' || !creating) return text;
  // The kubelet joins its errors as Go's aggregate error does: one alone, several in brackets.
  const message = bad ? `[${text.message}, ${CSINODE_PENDING}]` : CSINODE_PENDING;
  return { status: 'False', reason: 'KubeletNotReady', message };
}

// The heartbeat moves every update; the transition time only when the status flips.
function condition(type: NodeConditionType, previous: V1NodeCondition | undefined, now: Date, text: ConditionText) {
  const nowText = toRFC3339(now);
  const transition =
    previous?.status === text.status && previous.lastTransitionTime !== undefined
      ? toRFC3339(new Date(previous.lastTransitionTime))
      : nowText;
  return { type, ...text, lastHeartbeatTime: nowText, lastTransitionTime: transition };
}

/**
 * The gate for creating mirror pods: only once this node's Node exists and while it is not
 * being deleted (a Node being deleted takes its mirrors with it, through their owner
 * references, so a mirror created then would be collected at once).
 */
export function nodeAllowsMirrorPods<N extends Pick<V1Node, 'metadata'>>(node: N | undefined): node is N {
  return node !== undefined && !node.metadata?.deletionTimestamp;
}

/** Seconds precision, as `metav1.Time` stores it. */
export function toRFC3339(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}
