import { newDictionary, type Dictionary } from './dictionary.js';
import { indexByName, isAmbiguousFullName } from './namespaced-name-index.js';
import { TombstoneMap } from './tombstone-map.js';
import type { Pod } from './types.js';

/**
 * The pod manager's two full-name (`name_namespace`) indexes: the non-mirror pod that wrote a
 * name last and the mirror pod that wrote it last, each independently of the other. Each maps
 * the name straight to the pod, so a lookup reads one table entry and no object in between;
 * storing a pod looks its partner up in the other index, which for a mirror's partner is the
 * small mirror index.
 */
export class PodsByFullName {
  #pods = new TombstoneMap<string, Pod>();
  // A node has few mirrors: lookups of a mirror by name probe a small table.
  #mirrors = new TombstoneMap<string, Pod>();
  // The same mirrors by namespace then name, for names that split one way only: a lookup by
  // pod then reads the pod's own name strings instead of finding its full name first. Built
  // by the first such lookup, so a manager that is never asked keeps none.
  #mirrorsByNamespace: Dictionary<TombstoneMap<string, Pod>> | undefined;
  // Mirror names held that split more than one way (see isAmbiguousFullName): while there are
  // none, a lookup by namespace and name that misses is a miss for the full name too. Counted
  // for mirrors only, which are written rarely: most pods have no mirror, so most lookups of
  // one miss, and checking the pod's own name instead would cost every such lookup a scan.
  #ambiguousMirrorNames = 0;

  /** Whether some mirror's full name splits more than one way. */
  get hasAmbiguousMirrorNames(): boolean {
    return this.#ambiguousMirrorNames > 0;
  }

  /** Non-mirror pods indexed. */
  get podCount(): number {
    return this.#pods.size;
  }

  getPod(fullName: string): Pod | undefined {
    return this.#pods.get(fullName);
  }

  getMirror(fullName: string): Pod | undefined {
    return this.#mirrors.get(fullName);
  }

  /** The mirror whose full name `name_namespace` is; only for names with `hasUnambiguousFullName`. */
  getMirrorByName(namespace: string, name: string): Pod | undefined {
    return (this.#mirrorsByNamespace ??= this.#indexMirrorsByName())[namespace]?.get(name);
  }

  /** Makes `pod` the non-mirror pod of `fullName`; returns the mirror of that name, which pairs with it. */
  setPod(fullName: string, pod: Pod): Pod | undefined {
    this.#pods.set(fullName, pod);
    return this.#mirrors.get(fullName);
  }

  /** Makes `mirror` the mirror pod of `fullName`; returns the non-mirror pod of that name, which pairs with it. */
  setMirror(fullName: string, mirror: Pod): Pod | undefined {
    if (this.#mirrors.set(fullName, mirror) && isAmbiguousFullName(fullName)) this.#ambiguousMirrorNames++;
    if (this.#mirrorsByNamespace !== undefined) indexByName(this.#mirrorsByNamespace, mirror);
    return this.#pods.get(fullName);
  }

  /** Forgets the non-mirror pod of `fullName`, whichever it is. */
  deletePod(fullName: string): void {
    this.#pods.delete(fullName);
  }

  /** Forgets the mirror pod of `fullName`, whichever it is. */
  deleteMirror(fullName: string): void {
    const mirror = this.#mirrors.get(fullName);
    if (mirror === undefined) return;
    this.#mirrors.delete(fullName);
    if (isAmbiguousFullName(fullName)) this.#ambiguousMirrorNames--;
    // A name that splits one way only is this mirror's own name and namespace.
    this.#mirrorsByNamespace?.[mirror.metadata?.namespace ?? '']?.delete(mirror.metadata?.name ?? '');
  }

  /** Forgets every pod and mirror, keeping their names' entries for a reload (see TombstoneMap.holeAll). */
  holeAll(): void {
    this.#pods.holeAll();
    this.#mirrors.holeAll();
    this.#mirrorsByNamespace = undefined;
    this.#ambiguousMirrorNames = 0;
  }

  /** After a reload: sweeps the names left empty if they outnumber the others. */
  settle(): void {
    this.#pods.settle();
    this.#mirrors.settle();
  }

  /** Calls `fn` for each full name that has a non-mirror pod. */
  forEachPod(fn: (pod: Pod, fullName: string) => void): void {
    this.#pods.forEach(fn);
  }

  /** Full names that have a mirror pod and no non-mirror pod. */
  orphanedMirrorFullNames(): string[] {
    const names: string[] = [];
    this.#mirrors.forEach((_mirror, fullName) => {
      if (!this.#pods.has(fullName)) names.push(fullName);
    });
    return names;
  }

  #indexMirrorsByName(): Dictionary<TombstoneMap<string, Pod>> {
    const byNamespace: Dictionary<TombstoneMap<string, Pod>> = newDictionary();
    this.#mirrors.forEach((mirror) => indexByName(byNamespace, mirror));
    return byNamespace;
  }
}
