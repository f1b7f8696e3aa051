import type { PodOperation } from '../constants.js';
import type { Pod } from '../pod/types.js';
import { noopLogger, type Logger } from '../logger.js';

/**
 * One message from a source to the merger, or from the merger to its consumer.
 * `pods` is never null; an empty list is meaningful (an empty SET announces the source).
 */
export interface PodUpdate {
  readonly op: PodOperation;
  /** `file`, `http`, `api`, a test source name, or `*` for PodConfig.sync(). */
  readonly source: string;
  readonly pods: Pod[];
  /** Optional on a source's SET: what changed since its previous SET (see SetDelta). */
  readonly delta?: SetDelta;
}

/**
 * A hint a source may attach to a SET: `pods` is `base` (the `pods` array of the source's
 * previous SET, the very same array) without `removed` and with `changed` (new pods, or new
 * objects for pods already in `base`). The merger then looks only at those pods, when its
 * state for the source was built from `base`, and otherwise ignores the hint. It turns a SET
 * into O(changed) work for the merger, where the whole set would be O(pods).
 */
export interface SetDelta {
  readonly base: readonly Pod[];
  readonly changed: readonly Pod[];
  readonly removed: readonly Pod[];
}

/** Sources log through the shared logger surface (fields used: `source`, `path`, `url`, `pod`, `err`). */
export type SourceLogger = Logger;
export { noopLogger };

/** Timer functions, injectable so tests can drive periods without waiting. */
export interface SourceTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export const realTimers: SourceTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (h) => clearInterval(h as NodeJS.Timeout),
};
