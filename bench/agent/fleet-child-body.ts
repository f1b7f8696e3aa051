// The fleet child's body, loaded by its entry (fleet-child.ts, which says what the process is
// and what it is given): the fleet and the thin IPC shim the benchmarks talk to.
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { createFleet } from '../../src/fleet/fleet.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { applyFleetGcSettings, isMajorGc, youngGenerationSettled } from '../../src/fleet/gc-settings.js';
import { createLogger } from '../../src/logger.js';
import { Session } from 'node:inspector';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { serveChildOps, type ChildOps } from './child-ops.js';

const options = JSON.parse(process.argv[2] ?? '{}') as {
  kubeconfig: string;
  manifestDir?: string;
  nodes: number;
  prefix: string;
  simulatedLifecycle?: string;
  snapshotDir?: string;
  log?: boolean;
  /** More fields of the fleet file (fleet-features.bench.ts: scenarios, kubeletPorts). */
  fleet?: Record<string, unknown>;
  /** A selector in place of the template's names (`annotationSelector: …`): the harness creates the Nodes. */
  selector?: Record<string, string>;
};
const names = options.selector ?? { name: `${options.prefix}{i}`, count: options.nodes };

// Every non-watch request the fleet sends (what kubeAPIQPS limits), counted; and the mirror
// creates (POST of a pod) timed, for the mirrors-per-second comparison with a create loop.
let requests = 0;
const creates = { ok: 0, failed: 0, firstStart: 0, lastEnd: 0, inFlight: 0, peakInFlight: 0 };
const POD_CREATE = /^\/api\/v1\/namespaces\/[^/]+\/pods(\?|$)/;
const original = https.request.bind(https) as (...args: unknown[]) => ClientRequest;
(https as unknown as { request: unknown }).request = (...args: unknown[]) => {
  const first = args[0] as { path?: string; method?: string } | string | URL;
  const path = typeof first === 'string' ? first : first instanceof URL ? first.search : (first.path ?? '');
  if (!/[?&]watch=(true|1)/.test(path)) requests++;
  const req = original(...args);
  if (typeof first === 'object' && !(first instanceof URL) && first.method === 'POST' && POD_CREATE.test(path)) timeCreate(req);
  return req;
};

function timeCreate(req: ClientRequest): void {
  const now = performance.now();
  if (creates.firstStart === 0) creates.firstStart = now;
  creates.peakInFlight = Math.max(creates.peakInFlight, ++creates.inFlight);
  let done = false;
  const finish = (ok: boolean): void => {
    if (done) return;
    done = true;
    creates.inFlight--;
    creates.lastEnd = performance.now();
    if (ok) creates.ok++;
    else creates.failed++;
  };
  // 'close' follows the end of the response (or a failure): the status decides.
  let status = 0;
  req.on('response', (res) => {
    status = res.statusCode ?? 0;
  });
  req.on('close', () => finish(status === 201));
}

// New TLS connections (each costs a handshake): a keep-alive pool should make none at idle.
let connections = 0;
const createConnection = https.Agent.prototype.createConnection;
https.Agent.prototype.createConnection = function (this: https.Agent, ...args: Parameters<typeof createConnection>) {
  connections++;
  return createConnection.apply(this, args);
} as typeof createConnection;

const config = resolveFleetConfig(
  { kubeconfig: options.kubeconfig, readOnlyPort: 0, ...options.fleet, templates: [{ ...names, ...(options.manifestDir !== undefined ? { staticPodPath: options.manifestDir } : {}), ...(options.simulatedLifecycle ? { kubelet: { simulatedLifecycle: options.simulatedLifecycle } } : {}) }] },
  {
    ...(process.env.BENCH_FLEET_HEAP_GROWING_PERCENT ? { heapGrowingPercent: process.env.BENCH_FLEET_HEAP_GROWING_PERCENT } : {}),
    ...(process.env.BENCH_FLEET_PARALLEL_SCAVENGE === '1' ? { parallelScavenge: true } : {}),
    ...(process.env.BENCH_FLEET_SEMI_SPACE_GROWTH_FACTOR ? { semiSpaceGrowthFactor: process.env.BENCH_FLEET_SEMI_SPACE_GROWTH_FACTOR } : {}),
    ...(process.env.BENCH_FLEET_COMPACT_EVERY_FULL_GC === '0' ? { compactEveryFullGc: false } : {}),
    ...(process.env.BENCH_FLEET_SETTLE_GC === '0' ? { settleGc: false } : {}),
    ...(process.env.BENCH_FLEET_GROW_YOUNG_WHILE_BUSY === '0' ? { growYoungWhileBusy: false } : {}),
  },
);
// What `kubelet-pods fleet` does before it starts the fleet (src/cli/fleet-command.ts);
// BENCH_FLEET_FULL_COMPACTION_HEAP_MIB moves the heap size up to which it compacts fully.
const compactionLimitMiB = process.env.BENCH_FLEET_FULL_COMPACTION_HEAP_MIB;
if (compactionLimitMiB !== undefined && !(Number(compactionLimitMiB) >= 0)) throw new Error(`BENCH_FLEET_FULL_COMPACTION_HEAP_MIB: expected a number of MiB ≥ 0, got ${JSON.stringify(compactionLimitMiB)}`);
// The settle GC's collections, told apart from V8's own full GCs in the `pauses` op.
let settleGc = { count: 0, totalMs: 0 };
applyFleetGcSettings(config, process.execArgv, compactionLimitMiB !== undefined ? { fullCompaction: Number(compactionLimitMiB) * 2 ** 20 } : {}, {
  settled: ({ ms }) => {
    settleGc.count++;
    settleGc.totalMs += ms;
  },
});
// The fleet command's logger (src/cli/fleet-command.ts), its lines thrown away, or kept in the
// file BENCH_FLEET_LOG names (to find out afterwards what a long run's nodes did).
const logFile = process.env.BENCH_FLEET_LOG || '/dev/null';
const logger = options.log === true ? createLogger({ destination: createWriteStream(logFile, { flags: 'a' }) }) : undefined;
const fleet = await createFleet({ config, ...(logger !== undefined ? { logger } : {}) });
await fleet.start();

// How long the fleet's event loop was held (its timers, the Lease renewals among them, waited
// that long) and its full GCs' pauses, since the last `pauses` call: what a late renewal owes
// to the fleet's own process.
const loopDelay = monitorEventLoopDelay({ resolution: 20 });
loopDelay.enable();
let majorGc = { count: 0, totalMs: 0, maxMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (!isMajorGc(entry)) continue;
    majorGc.count++;
    majorGc.totalMs += entry.duration;
    majorGc.maxMs = Math.max(majorGc.maxMs, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });

let snapshots = 0;
const ops: ChildOps = {
  started: () => true,
  memory: () => {
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    // Where the heap's committed memory is (what RSS holds beyond the live objects), in KiB.
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { committedKiB: Math.round(s.physical_space_size / 1024), usedKiB: Math.round(s.space_used_size / 1024) }]));
    return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, spaces };
  },
  // Whether the young generation is as it will stay while idle (gc-settings.ts): a reading of
  // memory before then would count a young generation grown in the last wave.
  youngSettled: youngGenerationSettled,
  // Without a GC first: what the process holds as it runs (fleet-rss-probe.ts samples it).
  memoryNow: () => {
    const m = process.memoryUsage();
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.physical_space_size / 1024)]));
    const handles = (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles();
    const tls = handles.filter((h) => h.constructor?.name === 'TLSSocket').length;
    return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, spacesKiB: spaces, tlsSockets: tls };
  },
  // What the fleet allocates over 20 s (every object, collected or not; sampled every 1 KiB by
  // V8's sampling heap profiler), by allocating function: fleet-rss-probe.ts prints it. With
  // BENCH_RSS_PROBE_ALLOCATIONS=promoted, only what outlived the scavenges: what fills the old
  // generation between full GCs.
  allocations: () => sampleAllocations(20_000, process.env.BENCH_RSS_PROBE_ALLOCATIONS === 'promoted'),
  cpu: () => process.cpuUsage(),
  // A heap snapshot after a full GC (bench/agent/heap-attribution.ts reads it); its path.
  snapshot: () => {
    if (options.snapshotDir === undefined) throw new Error('no snapshotDir given');
    (globalThis as { gc?: () => void }).gc?.();
    return writeHeapSnapshot(join(options.snapshotDir, `fleet-${++snapshots}.heapsnapshot`));
  },
  pauses: () => {
    const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
    const r = { loopDelayP99Ms: ms(loopDelay.percentile(99)), loopDelayMaxMs: ms(loopDelay.max), majorGcs: majorGc.count, majorGcTotalMs: Math.round(majorGc.totalMs), majorGcMaxMs: Math.round(majorGc.maxMs), settleGcs: settleGc.count, settleGcTotalMs: Math.round(settleGc.totalMs) };
    loopDelay.reset();
    majorGc = { count: 0, totalMs: 0, maxMs: 0 };
    settleGc = { count: 0, totalMs: 0 };
    return r;
  },
  requests: () => requests,
  connections: () => connections,
  creates: () => ({ ok: creates.ok, failed: creates.failed, ms: creates.lastEnd - creates.firstStart, peakInFlight: creates.peakInFlight }),
  stop: async () => {
    await fleet.stop();
    setImmediate(() => process.exit(0));
    return true;
  },
};

serveChildOps(ops);

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Bytes allocated over `ms` by function (name, file, line), the largest first. */
async function sampleAllocations(ms: number, promotedOnly: boolean): Promise<{ totalBytes: number; top: [string, number][] }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !promotedOnly });
  await new Promise((resolve) => setTimeout(resolve, ms));
  const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
  session.disconnect();
  const byFrame = new Map<string, number>();
  let totalBytes = 0;
  const walk = (n: SamplingNode, path: string[]): void => {
    const f = n.callFrame;
    const here = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
    if (n.selfSize > 0) {
      // The frame and its two callers, so that a shared helper is told by who calls it.
      const key = [here, ...path.slice(-2).reverse()].join(' ← ');
      byFrame.set(key, (byFrame.get(key) ?? 0) + n.selfSize);
      totalBytes += n.selfSize;
    }
    for (const c of n.children) walk(c, [...path, here]);
  };
  walk(profile.head, []);
  return { totalBytes, top: [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, 60) };
}
