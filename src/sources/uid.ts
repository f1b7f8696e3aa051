import { createHash } from 'node:crypto';
import type { Pod } from '../pod/types.js';
import { canonicalJSON } from '../values/canonical-json.js';

/** Where a static pod came from; it salts the UID so the same manifest differs per node/path/URL. */
export type StaticPodOrigin = { readonly file: string; readonly nodeName: string } | { readonly url: string };

/**
 * The UID of a static pod whose manifest has no `metadata.uid`.
 *
 * The kubelet hashes a Go-specific dump of its internal struct, which cannot be reproduced
 * here. kubelet-pods instead computes
 *
 *   lowercase hex MD5( canonicalJSON(pod, zero values dropped)
 *                      + ("host:" + nodeName + "file:" + path  |  "url:" + url) )
 *
 * over the pod as decoded and scheme-defaulted, BEFORE the static defaults (name suffix,
 * namespace, nodeName, hash annotation, toleration, phase). canonicalJSON sorts keys
 * byte-wise and drops null/undefined/false/0/"" fields but keeps empty arrays and objects.
 *
 * So, like the kubelet: reformatting, key order, comments and YAML vs JSON keep the UID;
 * stating a defaulted value explicitly keeps it; any semantic change, another node or another
 * path/URL changes it. Unlike the kubelet: the values differ from Go's, and adding API fields
 * in a kubelet upgrade does not change them. See docs/sources.md.
 */
export function computeStaticPodUID(pod: Pod, origin: StaticPodOrigin): string {
  const hash = createHash('md5');
  hash.update(canonicalJSON(withoutEmptyResources(pod), { dropZeroValues: true }));
  if ('file' in origin) hash.update(`host:${origin.nodeName}file:${origin.file}`);
  else hash.update(`url:${origin.url}`);
  return hash.digest('hex');
}

/**
 * A container's `resources` is a struct in Go, so the kubelet cannot tell `resources: {}` from
 * none: neither may change the UID here. The pod is copied only where that applies.
 */
function withoutEmptyResources(pod: Pod): Pod {
  const spec = pod.spec;
  if (spec === undefined) return pod;
  const lists = ['initContainers', 'containers', 'ephemeralContainers'] as const;
  const isEmpty = (c: { resources?: object }): boolean =>
    c.resources !== undefined && c.resources !== null && Object.keys(c.resources).length === 0;
  if (!lists.some((key) => (spec[key] as { resources?: object }[] | undefined)?.some(isEmpty))) return pod;
  const copy = { ...spec };
  for (const key of lists) {
    const list = spec[key] as { resources?: object }[] | undefined;
    if (!Array.isArray(list) || !list.some(isEmpty)) continue;
    (copy as Record<string, unknown>)[key] = list.map((c) => (isEmpty(c) ? { ...c, resources: undefined } : c));
  }
  return { ...pod, spec: copy };
}
