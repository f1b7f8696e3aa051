import { TombstoneMap } from './tombstone-map.js';
import type { MirrorPodUID, ResolvedPodUID } from './types.js';

/** Bits of the bitmap per mirror UID it holds, at least: about one other UID in sixteen passes. */
const BITS_PER_KEY = 16;
const MIN_BITS = 256;
/** Marks left by removed UIDs are cleared once there are more of them than this and than live UIDs. */
const MIN_STALE_TO_REBUILD = 32;

// The bitmap of every table that has never held a UID: read, never written (see set).
const NO_BITS = new Int32Array(MIN_BITS >>> 5);

/**
 * Mirror pod UID → static pod UID, for `translatePodUID`: a TombstoneMap with a bitmap in
 * front of it.
 *
 * Why: most UIDs a caller translates are not mirror UIDs, so most lookups miss, and a miss in a
 * V8 dictionary costs about what a hit does: the probe walks a chain whose length differs from
 * key to key, a branch the CPU mispredicts once the keys looked up are too many for it to learn
 * (docs/performance.md, pod manager section). The bitmap, indexed by a hash of the UID's last
 * four characters, answers most misses with one load and a branch that goes the same way
 * nearly every time. Mirror UIDs are assigned by the API server (random UUIDs), so their marks
 * spread over the bitmap whatever the UIDs looked up are like; a UID whose bit is set goes on
 * to the table.
 *
 * A removed UID's bit stays set (another UID may share it) until the bitmap is rebuilt from
 * the live UIDs, once such marks outnumber them.
 */
export class MirrorUIDTable extends TombstoneMap<MirrorPodUID, ResolvedPodUID> {
  // One bit per hash value, set for every UID set since the last rebuild.
  #bits = NO_BITS;
  // 32 − log2(bits in the bitmap): the hash's top bits index it.
  #shift = 32 - Math.log2(MIN_BITS);
  // UIDs marked since the last rebuild, live or not.
  #marked = 0;

  override get(uid: MirrorPodUID): ResolvedPodUID | undefined {
    return this.mayHold(uid) ? super.get(uid) : undefined;
  }

  /** False when `uid` is certainly not in the table: its bit is clear. */
  mayHold(uid: MirrorPodUID): boolean {
    const h = hashTail(uid) >>> this.#shift;
    return (this.#bits[h >>> 5]! & (1 << (h & 31))) !== 0;
  }

  override has(uid: MirrorPodUID): boolean {
    return this.get(uid) !== undefined;
  }

  override set(mirrorUID: MirrorPodUID, podUID: ResolvedPodUID): boolean {
    if (!super.set(mirrorUID, podUID)) return false;
    if (this.#bits === NO_BITS || ++this.#marked * BITS_PER_KEY > this.#bits.length * 32) this.#rebuild();
    else this.#mark(mirrorUID);
    return true;
  }

  override settle(): void {
    super.settle();
    const stale = this.#marked - this.size;
    if (stale > MIN_STALE_TO_REBUILD && stale > this.size) this.#rebuild();
  }

  override clear(): void {
    super.clear();
    this.#bits = NO_BITS;
    this.#shift = 32 - Math.log2(MIN_BITS);
    this.#marked = 0;
  }

  #mark(uid: string): void {
    const h = hashTail(uid) >>> this.#shift;
    this.#bits[h >>> 5]! |= 1 << (h & 31);
  }

  // A bitmap sized for the live UIDs, with only theirs marked.
  #rebuild(): void {
    const log2 = Math.max(Math.log2(MIN_BITS), Math.ceil(Math.log2(this.size * BITS_PER_KEY)));
    this.#bits = new Int32Array(2 ** (log2 - 5));
    this.#shift = 32 - log2;
    this.#marked = this.size;
    this.forEach((_, uid) => this.#mark(uid));
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
