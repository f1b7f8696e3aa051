import type { V1PodStatus } from '@kubernetes/client-node';
import { PatchStrategy } from '../kube/request-options.js';
import { KUBELET_OWNED_POD_CONDITIONS } from './kubelet-owned-conditions.js';

/**
 * The body of a mirror pod's status write, built apart from the writer's loop as the kubelet
 * builds its status patch in pkg/util/pod. The body only makes sense as a strategic merge
 * patch: the directives below are that patch type's.
 */

/** The patch type the body is built for. */
export const STATUS_PATCH_CONTENT_TYPE = PatchStrategy.StrategicMergePatch;

export interface StatusPatch {
  /** The mirror's UID: the server refuses the patch if the object is another one. */
  readonly metadata: { readonly uid: string };
  readonly status: Readonly<Record<string, unknown>>;
}

// Every PodCondition field but type and status. A strategic merge patch merges a condition into
// the server's one of the same type field by field, so fields we leave out must be sent as null.
const OPTIONAL_CONDITION_FIELDS = ['lastProbeTime', 'lastTransitionTime', 'message', 'observedGeneration', 'reason'] as const;

// Strategic merge patch directive: this list replaces the server's instead of merging into it.
const REPLACE_LIST = { $patch: 'replace' };

/**
 * The strategic merge patch of the status subresource, as the kubelet sends it: `metadata.uid`
 * as precondition and our status with only the kubelet's conditions (the server merges them by
 * type, keeping other controllers'), without resourceClaimStatuses (not ours to write). The
 * server merges podIPs and hostIPs by key too, so ours are marked to replace its lists: a
 * changed IP would otherwise be added next to the old one, and refused. `ours` is not changed.
 */
export function buildStatusPatch(mirrorUID: string, ours: V1PodStatus): StatusPatch {
  const status: Record<string, unknown> = { ...ours };
  delete status.resourceClaimStatuses;
  const conditions = (ours.conditions ?? []).filter((c) => KUBELET_OWNED_POD_CONDITIONS.has(c.type));
  if (conditions.length > 0) {
    status.conditions = conditions.map((c) => {
      const sent: Record<string, unknown> = { ...c };
      for (const field of OPTIONAL_CONDITION_FIELDS) sent[field] ??= null;
      return sent;
    });
  } else {
    delete status.conditions;
  }
  for (const key of ['podIPs', 'hostIPs'] as const) {
    const ips = ours[key];
    if (ips !== undefined) status[key] = [...ips, REPLACE_LIST];
  }
  return { metadata: { uid: mirrorUID }, status };
}
