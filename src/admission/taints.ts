import type { V1Taint, V1Toleration } from '@kubernetes/client-node';

/**
 * Taints and tolerations, the way the kubelet's admission reads them: only `NoExecute` taints
 * matter on the node (a `NoSchedule` one is the scheduler's business), and a taint is
 * tolerated when one toleration matches it.
 */

/**
 * Whether `toleration` matches `taint`: its effect is empty or the taint's; its key is empty
 * (which only `Exists` may leave so) or the taint's; `Exists` matches any value, `Equal` (or
 * no operator) only the taint's value; any other operator matches nothing.
 */
export function toleratesTaint(toleration: V1Toleration, taint: V1Taint): boolean {
  if (toleration.effect !== undefined && toleration.effect !== '' && toleration.effect !== taint.effect) return false;
  if (toleration.key !== undefined && toleration.key !== '' && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? '') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** The first `NoExecute` taint of `taints` that no toleration matches, if any. */
export function untoleratedNoExecuteTaint(taints: readonly V1Taint[], tolerations: readonly V1Toleration[]): V1Taint | undefined {
  return taints.find((t) => t.effect === 'NoExecute' && !tolerations.some((tol) => toleratesTaint(tol, t)));
}
