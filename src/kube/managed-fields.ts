import type { V1ObjectMeta } from '@kubernetes/client-node';

/**
 * The object without `metadata.managedFields`: server-side apply's record of who set which
 * field. In a mirror pod, a Node or a Lease it is the largest part (a tree of a hundred or
 * more small objects), and nothing here reads it. A PUT without it keeps the server's record
 * (the API server takes the live object's when a request carries none), so a Lease renewed
 * from a trimmed copy changes nothing on the server. At 1,000 fleet nodes these trees were a
 * third of the heap's objects, all of them marked by every full GC (docs/performance.md).
 *
 * Only the metadata is copied (a fresh object, not a `delete`, which would leave it slow);
 * everything else is shared with `obj`.
 */
export function withoutManagedFields<T extends { metadata?: V1ObjectMeta }>(obj: T): T {
  const metadata = obj.metadata;
  if (metadata === undefined || metadata === null || metadata.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...rest } = metadata;
  return { ...obj, metadata: rest };
}
