import { newDictionary, type Dictionary } from './dictionary.js';
import type { PodsByFullName } from './pods-by-full-name.js';
import type { Pod } from './types.js';
import { TombstoneMap } from './tombstone-map.js';

/**
 * Whether `name` and `namespace` join into a full name with exactly one `_`. Only such names
 * have a single way to be split back, so only they may be answered from the nested
 * namespace → name index without changing what the flat full-name index would answer.
 */
export function hasUnambiguousFullName(name: string, namespace: string): boolean {
  return !name.includes('_') && !namespace.includes('_');
}

/**
 * Whether a full name could come from more than one name and namespace: it has more than one
 * `_`, which happens exactly when its name or namespace has one (the opposite of
 * `hasUnambiguousFullName` for the two parts).
 */
export function isAmbiguousFullName(fullName: string): boolean {
  return fullName.indexOf('_') !== fullName.lastIndexOf('_');
}

/** Changes kept before the index is dropped instead of brought up to date, beyond one per pod. */
const MIN_LOG_TO_DROP = 1024;

/**
 * The pod manager's full-name index again, for names that split one way only, keyed namespace
 * then name: `getPodByName` then needs no string building and hashing. Only that lookup reads
 * it, so adding and removing pods only appends to a change log, and the index catches up when
 * it is next read. Once the log holds more changes than there are pods, index and log are
 * dropped, and the next read rebuilds the index from the full-name index; either way a change
 * costs O(1) over time, and a manager that is never asked by name keeps no index at all.
 */
export class NamespacedNameIndex {
  readonly #fullNameIndex: PodsByFullName;
  #byNamespace: Dictionary<TombstoneMap<string, Pod>> | undefined;
  // Pods in the order they were indexed (true) or unindexed (false) since the last read.
  #logPods: Pod[] = [];
  #logAdds: boolean[] = [];

  /** `fullNameIndex` is the manager's name → pod index this one must agree with. */
  constructor(fullNameIndex: PodsByFullName) {
    this.#fullNameIndex = fullNameIndex;
  }

  get(namespace: string, name: string): Pod | undefined {
    return this.#current()[namespace]?.get(name);
  }

  /** `pod` now holds its full name in the full-name index. */
  indexed(pod: Pod): void {
    this.#log(pod, true);
  }

  /** `pod`'s full name was removed from the full-name index, whichever pod held it. */
  unindexed(pod: Pod): void {
    this.#log(pod, false);
  }

  #log(pod: Pod, add: boolean): void {
    if (this.#byNamespace === undefined) return;
    this.#logPods.push(pod);
    this.#logAdds.push(add);
    if (this.#logPods.length > MIN_LOG_TO_DROP && this.#logPods.length > this.#fullNameIndex.podCount) this.#drop();
  }

  #current(): Dictionary<TombstoneMap<string, Pod>> {
    let byNamespace = this.#byNamespace;
    if (byNamespace === undefined) {
      byNamespace = this.#byNamespace = newDictionary();
      this.#fullNameIndex.forEachPod((pod) => indexByName(byNamespace!, pod));
      return byNamespace;
    }
    const pods = this.#logPods;
    if (pods.length > 0) {
      const adds = this.#logAdds;
      for (let i = 0; i < pods.length; i++) {
        if (adds[i]) indexByName(byNamespace, pods[i]!);
        else unset(byNamespace, pods[i]!);
      }
      this.#logPods = [];
      this.#logAdds = [];
    }
    return byNamespace;
  }

  #drop(): void {
    this.#byNamespace = undefined;
    this.#logPods = [];
    this.#logAdds = [];
  }
}

/** Files `pod` under its namespace and name in `byNamespace`, if its full name splits one way only. */
export function indexByName(byNamespace: Dictionary<TombstoneMap<string, Pod>>, pod: Pod): void {
  const name = pod.metadata?.name ?? '';
  const namespace = pod.metadata?.namespace ?? '';
  if (!hasUnambiguousFullName(name, namespace)) return;
  let byName = byNamespace[namespace];
  if (byName === undefined) byNamespace[namespace] = byName = new TombstoneMap();
  byName.set(name, pod);
}

function unset(byNamespace: Dictionary<TombstoneMap<string, Pod>>, pod: Pod): void {
  const name = pod.metadata?.name ?? '';
  const namespace = pod.metadata?.namespace ?? '';
  if (!hasUnambiguousFullName(name, namespace)) return;
  const byName = byNamespace[namespace];
  if (byName === undefined) return;
  byName.delete(name);
  if (byName.size === 0) delete byNamespace[namespace];
}
