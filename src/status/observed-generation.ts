import type { V1PodStatus } from '@kubernetes/client-node';
import type { Pod } from '../pod/types.js';
import { KUBELET_OWNED_POD_CONDITIONS } from './kubelet-owned-conditions.js';

/**
 * The status as a v1.34 kubelet writes it for `pod`: `observedGeneration`, and that of each
 * condition the kubelet owns, is the pod's `metadata.generation` (PodObservedGenerationTracking,
 * on by default since v1.34), so that a controller can tell which spec the status answers.
 * A pod without a generation (a static pod read from its manifest) gets none, from the kubelet
 * too. `status` itself is not changed.
 */
export function withObservedGeneration(status: V1PodStatus, pod: Pod): V1PodStatus {
  const generation = podGeneration(pod);
  if (generation === 0) return status;
  const stamped: V1PodStatus = { ...status, observedGeneration: generation };
  if (status.conditions !== undefined) {
    stamped.conditions = status.conditions.map((c) => (KUBELET_OWNED_POD_CONDITIONS.has(c.type) ? { ...c, observedGeneration: generation } : c));
  }
  return stamped;
}

/** The pod's `metadata.generation`, 0 when it has none. */
export function podGeneration(pod: Pod): number {
  return pod.metadata?.generation ?? 0;
}
