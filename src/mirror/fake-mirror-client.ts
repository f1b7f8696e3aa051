import { getPodFullName, parsePodFullName } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import type { MirrorClient } from '../pod/mirror-client.js';

/** One recorded call, in order: `create` or `delete` of a full name (with the UID asked for). */
export interface FakeMirrorCall {
  op: 'create' | 'delete';
  podFullName: string;
  uid?: string;
}

/**
 * An in-memory MirrorClient for tests, like the kubelet's fake: it keeps the set of mirrored
 * full names and per-name create and delete counts. Create always succeeds; delete ignores
 * the UID and always reports success (but still rejects a full name that does not parse, as
 * the real client does). Unlike the kubelet's fake it also keeps an ordered call log.
 */
export class FakeMirrorClient implements MirrorClient {
  readonly #mirrored = new Set<string>();
  readonly #creates = new Map<string, number>();
  readonly #deletes = new Map<string, number>();
  readonly calls: FakeMirrorCall[] = [];

  async createMirrorPod(pod: Pod): Promise<void> {
    const fullName = getPodFullName(pod);
    this.calls.push({ op: 'create', podFullName: fullName });
    this.#mirrored.add(fullName);
    this.#creates.set(fullName, (this.#creates.get(fullName) ?? 0) + 1);
  }

  async deleteMirrorPod(podFullName: string, uid?: string): Promise<boolean> {
    parsePodFullName(podFullName);
    this.calls.push(uid === undefined ? { op: 'delete', podFullName } : { op: 'delete', podFullName, uid });
    this.#mirrored.delete(podFullName);
    this.#deletes.set(podFullName, (this.#deletes.get(podFullName) ?? 0) + 1);
    return true;
  }

  hasPod(podFullName: string): boolean {
    return this.#mirrored.has(podFullName);
  }

  numOfPods(): number {
    return this.#mirrored.size;
  }

  /** Mirrored full names, sorted. */
  getPods(): string[] {
    return [...this.#mirrored].sort();
  }

  getCounts(podFullName: string): { creates: number; deletes: number } {
    return { creates: this.#creates.get(podFullName) ?? 0, deletes: this.#deletes.get(podFullName) ?? 0 };
  }
}
