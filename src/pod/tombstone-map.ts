const HOLE: unique symbol = Symbol('removed');

/** Holes are swept once there are more of them than this and than live keys. */
const MIN_HOLES_TO_SWEEP = 32;

/**
 * A Map for indexes whose keys come and go, such as the pod manager's. A removed key is not
 * deleted at once: it stays as a hole, which a later `set` of the same key fills in place, and
 * the holes are deleted in one sweep once they outnumber the live keys (so at most about half
 * of the entries are holes, and the sweep costs O(1) per removal over time).
 *
 * Why: in V8, `delete` followed by `set` of the same key does not reuse the entry. It appends a
 * new one, and once the table's spare room is used up the whole table is copied, and grown when
 * live keys are many: at 10,000 keys a delete+set costs three to five times a set of a present
 * key, and the copies (megabytes at 100,000 keys) feed the garbage collector. A pod removed and
 * added again, or a full name taken over by another pod, is that pattern.
 *
 * Iteration order is the order in which keys were first set since they were last swept, which
 * callers must not rely on.
 */
export class TombstoneMap<K, V extends {}> {
  #map = new Map<K, V | typeof HOLE>();
  #holes = 0;

  /** Live keys. */
  get size(): number {
    return this.#map.size - this.#holes;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    return value === HOLE ? undefined : value;
  }

  has(key: K): boolean {
    const value = this.#map.get(key);
    return value !== undefined && value !== HOLE;
  }

  set(key: K, value: V): void {
    const map = this.#map;
    if (map.get(key) === HOLE) this.#holes--;
    map.set(key, value);
  }

  /** Removes `key`; true when it was there. */
  delete(key: K): boolean {
    const map = this.#map;
    const value = map.get(key);
    if (value === undefined || value === HOLE) return false;
    map.set(key, HOLE);
    if (++this.#holes > MIN_HOLES_TO_SWEEP && this.#holes > map.size - this.#holes) this.#sweep();
    return true;
  }

  clear(): void {
    this.#map = new Map();
    this.#holes = 0;
  }

  /** Calls `fn` for each live entry. */
  forEach(fn: (value: V, key: K) => void): void {
    for (const [key, value] of this.#map) if (value !== HOLE) fn(value, key);
  }

  #sweep(): void {
    const map = this.#map;
    for (const [key, value] of map) if (value === HOLE) map.delete(key);
    this.#holes = 0;
  }
}
