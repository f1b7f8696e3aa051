import type { V1ObjectMeta } from '@kubernetes/client-node';

/**
 * The `<namespace>/<name>` key of an API object, as client-go's MetaNamespaceKeyFunc builds it
 * for stores, except that a cluster-scoped object keeps the slash (`/name`): the same name in
 * two namespaces is two objects, and a missing field reads as empty rather than `undefined`.
 */
export const objectKey = (object: { metadata?: V1ObjectMeta }): string =>
  `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
