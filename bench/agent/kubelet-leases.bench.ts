// The kubelet's own Lease code beside the fleet's (issue 22: N nodes "Ready and holding their
// Leases"; "if the local API server and etcd are what cannot keep up on 2 cores, show it"). One
// peer is tools/kubelet-leases: the node Lease controller the kubelet starts
// (k8s.io/component-helpers' lease package), once per node name in one Go process, each client
// set up as the kubelet's heartbeat client. The other is `kubelet-pods fleet` with N empty
// nodes (fleet-scale.bench.ts without pods). Each runs on a fresh local control plane with the
// same credential (the shipped ClusterRole's token), one after the other; per peer: the start
// until all N Leases are held, then an idle window with the renewals' lateness (as they arrive,
// and between their renewTimes), CPU and RSS of the peer and of the control plane, and the API
// server's account. Where the kubelet's code is as late as ours with the cores full, the
// control plane is what cannot keep up, and each peer's CPU is its own share.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { ensureGoTool, type GoTool } from '../../src/cluster/go-tool-build.js';
import { startLocalCluster } from '../../src/cluster/local-cluster.js';
import { logTail } from '../../src/cluster/tool-process.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { apiServerPhase, readApiServerMetrics, type ApiServerPhase, type MetricsReading } from './api-server-metrics.js';
import { envChoices, envWholeNumber, tempDir } from './common.js';
import { leaseLateness, stampedLeaseLateness, watchLeaseRenewals } from './fleet.bench.js';
import { until } from './fleet-memory.bench.js';
import { latenessOf, runFleetScaleBench, type FleetPauses, type LeaseLateness } from './fleet-scale.bench.js';
import { controlPlaneProcesses, PhaseUsage, type ProcessPhase } from './process-usage.js';
import { childPidWithArg } from './subjects.js';

export const KUBELET_LEASES_TOOL: GoTool = {
  id: 'kubelet-leases',
  binaryName: 'kubelet-leases',
  title: "the kubelet's node Lease controller, once per node (tools/kubelet-leases)",
  binaryEnv: 'KUBELET_PODS_KUBELET_LEASES',
  approxPackages: 250,
  firstBuildEstimate: "one or two minutes once the control plane is in Go's build cache",
};

const PREFIX = 'kl-';

export const LEASE_PEERS = ['kubelet', 'fleet'] as const;
export type LeasePeer = (typeof LEASE_PEERS)[number];

export interface KubeletLeasesSizes {
  nodes: number;
  /** The window whose renewals are measured. */
  idleWindowMs: number;
  /** Pause between all Leases held and the window. */
  settleMs: number;
  /** The Go peer's client sets, each its own HTTP/2 connection. */
  connections: number;
  peers: readonly LeasePeer[];
}

/** The environment knobs; any of them set means a run whose results are printed, not written. */
export const KUBELET_LEASES_KNOBS = ['BENCH_KUBELET_LEASES_NODES', 'BENCH_KUBELET_LEASES_IDLE_MS', 'BENCH_KUBELET_LEASES_PEERS'] as const;

export function kubeletLeasesSizes(quick: boolean, env: NodeJS.ProcessEnv = process.env): KubeletLeasesSizes {
  // Quick: two Lease rounds in the window, so lateness has gaps to measure.
  const base = quick ? { nodes: 20, idleWindowMs: 25_000, settleMs: 5_000 } : { nodes: 10_000, idleWindowMs: 120_000, settleMs: 20_000 };
  const num = (name: (typeof KUBELET_LEASES_KNOBS)[number], fallback: number): number => envWholeNumber(env, name, fallback);
  return {
    nodes: num('BENCH_KUBELET_LEASES_NODES', base.nodes),
    idleWindowMs: num('BENCH_KUBELET_LEASES_IDLE_MS', base.idleWindowMs),
    settleMs: base.settleMs,
    connections: 16,
    peers: envChoices(env, 'BENCH_KUBELET_LEASES_PEERS', LEASE_PEERS),
  };
}

export interface LeasePeerRun {
  peer: LeasePeer;
  /** From the start until every Lease was held (the fleet: every Node Ready, its Lease with it). */
  heldMs: number;
  idle: {
    ms: number;
    lease: LeaseLateness;
    /** The same renewals between their `spec.renewTime`s: the peer's own share. */
    leaseStamped: LeaseLateness;
    /** The peer first, then the control plane's processes and the harness. */
    processes: ProcessPhase[];
    apiServer: ApiServerPhase;
    /** The fleet's event loop and full GCs in the window. */
    fleetPauses?: FleetPauses;
  };
  leaseWatchReopened: number;
}

export async function runKubeletLeasesBench(sizes: KubeletLeasesSizes): Promise<LeasePeerRun[]> {
  const runs: LeasePeerRun[] = [];
  for (const peer of sizes.peers) {
    console.error(`kubelet leases: ${peer}, ${sizes.nodes} nodes, idle ${sizes.idleWindowMs / 1000} s, on a fresh control plane…`);
    const run = peer === 'kubelet' ? await runKubeletPeer(sizes) : await runFleetPeer(sizes);
    console.error(`kubelet leases: ${peer} ${JSON.stringify(run)}`);
    runs.push(run);
  }
  return runs;
}

async function runFleetPeer(sizes: KubeletLeasesSizes): Promise<LeasePeerRun> {
  const r = await runFleetScaleBench({ nodes: sizes.nodes, podsPerNode: 0, idleWindowMs: sizes.idleWindowMs, settleMs: sizes.settleMs, concurrency: 1 });
  const ready = r.phases.find((p) => p.name === 'ready');
  const idle = r.phases.find((p) => p.name === 'idle');
  if (ready === undefined || idle?.lease === undefined || idle.leaseStamped === undefined) throw new Error('the fleet scale run ended without its ready and idle phases');
  return {
    peer: 'fleet',
    heldMs: ready.ms,
    idle: { ms: idle.ms, lease: idle.lease, leaseStamped: idle.leaseStamped, processes: idle.processes, apiServer: idle.apiServer, ...(idle.fleetPauses !== undefined ? { fleetPauses: idle.fleetPauses } : {}) },
    leaseWatchReopened: r.leaseWatchReopened,
  };
}

async function runKubeletPeer(sizes: KubeletLeasesSizes): Promise<LeasePeerRun> {
  const { path: binary } = await ensureGoTool(KUBELET_LEASES_TOOL);
  const cluster = await startLocalCluster({ nodes: [] });
  const dir = await tempDir('kp-bench-kubelet-leases-');
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.adminKubeconfig);
  const metrics = (): Promise<MetricsReading> => readApiServerMetrics(cluster.server, cluster.adminKubeconfig, cluster.caFile);
  const logFile = join(dir, 'kubelet-leases.log');
  let leases: Awaited<ReturnType<typeof watchLeaseRenewals>> | undefined;
  let stopPeer = async (): Promise<void> => undefined;
  try {
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
    const controlPlane = controlPlaneProcesses(childPidWithArg(`--dir=${cluster.dir}`));
    leases = await watchLeaseRenewals(kc, PREFIX);
    const log = openSync(logFile, 'a');
    const startedAt = performance.now();
    const child = spawn(binary, [`-kubeconfig=${kubeconfig}`, `-leases=${sizes.nodes}`, `-prefix=${PREFIX}`, `-connections=${sizes.connections}`], { stdio: ['ignore', 'ignore', log] });
    closeSync(log);
    // How the process ended, once it has.
    let exit: string | undefined;
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        exit = `exited (${signal ?? code})`;
        resolve();
      }),
    );
    stopPeer = async () => {
      if (exit === undefined) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    };
    const renewals = leases.renewals;
    try {
      await until(
        () => {
          if (exit !== undefined) throw new Error(`kubelet-leases ${exit} with ${renewals.size} of ${sizes.nodes} Leases held`);
          return renewals.size >= sizes.nodes;
        },
        `${sizes.nodes} Leases held`,
        120_000 + sizes.nodes * 30,
        200,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message} (${renewals.size} held); its log:\n${await logTail(logFile)}`, { cause: err });
    }
    const heldMs = performance.now() - startedAt;
    await delay(sizes.settleMs);
    const m0 = await metrics();
    const usage = new PhaseUsage([{ name: 'kubelet lease controllers', pid: child.pid! }, ...controlPlane]);
    const t0 = performance.now();
    await delay(sizes.idleWindowMs);
    const t1 = performance.now();
    const processes = usage.end();
    const apiServer = apiServerPhase(m0, await metrics());
    if (exit !== undefined) throw new Error(`kubelet-leases ${exit} in the idle window; its log:\n${await logTail(logFile)}`);
    return {
      peer: 'kubelet',
      heldMs: Math.round(heldMs),
      idle: { ms: Math.round(t1 - t0), lease: latenessOf(leaseLateness(renewals, t0, t1)), leaseStamped: latenessOf(stampedLeaseLateness(renewals, t0, t1)), processes, apiServer },
      leaseWatchReopened: leases.reopened(),
    };
  } finally {
    leases?.stop();
    await stopPeer();
    await cluster.dispose();
  }
}

const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(0)} MiB`;

/** Side by side: the kubelet's code first, the fleet second, and fleet ÷ kubelet where both ran. */
export function kubeletLeasesTable(runs: readonly LeasePeerRun[], nodes: number): string {
  const kubelet = runs.find((r) => r.peer === 'kubelet');
  const fleet = runs.find((r) => r.peer === 'fleet');
  const cols = [kubelet, fleet];
  const leasePut = (r: LeasePeerRun): ApiServerPhase['requests'][number] | undefined => r.idle.apiServer.requests.find((x) => x.key === 'PUT leases');
  const proc = (r: LeasePeerRun, i: number): ProcessPhase | undefined => r.idle.processes[i];
  const controlPlane = (r: LeasePeerRun): ProcessPhase | undefined => r.idle.processes.find((p) => p.name === 'kube-apiserver + etcd');
  // Rows where the two peers do different work (the fleet also registers its Nodes and keeps
  // their status and pod machinery) show both figures and no ratio.
  const rows: Array<[string, (r: LeasePeerRun) => number | undefined, (v: number) => string, 'no ratio'?]> = [
    [`start → all ${nodes.toLocaleString('en-US')} Leases held (the fleet: all Nodes registered and Ready)`, (r) => r.heldMs, s, 'no ratio'],
    ['idle: renewals seen in the window', (r) => r.idle.lease.renewals, (v) => v.toLocaleString('en-US')],
    ['idle: renewals a second needed (one a node every 10 s)', () => nodes / 10, (v) => v.toLocaleString('en-US')],
    ['idle: Lease lateness p50, as the renewals arrive', (r) => r.idle.lease.p50Ms, ms],
    ['idle: Lease lateness p99, as the renewals arrive', (r) => r.idle.lease.p99Ms, ms],
    ['idle: Lease lateness max, as the renewals arrive', (r) => r.idle.lease.maxMs, ms],
    ["idle: Lease lateness p99 between renewTimes (the peer's own share)", (r) => r.idle.leaseStamped.p99Ms, ms],
    ["idle: the peer's CPU (% of one core)", (r) => proc(r, 0)?.cpuPercent, (v) => `${v} %`],
    ["idle: the peer's RSS, largest sample (the fleet: its Nodes and their pod machinery too)", (r) => proc(r, 0)?.rssMaxBytes, mib, 'no ratio'],
    ['idle: kube-apiserver + etcd CPU (% of one core)', (r) => controlPlane(r)?.cpuPercent, (v) => `${v} %`],
    ['idle: API server, Lease PUTs a second (429s included)', (r) => leasePut(r)?.perSecond, (v) => String(v)],
    ['idle: API server, Lease PUT latency mean', (r) => leasePut(r)?.meanMs, ms],
    ['idle: API server, Lease PUT latency p99', (r) => leasePut(r)?.p99Ms, ms],
    ['idle: API server, requests refused by API Priority and Fairness (429)', (r) => r.idle.apiServer.priorityLevels.reduce((sum, l) => sum + l.rejected, 0), (v) => v.toLocaleString('en-US')],
    ['idle: API server, all requests a second', (r) => r.idle.apiServer.requestsPerSecond, (v) => String(v)],
  ];
  const lines = ["| measure | the kubelet's Lease controller × N (Go) | kubelet-pods fleet | fleet ÷ kubelet |", '|---|---:|---:|---:|'];
  for (const [label, get, fmt, noRatio] of rows) {
    const values = cols.map((r) => (r === undefined ? undefined : get(r)));
    const [k, f] = values;
    const ratio = noRatio === undefined && k !== undefined && f !== undefined && k > 0 ? (f / k).toFixed(2) : '–';
    lines.push(`| ${label} | ${values.map((v) => (v === undefined ? '–' : fmt(v))).join(' | ')} | ${ratio} |`);
  }
  lines.push('', '## Who used the cores in the idle window (CPU: % of one core; RSS: largest 1 s sample)', '', '| peer | processes |', '|---|---|');
  for (const r of runs) lines.push(`| ${r.peer} | ${r.idle.processes.map((p) => `${p.name} ${p.cpuPercent} % · ${mib(p.rssMaxBytes)}`).join('; ')} |`);
  if (fleet?.idle.fleetPauses !== undefined) {
    const p = fleet.idle.fleetPauses;
    lines.push('', `The fleet's event loop in the window: held p99 ${p.loopDelayP99Ms} ms, max ${p.loopDelayMaxMs} ms; full GCs ${p.majorGcs}, ${p.majorGcTotalMs} ms in all, the longest ${p.majorGcMaxMs} ms.`);
  }
  return lines.join('\n');
}

function ms(v: number): string {
  return v >= 1_000 ? s(v) : `${Math.round(v)} ms`;
}
