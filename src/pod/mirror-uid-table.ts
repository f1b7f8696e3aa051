import { TombstoneMap } from './tombstone-map.js';
import type { MirrorPodUID, ResolvedPodUID } from './types.js';

/** Mirror UIDs from which the table is a TombstoneMap with a bitmap: below it a Map costs less. */
const MIN_UIDS_FOR_BITMAP = 1024;
/** Bits of the bitmap per mirror UID it holds, at least: about one other UID in sixteen passes. */
const BITS_PER_KEY = 16;
/** Marks left by removed UIDs are cleared once there are more of them than this and than live UIDs. */
const MIN_STALE_TO_REBUILD = 32;

// The small table of every manager that holds no mirror UID or many: read, never written.
const NO_UIDS: Map<MirrorPodUID, ResolvedPodUID> = new Map();

/**
 * Mirror pod UID → static pod UID, for `translatePodUID`: a Map while it holds few UIDs, and
 * past about a thousand a TombstoneMap with a bitmap in front of it.
 *
 * Why: most UIDs a caller translates are not mirror UIDs, so most lookups miss. While the table
 * is small, a miss in a Map costs less than one in a dictionary-mode object and less than the
 * bitmap. Once many UIDs are held, a miss in either costs about what a hit does: the probe's
 * length differs from key to key, a branch the CPU mispredicts once the keys looked up are too
 * many for it to learn (docs/performance.md, pod manager section). The bitmap, indexed by a
 * hash of the UID's last four characters, then answers most misses with one load and a branch
 * that goes the same way nearly every time, and a hit reads the dictionary's entry directly
 * where a Map reads a bucket first. Mirror UIDs are assigned by the API server (random UUIDs),
 * so their marks spread over the bitmap whatever the UIDs looked up are like; a UID whose bit is
 * set goes on to the table.
 *
 * A removed UID's bit stays set (another UID may share it) until the bitmap is rebuilt from the
 * live UIDs, once such marks outnumber them.
 */
export class MirrorUIDTable {
  // The UIDs while they are few (no bitmap); NO_UIDS otherwise.
  #small = NO_UIDS;
  // The UIDs while they are many (with the bitmap); undefined otherwise.
  #large: TombstoneMap<MirrorPodUID, ResolvedPodUID> | undefined;
  // One bit per hash value, set for every UID set since the last rebuild; undefined while the
  // UIDs are few.
  #bits: Int32Array | undefined;
  // 32 − log2(bits in the bitmap): the hash's top bits index it.
  #shift = 0;
  // UIDs marked since the last rebuild, live or not.
  #marked = 0;

  /** Live mirror UIDs. */
  get size(): number {
    return this.#large === undefined ? this.#small.size : this.#large.size;
  }

  get(uid: MirrorPodUID): ResolvedPodUID | undefined {
    const bits = this.#bits;
    if (bits === undefined) return this.#small.get(uid);
    const h = hashTail(uid) >>> this.#shift;
    return (bits[h >>> 5]! & (1 << (h & 31))) === 0 ? undefined : this.#large!.get(uid);
  }

  /** False when `uid` is certainly not in the table: the bitmap's bit for it is clear. */
  mayHold(uid: MirrorPodUID): boolean {
    const bits = this.#bits;
    if (bits === undefined) return true;
    const h = hashTail(uid) >>> this.#shift;
    return (bits[h >>> 5]! & (1 << (h & 31))) !== 0;
  }

  has(uid: MirrorPodUID): boolean {
    return this.get(uid) !== undefined;
  }

  /** Sets `mirrorUID`; true when it was not there. */
  set(mirrorUID: MirrorPodUID, podUID: ResolvedPodUID): boolean {
    const large = this.#large;
    if (large === undefined) {
      const small = this.#small === NO_UIDS ? (this.#small = new Map()) : this.#small;
      const had = small.has(mirrorUID);
      small.set(mirrorUID, podUID);
      if (!had && small.size >= MIN_UIDS_FOR_BITMAP) this.#rebuild();
      return !had;
    }
    if (!large.set(mirrorUID, podUID)) return false;
    if (++this.#marked * BITS_PER_KEY > this.#bits!.length * 32) this.#rebuild();
    else this.#mark(this.#bits!, mirrorUID);
    return true;
  }

  /** Removes `uid`; true when it was there. */
  delete(uid: MirrorPodUID): boolean {
    if (this.#large === undefined) return this.#small.delete(uid);
    if (!this.#large.delete(uid)) return false;
    this.settle();
    return true;
  }

  /** Forgets every UID, for a reload that will set most of them again; call `settle()` after it. */
  holeAll(): void {
    if (this.#large !== undefined) this.#large.holeAll();
    else if (this.#small !== NO_UIDS) this.#small.clear();
  }

  /** Rebuilds the bitmap, or goes back to a Map, once removed UIDs' marks outnumber the live ones. */
  settle(): void {
    if (this.#large === undefined) return;
    this.#large.settle();
    const stale = this.#marked - this.size;
    if (stale > MIN_STALE_TO_REBUILD && stale > this.size) this.#rebuild();
  }

  clear(): void {
    this.#small = NO_UIDS;
    this.#large = undefined;
    this.#bits = undefined;
    this.#marked = 0;
  }

  /** Calls `fn` for each entry. */
  forEach(fn: (podUID: ResolvedPodUID, mirrorUID: MirrorPodUID) => void): void {
    if (this.#large === undefined) this.#small.forEach(fn);
    else this.#large.forEach(fn);
  }

  #mark(bits: Int32Array, uid: string): void {
    const h = hashTail(uid) >>> this.#shift;
    bits[h >>> 5]! |= 1 << (h & 31);
  }

  // The live UIDs in the form their number calls for: a Map, or a TombstoneMap with a bitmap
  // sized for them and only their marks.
  #rebuild(): void {
    if (this.size < MIN_UIDS_FOR_BITMAP) {
      const small = new Map<MirrorPodUID, ResolvedPodUID>();
      this.forEach((podUID, mirrorUID) => small.set(mirrorUID, podUID));
      this.clear();
      if (small.size > 0) this.#small = small;
      return;
    }
    if (this.#large === undefined) {
      const large = new TombstoneMap<MirrorPodUID, ResolvedPodUID>();
      this.#small.forEach((podUID, mirrorUID) => large.set(mirrorUID, podUID));
      this.#large = large;
      this.#small = NO_UIDS;
    }
    const log2 = Math.ceil(Math.log2(this.size * BITS_PER_KEY));
    const bits = new Int32Array(2 ** (log2 - 5));
    this.#shift = 32 - log2;
    this.#large.forEach((_, uid) => this.#mark(bits, uid));
    this.#bits = bits;
    this.#marked = this.size;
  }
}

/**
 * A 32-bit hash of `uid`'s last four characters and its length, whose top bits are the ones to
 * use; a shorter UID hashes by its length alone.
 */
function hashTail(uid: string): number {
  const n = uid.length;
  if (n < 4) return Math.imul(n, 0x9e3779b1);
  const tail = uid.charCodeAt(n - 1) | (uid.charCodeAt(n - 2) << 8) | (uid.charCodeAt(n - 3) << 16) | (uid.charCodeAt(n - 4) << 24);
  return Math.imul(tail ^ n, 0x9e3779b1);
}
