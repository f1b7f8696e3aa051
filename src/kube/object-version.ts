import type { KubeObject } from './list-watch.js';

/**
 * Two copies of the same version of an API object: same UID and resourceVersion. A relist
 * keeps the copy already handed on for these, so what follows it sees only what changed.
 */
export const sameVersion = (a: KubeObject, b: KubeObject): boolean =>
  a.metadata?.uid === b.metadata?.uid && a.metadata?.resourceVersion !== undefined && a.metadata.resourceVersion !== '' && a.metadata.resourceVersion === b.metadata?.resourceVersion;

/**
 * Whether resourceVersion `a` comes before `b`, read as etcd's revision numbers (as client-go
 * does not promise, but every API server backed by etcd gives); false when either is not one.
 */
export function versionBefore(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || a === '' || b === '') return false;
  const ra = Number(a);
  const rb = Number(b);
  return Number.isFinite(ra) && Number.isFinite(rb) && ra < rb;
}
