import { EMPTY_DICTIONARY, newDictionary, type Dictionary } from './dictionary.js';

const HOLE: unique symbol = Symbol('removed');

/** Holes are swept once there are more of them than this and than live keys. */
const MIN_HOLES_TO_SWEEP = 32;

/**
 * A string-keyed map for indexes whose keys come and go, such as the pod manager's, on a
 * dictionary-mode object (see dictionary.ts). A removed key is not deleted at once: it stays as
 * a hole, which a later `set` of the same key fills in place, and the holes go in one sweep
 * once they outnumber the live keys (so at most about half of the entries are holes, and the
 * sweep costs O(1) per removal over time).
 *
 * Why: a pod removed and added again, or a full name taken over by another pod, deletes a key
 * and sets it again. Deleting from a V8 hash table leaves a deleted marker and gives the key a
 * new place (and, for a dictionary, a new enumeration index) when it comes back, and the table
 * is rehashed once markers pile up; writing into a hole touches only the entry.
 *
 * Iteration order is the order in which keys were first set since they were last swept, which
 * callers must not rely on.
 */
export class TombstoneMap<K extends string, V extends {}> {
  // Made at the first key: an index that never holds one costs no table.
  #table: Dictionary<V | typeof HOLE> = EMPTY_DICTIONARY;
  // The table's keys, holes included, in the order they were first set: iterating a
  // dictionary-mode object lists and sorts its keys first, which at 100,000 keys costs a
  // hundred times a walk over this array.
  #keys: K[] = [];
  #holes = 0;

  /** Live keys. */
  get size(): number {
    return this.#keys.length - this.#holes;
  }

  get(key: K): V | undefined {
    const value = this.#table[key];
    return value === HOLE ? undefined : value;
  }

  has(key: K): boolean {
    const value = this.#table[key];
    return value !== undefined && value !== HOLE;
  }

  /** Sets `key`; true when it was not there (absent or removed). */
  set(key: K, value: V): boolean {
    const table = this.#table === EMPTY_DICTIONARY ? (this.#table = newDictionary()) : this.#table;
    const old = table[key];
    // Re-adding what is stored (an unchanged pod sent again) is common: a store would probe
    // the table a second time for nothing.
    if (old === value) return false;
    table[key] = value;
    if (old === undefined) this.#keys.push(key);
    else if (old === HOLE) this.#holes--;
    else return false;
    return true;
  }

  /** Removes `key`; true when it was there. */
  delete(key: K): boolean {
    const table = this.#table;
    const value = table[key];
    if (value === undefined || value === HOLE) return false;
    table[key] = HOLE;
    this.#holes++;
    this.settle();
    return true;
  }

  /**
   * Turns every key into a hole, for a reload that will set most of them again (each then fills
   * its hole in place). Call `settle()` after the reload.
   */
  holeAll(): void {
    const table = this.#table;
    for (const key of this.#keys) table[key] = HOLE;
    this.#holes = this.#keys.length;
  }

  /** Sweeps the holes if they outnumber the live keys. */
  settle(): void {
    if (this.#holes > MIN_HOLES_TO_SWEEP && this.#holes > this.#keys.length - this.#holes) this.#sweep();
  }

  clear(): void {
    this.#table = EMPTY_DICTIONARY;
    this.#keys = [];
    this.#holes = 0;
  }

  /** Calls `fn` for each live entry. */
  forEach(fn: (value: V, key: K) => void): void {
    const table = this.#table;
    for (const key of this.#keys) {
      const value = table[key]!;
      if (value !== HOLE) fn(value, key);
    }
  }

  // A new table with the live keys: deleting the holes one by one would shrink and rehash the
  // old table several times over.
  #sweep(): void {
    const old = this.#table;
    const table: Dictionary<V | typeof HOLE> = newDictionary();
    const keys: K[] = [];
    for (const key of this.#keys) {
      const value = old[key]!;
      if (value === HOLE) continue;
      table[key] = value;
      keys.push(key);
    }
    this.#table = table;
    this.#keys = keys;
    this.#holes = 0;
  }
}
