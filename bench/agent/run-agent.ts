// The agent benchmarks on one real local control plane: latency, bulk (with its ceiling and the
// QPS check) and resources. Writes bench/results/agent-{latency,bulk,resources}[-quick].{json,md}.
// Then the real kubelet and our agent side by side, on a control plane of their own:
// bench/results/agent-side-by-side[-quick].{json,md}; the fleet (agent-fleet), and the control
// plane with and without its scheduler and controller manager (agent-cluster), and kwok beside the
// fleet (agent-kwok, run-kwok.ts), the fleet at scale (agent-fleet-scale, run-fleet-scale.ts), and
// the kubelet's Lease controller beside the fleet's renewals (agent-kubelet-leases,
// run-kubelet-leases.ts), each on control planes of their own.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { startLocalCluster } from '../../src/cluster/local-cluster.js';
import { FLEET_MAX_SOCKETS } from '../../src/fleet/fleet-pools.js';
import { BULK_NODES, runBulkBench, type BulkResult } from './bulk.bench.js';
import { LATENCY_NODE, LATENCY_REAL_NODE, runLatencyBench, type LatencyResult } from './latency.bench.js';
import { resourceNode, runResourcesBench, type ResourceRow } from './resources.bench.js';
import { IMPORT_TARGETS, importCostTable, measureImportCosts } from './import-cost.js';
import { fleetModesTable, fleetTable, runFleetBench, runFleetModes, FLEET_KUBELET_NODE, FLEET_PODS_PER_NODE } from './fleet.bench.js';
import { clusterTable, runClusterBench } from './cluster.bench.js';
import { runKwok } from './run-kwok.js';
import { runFleetScale } from './run-fleet-scale.js';
import { runKubeletLeases } from './run-kubelet-leases.js';
import { fleetMemoryTable, runFleetMemoryBench } from './fleet-memory.bench.js';
import { fleetFeaturesTable, runFleetFeatures } from './fleet-features.bench.js';
import {
  burstDetailTable,
  idleDetailTable,
  restartDetailTable,
  runSideBySideBench,
  sideBySideCustomised,
  sideBySideNodes,
  sideBySideSizes,
  sideBySideTable,
} from './side-by-side.bench.js';

export interface AgentBenchSizes {
  latencySamples: number;
  bulkPods: number;
  resourceSizes: number[];
  idleWindowMs: number;
}

export function agentBenchSizes(quick: boolean): AgentBenchSizes {
  return quick
    ? { latencySamples: 6, bulkPods: 100, resourceSizes: [100], idleWindowMs: 5_000 }
    : { latencySamples: 200, bulkPods: 1_000, resourceSizes: [100, 1_000, 10_000], idleWindowMs: 30_000 };
}

function machine(): Record<string, unknown> {
  const c = cpus();
  return { cpu: c[0]?.model ?? 'unknown', cores: c.length, memoryBytes: totalmem(), platform: platform(), release: release(), node: process.version };
}

const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;

export function latencyTable(r: LatencyResult): string {
  const lines = ['| scenario | mode | samples | p50 ms | p95 ms | p99 ms | max ms |', '|---|---|---:|---:|---:|---:|---:|'];
  const label: Record<string, string> = {
    create: 'manifest written → mirror in watch',
    createRunning: 'manifest written → mirror Running in watch',
    recreate: 'mirror deleted via API → recreated',
    remove: 'manifest removed → mirror gone',
  };
  for (const k of Object.keys(label)) {
    for (const m of r.modes) {
      const p = m.scenarios[k as keyof typeof m.scenarios];
      lines.push(`| ${label[k]} | ${m.mode} | ${p.samples} | ${ms(p.p50)} | ${ms(p.p95)} | ${ms(p.p99)} | ${ms(p.max)} |`);
    }
  }
  return lines.join('\n');
}

export function bulkTable(r: BulkResult): string {
  const a = r.limited.adherence;
  const e = r.limited.eventAdherence;
  return [
    `| phase (${r.pods} pods, concurrency ${r.concurrency}) | agent, QPS off (best of 2) | ceiling (client-node loop, best of 2) | ratio | agent, QPS ${a.qps}/burst ${a.burst} |`,
    '|---|---:|---:|---:|---:|',
    `| all mirrored (created) | ${r.unlimited.mirrored.podsPerSecond} pods/s (${r.unlimited.mirrored.ms} ms) | ${r.ceiling.create.podsPerSecond} pods/s (${r.ceiling.create.ms} ms) | ${r.ratio.mirrored} | ${r.limited.mirrored.podsPerSecond} pods/s (${r.limited.mirrored.ms} ms) |`,
    `| all Running (create + status) | ${r.unlimited.running.podsPerSecond} pods/s (${r.unlimited.running.ms} ms) | (create only) | ${r.ratio.running} | ${r.limited.running.podsPerSecond} pods/s (${r.limited.running.ms} ms) |`,
    `| all removed | ${r.unlimited.removed.podsPerSecond} pods/s (${r.unlimited.removed.ms} ms) | ${r.ceiling.delete.podsPerSecond} pods/s (${r.ceiling.delete.ms} ms) | ${r.ratio.removed} | ${r.limited.removed.podsPerSecond} pods/s (${r.limited.removed.ms} ms) |`,
    '',
    `QPS adherence (every non-watch request of the agent but its event writes and heartbeats, ${a.requests} over ${a.spanMs} ms): max over all windows of requests − (burst + qps × window) = **${a.maxExcess}** (≤ 1 means within the bucket), sustained ${a.sustainedQps} req/s after the burst, at most ${a.maxPerSecond} requests in any 1 s window.`,
    '',
    `Event writes, which have a bucket of their own as the kubelet's event client has (eventRecordQPS ${e.qps}, eventBurst ${e.burst}; ${e.requests} over ${e.spanMs} ms): max excess **${e.maxExcess}**, at most ${e.maxPerSecond} in any 1 s window.`,
  ].join('\n');
}

export function resourcesTable(rows: readonly ResourceRow[]): string {
  const window = rows[0] ? `${(rows[0].idleWindowMs / 1000).toFixed(0)} s` : '';
  const lines = [
    `| static pods | converge (all Running) | RSS | heap used | RSS bytes/pod | heap bytes/pod | CPU, first ${window} after | idle CPU, next ${window} |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.pods.toLocaleString('en-US')} | ${(r.convergeMs / 1000).toFixed(1)} s | ${mib(r.memory.rss)} | ${mib(r.memory.heapUsed)} | ${r.rssBytesPerPod ?? '–'} | ${r.heapBytesPerPod ?? '–'} | ${r.settlingCpuPercent} % | ${r.idleCpuPercent} % |`,
    );
  }
  return lines.join('\n');
}

export const AGENT_BENCHES = ['latency', 'bulk', 'resources', 'side-by-side', 'fleet', 'fleet-memory', 'fleet-features', 'cluster', 'kwok', 'fleet-scale', 'kubelet-leases'] as const;
export type AgentBenchName = (typeof AGENT_BENCHES)[number];

export async function runAgentBenches(quick: boolean, resultsDir: string, only: readonly AgentBenchName[] = AGENT_BENCHES): Promise<void> {
  const sizes = agentBenchSizes(quick);
  const suffix = quick ? '-quick' : '';
  mkdirSync(resultsDir, { recursive: true });
  const write = (name: string, title: string, note: string, data: unknown, table: string, benchSizes: unknown = sizes): void => {
    const date = new Date().toISOString();
    const m = machine();
    writeFileSync(join(resultsDir, `${name}${suffix}.json`), `${JSON.stringify({ benchmark: name, date, quick, sizes: benchSizes, machine: m, loadAverage: loadavg(), result: data }, null, 2)}\n`);
    const header = `# ${title}${quick ? ' (quick mode)' : ''}\n\n${date} · node ${process.version} · ${String(m.cpu)} × ${String(m.cores)} · load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} after the run\n\n${note}\n\n`;
    writeFileSync(join(resultsDir, `${name}${suffix}.md`), `${header}${table}\n`);
    console.log(`\n${title}\n${table}`);
  };
  if (only.some((b) => b === 'latency' || b === 'bulk' || b === 'resources')) {
    const nodes = [LATENCY_NODE, LATENCY_REAL_NODE, ...BULK_NODES, resourceNode(0), ...sizes.resourceSizes.map(resourceNode)];
    console.error(`starting the local control plane for the agent benchmarks (${nodes.length} node identities)…`);
    const cluster = await startLocalCluster({ nodes });
    try {
      if (only.includes('latency')) {
        console.error(`agent latency: ${sizes.latencySamples} samples per scenario…`);
        const latency = await runLatencyBench(cluster, sizes.latencySamples);
        write('agent-latency', 'Agent reaction latency', 'Times from the action to the event arriving through a watch on pods with spec.nodeName (bench/agent/latency.bench.ts), per `--simulated-lifecycle` mode, and the real kubelet (v1.34.4, hollow kubelet) on the same scenarios (at most 10 samples). Goal (instant): p99 < 100 ms. The kubelet mode is as slow as the kubelet on purpose where it terminates a pod first (manifest removed: the next 2 s housekeeping deletes the mirror).', latency, latencyTable(latency));
      }
      if (only.includes('bulk')) {
        console.error(`agent bulk: ${sizes.bulkPods} pods…`);
        const bulk = await runBulkBench(cluster, sizes.bulkPods);
        write('agent-bulk', 'Agent bulk throughput', 'Pods per second, higher is better; ratio = agent ÷ ceiling, both measured twice in the same run, alternating, the better run of each (bench/agent/bulk.bench.ts). Goal: ≥ 0.8 with QPS off, exact bucket adherence with QPS on.', bulk, bulkTable(bulk));
      }
      if (only.includes('resources')) {
        console.error(`agent resources: ${sizes.resourceSizes.join(', ')} pods…`);
        const resources = await runResourcesBench(cluster, sizes.resourceSizes, sizes.idleWindowMs);
        write('agent-resources', 'Agent memory and CPU', 'Process holding only the agent (bench/agent/agent-child.ts), after a full GC once all mirrors are Running; bytes/pod against the same process with 0 static pods; CPU over two consecutive windows after that, the second being the steady state.', resources, resourcesTable(resources));
      }
    } finally {
      await cluster.dispose();
    }
  }
  if (only.includes('side-by-side')) await runSideBySide(quick, write);
  if (only.includes('fleet')) await runFleet(quick, write);
  if (only.includes('fleet-memory')) await runFleetMemory(quick, write);
  if (only.includes('fleet-features')) await runFeatures(quick, write);
  if (only.includes('cluster')) await runCluster(quick, write);
  if (only.includes('kwok')) await runKwok(quick, write);
  if (only.includes('fleet-scale')) await runFleetScale(quick, write);
  if (only.includes('kubelet-leases')) await runKubeletLeases(quick, write);
}

/** What each simulator feature costs a fleet per node (BENCH_FLEET_FEATURES_NODES overrides N). */
async function runFeatures(quick: boolean, write: Write): Promise<void> {
  const nodes = Number(process.env.BENCH_FLEET_FEATURES_NODES ?? (quick ? 20 : 1000));
  const idleWindowMs = quick ? 10_000 : 60_000;
  const loadBefore = loadavg();
  const runs = await runFleetFeatures(nodes, idleWindowMs);
  const note =
    `One \`kubelet-pods fleet\` process (bench/agent/fleet-child.ts, the shipped ClusterRole's token, kubelet lifecycle) of ${nodes} nodes × ${FLEET_PODS_PER_NODE} static pods, converged once plain and once with each feature on, each on a fresh control plane (bench/agent/fleet-features.bench.ts): \`scenarios\` (a usage for every pod, readiness flapping every 30 s on a fifth, a crash loop after 60 s on a tenth), \`kubelet ports\` (\`kubeletPorts: true\` on 127.0.0.1, one serving certificate for all nodes), \`adopted\` (the Nodes created by the harness with \`kwok.x-k8s.io/node: fake\` and taken over by an annotation selector template, timed from their creation). ` +
    `Ready and Running from the fork, polled; memory after a full GC once converged; CPU (utime + stime) over the next ${idleWindowMs / 1000} s. Per node beyond plain: (feature − plain) ÷ nodes. Load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before the run, ${loadavg().map((l) => l.toFixed(2)).join(' ')} after.`;
  write('agent-fleet-features', 'What the simulator features cost a fleet', note, { runs, loadAverageBefore: loadBefore }, fleetFeaturesTable(runs), { nodes, podsPerNode: FLEET_PODS_PER_NODE, idleWindowMs });
}

/** The cost of kube-scheduler and kube-controller-manager (BENCH_CLUSTER_FLEET_NODES overrides the fleet's size, BENCH_CLUSTER_ROUNDS the rounds). */
async function runCluster(quick: boolean, write: Write): Promise<void> {
  const options = {
    rounds: Number(process.env.BENCH_CLUSTER_ROUNDS ?? (quick ? 1 : 3)),
    idleWindowMs: quick ? 10_000 : 60_000,
    fleetNodes: Number(process.env.BENCH_CLUSTER_FLEET_NODES ?? (quick ? 20 : 1000)),
  };
  const loadBefore = loadavg();
  const rounds = await runClusterBench(options);
  const note =
    `The local control plane (tools/control-plane, Kubernetes v1.34.4) started from its cached binary with the API server alone (\`scheduler: false, controllerManager: false\`) and with kube-scheduler and kube-controller-manager, in turn, ${options.rounds} round(s) each, a fresh control plane every time (bench/agent/cluster.bench.ts). ` +
    `Start → ready: \`startLocalCluster\` until /readyz of the API server and the components' health endpoints answer. RSS: VmRSS right after ready (private: RssAnon; the rest is the shared binary's pages); idle CPU: utime + stime over ${options.idleWindowMs / 1000} s with nothing else running. ` +
    `Then a fleet of ${options.fleetNodes} nodes × ${FLEET_PODS_PER_NODE} static pods (bench/agent/fleet-child.ts, the shipped ClusterRole's token) from its fork to all Nodes Ready and all mirrors Running, polled; with the components the node lifecycle controller watches every Lease and the scheduler every pod. ` +
    `Load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before the run.`;
  write('agent-cluster', 'The control plane with and without kube-scheduler and kube-controller-manager', note, { rounds, loadAverageBefore: loadBefore }, clusterTable(rounds), options);
}

/**
 * N empty nodes, then P ordinary pods per node (BENCH_FLEET_MEMORY_NODES, BENCH_FLEET_MEMORY_PODS;
 * BENCH_FLEET_MEMORY_SNAPSHOTS=<dir> also writes heap snapshots, BENCH_FLEET_MEMORY_SETTLE_MS
 * waits that long before each reading instead of 10 s (60,000 lets a large fleet's settle GC
 * run first); any of them: results not written), on a control plane of its own.
 */
async function runFleetMemory(quick: boolean, write: Write): Promise<void> {
  const nodes = Number(process.env.BENCH_FLEET_MEMORY_NODES ?? (quick ? 100 : 1000));
  const podsPerNode = Number(process.env.BENCH_FLEET_MEMORY_PODS ?? 10);
  const snapshotDir = process.env.BENCH_FLEET_MEMORY_SNAPSHOTS;
  if (snapshotDir !== undefined) mkdirSync(snapshotDir, { recursive: true });
  const settleMs = Number(process.env.BENCH_FLEET_MEMORY_SETTLE_MS ?? 10_000);
  if (!(settleMs >= 0)) throw new Error(`BENCH_FLEET_MEMORY_SETTLE_MS: expected a number of ms ≥ 0, got ${JSON.stringify(process.env.BENCH_FLEET_MEMORY_SETTLE_MS)}`);
  const sizes = { nodes, podsPerNode, settleMs, idleWindowMs: quick ? 10_000 : 30_000 };
  const loadBefore = loadavg();
  console.error(`fleet memory: ${nodes} nodes without static pods, then ${podsPerNode} ordinary pods per node…`);
  const cluster = await startLocalCluster({ nodes: [] });
  let result;
  try {
    result = await runFleetMemoryBench(cluster, { ...sizes, ...(snapshotDir !== undefined ? { snapshotDir } : {}) });
  } finally {
    await cluster.dispose();
  }
  const table = fleetMemoryTable(result);
  const note =
    `One \`kubelet-pods fleet\` process (bench/agent/fleet-child.ts, the kubelet lifecycle, no static pods) on a local control plane of its own (bench/agent/fleet-memory.bench.ts): ${nodes} nodes until all are Ready, then ${nodes * podsPerNode} ordinary pods created through the API with spec.nodeName (${podsPerNode} per node, 32 at a time, as admin) until a list from the watch cache shows all Running. ` +
    `Memory after a full GC, ${sizes.settleMs / 1000} s after each convergence and once the fleet's young generation, if grown while busy, is given back (${(result.empty.youngSettleMs / 1000).toFixed(1)} s and ${(result.withPods.youngSettleMs / 1000).toFixed(1)} s later); per node: the empty fleet's total ÷ nodes; per pod: the difference ÷ pods. Idle CPU (utime + stime) over the ${sizes.idleWindowMs / 1000} s after each reading. Load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before the run, ${loadavg().map((l) => l.toFixed(2)).join(' ')} after.`;
  const overrides = ['BENCH_FLEET_MEMORY_NODES', 'BENCH_FLEET_MEMORY_PODS', 'BENCH_FLEET_MEMORY_SNAPSHOTS', 'BENCH_FLEET_MEMORY_SETTLE_MS', 'BENCH_FLEET_GROW_YOUNG_WHILE_BUSY'].filter((name) => process.env[name] !== undefined);
  if (overrides.length > 0) {
    console.log(`\nFleet memory (${overrides.join(', ')} set: results not written; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadavg().map((l) => l.toFixed(2)).join(' ')} after)\n${table}\n${JSON.stringify(result)}`);
    return;
  }
  write('agent-fleet-memory', 'The fleet\'s memory per node and per pod', note, { ...result, loadAverageBefore: loadBefore }, table, sizes);
}

/** N nodes × 5 static pods from one process (BENCH_FLEET_NODES overrides N, BENCH_FLEET_IDLE_MS the idle window, BENCH_FLEET_HEAP_GROWING_PERCENT the fleet's heapGrowingPercent, BENCH_FLEET_PARALLEL_SCAVENGE=1 its parallelScavenge; any of them: results not written), on a control plane of its own. */
async function runFleet(quick: boolean, write: Write): Promise<void> {
  const nodes = Number(process.env.BENCH_FLEET_NODES ?? (quick ? 50 : 1000));
  // At 1,000 nodes V8 runs a mark-compact every 10-25 s: a 60 s window caught two to four and
  // read anywhere in 5.7-7.2 %; 180 s averages about ten (docs/performance.md, step 8).
  const idleWindowMs = Number(process.env.BENCH_FLEET_IDLE_MS ?? (quick ? 30_000 : 180_000));
  const settleMs = 15_000;
  const loadBefore = loadavg();
  console.error(`fleet: ${nodes} nodes × ${FLEET_PODS_PER_NODE} static pods from one process, beside one hollow kubelet…`);
  const cluster = await startLocalCluster({ nodes: [FLEET_KUBELET_NODE] });
  let result;
  try {
    result = await runFleetBench(cluster, { nodes, idleWindowMs, settleMs });
  } finally {
    await cluster.dispose();
  }
  const note =
    `One \`kubelet-pods fleet\` process (bench/agent/fleet-child.ts) with the shipped ClusterRole's ServiceAccount token, fleet-wide kubeAPIQPS 500 / burst 1000, the fleet command's GC settings (heap growing percent 100, scavenges on the main thread, the young generation at its starting size: src/fleet/gc-settings.ts), on a local control plane of its own (bench/agent/fleet.bench.ts). ` +
    `Ready and Running: from the fork, polled (${nodes > 200 ? 2 : 0.5} s). Memory after a full GC, 15 s after convergence; CPU (utime + stime) and API requests (non-watch) over the next ${idleWindowMs / 1000} s; Lease lateness: gap between two renewals of one Lease arriving in a watch, less 10.4 s (period + 4 % jitter), over that window. ` +
    `Mirrors per second: the fleet's pod creates from the first sent to the last answered, against a plain client-node loop (bulk.bench.ts) creating as many pods with the fleet's token and concurrency (its ${FLEET_MAX_SOCKETS} sockets), once before the fleet starts and once after it stopped, each deleting its pods, and the same loop over a keep-alive connection pool (plain client-node opens a TLS connection per request); each ratio is against the faster run of that loop. ` +
    `The kubelet: the hollow kubelet (v1.34.4, kubemark's fake runtime, its defaults) on node ${FLEET_KUBELET_NODE} with the same ${FLEET_PODS_PER_NODE} manifests, started once the fleet has converged and measured over the fleet's idle window (RSS: VmRSS mean of 1 s samples for both; its requests: client-go's rest_client_requests_total, watches included; the fleet's: non-watch). ` +
    `Goals: ≤ 1 MiB RSS per node, 1,000 nodes Ready and 5,000 mirrors Running within 120 s, Lease p99 lateness < 1 s, idle CPU < 5 %, mirrors per second ≥ 0.9 of the loop. Load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before the run.`;
  const overrides = ['BENCH_FLEET_NODES', 'BENCH_FLEET_IDLE_MS', 'BENCH_FLEET_HEAP_GROWING_PERCENT', 'BENCH_FLEET_PARALLEL_SCAVENGE'].filter((name) => process.env[name] !== undefined);
  if (overrides.length > 0) {
    console.log(`\nFleet (${overrides.join(', ')} set: results not written)\n${fleetTable(result)}`);
    return;
  }
  // Both lifecycle modes, each converged once on a fresh control plane: what the kubelet's life
  // (a relist between the runtime and the workers) costs against `instant`.
  const modes = await runFleetModes(nodes);
  const table = `${fleetTable(result)}\n\n## Both lifecycle modes (a fresh control plane each, convergence only)\n\n${fleetModesTable(modes)}`;
  write('agent-fleet', 'Many nodes from one process: kubelet-pods fleet', note, { ...result, modes, loadAverageBefore: loadBefore }, table, { nodes, podsPerNode: FLEET_PODS_PER_NODE, idleWindowMs, settleMs });
}

export type Write = (name: string, title: string, note: string, data: unknown, table: string, benchSizes?: unknown) => void;

async function runSideBySide(quick: boolean, write: Write): Promise<void> {
  const started = performance.now();
  const sizes = sideBySideSizes(quick);
  const loadBefore = loadavg();
  console.error('side by side: the import cost of each dependency…');
  // Quick mode: the whole agent and client-node only.
  const imports = measureImportCosts(quick ? IMPORT_TARGETS.slice(0, 2) : IMPORT_TARGETS);
  const nodes = sideBySideNodes(sizes);
  console.error(`starting a local control plane for the side-by-side benchmark (${nodes.length} node identities)…`);
  const cluster = await startLocalCluster({ nodes });
  let result;
  try {
    result = await runSideBySideBench(cluster, sizes);
  } finally {
    await cluster.dispose();
  }
  const runtimeMs = Math.round(performance.now() - started);
  const data = { ...result, imports, runtimeMs, loadAverageBefore: loadBefore };
  const table = [
    sideBySideTable(result),
    '',
    '## Idle, in detail',
    '',
    idleDetailTable(result),
    '',
    '## Every burst run',
    '',
    burstDetailTable(result),
    '',
    '## Every restart run',
    '',
    restartDetailTable(result),
    '',
    '## What our RSS with no pods holds',
    '',
    importCostTable(imports),
  ].join('\n');
  const note =
    `The real kubelet (tools/hollow-kubelet: v1.34.4 with kubemark's fake runtime) and our agent (bench/agent/agent-child.ts), each on its own node of one local control plane, one after the other, with kubeAPIQPS ${result.qps} / kubeAPIBurst ${result.burst} and maxPods ${result.maxPods} on both (bench/agent/side-by-side.bench.ts). ` +
    `RSS: VmRSS, mean of 1 s samples over the idle window; CPU: utime + stime from /proc over the window; writes: every POST/PUT/PATCH/DELETE each one sent, from its own request counters. ` +
    `Load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before the run; the run took ${(runtimeMs / 1000).toFixed(0)} s.`;
  if (sideBySideCustomised()) {
    console.log(`\nSide by side (BENCH_SBS_* set: results not written)\n${table}`);
    return;
  }
  write('agent-side-by-side', 'The real kubelet and our agent, side by side', note, data, table, sizes);
}
