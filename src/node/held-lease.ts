import { isDeepStrictEqual } from 'node:util';
import type { V1Lease } from '@kubernetes/client-node';
import { withoutManagedFields } from '../kube/managed-fields.js';

/**
 * The Lease a node keeps until its next renewal, made from the server's answer to a write.
 *
 * A renewal changes the resourceVersion and the renewTime and nothing else, so when the rest
 * of the answer equals the Lease already held, the held objects are kept with those two values
 * new, and the answer's own objects are dropped at once. Held instead, they would live the 10 s
 * until the next renewal, long enough for the young generation to move them to the old one, where
 * they wait as garbage for a full GC: every node's renewal did that.
 */
export function heldLease(held: V1Lease | undefined, answer: V1Lease): V1Lease {
  const next = withoutManagedFields(answer);
  if (held === undefined || held.metadata === undefined || held.spec === undefined || next.spec === undefined) return next;
  const kept: V1Lease = {
    ...held,
    metadata: { ...held.metadata, resourceVersion: next.metadata?.resourceVersion },
    spec: { ...held.spec, renewTime: next.spec.renewTime },
  };
  return isDeepStrictEqual(kept, next) ? kept : next;
}
