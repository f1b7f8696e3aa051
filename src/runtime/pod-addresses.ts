import { createHash } from 'node:crypto';
import { kpError } from '../errors.js';
import { formatIP, parseCidr, parseIP, podCidrProblem, type Cidr } from '../values/ip.js';

/**
 * Pod addresses for the simulated runtime. On a real node the network plugin gives each pod
 * sandbox an address from the node's pod range and the kubelet reports it; here the range is the
 * configured pod CIDR and the address is a function of the pod's UID, so that a pod keeps its
 * address across agent restarts and two agents given the same pods agree.
 */

export interface PodAddressAllocator {
  /**
   * The address of the pod `uid`: the one it already has, else a new one; undefined while the
   * range has no free address.
   */
  allocate(uid: string): string | undefined;
  /**
   * Gives the pod `address` when it lies in the range, may be handed out and is free (a pod
   * taken over after an agent restart keeps the address it had); undefined otherwise. A pod
   * that already holds an address keeps that one.
   */
  claim(uid: string, address: string): string | undefined;
  /** The address the pod has, without allocating. */
  addressOf(uid: string): string | undefined;
  /** Frees the pod's address. */
  release(uid: string): void;
  /** How many pods can hold an address at once. */
  readonly capacity: bigint;
}

export interface PodAddressAllocatorOptions {
  /** The pod range, e.g. `10.88.0.0/16` (see podCidrProblem). */
  cidr: string;
  /** Addresses never handed out, such as the node's own when it lies in the range. */
  reserved?: readonly string[];
}

/**
 * Hands out pod addresses from a range:
 *
 * - never the network address, the first address after it (a bridge plugin's gateway) or the
 *   last one (the IPv4 broadcast address; left out in IPv6 too, to keep one rule);
 * - a pod's preferred address comes from a hash of its UID, so the same UID gets the same address
 *   whatever else runs; when another pod holds it, the next free address after it is taken
 *   (only then does the address depend on which pods came first);
 * - no two pods hold the same address; once every address is held, `allocate` answers undefined
 *   until one is released.
 *
 * An invalid range throws `KP_ERR_STATUS_OPTIONS` naming `podCIDR`.
 */
export function createPodAddressAllocator(options: PodAddressAllocatorOptions): PodAddressAllocator {
  const problem = podCidrProblem(options.cidr);
  const cidr = parseCidr(options.cidr);
  if (problem !== undefined || cidr === undefined) throw kpError('KP_ERR_STATUS_OPTIONS', ['podCIDR', problem ?? options.cidr]);
  return new Allocator(cidr, options.reserved ?? []);
}

// Offsets into the range: 0 is the network address, 1 the gateway, size - 1 the last address.
const FIRST_USABLE = 2n;

// Below this size a range's offsets are kept as small integers, which V8 stores in the maps'
// own slots; a bigint is an object of its own, about 24 bytes per pod (one per address held).
const SMALL_RANGE = 2n ** 30n;

/** An offset as the maps hold it: a number in a small range, else the bigint. */
type HeldOffset = number | bigint;

class Allocator implements PodAddressAllocator {
  readonly capacity: bigint;
  readonly #small: boolean;
  readonly #byUID = new Map<string, HeldOffset>();
  // Offsets held by a pod or reserved; the value is the holder's UID ('' when reserved).
  readonly #held = new Map<HeldOffset, string>();

  constructor(
    readonly cidr: Cidr,
    reserved: readonly string[],
  ) {
    this.capacity = cidr.size - 3n;
    this.#small = cidr.size <= SMALL_RANGE;
    for (const address of reserved) {
      const ip = parseIP(address);
      if (ip === undefined || ip.family !== cidr.family) continue;
      const offset = ip.value - cidr.network;
      if (offset >= FIRST_USABLE && offset < cidr.size - 1n) this.#held.set(this.#key(offset), '');
    }
  }

  allocate(uid: string): string | undefined {
    const existing = this.#byUID.get(uid);
    if (existing !== undefined) return this.#format(existing);
    if (BigInt(this.#held.size) >= this.capacity) return undefined;
    let offset = FIRST_USABLE + (hashOf(uid) % this.capacity);
    // Linear probing: at least one offset is free, so this ends.
    while (this.#held.has(this.#key(offset))) offset = offset + 1n < FIRST_USABLE + this.capacity ? offset + 1n : FIRST_USABLE;
    return this.#hold(uid, offset);
  }

  claim(uid: string, address: string): string | undefined {
    const existing = this.#byUID.get(uid);
    if (existing !== undefined) return this.#format(existing);
    const ip = parseIP(address);
    if (ip === undefined || ip.family !== this.cidr.family) return undefined;
    const offset = ip.value - this.cidr.network;
    if (offset < FIRST_USABLE || offset >= this.cidr.size - 1n || this.#held.has(this.#key(offset))) return undefined;
    return this.#hold(uid, offset);
  }

  addressOf(uid: string): string | undefined {
    const offset = this.#byUID.get(uid);
    return offset === undefined ? undefined : this.#format(offset);
  }

  release(uid: string): void {
    const offset = this.#byUID.get(uid);
    if (offset === undefined) return;
    this.#byUID.delete(uid);
    this.#held.delete(offset);
  }

  #hold(uid: string, offset: bigint): string {
    const key = this.#key(offset);
    this.#held.set(key, uid);
    this.#byUID.set(uid, key);
    return this.#format(key);
  }

  #key(offset: bigint): HeldOffset {
    return this.#small ? Number(offset) : offset;
  }

  #format(offset: HeldOffset): string {
    return formatIP(this.cidr.family, this.cidr.network + BigInt(offset));
  }
}

// 128 bits of SHA-256: far more than any range's size, so every offset is about equally likely.
function hashOf(uid: string): bigint {
  return BigInt(`0x${createHash('sha256').update(uid).digest('hex').slice(0, 32)}`);
}
