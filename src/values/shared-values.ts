import { createStringPool } from './string-pool.js';

/**
 * Equal JSON values held once. Pods made from one template (a Deployment's, a DaemonSet's)
 * carry the same containers, volumes' sources, tolerations and labels, and every one of them
 * arrives from the watch as a tree of its own; a fleet holding thousands of them kept those
 * trees thousands of times (docs/performance.md, "Where the fleet's memory goes").
 *
 * `share(value)` walks a freshly decoded value bottom-up and, for every plain object or array
 * equal to one already shared and still alive, puts that one in its place; the others become
 * the shared ones. Every object it returns or puts in place is frozen, since other holders now
 * see it: a mutation throws instead of changing every pod at once. The value given is changed
 * in place (its parts replaced), so it must be one nobody else holds yet.
 *
 * The table holds its objects weakly (a `WeakRef` per distinct object, keyed by a hash of the
 * content), so a tree no pod holds any more goes with the pods; entries whose object is gone
 * are dropped once the table has doubled since the last sweep. An object enters it only when
 * its hash comes a second time, from another owner when the caller names one (the pod a value
 * belongs to): most of a pod's status and its uniquely named volumes never repeat, or repeat
 * only in the next version of the same pod, and an entry for each cost more than the sharing
 * saved. The hashes seen once are kept, with their owner, as small integers in a table of fixed
 * size, forgotten wholesale when full (it grew with the table before, to 4 hashes an entry,
 * and weighed more than the entries). Values that are not plain JSON (a Date, a class
 * instance) are left as they are, and so is every object holding one.
 *
 * Strings are held once too, by a string pool (src/values/string-pool.ts): an object that
 * differs from every other by one field (a container whose mount names the pod's own token
 * volume) stays the pod's own, but its paths, policies and timestamps need not be.
 */
export interface SharedValues {
  /**
   * `value` with its parts shared. `owner` (a pod's UID) keeps a value that only one owner
   * has, in one version after another, out of the table.
   */
  share<T>(value: T, owner?: string): T;
  /** Distinct objects in the table, alive or not yet swept (tests). */
  readonly size: number;
}

/** What the walk gives back for a value: the value to keep, and its hash; none for what is not plain JSON. */
type Shared = { value: unknown; hash: number | undefined };

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** 30 bits, so that hashes stay small integers (no heap number per key). */
function mix(hash: number, n: number): number {
  return (Math.imul(hash ^ n, FNV_PRIME) >>> 2) & 0x3fffffff;
}

function hashString(hash: number, s: string): number {
  let h = mix(hash, s.length);
  for (let i = 0; i < s.length; i++) h = mix(h, s.charCodeAt(i));
  return h;
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Same keys in the same order and the very same values: parts are shared first, so this is equality. */
function shallowEqual(a: object, b: object): boolean {
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || ra[ka[i]!] !== rb[ka[i]!]) return false;
  return true;
}

/** Hashes seen once that are remembered at most (then forgotten all at once). */
const SEEN_ONCE_MAX = 8192;
/** Strings this short are held once by V8's JSON parser already (it internalizes them). */
const PARSER_HOLDS_ONCE = 10;
/** The owner of a value given without one: every second sight counts. */
const NO_OWNER = -1;

export function createSharedValues(): SharedValues {
  const table = new Map<number, WeakRef<object>>();
  /** Hash seen once → the hash of its owner's name. */
  const seenOnce = new Map<number, number>();
  const strings = createStringPool();
  let sweepAt = 1024;
  let owner = NO_OWNER;

  const sweep = (): void => {
    for (const [hash, ref] of table) if (ref.deref() === undefined) table.delete(hash);
    sweepAt = Math.max(1024, table.size * 2);
  };

  const leaf = (v: unknown): Shared => {
    switch (typeof v) {
      case 'string': {
        const held = v.length <= PARSER_HOLDS_ONCE ? v : strings.string(v);
        return { value: held, hash: hashString(1, held) };
      }
      case 'number':
        return { value: v, hash: hashString(2, String(v)) };
      case 'boolean':
        return { value: v, hash: v ? 3 : 4 };
      default:
        return { value: v, hash: v === null ? 5 : v === undefined ? 6 : undefined };
    }
  };

  const walk = (v: unknown): Shared => {
    if (typeof v !== 'object' || v === null) return leaf(v);
    if (Object.isFrozen(v)) {
      // Already shared (or frozen by its owner): only its own entry can say what it hashes to.
      return { value: v, hash: undefined };
    }
    let hash: number | undefined = Array.isArray(v) ? mix(FNV_OFFSET, 7) : isPlainObject(v) ? mix(FNV_OFFSET, 8) : undefined;
    if (hash === undefined) return { value: v, hash: undefined };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const part = walk(v[i]);
        // A string's copy from the table compares equal to the one it replaces.
        if (part.value !== v[i] || typeof part.value === 'string') v[i] = part.value;
        hash = part.hash === undefined || hash === undefined ? undefined : mix(hash, part.hash);
      }
    } else {
      const record = v as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const part = walk(record[key]);
        if (part.value !== record[key] || typeof part.value === 'string') record[key] = part.value;
        hash = part.hash === undefined || hash === undefined ? undefined : mix(hashString(hash, key), part.hash);
      }
    }
    if (hash === undefined) return { value: v, hash: undefined };
    const found = table.get(hash)?.deref();
    if (found !== undefined && shallowEqual(found, v)) return { value: found, hash };
    Object.freeze(v);
    // A different object under the same hash keeps its place; this one stays unshared.
    if (found === undefined) {
      const firstOwner = seenOnce.get(hash);
      if (firstOwner === undefined) {
        if (seenOnce.size >= SEEN_ONCE_MAX) seenOnce.clear();
        seenOnce.set(hash, owner);
        return { value: v, hash };
      }
      // Its own owner again (the pod's next version): still seen once.
      if (firstOwner === owner && owner !== NO_OWNER) return { value: v, hash };
      seenOnce.delete(hash);
      table.set(hash, new WeakRef(v));
      if (table.size >= sweepAt) sweep();
    }
    return { value: v, hash };
  };

  return {
    share: <T>(value: T, ownerName?: string): T => {
      owner = ownerName === undefined ? NO_OWNER : hashString(9, ownerName);
      return walk(value).value as T;
    },
    get size() {
      return table.size;
    },
  };
}
