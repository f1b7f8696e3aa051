import type { PodOperation } from '../constants.js';
import type { Pod } from '../pod/types.js';
import { noopLogger, type Logger } from '../logger.js';

/**
 * One message from a source to the merger, or from the merger to its consumer.
 * `pods` is never null; an empty list is meaningful (an empty SET announces the source).
 *
 * Pods are handed over, never copied: neither the sender nor any receiver may mutate a pod
 * after it was sent. The merger emits the objects it stores, and a source may send the same
 * object again in later SETs while the pod has not changed.
 */
export interface PodUpdate {
  readonly op: PodOperation;
  /** `file`, `http`, `api`, a test source name, or `*` for PodConfig.sync(). */
  readonly source: string;
  readonly pods: Pod[];
  /** Optional on a source's SET: what changed since its previous SET (see SetDelta). */
  readonly delta?: SetDelta;
  /**
   * Optional, index by index with `pods`: where each pod was read from (a manifest path). The
   * merger names both origins when it drops a pod whose full name an earlier pod already has.
   */
  readonly origins?: readonly string[];
}

/**
 * A hint a source may attach to a SET: `pods` is `base` (the `pods` array of the source's
 * previous SET, the very same array) without `removed` and with `changed` (new pods, or new
 * objects for pods already in `base`, which then are in `changed` only). The merger then looks
 * only at those pods, when its state for the source was built from `base`, and otherwise
 * ignores the hint. It turns a SET into O(changed) work for the merger, where the whole set
 * would be O(pods), and it is the only way the merger skips pods that did not change.
 */
export interface SetDelta {
  readonly base: readonly Pod[];
  readonly changed: readonly Pod[];
  readonly removed: readonly Pod[];
}

/** Sources log through the shared logger surface (fields used: `source`, `path`, `url`, `pod`, `err`). */
export type SourceLogger = Logger;
export { noopLogger };
