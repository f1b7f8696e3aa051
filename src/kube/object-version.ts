import type { KubeObject } from './list-watch.js';

/**
 * Two copies of the same version of an API object: same UID and resourceVersion. A relist
 * keeps the copy already handed on for these, so what follows it sees only what changed.
 */
export const sameVersion = (a: KubeObject, b: KubeObject): boolean =>
  a.metadata?.uid === b.metadata?.uid && a.metadata?.resourceVersion !== undefined && a.metadata.resourceVersion !== '' && a.metadata.resourceVersion === b.metadata?.resourceVersion;
