// How much the old generation may grow past the live heap before V8 marks it all again.
//
// A converged fleet holds a large, long-lived heap (every node's pods, mirrors, Node and Lease)
// and allocates slowly. V8 sizes the headroom from the ratio of GC speed to allocation rate, so a
// slow mutator gets its minimum, about a tenth of the live heap: at 1,000 nodes a full
// mark-compact of ~140 MB every 10–25 s was most of the idle CPU that was not Lease renewals
// (docs/performance.md, step 9). A fixed headroom of the live heap's size spaces them out for
// a bounded price in memory. Node 20 refuses the flag in NODE_OPTIONS, but V8 reads it each
// time it recomputes its limits, so it can be set from inside the running process (which
// `--single-threaded-gc` cannot), and so it also reaches the image's single executable.

import v8 from 'node:v8';

/** The fleet's default: the old generation may grow by the live heap's size (factor 2). */
export const FLEET_HEAP_GROWING_PERCENT = 100;

const NODE_FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Sets V8's heap growing percent for this whole process, 0 leaving V8's own sizing. A value
 * given to node itself (`node --heap-growing-percent=N`) wins. Returns what it set, or
 * undefined when it set nothing.
 */
export function applyHeapGrowingPercent(percent: number, execArgv: readonly string[] = process.execArgv): number | undefined {
  if (percent === 0 || execArgv.some((arg) => NODE_FLAG.test(arg))) return undefined;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
  return percent;
}
