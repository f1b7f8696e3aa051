import { createHash } from 'node:crypto';
import type { LoopSpread } from '../node/periodic-loop.js';

/** A fraction in [0, 1) that depends on the node name only. */
export function nodeFraction(nodeName: string, salt = ''): number {
  return createHash('sha256').update(salt).update(nodeName).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * The spread of one node's periodic loops: its phase is a fixed fraction of the period from
 * its name (so 1,000 Leases renewing every 10 s fire about every 10 ms, not all at once, and
 * the same node keeps its slot across restarts), and each later wait is jittered by up to
 * `jitterFactor` of the period from a generator seeded by the name; with `alignMs`, the waits
 * end on a grid of that step (see LoopSpread).
 */
export function nodeLoopSpread(nodeName: string, periodMs: number, jitterFactor = 0.04, alignMs?: number): LoopSpread {
  let state = Math.floor(nodeFraction(nodeName, 'jitter') * 2 ** 32) >>> 0;
  const next = (): number => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    firstPeriodMs: Math.max(1, Math.round(periodMs * (0.05 + 0.95 * nodeFraction(nodeName)))),
    jitterMs: () => next() * jitterFactor * periodMs,
    ...(alignMs !== undefined ? { alignMs } : {}),
  };
}
