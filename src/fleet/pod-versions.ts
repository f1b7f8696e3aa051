import type { Pod } from '../pod/types.js';
import { jsonEqual } from '../values/canonical-json.js';

/** Metadata fields that keep their value from one version of a pod to the next. */
const LASTING_METADATA = ['name', 'namespace', 'uid', 'generateName', 'creationTimestamp'] as const;

/**
 * Gives `next`, a new version of `held` fresh from the watch, the parts of `held` it has
 * unchanged: the spec, the status, labels, annotations and owner references when equal, and
 * the metadata's lasting strings. Every version of a pod arrives as a tree of its own, and the
 * components that took a pod at one version (the runtime, the merger's stored metadata) kept
 * that version's tree beside the newest one (docs/performance.md, "The fleet's cost per pod").
 * Only `next`'s top level and metadata are changed: the parts are frozen shared values.
 */
export function reuseUnchangedParts(held: Pod, next: Pod): void {
  const before = held.metadata;
  const after = next.metadata;
  if (before === undefined || after === undefined || before === null || after === null || before.uid !== after.uid) return;
  if (same(held.spec, next.spec)) next.spec = held.spec;
  if (same(held.status, next.status)) next.status = held.status;
  if (same(before.labels, after.labels)) after.labels = before.labels;
  if (same(before.annotations, after.annotations)) after.annotations = before.annotations;
  if (same(before.ownerReferences, after.ownerReferences)) after.ownerReferences = before.ownerReferences;
  const from = before as Record<string, unknown>;
  const to = after as Record<string, unknown>;
  for (const field of LASTING_METADATA) {
    if (typeof to[field] === 'string' && to[field] === from[field]) to[field] = from[field];
  }
}

/** Two objects (not the same one) of equal content: the older can stand for the newer. */
function same(held: unknown, next: unknown): boolean {
  return typeof held === 'object' && held !== null && typeof next === 'object' && next !== null && held !== next && jsonEqual(held, next);
}
