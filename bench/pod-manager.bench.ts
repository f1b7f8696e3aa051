// Times every PodManager method with tinybench on the workloads of bench/workload.ts (the same
// ones bench/go/main.go runs on the kubelet's basicManager). Run on its own it prints one JSON
// line per (method, size); bench/run.ts imports it to build the TS/Go table.
//
// A map lookup takes tens of nanoseconds, less than one performance.now() call, so cheap
// methods run BATCH calls per tinybench sample and report the time per call; methods that
// walk or rebuild the whole manager run once per sample.
//
// What is timed is the steady state: before timing, a per-pod method is called once on every
// target, as Go's benchmark loop does in its calibration rounds, so that what the first call
// for a given pod costs (compiling, the manager's caches keyed by pod) is not in the figure.

import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { PodManager } from '../src/pod/manager.js';
import type { Pod } from '../src/pod/types.js';
import { buildWorkload, type Workload } from './workload.js';

export interface BenchResult {
  method: string;
  size: number;
  nsPerOp: number;
  /** Calls timed in all (samples × calls per sample). */
  iterations: number;
}

export interface PodManagerBenchOptions {
  sizes: readonly number[];
  /** Per method and size: tinybench's time budget (ms) and minimum number of samples. */
  timeMs(size: number): number;
  minSamples(size: number): number;
  only?: string;
  /** Set on the warm-up pass itself. */
  warm?: boolean;
  onResult?: (result: BenchResult) => void;
}

export const FULL_SIZES = [100, 10_000, 100_000] as const;
export const QUICK_SIZES = [100, 10_000] as const;

const BATCH = 1024;

interface MethodCase {
  name: string;
  /** Calls per sample: BATCH for per-pod methods, 1 for whole-manager ones. */
  perSample: number;
  /** Makes the sample function for a manager loaded with `w.all`. */
  make(pm: PodManager, w: Workload): () => void;
}

// Results go here so the engine cannot drop calls whose value is unused.
let sink: unknown;
let sinkCount = 0;

/** A sample function that calls `op` on BATCH consecutive targets, resuming where it stopped. */
function perPod<T>(targets: readonly T[], op: (target: T) => unknown): () => void {
  let next = 0;
  return () => {
    for (let n = 0; n < BATCH; n++) {
      sink = op(targets[next]!);
      if (++next === targets.length) next = 0;
    }
  };
}

const METHODS: MethodCase[] = [
  { name: 'addPod', perSample: BATCH, make: (pm, w) => perPod(w.all, (p) => pm.addPod(p)) },
  { name: 'updatePod', perSample: BATCH, make: (pm, w) => perPod(w.all, (p) => pm.updatePod(p)) },
  {
    name: 'removePod+addPod',
    perSample: BATCH,
    make: (pm, w) =>
      perPod(w.all, (p: Pod) => {
        pm.removePod(p);
        pm.addPod(p);
      }),
  },
  { name: 'getPodByFullName', perSample: BATCH, make: (pm, w) => perPod(w.fullNames, (n) => pm.getPodByFullName(n)) },
  {
    name: 'getPodByName',
    perSample: BATCH,
    make: (pm, w) => perPod(w.nonMirror, (p) => pm.getPodByName(p.metadata!.namespace!, p.metadata!.name!)),
  },
  { name: 'getPodByUID', perSample: BATCH, make: (pm, w) => perPod(w.nonMirror, (p) => pm.getPodByUID(p.metadata!.uid!)) },
  { name: 'getPodByMirrorPod', perSample: BATCH, make: (pm, w) => perPod(w.mirrors, (p) => pm.getPodByMirrorPod(p)) },
  { name: 'getMirrorPodByPod', perSample: BATCH, make: (pm, w) => perPod(w.statics, (p) => pm.getMirrorPodByPod(p)) },
  { name: 'getPodAndMirrorPod', perSample: BATCH, make: (pm, w) => perPod(w.all, (p) => pm.getPodAndMirrorPod(p)) },
  { name: 'getPods', perSample: BATCH, make: (pm) => () => {
      for (let n = 0; n < BATCH; n++) sinkCount += pm.getPods().length;
    } },
  { name: 'getPodsAndMirrorPods', perSample: BATCH, make: (pm) => () => {
      for (let n = 0; n < BATCH; n++) sinkCount += pm.getPodsAndMirrorPods().mirrorPods.length;
    } },
  { name: 'translatePodUID', perSample: BATCH, make: (pm, w) => perPod(w.uids, (u) => pm.translatePodUID(u)) },
  {
    name: 'getUIDTranslations',
    perSample: 1,
    make: (pm) => () => {
      const { podToMirror, mirrorToPod } = pm.getUIDTranslations();
      sinkCount += podToMirror.size + mirrorToPod.size;
    },
  },
  { name: 'setPods', perSample: 1, make: (pm, w) => () => pm.setPods(w.all) },
];

export const METHOD_NAMES: readonly string[] = METHODS.map((m) => m.name);

export async function runPodManagerBench(options: PodManagerBenchOptions): Promise<BenchResult[]> {
  // One throwaway pass so the first method measured is not also paying for JIT compilation.
  if (!options.warm) {
    await runPodManagerBench({ sizes: [100], timeMs: () => 20, minSamples: () => 2, warm: true, ...(options.only ? { only: options.only } : {}) });
  }
  const results: BenchResult[] = [];
  for (const size of options.sizes) {
    const w = buildWorkload(size);
    for (const method of METHODS) {
      if (options.only !== undefined && method.name !== options.only) continue;
      // A fresh, fully loaded manager per method, as the Go side does.
      const pm = new PodManager();
      pm.setPods(w.all);
      const bench = new Bench({
        name: `${method.name}@${size}`,
        time: options.timeMs(size),
        iterations: options.minSamples(size),
        warmupTime: Math.min(100, options.timeMs(size) / 3),
        warmupIterations: Math.max(2, Math.floor(options.minSamples(size) / 4)),
        throws: true,
      });
      const sample = method.make(pm, w);
      if (method.perSample === BATCH) for (let n = 0; n * BATCH < w.all.length; n++) sample();
      bench.add(method.name, sample);
      await bench.run();
      const task = bench.tasks[0]!;
      const r = task.result;
      if (r.state !== 'completed') throw new Error(`benchmark ${method.name} at ${size} pods ended ${r.state}`);
      const samples = r.latency.samplesCount;
      const result: BenchResult = {
        method: method.name,
        size,
        nsPerOp: (r.period * 1e6) / method.perSample,
        iterations: samples * method.perSample,
      };
      results.push(result);
      options.onResult?.(result);
    }
  }
  if (sink === Symbol.for('never') && sinkCount < 0) console.log('unreachable');
  return results;
}

/** Budgets: big managers get fewer, longer samples so the whole run stays short. */
export function budget(quick: boolean): Pick<PodManagerBenchOptions, 'sizes' | 'timeMs' | 'minSamples'> {
  return quick
    ? { sizes: QUICK_SIZES, timeMs: () => 100, minSamples: () => 5 }
    : {
        sizes: FULL_SIZES,
        timeMs: (size) => (size >= 100_000 ? 500 : 300),
        minSamples: (size) => (size >= 100_000 ? 5 : 20),
      };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.env.BENCH_QUICK === '1' || process.argv.includes('--quick');
  await runPodManagerBench({ ...budget(quick), onResult: (r) => console.log(JSON.stringify(r)) });
}
