import { TombstoneMap } from './tombstone-map.js';
import type { Pod } from './types.js';

/**
 * What one full name (`name_namespace`) holds: the non-mirror pod that wrote it last and the
 * mirror pod that wrote it last, each independently of the other. One entry serves both
 * indexes, so storing a pod and finding the mirror it pairs with is one lookup, not two.
 */
export interface FullNameEntry {
  pod: Pod | undefined;
  mirror: Pod | undefined;
}

/** Empty entries are swept once there are more of them than this and than used ones. */
const MIN_EMPTY_TO_SWEEP = 32;

/**
 * The pod manager's two full-name indexes, non-mirror pods and mirror pods, in one map. A name
 * whose pods are both removed keeps its entry, empty, so that a pod coming back under the same
 * name (a manifest edit: the same name under a new UID; a mirror replaced; a pod removed and
 * added again) fills it in place:
 * in V8, deleting a Map key and setting it again appends a new entry and sooner or later copies
 * the whole table, several times the cost of writing to an entry that is still there. Empty
 * entries are swept once they outnumber used ones.
 */
export class PodsByFullName {
  #entries = new Map<string, FullNameEntry>();
  // The mirrors again, by themselves: a node has few, so lookups of a mirror by name probe a
  // small map instead of the entry of every pod.
  #mirrors = new TombstoneMap<string, Pod>();
  #empty = 0;
  #pods = 0;

  /** Non-mirror pods indexed. */
  get podCount(): number {
    return this.#pods;
  }

  getPod(fullName: string): Pod | undefined {
    return this.#entries.get(fullName)?.pod;
  }

  getMirror(fullName: string): Pod | undefined {
    return this.#mirrors.get(fullName);
  }

  /** Makes `pod` the non-mirror pod of `fullName`; returns the entry (its mirror pairs with it). */
  setPod(fullName: string, pod: Pod): FullNameEntry {
    const entry = this.#entry(fullName);
    if (entry.pod === undefined) this.#pods++;
    entry.pod = pod;
    return entry;
  }

  /** Makes `mirror` the mirror pod of `fullName`; returns the entry (its pod pairs with it). */
  setMirror(fullName: string, mirror: Pod): FullNameEntry {
    const entry = this.#entry(fullName);
    entry.mirror = mirror;
    this.#mirrors.set(fullName, mirror);
    return entry;
  }

  /** Forgets the non-mirror pod of `fullName`, whichever it is. */
  deletePod(fullName: string): void {
    const entry = this.#entries.get(fullName);
    if (entry?.pod === undefined) return;
    entry.pod = undefined;
    this.#pods--;
    if (entry.mirror === undefined) this.#emptied();
  }

  /** Forgets the mirror pod of `fullName`, whichever it is. */
  deleteMirror(fullName: string): void {
    const entry = this.#entries.get(fullName);
    if (entry?.mirror === undefined) return;
    entry.mirror = undefined;
    this.#mirrors.delete(fullName);
    if (entry.pod === undefined) this.#emptied();
  }

  /** Calls `fn` for each full name that has a non-mirror pod. */
  forEachPod(fn: (pod: Pod, fullName: string) => void): void {
    for (const [fullName, entry] of this.#entries) if (entry.pod !== undefined) fn(entry.pod, fullName);
  }

  /** Full names that have a mirror pod and no non-mirror pod. */
  orphanedMirrorFullNames(): string[] {
    const names: string[] = [];
    this.#mirrors.forEach((_mirror, fullName) => {
      if (this.#entries.get(fullName)?.pod === undefined) names.push(fullName);
    });
    return names;
  }

  #entry(fullName: string): FullNameEntry {
    let entry = this.#entries.get(fullName);
    if (entry === undefined) {
      entry = { pod: undefined, mirror: undefined };
      this.#entries.set(fullName, entry);
    } else if (entry.pod === undefined && entry.mirror === undefined) {
      this.#empty--;
    }
    return entry;
  }

  #emptied(): void {
    if (++this.#empty > MIN_EMPTY_TO_SWEEP && this.#empty > this.#entries.size - this.#empty) {
      for (const [fullName, entry] of this.#entries) {
        if (entry.pod === undefined && entry.mirror === undefined) this.#entries.delete(fullName);
      }
      this.#empty = 0;
    }
  }
}
