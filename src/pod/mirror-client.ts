import type { Pod } from './types.js';

/**
 * Creates and deletes mirror pods in the API server: the only writes the kubelet makes for
 * static pods besides their status.
 */
export interface MirrorClient {
  /**
   * Creates the mirror of `staticPod`: a copy with the mirror annotation set to the static
   * pod's hash and a single controller owner reference to this node. Resolves when the mirror
   * exists (AlreadyExists with the same hash counts as success); rejects otherwise.
   */
  createMirrorPod(staticPod: Pod): Promise<void>;
  /**
   * Deletes the mirror pod `podFullName` (`name_namespace`) with grace period 0, only if its
   * UID is still `uid` when one is given. Resolves true when deleted, false when it was not
   * there or had another UID (or the API server refused); rejects only for a full name that
   * does not parse.
   */
  deleteMirrorPod(podFullName: string, uid?: string): Promise<boolean>;
}
