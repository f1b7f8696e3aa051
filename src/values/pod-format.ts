import type { V1ObjectMeta } from '@kubernetes/client-node';

/**
 * How a pod is named where it is not a key: its UID, and its form in logs and messages. A pod
 * is read only through its metadata, so `Pod` fits without values/ importing pod/ (pod/ imports
 * values/, and the folders must not form a cycle).
 */
export interface PodMeta {
  readonly metadata?: Pick<V1ObjectMeta, 'name' | 'namespace' | 'uid'> | undefined;
}

/** The pod's UID, '' when it has none (a pod not yet through a source's defaults). */
export function podUID(pod: PodMeta): string {
  return pod.metadata?.uid ?? '';
}

/** The kubelet's `format.Pod`: `name_namespace(uid)`, missing parts as ''. */
export function formatPod(pod: PodMeta): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}(${pod.metadata?.uid ?? ''})`;
}
