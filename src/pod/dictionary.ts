/**
 * A string-keyed table for the pod manager's indexes: an object without a prototype, which V8
 * keeps in dictionary mode (a hash table of its own properties).
 *
 * Why not `Map`: a property lookup internalizes its key, and V8 turns the caller's string into
 * a reference to the internalized copy, so every later lookup with that string (a pod's UID,
 * name and namespace, a full name the caller keeps) probes the table and compares keys by
 * address. A `Map` compares the characters of every candidate key on each lookup and keeps its
 * entries apart from its buckets, so at 100,000 keys it reads more cache lines per lookup
 * (measured in docs/performance.md, pod manager section).
 *
 * Keys that read as array indexes ("123") land in the object's elements instead; they still
 * work, only iteration lists them first. Iterating builds the list of keys, so the indexes
 * iterate only on whole-manager calls and sweeps.
 */
export type Dictionary<V> = { [key: string]: V | undefined };

export function newDictionary<V>(): Dictionary<V> {
  return Object.create(null) as Dictionary<V>;
}

/**
 * The table of every index that has never held a key: read like any, never written (frozen, so
 * a write by mistake throws). A fleet node without pods has five indexes, and an empty
 * dictionary is not free (docs/performance.md, "What an empty node costs").
 */
export const EMPTY_DICTIONARY: Dictionary<never> = Object.freeze(newDictionary<never>());

/**
 * The engine's own copy of `key` as a property name (internalized). A string the pod manager
 * builds and keeps as a key, such as a full name, is otherwise a concatenation that the first
 * lookup turns into a reference to that copy, so every later lookup with it reads one object
 * more, which at 100,000 pods is often a cache miss (docs/performance.md, pod manager section).
 */
export function internalizedKey(key: string): string {
  const holder: Dictionary<true> = newDictionary();
  holder[key] = true;
  // The one own key of a dictionary is the name it was stored under: the internalized copy.
  return Object.keys(holder)[0]!;
}
