import type { V1ContainerStatus, V1PodCondition, V1PodStatus, V1Taint } from '@kubernetes/client-node';
import { isCriticalPod, isMirrorPod, isStaticPod } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import { ForwardingStatusProvider } from '../status/forwarding-status-provider.js';
import type { StatusProvider } from '../status/status-provider.js';
import { realClock, type Clock } from '../time/clock.js';
import { quantityValue } from '../values/quantity.js';
import { hostPortsConflict, hostPortsOf, type HostPortUse } from './node-ports.js';
import { untoleratedNoExecuteTaint } from './taints.js';
import { podUID } from '../values/pod-format.js';

/**
 * Pod admission as the kubelet's predicate admit handler (`pkg/kubelet/lifecycle/predicate.go`)
 * does it, in its order: first what no eviction could help (the pod's `kubernetes.io/os`
 * label and `spec.os.name` against the node's OS), then the scheduler's general predicates on
 * the node's allocatable and the pods already admitted (the pods count, i.e. `maxPods`, CPU
 * and memory requests), node selector and required node affinity, `spec.nodeName`, host
 * ports, and for pods from the API server untolerated `NoExecute` taints. A rejected pod is
 * rejected for good (only a new pod, e.g. an edited manifest, is considered again); it stays
 * in the pod manager and still gets its mirror; its status is `Failed` with the kubelet's
 * reason and message. What the kubelet does that this leaves out: ephemeral-storage and
 * extended-resource fit, the eviction manager's and node shutdown's rejections, sysctls, and
 * the preemption of non-critical pods to make room for a critical one (static pods are
 * critical; the only other pods are the API server's, which kubelet-pods does not run).
 */
export type AdmitResult = { readonly admit: true } | { readonly admit: false; readonly reason: string; readonly message: string };

/** The node's allocatable, name, labels and taints, as much of it as admission reads. */
export interface AdmissionNode {
  readonly metadata?: { readonly name?: string; readonly labels?: Readonly<Record<string, string>> };
  readonly spec?: { readonly taints?: readonly V1Taint[] };
  readonly status?: { readonly allocatable?: Readonly<Record<string, string>> };
}

/** The operating system of every node kubelet-pods runs or simulates (the kubelet's runtime.GOOS). */
export const NODE_OS = 'linux';

// The kubelet writes every rejection's message behind this prefix (`rejectPod` in kubelet.go).
const REJECTED = 'Pod was rejected: ';

/** A failed general predicate, reported as the kubelet's PredicateFailureError is. */
function predicateRejection(name: string, reason: string): { reason: string; message: string } {
  return Object.freeze({ reason: name, message: `${REJECTED}Predicate ${name} failed: ${reason}` });
}

/** The kubelet's rejection of a pod whose node selector or required node affinity the node does not match. */
export const NODE_AFFINITY_REJECTION = predicateRejection('NodeAffinity', "node(s) didn't match Pod's node affinity/selector");
/** A pod whose `spec.nodeName` names another node. */
export const NODE_NAME_REJECTION = predicateRejection('NodeName', "node(s) didn't match the requested node name");
/** A pod wanting a host port another admitted pod holds. */
export const NODE_PORTS_REJECTION = predicateRejection('NodePorts', "node(s) didn't have free ports for the requested pod ports");
/** A pod from the API server not tolerating one of the node's `NoExecute` taints. */
export const TAINT_REJECTION = predicateRejection('TaintToleration', "node(s) had taints that the pod didn't tolerate");
/** A pod whose `kubernetes.io/os` label names another OS than the node's. */
export const OS_LABEL_REJECTION = Object.freeze({
  reason: 'PodOSSelectorNodeLabelDoesNotMatch',
  message: `${REJECTED}Failed to admit pod as the \`kubernetes.io/os\` label doesn't match node label`,
});
/** A pod whose `spec.os.name` is another OS than the node's. */
export const OS_FIELD_REJECTION = Object.freeze({
  reason: 'PodOSNotSupported',
  message: `${REJECTED}Failed to admit pod as the OS field doesn't match node OS`,
});

type NodeSelectorRequirement = { key: string; operator: string; values?: string[] };

/**
 * The scheduler's node affinity filter as the kubelet's admission runs it (GeneralPredicates):
 * every `nodeSelector` label must be on the node, and when the pod has required node affinity,
 * one of its terms must match: all of a term's `matchExpressions` on the labels (In, NotIn,
 * Exists, DoesNotExist, Gt, Lt) and `matchFields` on `metadata.name`; a term with neither
 * matches nothing.
 */
export function matchesNodeAffinity(pod: Pod, node: AdmissionNode): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required === undefined) return true;
  const fields: Record<string, string> = node.metadata?.name !== undefined ? { 'metadata.name': node.metadata.name } : {};
  return (required.nodeSelectorTerms ?? []).some((term) => {
    const expressions = (term.matchExpressions ?? []) as NodeSelectorRequirement[];
    const fieldReqs = (term.matchFields ?? []) as NodeSelectorRequirement[];
    if (expressions.length === 0 && fieldReqs.length === 0) return false;
    return expressions.every((r) => requirementHolds(r, labels)) && fieldReqs.every((r) => requirementHolds(r, fields));
  });
}

function requirementHolds(r: NodeSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(value!);
    case 'NotIn':
      return !has || !values.includes(value!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || values.length !== 1) return false;
      const a = Number.parseInt(value!, 10);
      const b = Number.parseInt(values[0]!, 10);
      if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/**
 * What the pods already admitted (and not finished) hold on the node: their number and the
 * sum of their CPU (millicores) and memory (bytes) requests, as `podRequests` counts them. A
 * caller holding the pods in a map passes running totals instead of an array per decision.
 */
export interface ActivePods {
  readonly length: number;
  readonly milliCPU?: number;
  readonly memory?: number;
  /** The host ports they hold (hostPortsOf). */
  readonly hostPorts?: Iterable<HostPortUse>;
}

/** A pod's CPU (millicores, rounded up) and memory (bytes, rounded up) requests. */
export interface PodRequests {
  readonly milliCPU: number;
  readonly memory: number;
}

type ResourceMap = Readonly<Record<string, unknown>> | undefined;

function requestOf(list: ResourceMap, name: 'cpu' | 'memory'): number {
  const q = list?.[name];
  if (q === undefined || q === null) return 0;
  const value = quantityValue(String(q));
  if (!Number.isFinite(value) || value <= 0) return 0;
  return name === 'cpu' ? Math.ceil(Math.round(value * 1e9) / 1e6) : Math.ceil(value);
}

/**
 * The pod's requests as the scheduler's resource fit (and so the kubelet's admission) counts
 * them: the regular containers' sum plus the sidecars' (init containers with restartPolicy
 * Always), or, if larger, what the pod needs while an init container runs (that container plus
 * the sidecars started before it); pod-level requests replace the containers' for the
 * resources they name; the pod overhead is added.
 */
export function podRequests(pod: Pod): PodRequests {
  const total = { milliCPU: 0, memory: 0 };
  for (const c of pod.spec?.containers ?? []) {
    total.milliCPU += requestOf(c.resources?.requests, 'cpu');
    total.memory += requestOf(c.resources?.requests, 'memory');
  }
  const sidecars = { milliCPU: 0, memory: 0 };
  const initPeak = { milliCPU: 0, memory: 0 };
  for (const c of pod.spec?.initContainers ?? []) {
    const cpu = requestOf(c.resources?.requests, 'cpu');
    const memory = requestOf(c.resources?.requests, 'memory');
    if (c.restartPolicy === 'Always') {
      total.milliCPU += cpu;
      total.memory += memory;
      sidecars.milliCPU += cpu;
      sidecars.memory += memory;
      initPeak.milliCPU = Math.max(initPeak.milliCPU, sidecars.milliCPU);
      initPeak.memory = Math.max(initPeak.memory, sidecars.memory);
    } else {
      initPeak.milliCPU = Math.max(initPeak.milliCPU, cpu + sidecars.milliCPU);
      initPeak.memory = Math.max(initPeak.memory, memory + sidecars.memory);
    }
  }
  let milliCPU = Math.max(total.milliCPU, initPeak.milliCPU);
  let memory = Math.max(total.memory, initPeak.memory);
  const podLevel = (pod.spec as { resources?: { requests?: Record<string, unknown> } } | undefined)?.resources?.requests;
  if (podLevel?.['cpu'] !== undefined) milliCPU = requestOf(podLevel, 'cpu');
  if (podLevel?.['memory'] !== undefined) memory = requestOf(podLevel, 'memory');
  const overhead = pod.spec?.overhead as ResourceMap;
  return { milliCPU: milliCPU + requestOf(overhead, 'cpu'), memory: memory + requestOf(overhead, 'memory') };
}

// Equal requests of admitted pods, held once for every node: a fleet admits thousands of pods
// with a few distinct requests, and each kept its own object (about 40 bytes). Forgotten
// wholesale when full, as the status parts' tables are.
const HELD_REQUESTS_LIMIT = 1024;
const heldRequestsTable = new Map<string, PodRequests>();

/** `requests`, or an equal frozen object already held. */
export function heldRequests(requests: PodRequests): PodRequests {
  const key = `${requests.milliCPU}/${requests.memory}`;
  const held = heldRequestsTable.get(key);
  if (held !== undefined) return held;
  if (heldRequestsTable.size >= HELD_REQUESTS_LIMIT) heldRequestsTable.clear();
  const frozen = Object.freeze({ milliCPU: requests.milliCPU, memory: requests.memory });
  heldRequestsTable.set(key, frozen);
  return frozen;
}

/** One resource the pod does not fit in, with the figures the kubelet's message gives. */
interface Insufficient {
  readonly resource: 'pods' | 'cpu' | 'memory';
  readonly requested: number;
  readonly used: number;
  readonly capacity: number;
}

/** The node's allocatable of `name` in the unit admission counts (pods, millicores, bytes); undefined if not reported. */
function allocatableOf(node: AdmissionNode, name: 'pods' | 'cpu' | 'memory'): number | undefined {
  const text = node.status?.allocatable?.[name];
  if (text === undefined) return undefined;
  const value = quantityValue(text);
  if (!Number.isFinite(value)) return undefined;
  return name === 'cpu' ? Math.round(value * 1000) : Math.round(value);
}

/**
 * Whether `pod` fits beside `activePods` on `node`, checked as the kubelet's predicate admit
 * handler does. First, failures no eviction could cure: the pod's `kubernetes.io/os` label,
 * then `spec.os.name`, against the node's OS (`PodOSSelectorNodeLabelDoesNotMatch`,
 * `PodOSNotSupported`). Then the general predicates, all of them collected: the pods count,
 * CPU and memory (a pod requesting none of a resource always fits in it; a resource the node
 * does not report is not checked), node affinity (when the node's labels are known),
 * `spec.nodeName`, host ports, and, for pods from the API server only, untolerated
 * `NoExecute` taints. A rejection names the first failure: `OutOfpods`, `OutOfcpu`,
 * `OutOfmemory` with the kubelet's message, or the predicate's name. A critical pod (every
 * static pod is one) is rejected for its first failure that is not about resources; short only
 * of resources it gets `UnexpectedAdmissionError`, which is what the kubelet reports when it
 * finds no pod to evict to make room.
 */
export function admitPod(pod: Pod, activePods: ActivePods, node: AdmissionNode): AdmitResult {
  const osLabel = pod.metadata?.labels?.['kubernetes.io/os'];
  // The kubelet compares with its own OS, whatever the Node's label says.
  if (osLabel !== undefined && osLabel !== NODE_OS) return { admit: false, ...OS_LABEL_REJECTION };
  const osName = pod.spec?.os?.name;
  if (osName !== undefined && osName !== NODE_OS) return { admit: false, ...OS_FIELD_REJECTION };

  const failures: Insufficient[] = [];
  const pods = allocatableOf(node, 'pods');
  if (pods !== undefined && activePods.length + 1 > pods) failures.push({ resource: 'pods', requested: 1, used: activePods.length, capacity: pods });
  const requests = podRequests(pod);
  for (const [resource, requested, used] of [
    ['cpu', requests.milliCPU, activePods.milliCPU ?? 0],
    ['memory', requests.memory, activePods.memory ?? 0],
  ] as const) {
    const capacity = allocatableOf(node, resource);
    if (capacity !== undefined && requested > 0 && requested > capacity - used) failures.push({ resource, requested, used, capacity });
  }
  const predicates = otherPredicateFailures(pod, activePods, node);
  if (failures.length === 0 && predicates.length === 0) return { admit: true };
  if (isCriticalPod(pod)) {
    // The kubelet tries to evict pods for a critical pod short of resources only; any other
    // failure is reported as it is. Finding nothing to evict, it reports the failed attempt.
    if (predicates.length > 0) return { admit: false, ...predicates[0]! };
    const f = failures[0]!;
    const figures = f.resource === 'pods' ? '' : `, requested ${f.requested}`;
    return {
      admit: false,
      reason: 'UnexpectedAdmissionError',
      message: `${REJECTED}no pod could be evicted to make room for this critical pod (${f.resource} allocatable ${f.capacity}, in use ${f.used}${figures})`,
    };
  }
  const f = failures[0];
  if (f === undefined) return { admit: false, ...predicates[0]! };
  return {
    admit: false,
    reason: `OutOf${f.resource}`,
    message: `${REJECTED}Node didn't have enough resource: ${f.resource}, requested: ${f.requested}, used: ${f.used}, capacity: ${f.capacity}`,
  };
}

/** The general predicates after resource fit, each failing one in the scheduler's order. */
function otherPredicateFailures(pod: Pod, activePods: ActivePods, node: AdmissionNode): Array<{ reason: string; message: string }> {
  const out: Array<{ reason: string; message: string }> = [];
  if (node.metadata?.labels !== undefined && !matchesNodeAffinity(pod, node)) out.push(NODE_AFFINITY_REJECTION);
  const wantedNode = pod.spec?.nodeName;
  if (wantedNode !== undefined && wantedNode !== '' && node.metadata?.name !== undefined && wantedNode !== node.metadata.name) out.push(NODE_NAME_REJECTION);
  if (hostPortsConflict(hostPortsOf(pod), activePods.hostPorts ?? [])) out.push(NODE_PORTS_REJECTION);
  // The kubelet leaves taints alone for static pods: they are how a node's own parts run.
  if (!isStaticPod(pod) && untoleratedNoExecuteTaint(node.spec?.taints ?? [], pod.spec?.tolerations ?? []) !== undefined) out.push(TAINT_REJECTION);
  return out;
}

export interface PodAdmission {
  /**
   * Decides each new pod of an ADD, in order; pods seen before keep their decision. Mirror
   * pods are not admitted (they do not run).
   */
  admitNew(pods: readonly Pod[]): void;
  /** Forgets removed pods, freeing their slots for pods added later. */
  forget(pods: readonly Pod[]): void;
  /** The rejection of a pod, by UID, if it was rejected. */
  rejection(uid: string): Rejection | undefined;
}

export interface Rejection {
  readonly reason: string;
  readonly message: string;
  /** When it was rejected, in whole seconds. */
  readonly at: Date;
}

export function createPodAdmission(getNode: () => AdmissionNode, clock: Clock = realClock): PodAdmission {
  return new Admission(getNode, clock);
}

/**
 * What the admitted pods hold: their count, their requests summed, their host ports. A class,
 * its getter on the prototype: an object with the getter defined on it was in dictionary mode,
 * about 280 bytes for each fleet node (docs/performance.md, "What an empty node costs", third round).
 */
class UsedResources {
  length = 0;
  milliCPU = 0;
  memory = 0;
  /** The host ports of the admitted pods that hold any, by UID; made at the first. */
  ports: Map<string, HostPortUse[]> | undefined;

  get hostPorts(): HostPortUse[] {
    return this.ports === undefined ? [] : [...this.ports.values()].flat();
  }
}

/** createPodAdmission's admission. A class, its methods on the prototype: a fleet makes one per node. */
class Admission implements PodAdmission {
  // The maps are made at the first pod: a fleet node without pods holds none.
  #admitted: Map<string, PodRequests> | undefined;
  #rejected: Map<string, Rejection> | undefined;
  readonly #used = new UsedResources();

  constructor(
    private readonly getNode: () => AdmissionNode,
    private readonly clock: Clock,
  ) {}

  admitNew(pods: readonly Pod[]): void {
    const used = this.#used;
    for (const pod of pods) {
      const uid = podUID(pod);
      if (isMirrorPod(pod) || this.#admitted?.has(uid) === true || this.#rejected?.has(uid) === true) continue;
      const result = admitPod(pod, used, this.getNode());
      if (result.admit) {
        const requests = heldRequests(podRequests(pod));
        const admitted = (this.#admitted ??= new Map());
        admitted.set(uid, requests);
        used.length = admitted.size;
        used.milliCPU += requests.milliCPU;
        used.memory += requests.memory;
        const held = hostPortsOf(pod);
        if (held.length > 0) (used.ports ??= new Map()).set(uid, held);
      }
      else (this.#rejected ??= new Map()).set(uid, { reason: result.reason, message: result.message, at: new Date(Math.floor(this.clock.now().getTime() / 1000) * 1000) });
    }
  }

  forget(pods: readonly Pod[]): void {
    const used = this.#used;
    for (const pod of pods) {
      const uid = podUID(pod);
      const admitted = this.#admitted;
      const requests = admitted?.get(uid);
      if (admitted !== undefined && requests !== undefined) {
        admitted.delete(uid);
        used.length = admitted.size;
        used.milliCPU -= requests.milliCPU;
        used.memory -= requests.memory;
      }
      used.ports?.delete(uid);
      this.#rejected?.delete(uid);
    }
  }

  rejection(uid: string): Rejection | undefined {
    return this.#rejected?.get(uid);
  }
}

/**
 * A status provider that answers for rejected pods itself (`Failed`, with the rejection's
 * reason and message, as the kubelet writes a rejected pod) and asks `inner` about the others.
 * `hostIP` is the node's address, which a rejected pod reports too (it was bound to the node).
 */
export function withAdmission(inner: StatusProvider, admission: PodAdmission, options: { hostIP?: string } = {}): StatusProvider {
  return new AdmittedStatusProvider(inner, admission, options.hostIP);
}

/** withAdmission's provider: what it adds to the calls it passes on. */
class AdmittedStatusProvider extends ForwardingStatusProvider {
  constructor(
    inner: StatusProvider,
    private readonly admission: PodAdmission,
    private readonly hostIP: string | undefined,
  ) {
    super(inner);
  }

  override statusFor(pod: Pod, now: Date): V1PodStatus {
    const rejection = this.admission.rejection(podUID(pod));
    return rejection === undefined ? this.inner.statusFor(pod, now) : rejectedStatus(pod, rejection, this.hostIP);
  }

  // A rejected pod never ran: nothing to take over, nothing to stop.
  override adopt(pod: Pod, published: V1PodStatus): void {
    if (this.admission.rejection(pod.metadata?.uid ?? '') === undefined) this.inner.adopt!(pod, published);
  }

  override terminate(pod: Pod, grace: number): Promise<void> {
    return this.admission.rejection(podUID(pod)) === undefined ? this.inner.terminate!(pod, grace) : Promise.resolve();
  }
}

/**
 * The status of a rejected pod: Failed; the node's address as hostIP but no pod address (it
 * never got a sandbox); PodScheduled and
 * Initialized True, Ready and ContainersReady False with reason PodFailed; each container
 * terminated with reason ContainerStatusUnknown and exit code 137, as the kubelet reports the
 * containers of a pod it finished without running them. The start time is the rejection's.
 */
function rejectedStatus(pod: Pod, rejection: Rejection, hostIP: string | undefined): V1PodStatus {
  const at = rejection.at;
  const cond = (type: string, status: string, reason?: string): V1PodCondition =>
    reason === undefined ? { type, status, lastTransitionTime: at } : { type, status, reason, lastTransitionTime: at };
  const terminated = (name: string, image: string | undefined): V1ContainerStatus => ({
    name,
    image: image ?? '',
    imageID: '',
    ready: false,
    restartCount: 0,
    lastState: {},
    state: { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container never ran: its pod was rejected at admission' } },
  });
  return {
    phase: 'Failed',
    reason: rejection.reason,
    message: rejection.message,
    ...(hostIP !== undefined ? { hostIP, hostIPs: [{ ip: hostIP }] } : {}),
    startTime: at,
    conditions: [
      cond('PodReadyToStartContainers', 'False'),
      cond('Initialized', 'True'),
      cond('Ready', 'False', 'PodFailed'),
      cond('ContainersReady', 'False', 'PodFailed'),
      cond('PodScheduled', 'True'),
    ],
    containerStatuses: (pod.spec?.containers ?? []).map((c) => terminated(c.name, c.image)),
  };
}
