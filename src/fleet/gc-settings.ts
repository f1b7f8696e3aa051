// The garbage collector settings of a fleet process, made from inside it.
//
// A converged fleet holds a large, long-lived heap (every node's pods, mirrors, Node and Lease)
// and allocates slowly, and with V8's own settings its GC was most of the idle CPU that was not
// Lease renewals (docs/performance.md, steps 8 and 9):
// - headroom: V8 sizes it from the ratio of GC speed to allocation rate, so a slow mutator gets
//   its minimum, a small fraction of the live heap, and a large fleet marked its whole heap over
//   and over. A fixed headroom of the live heap's size spaces the mark-compacts out;
// - scavenges: at idle each one keeps little, and handing it to V8's helper threads cost more in
//   waking and joining them than it saved.
// And its RSS was about twice the live heap ("RSS against the heap" in the same doc):
// - the young generation: grown to V8's maximum while the fleet converged and kept for good,
//   though an idle scavenge keeps little; held at its starting size from before the fleet's
//   modules load, until the live heap is large: every scavenge looks at every page of the old
//   generation, so with a large heap many small scavenges cost more than a grown young
//   generation holds ("What a scavenge costs with a large old generation" in the same doc).
//   Unless the settings say otherwise, it may grow while the fleet is busy and is given back
//   once it is quiet (young-generation.ts);
// - compaction: by default a full GC moves the live objects of only some of the old
//   generation's sparse pages, so an idle fleet kept much more of it committed than it used;
//   compacting all of it at each full GC (rare, with the headroom) gives the pages back. But
//   that pause grows with the live heap, and a fleet holding 100,000 pods stopped for seconds at
//   each full GC, long enough to make its Leases late: so only while the heap is small;
// - after busy work: one full, compacting GC once the fleet is quiet (settle-gc.ts); while the
//   heap is small, also when it has grown while quiet.
// Node 20 refuses these flags in NODE_OPTIONS (and raises a growth factor below 2 given to node
// at start to 2), but V8 reads them each time it sizes the heap, starts a scavenge, would grow
// the young generation or picks pages to compact, so they can be set in the running process
// (which `--single-threaded-gc` cannot: it crashed V8), and so they also reach the image's
// single executable.

import { constants as perfConstants, performance, PerformanceObserver, type EventLoopUtilization, type PerformanceEntry } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

import { SETTLE_GC_LIMITS, SETTLE_GC_WINDOW_MS, SettleGcPolicy, type SettleGcResult } from './settle-gc.js';
import { YOUNG_GENERATION_LIMITS, YoungGenerationPolicy, type YoungGenerationChange, type YoungGenerationLimits } from './young-generation.js';

export interface FleetGcSettings {
  /** The old generation may grow by this % of the live heap before the next mark-compact; 0: V8's own sizing. */
  readonly heapGrowingPercent: number;
  /** False: scavenges run on the main thread alone. */
  readonly parallelScavenge: boolean;
  /** The young generation grows by this factor where V8 would grow it; 1: not past its starting size while the live heap is under YOUNG_GROWTH_HEAP_LIMIT, V8's own above; 0: V8's own (2). */
  readonly semiSpaceGrowthFactor: number;
  /** True: each full GC compacts the whole old generation, while the live heap is under FULL_COMPACTION_HEAP_LIMIT. */
  readonly compactEveryFullGc: boolean;
  /** True: one full GC when the fleet goes quiet after busy work (settle-gc.ts). */
  readonly settleGc: boolean;
  /** True: a young generation held at its starting size may grow while the fleet is busy, and is given back once it is quiet (young-generation.ts). */
  readonly growYoungWhileBusy: boolean;
}

/**
 * The heap in use up to which every full GC compacts; above it V8 picks the pages again, until a
 * full GC leaves less than half of it. Compacting a larger heap paused the fleet for longer than
 * a Lease renewal can wait (docs/fleet.md, "Tuning").
 */
export const FULL_COMPACTION_HEAP_LIMIT = 96 * 2 ** 20;

/**
 * The heap in use after a full GC from which a held young generation may grow as V8 grows it
 * (held again when a full GC leaves less than half). Under it, as with 1,000 nodes of 10 pods
 * each, the young generation stays small.
 */
export const YOUNG_GROWTH_HEAP_LIMIT = 192 * 2 ** 20;

/** Heap sizes at which the settings change their behaviour; the defaults above unless given (tests, benchmarks). */
export interface GcHeapLimits {
  readonly fullCompaction?: number;
  readonly youngGrowth?: number;
}

/** The fleet's defaults: headroom of the live heap's size (factor 2), scavenges on the main thread, the young generation at its starting size while the heap is small and quiet (free to grow while busy), full compaction while the heap is small, a full GC once quiet after busy work. */
export const FLEET_GC_DEFAULTS: FleetGcSettings = Object.freeze({ heapGrowingPercent: 100, parallelScavenge: false, semiSpaceGrowthFactor: 1, compactEveryFullGc: true, settleGc: true, growYoungWhileBusy: true });

/** What the settings report as they act, for the fleet's log. */
export interface FleetGcReports {
  /** A settle GC ran (settle-gc.ts). */
  readonly settled?: (result: SettleGcResult & { ms: number }) => void;
  /** The young generation was let grow, or given back (young-generation.ts). */
  readonly young?: (change: YoungGenerationChange) => void;
}

const GROWING_FLAG = /^--heap[-_]growing[-_]percent(=|$)/;
const SCAVENGE_FLAG = /^--(no[-_])?parallel[-_]scavenge$|^--single[-_]threaded[-_]gc$/;
const COMPACT_FLAG = /^--(no[-_])?compact[-_]on[-_]every[-_]full[-_]gc$/;
const SIZE_FLAG = /^--(no[-_])?optimize[-_]for[-_]size$/;
const PRETENURING_FLAG = /^--(no[-_])?allocation[-_]site[-_]pretenuring$/;
/** Node's flags that size the young generation (`run` leaves them alone too: src/cli/run-gc-settings.ts). */
export const YOUNG_GENERATION_FLAG = /^--(semi|max[-_]semi|min[-_]semi)[-_]space[-_]/;
/** V8's own growth factor of the young generation (11.3, Node 20). */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;

let heldAtLoad = false;
/** Whether the settings last applied turned V8's allocation-site pretenuring off. */
let turnedPretenuringOff = false;

/**
 * Keeps the young generation at its starting size from before the fleet's modules load: their
 * loading alone grew it several times over, and a converged fleet never gave that back.
 * `applyFleetGcSettings` sets the configured factor afterwards. Leaves alone a young-generation
 * flag node was started with.
 */
export function holdYoungGeneration(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((arg) => YOUNG_GENERATION_FLAG.test(arg))) return;
  v8.setFlagsFromString(`--semi-space-growth-factor=${FLEET_GC_DEFAULTS.semiSpaceGrowthFactor}`);
  heldAtLoad = true;
}

/**
 * Applies `settings` to this whole process, leaving alone each setting node was started with
 * (`node --heap-growing-percent=N`, `--parallel-scavenge`, `--no-parallel-scavenge`,
 * `--single-threaded-gc`, `--semi-space-growth-factor=N`, `--max-semi-space-size=N`,
 * `--min-semi-space-size=N`, `--[no-]compact-on-every-full-gc`, `--[no-]optimize-for-size`,
 * `--[no-]allocation-site-pretenuring`) and V8's defaults where the
 * settings ask for them. Returns the V8 flags it set at once (the busy policy sets others later).
 */
export function applyFleetGcSettings(
  settings: FleetGcSettings,
  execArgv: readonly string[] = process.execArgv,
  limits: GcHeapLimits = {},
  reports: FleetGcReports = {},
): string[] {
  // First, so that undoing the busy policy's settings cannot undo the new ones.
  youngWhileBusy?.stop();
  youngWhileBusy = undefined;
  const set: string[] = [];
  const youngFlagGiven = execArgv.some((arg) => YOUNG_GENERATION_FLAG.test(arg));
  if (settings.heapGrowingPercent !== 0 && !execArgv.some((arg) => GROWING_FLAG.test(arg))) set.push(`--heap-growing-percent=${settings.heapGrowingPercent}`);
  if (!settings.parallelScavenge && !execArgv.some((arg) => SCAVENGE_FLAG.test(arg))) set.push('--no-parallel-scavenge');
  if (!youngFlagGiven) {
    if (settings.semiSpaceGrowthFactor !== 0) set.push(`--semi-space-growth-factor=${settings.semiSpaceGrowthFactor}`);
    else if (heldAtLoad) set.push(`--semi-space-growth-factor=${V8_SEMI_SPACE_GROWTH_FACTOR}`);
  }
  const compact = settings.compactEveryFullGc && !execArgv.some((arg) => COMPACT_FLAG.test(arg));
  if (compact) set.push('--compact-on-every-full-gc');
  const held = !youngFlagGiven && settings.semiSpaceGrowthFactor === 1;
  const busyGrowth = held && settings.growYoungWhileBusy;
  // V8 pretenures an allocation site only after scavenges at the young generation's largest
  // size, which the busy growth reaches in a wave and a held one never does: a site that
  // mostly survived the wave (its objects waiting on the API server) keeps allocating in the
  // old generation once the fleet is idle again, where the same objects would have died young.
  // Past the young generation's heap limit V8 grows it anyway, and pretenuring is on there as
  // without the busy growth (youngGrowsWhenLarge).
  const pretenuringOff = busyGrowth && !execArgv.some((arg) => PRETENURING_FLAG.test(arg));
  if (pretenuringOff) set.push(pretenuringFlag(false));
  else if (turnedPretenuringOff) set.push(pretenuringFlag(true));
  turnedPretenuringOff = pretenuringOff;
  for (const flag of set) v8.setFlagsFromString(flag);
  compactionWatch?.disconnect();
  compacting = undefined;
  if (compact) compactWhileSmall(limits.fullCompaction ?? FULL_COMPACTION_HEAP_LIMIT);
  youngGrowthWatch?.disconnect();
  youngGrowthWatch = undefined;
  youngLarge = false;
  if (held) youngGrowsWhenLarge(limits.youngGrowth ?? YOUNG_GROWTH_HEAP_LIMIT);
  youngWhileBusy = busyGrowth ? growYoungWhileBusy(reports.young, SETTLE_GC_WINDOW_MS, execArgv) : undefined;
  settleWatch?.stop();
  settleWatch = settings.settleGc ? settleWhenQuiet(reports.settled) : undefined;
  return set;
}

/** True for a `gc` performance entry of a full (mark-compact) collection. */
export function isMajorGc(entry: PerformanceEntry): boolean {
  return (entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR;
}

/**
 * Tells `change(true)` once the heap in use passes `limit`, and `change(false)` once a full GC
 * leaves less than half of it. `afterEveryGc` reads the rise after scavenges too, so that a
 * growing heap is caught before its next full GC; otherwise only full GCs count.
 */
function watchHeapPast(limit: number, afterEveryGc: boolean, change: (past: boolean) => void): PerformanceObserver {
  let past = false;
  const watch = new PerformanceObserver((list) => {
    const major = list.getEntries().some(isMajorGc);
    if (!major && (past || !afterEveryGc)) return;
    const used = v8.getHeapStatistics().used_heap_size;
    const now = past ? !(major && used < limit / 2) : used > limit;
    if (now === past) return;
    past = now;
    change(past);
  });
  watch.observe({ entryTypes: ['gc'] });
  return watch;
}

let compactionWatch: PerformanceObserver | undefined;

/**
 * Whether full GCs compact now (false while the heap is past the limit); undefined when the
 * fleet does not manage compaction (the setting off, or node's own flag).
 */
let compacting: boolean | undefined;

/** Turns full compaction off once the heap is past `limit` (read after every GC) and on again below half of it. */
function compactWhileSmall(limit: number): void {
  compacting = true;
  compactionWatch = watchHeapPast(limit, true, (past) => {
    compacting = !past;
    v8.setFlagsFromString(compacting ? '--compact-on-every-full-gc' : '--no-compact-on-every-full-gc');
  });
}

let youngGrowthWatch: PerformanceObserver | undefined;

/** Whether the heap is past the young generation's limit, where V8 grows it and the busy policy stands aside. */
let youngLarge = false;

/**
 * Lets the held young generation grow as V8 grows it once a full GC leaves more than `limit` in
 * use, and holds it again below half of it. V8 gives back a grown young generation only when it
 * reduces memory, so holding it again stops its growth, not its size.
 */
function youngGrowsWhenLarge(limit: number): void {
  youngGrowthWatch = watchHeapPast(limit, false, (past) => {
    youngLarge = past;
    letYoungGrow(past);
    if (turnedPretenuringOff) v8.setFlagsFromString(pretenuringFlag(past));
  });
}

/** V8's own growth of the young generation (true), or none (false). */
function letYoungGrow(grow: boolean): void {
  v8.setFlagsFromString(`--semi-space-growth-factor=${grow ? V8_SEMI_SPACE_GROWTH_FACTOR : 1}`);
}

/** The V8 flag that turns allocation-site pretenuring on (true) or off (false). */
function pretenuringFlag(on: boolean): string {
  return on ? '--allocation-site-pretenuring' : '--no-allocation-site-pretenuring';
}

let youngWhileBusy: { stop(): void; settled(): boolean } | undefined;

/**
 * False while the busy policy lets the young generation grow or waits for V8 to give it back;
 * true otherwise. What a reading of the idle fleet's memory waits for (bench/agent/fleet-memory.bench.ts).
 */
export function youngGenerationSettled(): boolean {
  return youngWhileBusy?.settled() ?? true;
}

/** The young generation's committed bytes. */
const youngBytes = (): number => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0;

/**
 * Runs young-generation.ts's policy on this process every window, a window being busy as the
 * settle GC counts it. Leaves V8's size setting alone if node was started with it.
 */
export function growYoungWhileBusy(
  onChange: ((change: YoungGenerationChange) => void) | undefined,
  windowMs = SETTLE_GC_WINDOW_MS,
  execArgv: readonly string[] = process.execArgv,
  limits: YoungGenerationLimits = YOUNG_GENERATION_LIMITS,
): { stop(): void; settled(): boolean } {
  const sizeFlagGiven = execArgv.some((arg) => SIZE_FLAG.test(arg));
  const policy = new YoungGenerationPolicy({
    youngBytes,
    allowGrowth: letYoungGrow,
    optimizeForSize: (on) => {
      if (!sizeFlagGiven) v8.setFlagsFromString(on ? '--optimize-for-size' : '--no-optimize-for-size');
    },
  }, limits);
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization >= SETTLE_GC_LIMITS.quietUtilization;
    last = now;
    const change = policy.window(busy, !youngLarge);
    if (change !== undefined) onChange?.(change);
  }, windowMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      if (!youngLarge) policy.release();
    },
    settled: () => policy.settled,
  };
}

let settleWatch: { stop(): void } | undefined;

/** This process's `gc()`: node's own under `--expose-gc`, else one from a context made with the flag on. */
function gcFunction(): () => void {
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return own as () => void;
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Runs settle-gc.ts's policy on this process every window. */
export function settleWhenQuiet(onSettled: ((result: SettleGcResult & { ms: number }) => void) | undefined, windowMs = SETTLE_GC_WINDOW_MS): { stop(): void } {
  const gc = gcFunction();
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  const policy = new SettleGcPolicy({
    utilization: () => {
      const now = performance.eventLoopUtilization();
      const share = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      return share;
    },
    heapUsed: () => v8.getHeapStatistics().used_heap_size,
    heapCommitted: () => v8.getHeapStatistics().total_heap_size,
    collect: () => {
      // Compacting even while the heap is past the limit: settle-gc.ts runs a large heap's
      // collection once a wave, and without compaction the pages it empties stay in RSS.
      if (compacting === false) {
        v8.setFlagsFromString('--compact-on-every-full-gc');
        gc();
        v8.setFlagsFromString('--no-compact-on-every-full-gc');
      } else {
        gc();
      }
      // The pause is no work of the fleet's: the next window starts after it.
      last = performance.eventLoopUtilization();
    },
  });
  const majorGcs = new PerformanceObserver((list) => {
    if (list.getEntries().some(isMajorGc)) policy.majorGcDone();
  });
  majorGcs.observe({ entryTypes: ['gc'] });
  const timer = setInterval(() => {
    const start = performance.now();
    const result = policy.window();
    if (result !== undefined) onSettled?.({ ...result, ms: performance.now() - start });
  }, windowMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      majorGcs.disconnect();
    },
  };
}
