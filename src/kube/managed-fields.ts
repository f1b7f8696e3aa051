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

const MANAGED_FIELDS_KEY = ',"managedFields":[';
// The array's end: the API server writes managedFields last in the metadata (ObjectMeta's
// last field), and the objects watched here (Pods, Nodes) have a spec right after it.
// Neither pattern can occur inside a JSON string (its quotes would be escaped) nor inside the
// array (fieldsV1's keys all carry a prefix such as `f:`).
const MANAGED_FIELDS_END = ']},"spec":';

/**
 * One watch event's JSON text without the object's `metadata.managedFields`, cut out before
 * JSON.parse so that the tree is never built (see `withoutManagedFields` for why nothing keeps
 * it): finding the two patterns costs a fraction of parsing the array. Text that does not have
 * both patterns in that order (a bookmark, a Status, an object without managedFields or
 * without a spec) is returned as it is, to be parsed whole and trimmed after.
 */
export function withoutManagedFieldsText(text: string): string {
  const start = text.indexOf(MANAGED_FIELDS_KEY);
  if (start < 0) return text;
  const end = text.indexOf(MANAGED_FIELDS_END, start + MANAGED_FIELDS_KEY.length);
  if (end < 0) return text;
  return text.slice(0, start) + text.slice(end + 1);
}
