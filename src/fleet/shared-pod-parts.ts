import type { Pod } from '../pod/types.js';
import type { SharedValues } from '../values/shared-values.js';

/** Metadata strings that many pods have equal; a pod's name and UID are its own. */
const SHARED_METADATA_STRINGS = ['namespace', 'generateName', 'creationTimestamp'] as const;

/**
 * A pod's parts that pods of one template have in common, held once for the fleet
 * (src/values/shared-values.ts): the spec, the status (the parts of it that are equal: images,
 * resources, conditions written in the same second), the labels, annotations and owner
 * references, and the metadata's strings that pods share (namespace, generated name's prefix,
 * creation time). The pod's top level and metadata stay its own, so that the merger can copy them
 * to stamp its annotations (src/sources/pod-storage.ts). A pod being deleted is left as it is:
 * it is about to go, and its versions still take the unchanged parts of the one held
 * (src/fleet/pod-versions.ts); walking it into the table was CPU spent for nothing in a wave of
 * deletions.
 */
export function sharePodParts(values: SharedValues, pod: Pod): Pod {
  if (typeof pod !== 'object' || pod === null || pod.metadata?.deletionTimestamp != null) return pod;
  // A value only this pod has, in one version after another, stays out of the table.
  const uid = pod.metadata?.uid ?? undefined;
  if (pod.spec !== undefined) pod.spec = values.share(pod.spec, uid);
  if (pod.status !== undefined) pod.status = values.share(pod.status, uid);
  const metadata = pod.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (metadata.labels !== undefined) metadata.labels = values.share(metadata.labels, uid);
    if (metadata.annotations !== undefined) metadata.annotations = values.share(metadata.annotations, uid);
    if (metadata.ownerReferences !== undefined) metadata.ownerReferences = values.share(metadata.ownerReferences, uid);
    // Decoded from JSON, the creation time is a string whatever the type says.
    const fields = metadata as Record<string, unknown>;
    for (const field of SHARED_METADATA_STRINGS) {
      const value = fields[field];
      if (typeof value === 'string') fields[field] = values.share(value);
    }
  }
  return pod;
}
