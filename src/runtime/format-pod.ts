import type { Pod } from '../pod/types.js';

/**
 * The kubelet's `format.Pod`: `name_namespace(uid)`, the one way its messages name a pod. The
 * runtime's Events and CrashLoopBackOff messages use it so they read exactly as a kubelet's.
 */
export function formatPod(pod: Pod): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}(${pod.metadata?.uid ?? ''})`;
}
