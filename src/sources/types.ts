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
