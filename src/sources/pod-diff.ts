import {
  CONFIG_FIRST_SEEN_ANNOTATION_KEY,
  CONFIG_MIRROR_ANNOTATION_KEY,
  CONFIG_SOURCE_ANNOTATION_KEY,
} from '../constants.js';
import type { Pod } from '../pod/types.js';
import { jsonEqual } from '../values/canonical-json.js';

// How a new version of a pod relates to the version the merger stores (the kubelet's
// checkAndUpdatePod), and the objects the merger stores. Stored pods are never mutated: a
// change builds a new object that shares every unchanged part with the objects it came from.

/** Annotations the kubelet owns: ignored when comparing pods, kept across updates. */
const LOCAL_ANNOTATIONS = [CONFIG_SOURCE_ANNOTATION_KEY, CONFIG_MIRROR_ANNOTATION_KEY, CONFIG_FIRST_SEEN_ANNOTATION_KEY];

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * `config.seen`: local time as `YYYY-MM-DDTHH:mm:ss.fffffffff` plus `Z` (UTC) or `±hh:mm`,
 * always 9 fractional digits (JavaScript has milliseconds; the rest are zeros).
 */
export function formatSeenTimestamp(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const zone = offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  // Joined, not concatenated: every pod stamped in a merge holds this string, and a
  // concatenation would be a tree of five strings.
  return [
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`,
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`,
    `.${pad(date.getMilliseconds(), 3)}000000${zone}`,
  ].join('');
}

/** Annotations other than the kubelet's own, which never make two versions of a pod differ. */
function sameNonLocalAnnotations(a: Pod, b: Pod): boolean {
  const aa = a.metadata?.annotations ?? {};
  const ba = b.metadata?.annotations ?? {};
  let present = 0;
  for (const key of Object.keys(aa)) {
    if (LOCAL_ANNOTATIONS.includes(key) || aa[key] === undefined || aa[key] === null) continue;
    present += 1;
    if (aa[key] !== ba[key]) return false;
  }
  for (const key of Object.keys(ba)) {
    if (!LOCAL_ANNOTATIONS.includes(key) && ba[key] !== undefined && ba[key] !== null) present -= 1;
  }
  return present === 0;
}

/**
 * Whether two versions of a pod are the same in the fields whose change makes a pod
 * "semantically different" (an UPDATE or DELETE): spec, labels, deletion fields and the
 * annotations the kubelet does not own.
 */
export function sameSemantics(a: Pod, b: Pod): boolean {
  return (
    jsonEqual(a.spec, b.spec) &&
    jsonEqual(a.metadata?.labels ?? {}, b.metadata?.labels ?? {}) &&
    jsonEqual(a.metadata?.deletionTimestamp, b.metadata?.deletionTimestamp) &&
    jsonEqual(a.metadata?.deletionGracePeriodSeconds, b.metadata?.deletionGracePeriodSeconds) &&
    sameNonLocalAnnotations(a, b)
  );
}

/**
 * `{ ...base, ...extra }`, made so that the copies of objects of one shape share V8's hidden
 * class: once a spread site takes its fast path, a property added to the copy (`{ ...metadata,
 * annotations }` on metadata without annotations) gives every copy a hidden class and
 * descriptors of its own, about 250 bytes a pod (docs/performance.md, "The fleet's cost per pod").
 * So a copy that adds keys is built by Object.assign; one that only replaces values stays a
 * spread (its copy is the more compact), as does one with a `__proto__` key, which Object.assign
 * would take as the prototype.
 */
export function copyWith<T extends object>(base: T | undefined | null, extra: Partial<T>): T {
  const own = base ?? {};
  const adds = Object.keys(extra).some((key) => !Object.hasOwn(own, key));
  if (!adds || Object.hasOwn(own, '__proto__') || Object.hasOwn(extra, '__proto__')) return { ...base, ...extra } as T;
  return Object.assign({}, base, extra) as T;
}

/** Sets `key` to `value`, or leaves it out when the value is undefined (as a copy would). */
function put<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}

/**
 * What the merger stores for a pod it has not seen from `source` before: the source's object
 * with `config.source` and `config.seen` stamped. Only the pod, its metadata and its
 * annotations are new objects; spec and status are the source's.
 */
export function stampNewPod(pod: Pod, source: string, seen: string): Pod {
  const metadata = pod.metadata ?? {};
  const annotations = copyWith<Record<string, string>>(metadata.annotations, { [CONFIG_SOURCE_ANNOTATION_KEY]: source, [CONFIG_FIRST_SEEN_ANNOTATION_KEY]: seen });
  return copyWith(pod, { metadata: copyWith(metadata, { annotations }) });
}

/** What a new version of a known pod is, with the object to store instead when it changed. */
export type PodVersionChange =
  | { readonly change: 'none' }
  | { readonly change: 'reconcile' | 'update' | 'delete'; readonly pod: Pod };

/**
 * Compares the stored version of a pod with a new one from `source` (never mutating either).
 * Status-only change: reconcile, the stored pod with the new status. Semantic change: update,
 * or delete when the new version has a deletionTimestamp; the stored pod then takes the new
 * spec, labels, deletion fields, generation, status and annotations, keeping its other metadata (name,
 * resourceVersion…) and the kubelet's own annotations (`config.seen` first of all).
 */
export function mergePodVersion(existing: Pod, incoming: Pod, source: string): PodVersionChange {
  if (sameSemantics(existing, incoming)) {
    if (jsonEqual(existing.status, incoming.status)) return { change: 'none' };
    // The new spec equals the stored one; taking it lets the superseded source object go.
    const pod: Pod = { ...existing };
    put(pod, 'spec', incoming.spec);
    put(pod, 'status', incoming.status);
    return { change: 'reconcile', pod };
  }
  const existingAnnotations = existing.metadata?.annotations ?? {};
  const incomingMeta = incoming.metadata ?? {};
  const annotations = copyWith<Record<string, string>>(incomingMeta.annotations, { [CONFIG_SOURCE_ANNOTATION_KEY]: source });
  const seen = existingAnnotations[CONFIG_FIRST_SEEN_ANNOTATION_KEY];
  if (seen !== undefined) annotations[CONFIG_FIRST_SEEN_ANNOTATION_KEY] = seen;
  for (const key of LOCAL_ANNOTATIONS) {
    const value = existingAnnotations[key];
    if (value !== undefined) annotations[key] = value;
  }
  const metadata = { ...existing.metadata };
  put(metadata, 'labels', incomingMeta.labels);
  put(metadata, 'deletionTimestamp', incomingMeta.deletionTimestamp);
  put(metadata, 'deletionGracePeriodSeconds', incomingMeta.deletionGracePeriodSeconds);
  put(metadata, 'generation', incomingMeta.generation);
  metadata.annotations = annotations;
  const pod: Pod = { ...existing, metadata };
  put(pod, 'spec', incoming.spec);
  put(pod, 'status', incoming.status);
  return { change: incomingMeta.deletionTimestamp ? 'delete' : 'update', pod };
}
