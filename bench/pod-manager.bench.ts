// Times every PodManager method with tinybench on the workloads of bench/workload.ts (the same
// ones bench/go/main.go runs on the kubelet's basicManager). Run on its own it prints one JSON
// line per (method, size) (`--size=N` and `--only=<method>` narrow it); bench/run.ts runs it
// with `--serve --size=N` beside the Go program's `-serve` to build the TS/Go table.
//
// A map lookup takes tens of nanoseconds, less than one performance.now() call, so cheap
// methods run BATCH calls per tinybench sample and report the time per call; methods that
// walk or rebuild the whole manager run once per sample.
//
// The clock is the process's CPU time (all threads, user and system), read around each sample;
// bench/go/main.go reads the same clock the same way. On a shared machine wall time also counts
// the time the process waited for a core, which swung single rounds by a factor of two to ten.
//
// What is timed is the steady state: before timing, a per-pod method is called once on every
// target, as bench/go/main.go does too, so that what the first call for a given pod costs
// (compiling, the manager's caches keyed by pod) is not in the figure.

import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Bench } from 'tinybench';
import { PodManager } from '../src/pod/manager.js';
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
  /** Per method and size: the CPU time measured (ms) and the minimum number of samples. */
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

/** CPU time used by this process so far, in ms: tinybench's clock here (see the top). */
function cpuNowMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

interface MethodCase {
  name: string;
  /** Calls per sample: BATCH for per-pod methods, 1 for whole-manager ones. */
  perSample: number;
  /** Makes the sample function for a manager loaded with `w.all`. */
  make(pm: PodManager, w: Workload): () => void;
}

// Go's harness collects garbage before timing each method (runtime.GC()), and so does this one:
// the clock counts every thread, so a collection that loading the manager started (V8 marks on
// other threads) would otherwise be charged to the samples. A context made after the flag is
// set has `gc`.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

// Results go here so the engine cannot drop calls whose value is unused.
let sink: unknown;
let sinkCount = 0;

// Each per-pod method's sample is written out as its own loop over BATCH consecutive targets,
// resuming where the last sample stopped, as in bench/go/main.go. One shared loop calling the
// method through a closure would be a megamorphic call site that the engine cannot inline,
// costing every call an indirect call the Go loops do not make.
const METHODS: MethodCase[] = [
  { name: 'addPod', perSample: BATCH, make: (pm, { all }) => {
      let j = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          pm.addPod(all[j]!);
          if (++j === all.length) j = 0;
        }
      };
    } },
  { name: 'updatePod', perSample: BATCH, make: (pm, { all }) => {
      let j = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          pm.updatePod(all[j]!);
          if (++j === all.length) j = 0;
        }
      };
    } },
  { name: 'removePod+addPod', perSample: BATCH, make: (pm, { all }) => {
      let j = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          const p = all[j]!;
          pm.removePod(p);
          pm.addPod(p);
          if (++j === all.length) j = 0;
        }
      };
    } },
  { name: 'getPodByFullName', perSample: BATCH, make: (pm, { fullNames }) => {
      let j = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          sink = pm.getPodByFullName(fullNames[j]!);
          if (++j === fullNames.length) j = 0;
        }
      };
    } },
  { name: 'getPodByName', perSample: BATCH, make: (pm, { nonMirror }) => {
      let j = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          const p = nonMirror[j]!;
          sink = pm.getPodByName(p.metadata!.namespace!, p.metadata!.name!);
          if (++j === nonMirror.length) j = 0;
        }
      };
    } },
  { name: 'getPodByUID', perSample: BATCH, make: (pm, { nonMirror }) => {
      let j = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          sink = pm.getPodByUID(nonMirror[j]!.metadata!.uid!);
          if (++j === nonMirror.length) j = 0;
        }
      };
    } },
  { name: 'getPodByMirrorPod', perSample: BATCH, make: (pm, { mirrors }) => {
      let j = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          sink = pm.getPodByMirrorPod(mirrors[j]!);
          if (++j === mirrors.length) j = 0;
        }
      };
    } },
  { name: 'getMirrorPodByPod', perSample: BATCH, make: (pm, { statics }) => {
      let j = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          sink = pm.getMirrorPodByPod(statics[j]!);
          if (++j === statics.length) j = 0;
        }
      };
    } },
  { name: 'getPodAndMirrorPod', perSample: BATCH, make: (pm, { all }) => {
      let j = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          sink = pm.getPodAndMirrorPod(all[j]!);
          if (++j === all.length) j = 0;
        }
      };
    } },
  { name: 'getPods', perSample: BATCH, make: (pm) => () => {
      for (let n = 0; n < BATCH; n++) sinkCount += pm.getPods().length;
    } },
  { name: 'getPodsAndMirrorPods', perSample: BATCH, make: (pm) => () => {
      for (let n = 0; n < BATCH; n++) {
        const { pods, mirrorPods, orphanedMirrorPodFullNames } = pm.getPodsAndMirrorPods();
        sinkCount += pods.length + mirrorPods.length + orphanedMirrorPodFullNames.length;
      }
    } },
  { name: 'translatePodUID', perSample: BATCH, make: (pm, { uids }) => {
      let j = 0;
      return () => {
        for (let n = 0; n < BATCH; n++) {
          sink = pm.translatePodUID(uids[j]!);
          if (++j === uids.length) j = 0;
        }
      };
    } },
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
  if (!options.warm) await warmUp(options.only);
  const results: BenchResult[] = [];
  for (const size of options.sizes) {
    const w = buildWorkload(size);
    for (const method of METHODS) {
      if (options.only !== undefined && method.name !== options.only) continue;
      const result = await timeMethod(method, size, w, options);
      results.push(result);
      options.onResult?.(result);
    }
  }
  return results;
}

// One throwaway pass so the first method measured is not also paying for JIT compilation.
async function warmUp(only: string | undefined): Promise<void> {
  await runPodManagerBench({ sizes: [100], timeMs: () => 20, minSamples: () => 2, warm: true, ...(only ? { only } : {}) });
}

/** Times one method on a fresh, fully loaded manager, as the Go side does. */
async function timeMethod(method: MethodCase, size: number, w: Workload, options: Pick<PodManagerBenchOptions, 'timeMs' | 'minSamples'>): Promise<BenchResult> {
  const pm = new PodManager();
  pm.setPods(w.all);
  const bench = new Bench({
    name: `${method.name}@${size}`,
    time: options.timeMs(size),
    iterations: options.minSamples(size),
    warmupTime: Math.min(100, options.timeMs(size) / 3),
    warmupIterations: Math.max(2, Math.floor(options.minSamples(size) / 4)),
    throws: true,
    now: cpuNowMs,
  });
  const sample = method.make(pm, w);
  if (method.perSample === BATCH) for (let n = 0; n * BATCH < w.all.length; n++) sample();
  collectGarbage();
  bench.add(method.name, sample);
  await bench.run();
  const r = bench.tasks[0]!.result;
  if (r.state !== 'completed') throw new Error(`benchmark ${method.name} at ${size} pods ended ${r.state}`);
  if (sink === Symbol.for('never') && sinkCount < 0) console.log('unreachable');
  return { method: method.name, size, nsPerOp: (r.period * 1e6) / method.perSample, iterations: r.latency.samplesCount * method.perSample };
}

/**
 * For the harness (bench/run.ts): builds the workload of `size`, prints `{"ready":true}`, then
 * times each method named on a line of stdin and prints its result, until stdin ends. The Go
 * side has the same mode (`-serve`), so a cell's two sides are timed one right after the other.
 */
export async function servePodManagerBench(size: number, options: Pick<PodManagerBenchOptions, 'timeMs' | 'minSamples'>): Promise<void> {
  await warmUp(undefined);
  const w = buildWorkload(size);
  console.log(JSON.stringify({ ready: true }));
  for await (const line of createInterface({ input: process.stdin })) {
    const name = line.trim();
    const method = METHODS.find((m) => m.name === name);
    if (method === undefined) throw new Error(`unknown method ${JSON.stringify(name)}: choose from ${METHOD_NAMES.join(', ')}`);
    console.log(JSON.stringify(await timeMethod(method, size, w, options)));
  }
}

/** Budgets: big managers get fewer, longer samples so the whole run stays short. */
export function budget(quick: boolean): Pick<PodManagerBenchOptions, 'sizes' | 'timeMs' | 'minSamples'> {
  return quick
    ? { sizes: QUICK_SIZES, timeMs: () => 50, minSamples: () => 5 }
    : {
        sizes: FULL_SIZES,
        timeMs: (size) => (size >= 100_000 ? 200 : 100),
        minSamples: (size) => (size >= 100_000 ? 5 : 20),
      };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.env.BENCH_QUICK === '1' || process.argv.includes('--quick');
  const { sizes, ...perSize } = budget(quick);
  const sizeArg = process.argv.find((a) => a.startsWith('--size='));
  const onlyArg = process.argv.find((a) => a.startsWith('--only='));
  const size = sizeArg === undefined ? undefined : Number(sizeArg.slice('--size='.length));
  if (size !== undefined && !(Number.isInteger(size) && size >= 10)) throw new Error(`${sizeArg}: need an integer >= 10`);
  if (process.argv.includes('--serve')) {
    if (size === undefined) throw new Error('--serve needs --size=N');
    await servePodManagerBench(size, perSize);
  } else {
    await runPodManagerBench({
      ...perSize,
      sizes: size === undefined ? sizes : [size],
      ...(onlyArg === undefined ? {} : { only: onlyArg.slice('--only='.length) }),
      onResult: (r) => console.log(JSON.stringify(r)),
    });
  }
}
