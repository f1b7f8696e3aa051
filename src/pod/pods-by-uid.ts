import { getPodFullName } from './classify.js';
import { EMPTY_DICTIONARY, internalizedKey, newDictionary, type Dictionary } from './dictionary.js';
import type { Pod } from './types.js';

/**
 * One UID's place in the index: the pod stored under it (undefined once removed) and the last
 * pod stored there with its full name. The full name is built once per stored object, and kept
 * after a removal, so that the same object coming back, or removed again, costs no string
 * building and finds the name maps' keys by identity.
 */
export interface PodSlot {
  pod: Pod | undefined;
  last: Pod;
  fullName: string;
}

/** Empty slots are swept once there are more of them than this and than live ones. */
const MIN_EMPTY_TO_SWEEP = 32;

/**
 * Pods by UID for the pod manager, on a dictionary-mode object (see dictionary.ts). A removed
 * pod leaves its slot empty rather than deleting the key (see TombstoneMap for why), and empty
 * slots are swept once they outnumber live ones.
 */
export class PodsByUID<U extends string> {
  // Made at the first pod (see TombstoneMap's table).
  #slots: Dictionary<PodSlot> = EMPTY_DICTIONARY;
  // The table's UIDs, empty slots included, for iterating (see TombstoneMap's keys).
  #uids: U[] = [];
  #empty = 0;

  /** Live pods. */
  get size(): number {
    return this.#uids.length - this.#empty;
  }

  get(uid: U): Pod | undefined {
    return this.#slots[uid]?.pod;
  }

  /** The slot of `uid`, empty or not: its `last` pod and full name stay readable. */
  slot(uid: U): PodSlot | undefined {
    return this.#slots[uid];
  }

  /** Stores `pod` under `uid` (`slot` is that UID's slot if the caller already has it); returns its full name. */
  store(uid: U, pod: Pod, slot: PodSlot | undefined = this.#slots[uid]): string {
    if (slot === undefined) {
      const fullName = internalizedKey(getPodFullName(pod));
      if (this.#slots === EMPTY_DICTIONARY) this.#slots = newDictionary();
      this.#slots[uid] = { pod, last: pod, fullName };
      this.#uids.push(uid);
      return fullName;
    }
    if (slot.pod === undefined) this.#empty--;
    if (slot.last !== pod) {
      if (!sameFullName(slot.last, pod)) slot.fullName = internalizedKey(getPodFullName(pod));
      slot.last = pod;
    }
    slot.pod = pod;
    return slot.fullName;
  }

  /** Empties `slot` (the slot of `uid`) if it holds a pod. */
  remove(slot: PodSlot): void {
    if (slot.pod === undefined) return;
    slot.pod = undefined;
    this.#empty++;
    this.settle();
  }

  /**
   * Empties every slot, for a reload (setPods): the pods stored again refill their slots in
   * place, full names included, instead of being inserted into a new table. Call `settle()`
   * after the reload.
   */
  emptyAll(): void {
    const slots = this.#slots;
    for (const uid of this.#uids) slots[uid]!.pod = undefined;
    this.#empty = this.#uids.length;
  }

  /** Sweeps the empty slots if they outnumber the live ones. */
  settle(): void {
    if (this.#empty > MIN_EMPTY_TO_SWEEP && this.#empty > this.#uids.length - this.#empty) this.#sweep();
  }

  /** Calls `fn` for each stored pod. */
  forEach(fn: (pod: Pod, uid: U) => void): void {
    const slots = this.#slots;
    for (const uid of this.#uids) {
      const pod = slots[uid]!.pod;
      if (pod !== undefined) fn(pod, uid);
    }
  }

  /** The stored pods, in no particular order. */
  pods(): Pod[] {
    const pods: Pod[] = [];
    const slots = this.#slots;
    for (const uid of this.#uids) {
      const pod = slots[uid]!.pod;
      if (pod !== undefined) pods.push(pod);
    }
    return pods;
  }

  // A new table with the live slots (see TombstoneMap's sweep).
  #sweep(): void {
    const old = this.#slots;
    const slots: Dictionary<PodSlot> = newDictionary();
    const uids: U[] = [];
    for (const uid of this.#uids) {
      const slot = old[uid]!;
      if (slot.pod === undefined) continue;
      slots[uid] = slot;
      uids.push(uid);
    }
    this.#slots = slots;
    this.#uids = uids;
    this.#empty = 0;
  }
}

/** The full name of `pod`, taken from `slot` when that is free. */
export function fullNameOf(pod: Pod, slot: PodSlot | undefined): string {
  return slot !== undefined && (slot.last === pod || sameFullName(slot.last, pod)) ? slot.fullName : getPodFullName(pod);
}

// An update is a new object with, nearly always, the same name: comparing two short strings
// is cheaper than building the full name again and hashing it.
function sameFullName(a: Pod, b: Pod): boolean {
  return (a.metadata?.name ?? '') === (b.metadata?.name ?? '') && (a.metadata?.namespace ?? '') === (b.metadata?.namespace ?? '');
}
