import type { V1ContainerStatus, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { isCriticalPod, isMirrorPod } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import type { StatusProvider } from '../status/status-provider.js';
import { realClock, type Clock } from '../time/clock.js';

/**
 * Pod admission, the part of it that depends on the node's size: the `pods` allocatable (the
 * kubelet's `maxPods`). A pod is admitted while fewer pods than that are active on the node;
 * the others are rejected for good (a rejected pod is never admitted later, as in the kubelet:
 * only a new pod, e.g. an edited manifest, is considered again). A rejected pod stays in the
 * pod manager and still gets its mirror; its status is `Failed`.
 *
 * Node selector and required node affinity are checked against the Node's labels (reason
 * `NodeAffinity`, the kubelet's message). What the kubelet does that this leaves out: CPU,
 * memory and extended-resource fit (no simulated pod uses node resources), the OS label check,
 * NoExecute taints for ordinary pods, and the preemption of non-critical pods to make room for
 * a critical one (static pods are critical; the only other pods are the API server's, which
 * kubelet-pods does not run).
 */
export type AdmitResult = { readonly admit: true } | { readonly admit: false; readonly reason: string; readonly message: string };

/** The node's allocatable, name and labels, as much of it as admission reads. */
export interface AdmissionNode {
  readonly metadata?: { readonly name?: string; readonly labels?: Readonly<Record<string, string>> };
  readonly status?: { readonly allocatable?: Readonly<Record<string, string>> };
}

/** The kubelet's rejection of a pod whose node selector or required node affinity the node does not match. */
export const NODE_AFFINITY_REJECTION = Object.freeze({
  reason: 'NodeAffinity',
  message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
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
 * Whether `pod` fits beside `activePods` (pods already admitted and not finished) on `node`.
 * Only their number matters here, so a caller holding them in a map passes `{ length: size }`
 * instead of copying them into an array for every pod of a burst.
 */
export function admitPod(pod: Pod, activePods: { readonly length: number }, node: AdmissionNode): AdmitResult {
  const allocatable = Number(node.status?.allocatable?.['pods'] ?? Number.POSITIVE_INFINITY);
  if (!(activePods.length + 1 > allocatable)) {
    // Resources first, then node affinity, as GeneralPredicates reports them; only when the
    // node's labels are known.
    if (node.metadata?.labels !== undefined && !matchesNodeAffinity(pod, node)) return { admit: false, ...NODE_AFFINITY_REJECTION };
    return { admit: true };
  }
  // For a critical pod (every static pod is one) the kubelet first looks for pods to evict and,
  // finding none that would free a pod slot, reports the failed attempt under this reason; any
  // other pod gets the plain out-of-resource reason.
  if (isCriticalPod(pod)) {
    return {
      admit: false,
      reason: 'UnexpectedAdmissionError',
      message: `Pod was rejected: no pod could be evicted to make room for this critical pod (pods allocatable ${allocatable}, in use ${activePods.length})`,
    };
  }
  return {
    admit: false,
    reason: 'OutOfpods',
    message: `Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: ${activePods.length}, capacity: ${allocatable}`,
  };
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
  const admitted = new Map<string, Pod>();
  const rejected = new Map<string, Rejection>();
  return {
    admitNew(pods) {
      for (const pod of pods) {
        const uid = pod.metadata?.uid ?? '';
        if (isMirrorPod(pod) || admitted.has(uid) || rejected.has(uid)) continue;
        const result = admitPod(pod, { length: admitted.size }, getNode());
        if (result.admit) admitted.set(uid, pod);
        else rejected.set(uid, { reason: result.reason, message: result.message, at: new Date(Math.floor(clock.now().getTime() / 1000) * 1000) });
      }
    },
    forget(pods) {
      for (const pod of pods) {
        const uid = pod.metadata?.uid ?? '';
        admitted.delete(uid);
        rejected.delete(uid);
      }
    },
    rejection: (uid) => rejected.get(uid),
  };
}

/**
 * A status provider that answers for rejected pods itself (`Failed`, with the rejection's
 * reason and message, as the kubelet writes a rejected pod) and asks `inner` about the others.
 * `hostIP` is the node's address, which a rejected pod reports too (it was bound to the node).
 */
export function withAdmission(inner: StatusProvider, admission: PodAdmission, options: { hostIP?: string } = {}): StatusProvider {
  const wrapped: StatusProvider = {
    statusFor(pod, now) {
      const rejection = admission.rejection(pod.metadata?.uid ?? '');
      return rejection === undefined ? inner.statusFor(pod, now) : rejectedStatus(pod, rejection, options.hostIP);
    },
  };
  // Only the optional parts the inner provider has: the writer behaves differently without them.
  if (inner.onChange) wrapped.onChange = (listener) => inner.onChange!(listener);
  if (inner.forget) wrapped.forget = (uid) => inner.forget!(uid);
  // A rejected pod never ran: nothing to stop.
  if (inner.terminate) {
    wrapped.terminate = (pod, grace) => (admission.rejection(pod.metadata?.uid ?? '') === undefined ? inner.terminate!(pod, grace) : Promise.resolve());
  }
  if (inner.stop) wrapped.stop = () => inner.stop!();
  if (inner.containerLogs) wrapped.containerLogs = (uid, container) => inner.containerLogs!(uid, container);
  return wrapped;
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
