import type { CoreV1Api, V1Node, V1NodeCondition } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { arch as osArch } from 'node:os';
import { childLogger, type Logger } from '../logger.js';
import { kpError } from '../errors.js';
import { isAlreadyExists, isNotFound } from '../kube/api-error.js';
import { logApiFailure } from '../kube/log-api-failure.js';
import { isDNS1123Subdomain } from '../kube/names.js';
import { realClock, type Clock } from '../time/clock.js';
import { createPeriodicLoop, type PeriodicLoop } from './periodic-loop.js';

/** The few Node calls registration makes; a `CoreV1Api` fits, and so does a test fake. */
export type NodeApi = Pick<CoreV1Api, 'readNode' | 'createNode' | 'patchNodeStatus'>;

export const DEFAULT_KUBELET_VERSION = 'v1.34.0-kubelet-pods';

export interface NodeRegistrationOptions {
  /** This node's name (already lower-cased); the client must be authenticated as `system:node:<nodeName>`. */
  nodeName: string;
  api: NodeApi;
  /** Extra labels for the Node at creation; the standard hostname/os/arch labels are always set. */
  labels?: Record<string, string>;
  /** The node's InternalIP; none by default. */
  internalIP?: string;
  /** Hostname address; `nodeName` by default. */
  hostname?: string;
  /** Capacity (and allocatable): cpu "4", memory "8Gi", pods "110" by default. */
  capacity?: { cpu?: string; memory?: string; pods?: string };
  kubeletVersion?: string;
  /** How often the status is patched; 10 s like the kubelet. */
  nodeStatusUpdateFrequencyMs?: number;
  /** First retry delay after a failure; doubles up to `nodeStatusUpdateFrequencyMs`. 500 ms by default. */
  retryInitialMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/**
 * Keeps this node's Node object registered and its status fresh, as the kubelet does for
 * its own node: create it when absent, then patch `status` (Ready, the three pressure
 * conditions, nodeInfo, addresses, capacity) every `nodeStatusUpdateFrequency`. If the Node
 * disappears it is registered again. Failures are logged and retried with backoff; the loop
 * never throws.
 */
export interface NodeRegistration {
  /** Starts the loop; the first registration attempt runs at once. */
  start(): void;
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
   * Called each time the Node goes from unknown/absent to present — the first registration
   * and every re-registration — right after the create or read returns, so mirror pods can be
   * created without waiting for the next status update. Returns an unsubscribe function.
   */
  onReady(listener: (node: V1Node) => void): () => void;
  /** Runs one register-and-update attempt now (the loop's own step); resolves true on success. */
  syncNow(): Promise<boolean>;
}

export function createNodeRegistration(options: NodeRegistrationOptions): NodeRegistration {
  return new NodeRegistrationLoop(options);
}

const CONDITION_TYPES = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'] as const;

class NodeRegistrationLoop implements NodeRegistration {
  readonly #name: string;
  readonly #api: NodeApi;
  readonly #options: NodeRegistrationOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #loop: PeriodicLoop;
  readonly #listeners = new Set<(node: V1Node) => void>();

  #node: V1Node | undefined;

  constructor(options: NodeRegistrationOptions) {
    validateNodeName(options.nodeName);
    const period = options.nodeStatusUpdateFrequencyMs ?? 10_000;
    if (!(period > 0)) throw kpError('KP_ERR_NODE_OPTIONS', ['nodeStatusUpdateFrequencyMs', String(period)]);
    this.#name = options.nodeName;
    this.#api = options.api;
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#loop = createPeriodicLoop({ attempt: () => this.#attempt(), periodMs: period, retryInitialMs: options.retryInitialMs ?? 500, clock: this.#clock });
    this.#log = childLogger(options.logger, { component: 'node-registration', node: this.#name });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
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

  async #attempt(): Promise<boolean> {
    try {
      if (this.#node === undefined) await this.#register();
      await this.#updateStatus();
      return true;
    } catch (err) {
      // After a NotFound on the status patch the node is registered again at once on the
      // next attempt, which the backoff schedules shortly.
      logApiFailure(this.#log, err, { code: 'KP_ERR_NODE_REGISTER', subject: this.#name, message: 'node registration or status update failed' });
      return false;
    }
  }

  async #register(): Promise<void> {
    let node: V1Node;
    try {
      node = await this.#api.createNode({ body: this.#initialNode() });
      this.#log.info({}, 'registered node');
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Registered before (a restart of the agent): adopt the existing object.
      node = await this.#api.readNode({ name: this.#name });
    }
    this.#setNode(node);
  }

  async #updateStatus(): Promise<void> {
    const now = this.#clock.now();
    const body = { status: this.#statusPatch(now) };
    try {
      const node = await this.#api.patchNodeStatus(
        { name: this.#name, body },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      this.#setNode(node);
    } catch (err) {
      if (isNotFound(err)) {
        // Deleted behind our back: forget it so the next attempt creates it again, and let
        // mirror creation stop until then.
        this.#log.warn({}, 'node object is gone; registering it again');
        this.#node = undefined;
      }
      throw err;
    }
  }

  #setNode(node: V1Node): void {
    const wasAbsent = this.#node === undefined;
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
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: this.#name,
        labels: {
          ...this.#options.labels,
          'kubernetes.io/hostname': this.#options.hostname ?? this.#name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': goArch(osArch()),
        },
      },
      spec: {},
      status: {
        capacity: this.#resources(),
        allocatable: this.#resources(),
        addresses: this.#addresses(),
        nodeInfo: this.#nodeInfo(),
      },
    };
  }

  #statusPatch(now: Date) {
    const previous = new Map((this.#node?.status?.conditions ?? []).map((c) => [c.type, c]));
    const conditions = CONDITION_TYPES.map((type) => condition(type, previous.get(type), now));
    return {
      conditions,
      addresses: this.#addresses(),
      capacity: this.#resources(),
      allocatable: this.#resources(),
      nodeInfo: this.#nodeInfo(),
    };
  }

  #resources(): Record<string, string> {
    const c = this.#options.capacity ?? {};
    return { cpu: c.cpu ?? '4', memory: c.memory ?? '8Gi', pods: c.pods ?? '110' };
  }

  #addresses() {
    const addresses: { type: string; address: string }[] = [];
    if (this.#options.internalIP) addresses.push({ type: 'InternalIP', address: this.#options.internalIP });
    addresses.push({ type: 'Hostname', address: this.#options.hostname ?? this.#name });
    return addresses;
  }

  #nodeInfo() {
    const version = this.#options.kubeletVersion ?? DEFAULT_KUBELET_VERSION;
    return {
      architecture: goArch(osArch()),
      operatingSystem: 'linux',
      kubeletVersion: version,
      kubeProxyVersion: '',
      bootID: '',
      machineID: '',
      systemUUID: '',
      kernelVersion: '',
      osImage: 'kubelet-pods',
      containerRuntimeVersion: 'kubelet-pods://simulated',
    };
  }
}

const CONDITION_TEXT: Record<(typeof CONDITION_TYPES)[number], { status: string; reason: string; message: string }> = {
  MemoryPressure: { status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
  DiskPressure: { status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  PIDPressure: { status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
  Ready: { status: 'True', reason: 'KubeletReady', message: 'kubelet-pods is posting ready status' },
};

// The heartbeat moves every update; the transition time only when the status flips.
function condition(type: (typeof CONDITION_TYPES)[number], previous: V1NodeCondition | undefined, now: Date) {
  const text = CONDITION_TEXT[type];
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

/** Node.js architecture names → the GOARCH names Kubernetes uses in labels and nodeInfo. */
function goArch(nodeArch: string): string {
  const map: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };
  return map[nodeArch] ?? nodeArch;
}

export function validateNodeName(name: string): void {
  if (typeof name !== 'string' || !isDNS1123Subdomain(name)) {
    throw kpError('KP_ERR_NODE_OPTIONS', ['nodeName', JSON.stringify(String(name))]);
  }
}
