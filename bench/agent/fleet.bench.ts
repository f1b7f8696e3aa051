// `kubelet-pods fleet` at scale (docs/fleet.md): N nodes × 5 static pods from one process
// (bench/agent/fleet-child.ts) on a local control plane of its own, with the one credential
// of the shipped ClusterRole. Measures the time until every Node is Ready and every mirror is
// Running, RSS and heap (total and per node, after a full GC), CPU and API requests per second
// while idle, and the Lease renewal lateness seen through a watch of kube-node-lease: for each
// Lease, the gap between two consecutive renewals arriving, less the period and its largest
// jitter (10 s + 4 %), 0 when on time.
//
// Two comparisons in the same run, on the same API server:
// - mirrors per second while converging (the fleet's pod creates, from the first sent to the
//   last answered) against a plain client-node create loop (bulk.bench.ts's ceiling) creating
//   as many pods with the fleet's concurrency (its connection pool) and the fleet's credential,
//   run before the fleet starts and after it stopped, each cleaning up after itself; and the
//   same loop over a keep-alive pool (plain client-node opens a TLS connection per request),
//   the harder target;
// - the real kubelet (hollow kubelet, tools/hollow-kubelet) serving one node with the same 5
//   static pods, measured in the very idle window of the fleet (both idle, so they do not
//   compete for the cores): RSS (VmRSS sampled every second), CPU (utime + stime) and API
//   requests per second, each of the fleet's divided by its nodes against the kubelet's.
import { fork } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { CoordinationV1Api, CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import { FLEET_MAX_SOCKETS } from '../../src/fleet/fleet-pools.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { createLoop, rate, type PhaseRate } from './bulk.bench.js';
import { FleetChild, convergeFleet, untilConverged } from './fleet-process.js';
import { startLocalCluster } from '../../src/cluster/local-cluster.js';
import { SIMULATED_LIFECYCLES, type SimulatedLifecycle } from '../../src/config/types.js';
import { NodePodObserver, benchNodeOptions, createNamespace, manifestYaml, tempDir } from './common.js';
import { procCpuMs, procCpuSplitMs, procRss, requestCount, startSubject, countsDelta, type Subject } from './subjects.js';

export const FLEET_PODS_PER_NODE = 5;
const PREFIX = 'fb-';
/** The hollow kubelet's node (a credential of the local cluster) and the create loop's node: not fleet names. */
export const FLEET_KUBELET_NODE = 'kubelet-fb';
const CEILING_NODE = 'ceiling-fb';
const ALLOWED_MS = 10_000 * 1.04;

export interface FleetBenchResult {
  nodes: number;
  podsPerNode: number;
  readyMs: number;
  runningMs: number;
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  rssBytesPerNode: number;
  heapUsedBytesPerNode: number;
  idleWindowMs: number;
  idleCpuPercent: number;
  /**
   * The idle CPU split by where it was spent, in % of one core: the main thread (JavaScript,
   * and the kernel on its behalf) and every other thread (V8's GC helpers, libuv's pool).
   */
  idleCpuSplit: { mainUser: number; mainSystem: number; otherUser: number; otherSystem: number };
  idleRequestsPerSecond: number;
  idleRequestsPerSecondPerNode: number;
  /** TLS connections opened during the idle window (0 when keep-alive holds). */
  idleNewConnections: number;
  leaseRenewals: number;
  /** How often the bench's own Lease watch ended and was opened again. */
  leaseWatchReopened: number;
  leaseLatenessMaxMs: number;
  leaseLatenessP99Ms: number;
  /** VmRSS of the fleet process, mean of 1 s samples over the idle window (as the kubelet's). */
  idleRssBytes: number;
  /**
   * The fleet's mirror creates while converging; `peakInFlight`: most creates sent and not yet
   * answered at once (those beyond the pool's sockets wait in the fleet).
   */
  mirrors: { created: number; failed: number; ms: number; podsPerSecond: number; peakInFlight: number };
  /** The plain create loop: the same number of pods, the fleet's concurrency; before and after the fleet. */
  ceiling: LoopRuns;
  /** The same loop over a keep-alive connection pool. */
  keepAliveCeiling: LoopRuns;
  /** Fleet mirrors per second ÷ the better plain create loop run (the issue's measure). */
  mirrorRatio: number;
  /** Fleet mirrors per second ÷ the better keep-alive loop run. */
  keepAliveRatio: number;
  kubelet: KubeletIdle;
  /** Fleet per node ÷ the kubelet's one node, over the same window. */
  perNodeRatio: { rss: number; cpu: number; requests: number };
}

export interface LoopRuns {
  concurrency: number;
  runs: Array<{ create: PhaseRate; delete: PhaseRate }>;
  best: PhaseRate;
}

export interface KubeletIdle {
  node: string;
  pods: number;
  /** Start → its mirrors Running. */
  convergeMs: number;
  rssBytes: number;
  cpuPercent: number;
  /** Every request its client-go counted (rest_client_requests_total), watches included. */
  requestsPerSecond: number;
}

export const quantile = (sorted: readonly number[], q: number): number => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);

const round2 = (n: number): number => Math.round(n * 100) / 100;

/** The hollow kubelet on its own node with the same manifests (in a namespace of its own), until its mirrors are Running. */
async function startKubelet(cluster: LocalCluster, adminKc: KubeConfig, dir: string): Promise<{ subject: Subject; observer: NodePodObserver; convergeMs: number }> {
  const admin = adminKc.makeApiClient(CoreV1Api);
  const namespace = 'fleet-bench-kubelet';
  await createNamespace(admin, namespace);
  const manifests = join(dir, 'kubelet-manifests');
  await mkdir(manifests);
  for (let i = 0; i < FLEET_PODS_PER_NODE; i++) await writeFile(join(manifests, `p${i}.yaml`), manifestYaml(`p${i}`, namespace));
  const observer = new NodePodObserver(adminKc, FLEET_KUBELET_NODE);
  await observer.start();
  const t0 = performance.now();
  // The kubelet's own defaults (kubeAPIQPS 50 / burst 100, maxPods 110).
  const subject = await startSubject({ cluster, kind: 'kubelet', node: FLEET_KUBELET_NODE, manifestDir: manifests, workDir: dir, qps: 50, burst: 100, maxPods: 110 });
  try {
    await observer.until(() => observer.running === FLEET_PODS_PER_NODE, `the kubelet's ${FLEET_PODS_PER_NODE} mirrors Running`, 120_000);
  } catch (err) {
    process.stderr.write(`--- hollow kubelet log (tail) ---\n${(await subject.logs()).split('\n').slice(-40).join('\n')}\n`);
    await subject.stop();
    observer.stop();
    throw err;
  }
  return { subject, observer, convergeMs: performance.now() - t0 };
}

export interface FleetBenchOptions {
  nodes: number;
  idleWindowMs: number;
  /** Pause after convergence (and after the kubelet's) before the idle window. */
  settleMs: number;
}

export async function runFleetBench(cluster: LocalCluster, o: FleetBenchOptions): Promise<FleetBenchResult> {
  const { nodes, idleWindowMs } = o;
  const adminKc = new KubeConfig();
  adminKc.loadFromFile(cluster.adminKubeconfig);
  const admin = adminKc.makeApiClient(CoreV1Api);
  const namespace = 'fleet-bench';
  await createNamespace(admin, namespace);
  const dir = await tempDir('kp-bench-fleet-');
  const manifests = join(dir, 'manifests');
  await mkdir(manifests);
  for (let i = 0; i < FLEET_PODS_PER_NODE; i++) await writeFile(join(manifests, `p${i}.yaml`), manifestYaml(`p${i}`, namespace));
  const kubeconfig = await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });

  // The create loop with the fleet's credential and concurrency, for as many pods as the fleet's mirrors.
  const pods = nodes * FLEET_PODS_PER_NODE;
  const concurrency = Math.min(FLEET_MAX_SOCKETS, pods);
  const loop = (round: number, keepAlive: boolean): ReturnType<typeof createLoop> =>
    createLoop({ kubeconfig, adminKubeconfig: cluster.adminKubeconfig, node: CEILING_NODE, namespace: 'fleet-ceiling', pods, concurrency, round, keepAlive });
  const plainRuns = [await loop(0, false)];
  const keepAliveRuns = [await loop(1, true)];

  const leaseWatch = await watchLeaseRenewals(adminKc);

  const t0 = performance.now();
  const script = fileURLToPath(new URL('./fleet-child.js', import.meta.url));
  const child = fork(script, [JSON.stringify({ kubeconfig, manifestDir: manifests, nodes, prefix: PREFIX })], { execArgv: ['--expose-gc', ...benchNodeOptions()], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const fleet = new FleetChild(child);
  let kubelet: Awaited<ReturnType<typeof startKubelet>> | undefined;
  let fleetStopped = false;
  const stopFleet = async (): Promise<void> => {
    if (fleetStopped) return;
    fleetStopped = true;
    leaseWatch.stop();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await fleet.call('stop').catch(() => undefined);
    // A normal exit writes --cpu-prof profiles; SIGKILL only if it hangs.
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await fleet.call('started');
    const { readyMs, runningMs } = await untilConverged(admin, { nodes, podsPerNode: FLEET_PODS_PER_NODE, prefix: PREFIX, namespace }, t0, nodes > 200 ? 2000 : 500);
    const convergedAt = performance.now();
    const creates = await fleet.call<{ ok: number; failed: number; ms: number; peakInFlight: number }>('creates');

    // The kubelet starts once the fleet has converged; both settle (status resyncs, one more
    // Lease round), then are measured over one idle window.
    kubelet = await startKubelet(cluster, adminKc, dir);
    const settleLeft = Math.max(convergedAt + o.settleMs, performance.now() + o.settleMs / 2) - performance.now();
    await delay(settleLeft);
    const memory = await fleet.call<{ rss: number; heapUsed: number; heapTotal: number }>('memory');
    const idleFrom = performance.now();
    const kubeletRequests0 = await kubelet.subject.requestCounts();
    const req0 = await fleet.call<number>('requests');
    const conn0 = await fleet.call<number>('connections');
    const split0 = procCpuSplitMs(child.pid!);
    const cpu0 = { fleet: procCpuMs(child.pid!), kubelet: procCpuMs(kubelet.subject.pid) };
    const w0 = performance.now();
    const rss = { fleet: [] as number[], kubelet: [] as number[] };
    for (;;) {
      rss.fleet.push(procRss(child.pid!).rss);
      rss.kubelet.push(procRss(kubelet.subject.pid).rss);
      const left = idleWindowMs - (performance.now() - w0);
      if (left <= 0) break;
      await delay(Math.min(1000, left));
    }
    const cpu1 = { fleet: procCpuMs(child.pid!), kubelet: procCpuMs(kubelet.subject.pid) };
    const split1 = procCpuSplitMs(child.pid!);
    const wall = performance.now() - w0;
    const req1 = await fleet.call<number>('requests');
    const conn1 = await fleet.call<number>('connections');
    const kubeletRequests = countsDelta(await kubelet.subject.requestCounts(), kubeletRequests0);
    const cpuPercent = ((cpu1.fleet - cpu0.fleet) / wall) * 100;
    const splitPercent = (k: keyof typeof split0): number => round2(((split1[k] - split0[k]) / wall) * 100);
    const idleCpuSplit = { mainUser: splitPercent('mainUser'), mainSystem: splitPercent('mainSystem'), otherUser: splitPercent('otherUser'), otherSystem: splitPercent('otherSystem') };
    const rps = ((req1 - req0) / wall) * 1000;
    const lateness = leaseLateness(leaseWatch.renewals, idleFrom);
    const mean = (v: readonly number[]): number => Math.round(v.reduce((a, b) => a + b, 0) / v.length);
    const kubeletIdle: KubeletIdle = {
      node: FLEET_KUBELET_NODE,
      pods: FLEET_PODS_PER_NODE,
      convergeMs: Math.round(kubelet.convergeMs),
      rssBytes: mean(rss.kubelet),
      cpuPercent: round2(((cpu1.kubelet - cpu0.kubelet) / wall) * 100),
      requestsPerSecond: round2((Object.keys(kubeletRequests).reduce((n, m) => n + requestCount(kubeletRequests, m), 0) / wall) * 1000),
    };
    await kubelet.subject.stop();
    kubelet.observer.stop();
    kubelet = undefined;
    await stopFleet();
    // The second loop run, on the same server with the fleet gone (its mirrors stay, as a kubelet leaves them).
    keepAliveRuns.push(await loop(2, true));
    plainRuns.push(await loop(3, false));
    const loopRuns = (runs: LoopRuns['runs']): LoopRuns => ({
      concurrency,
      runs,
      best: runs.map((r) => r.create).reduce((a, b) => (a.podsPerSecond >= b.podsPerSecond ? a : b)),
    });
    const ceiling = loopRuns(plainRuns);
    const keepAliveCeiling = loopRuns(keepAliveRuns);
    const mirrors = { created: creates.ok, failed: creates.failed, ms: Math.round(creates.ms), podsPerSecond: rate(creates.ok, creates.ms).podsPerSecond, peakInFlight: creates.peakInFlight };
    const idleRssBytes = mean(rss.fleet);
    return {
      nodes,
      podsPerNode: FLEET_PODS_PER_NODE,
      readyMs: Math.round(readyMs),
      runningMs: Math.round(runningMs),
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      heapTotalBytes: memory.heapTotal,
      rssBytesPerNode: Math.round(memory.rss / nodes),
      heapUsedBytesPerNode: Math.round(memory.heapUsed / nodes),
      idleWindowMs: Math.round(wall),
      idleCpuPercent: round2(cpuPercent),
      idleCpuSplit,
      idleRequestsPerSecond: round2(rps),
      idleRequestsPerSecondPerNode: round2(rps / nodes),
      idleNewConnections: conn1 - conn0,
      leaseRenewals: lateness.length,
      leaseWatchReopened: leaseWatch.reopened(),
      leaseLatenessMaxMs: round2(lateness.at(-1) ?? 0),
      leaseLatenessP99Ms: round2(quantile(lateness, 0.99)),
      idleRssBytes,
      mirrors,
      ceiling,
      keepAliveCeiling,
      mirrorRatio: round2(mirrors.podsPerSecond / ceiling.best.podsPerSecond),
      keepAliveRatio: round2(mirrors.podsPerSecond / keepAliveCeiling.best.podsPerSecond),
      kubelet: kubeletIdle,
      perNodeRatio: {
        rss: round2(idleRssBytes / nodes / kubeletIdle.rssBytes),
        cpu: kubeletIdle.cpuPercent > 0 ? round2(cpuPercent / nodes / kubeletIdle.cpuPercent) : 0,
        requests: kubeletIdle.requestsPerSecond > 0 ? round2(rps / nodes / kubeletIdle.requestsPerSecond) : 0,
      },
    };
  } finally {
    if (kubelet !== undefined) {
      await kubelet.subject.stop();
      kubelet.observer.stop();
    }
    await stopFleet();
  }
}

export function fleetTable(r: FleetBenchResult): string {
  const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  const kib = (b: number): string => `${(b / 1024).toFixed(0)} KiB`;
  const k = r.kubelet;
  const perNode = (n: number, digits = 3): string => (n / r.nodes).toFixed(digits);
  const runs = (c: LoopRuns): string => c.runs.map((x) => `${x.create.podsPerSecond}`).join(' / ');
  return [
    '| nodes × static pods | all Nodes Ready | all mirrors Running | RSS (per node) | heap used (per node) | heap total | idle CPU | idle API req/s (per node) | new connections while idle | Lease renewals seen | Lease lateness p99 / max |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${r.nodes.toLocaleString('en-US')} × ${r.podsPerNode} | ${(r.readyMs / 1000).toFixed(1)} s | ${(r.runningMs / 1000).toFixed(1)} s | ${mib(r.rssBytes)} (${kib(r.rssBytesPerNode)}) | ${mib(r.heapUsedBytes)} (${kib(r.heapUsedBytesPerNode)}) | ${mib(r.heapTotalBytes)} | ${r.idleCpuPercent} % | ${r.idleRequestsPerSecond} (${r.idleRequestsPerSecondPerNode}) | ${r.idleNewConnections} | ${r.leaseRenewals} | ${r.leaseRenewals === 0 ? 'none seen' : `${r.leaseLatenessP99Ms} / ${r.leaseLatenessMaxMs} ms`} |`,
    '',
    '## Mirrors per second while converging, against a plain create loop',
    '',
    `| pods | fleet: mirrors created (first sent → last answered) | plain client-node loop, concurrency ${r.ceiling.concurrency} (best of: before / after the fleet) | fleet ÷ plain loop | the loop over a keep-alive pool (best of: before / after) | fleet ÷ keep-alive loop |`,
    '|---:|---:|---:|---:|---:|---:|',
    `| ${r.mirrors.created.toLocaleString('en-US')}${r.mirrors.failed > 0 ? ` (+${r.mirrors.failed} failed)` : ''} | ${r.mirrors.podsPerSecond} pods/s (${r.mirrors.ms} ms, at most ${r.mirrors.peakInFlight} outstanding) | ${r.ceiling.best.podsPerSecond} pods/s (${runs(r.ceiling)}) | **${r.mirrorRatio}**${r.mirrorRatio < 0.9 ? ' ⚠' : ''} | ${r.keepAliveCeiling.best.podsPerSecond} pods/s (${runs(r.keepAliveCeiling)}) | ${r.keepAliveRatio} |`,
    '',
    `## Per node, against the real kubelet serving one node with the same ${r.podsPerNode} static pods (same idle window)`,
    '',
    '| measure (idle) | fleet, whole process | fleet, per node | kubelet v1.34.4, one node | fleet per node ÷ kubelet |',
    '|---|---:|---:|---:|---:|',
    `| RSS (mean of 1 s samples) | ${mib(r.idleRssBytes)} | ${kib(r.idleRssBytes / r.nodes)} | ${mib(k.rssBytes)} | ${r.perNodeRatio.rss} |`,
    `| CPU (% of one core) | ${r.idleCpuPercent} % | ${perNode(r.idleCpuPercent, 4)} % | ${k.cpuPercent} % | ${r.perNodeRatio.cpu} |`,
    `| API requests per second | ${r.idleRequestsPerSecond} | ${perNode(r.idleRequestsPerSecond)} | ${k.requestsPerSecond} | ${r.perNodeRatio.requests} |`,
    '',
    '## Where the fleet\'s idle CPU went (% of one core, same window)',
    '',
    '| main thread, user | main thread, kernel | other threads (GC helpers, libuv pool), user | other threads, kernel |',
    '|---:|---:|---:|---:|',
    `| ${r.idleCpuSplit.mainUser} % | ${r.idleCpuSplit.mainSystem} % | ${r.idleCpuSplit.otherUser} % | ${r.idleCpuSplit.otherSystem} % |`,
  ].join('\n');
}

/** One renewal as it arrived: when, through which listing of the watch, and the fleet's own stamp. */
export interface RenewalSeen {
  at: number;
  watch: number;
  /** Its `spec.renewTime` (ms since the epoch): when the fleet's node renewed, by its clock. */
  renewedAt: number;
}

/**
 * Each Lease renewal's lateness (ms, sorted): the gap since the Lease's previous renewal arrived,
 * less the period and its largest jitter, 0 when on time; for renewals after `from` only.
 */
export function leaseLateness(renewals: ReadonlyMap<string, readonly RenewalSeen[]>, from: number, until = Infinity, time: (r: RenewalSeen) => number = (r) => r.at): number[] {
  const lateness: number[] = [];
  for (const seen of renewals.values()) {
    for (let i = 1; i < seen.length; i++) {
      // A gap that spans two listings of the watch says nothing about the fleet: a renewal may
      // have come and gone between them.
      if (seen[i - 1]!.at < from || seen[i]!.at > until || seen[i - 1]!.watch !== seen[i]!.watch) continue;
      lateness.push(Math.max(0, time(seen[i]!) - time(seen[i - 1]!) - ALLOWED_MS));
    }
  }
  return lateness.sort((a, b) => a - b);
}

/**
 * The same gaps measured between the Leases' `spec.renewTime`s: how late the fleet itself
 * renewed, without what the request, the API server, the watch and this harness added.
 */
export function stampedLeaseLateness(renewals: ReadonlyMap<string, readonly RenewalSeen[]>, from: number, until = Infinity): number[] {
  return leaseLateness(renewals, from, until, (r) => r.renewedAt);
}

/**
 * The fleet's Lease renewals as they arrive, by Lease name, from a list of kube-node-lease and a
 * watch from the list's resourceVersion, opened again whenever it ends (one run saw none at all
 * once its watch had ended). The watch resumes from the last resourceVersion it delivered, so
 * no renewal is missed and the gaps across the reopening still count; when the API server no
 * longer has that version (an ERROR event, 410), it lists again, and gaps across a listing count
 * for nothing. Under a saturated control plane the server closes a watch every few seconds,
 * and a watch that listed all 10,000 Leases again through each new opening never caught up. A
 * renewal is a new `spec.renewTime`, so what a listing repeats adds nothing. Only Leases whose
 * name starts with `prefix` (the fleet's nodes) count.
 */
export async function watchLeaseRenewals(kc: KubeConfig, prefix = PREFIX): Promise<{ renewals: Map<string, RenewalSeen[]>; reopened(): number; stop(): void }> {
  const renewals = new Map<string, RenewalSeen[]>();
  const lastRenewTime = new Map<string, number>();
  const coordination = kc.makeApiClient(CoordinationV1Api);
  let opened = 0;
  // Which listing the renewals came through: a gap between two listings may hide a renewal.
  let listing = 0;
  let resourceVersion: string | undefined;
  let stopped = false;
  let current: { abort(): void } | undefined;
  // The listed Leases' renewTime are Dates, the watched ones' strings; both to the millisecond.
  const record = (name: string | undefined, renewTime: Date | string | undefined, watch: number): void => {
    const renewedAt = renewTime === undefined ? NaN : new Date(renewTime).getTime();
    if (name === undefined || !name.startsWith(prefix) || Number.isNaN(renewedAt) || lastRenewTime.get(name) === renewedAt) return;
    lastRenewTime.set(name, renewedAt);
    const list = renewals.get(name) ?? [];
    list.push({ at: performance.now(), watch, renewedAt });
    renewals.set(name, list);
  };
  const open = async (): Promise<void> => {
    opened++;
    if (resourceVersion === undefined) {
      const listed = await coordination.listNamespacedLease({ namespace: 'kube-node-lease' });
      listing++;
      for (const lease of listed.items) record(lease.metadata?.name, lease.spec?.renewTime, listing);
      resourceVersion = listed.metadata?.resourceVersion;
    }
    const watch = listing;
    current = await new Watch(kc).watch(
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      { allowWatchBookmarks: true, ...(resourceVersion !== undefined ? { resourceVersion } : {}) },
      (type: string, lease: { metadata?: { name?: string; resourceVersion?: string }; spec?: { renewTime?: string } }) => {
        if (type === 'ERROR') {
          resourceVersion = undefined;
          return;
        }
        resourceVersion = lease.metadata?.resourceVersion ?? resourceVersion;
        if (type !== 'BOOKMARK') record(lease.metadata?.name, lease.spec?.renewTime, watch);
      },
      (err: unknown) => {
        if (stopped) return;
        console.error(`fleet bench: the Lease watch ended (${err instanceof Error ? err.message : 'closed by the server'}); ${resourceVersion === undefined ? 'listing and watching again' : `watching again from resourceVersion ${resourceVersion}`}`);
        const reopen = (): void => void open().catch(() => setTimeout(reopen, 1000));
        reopen();
      },
    );
  };
  await open();
  return {
    renewals,
    reopened: () => opened - 1,
    stop() {
      stopped = true;
      current?.abort();
    },
  };
}

/** One fleet converged from its fork in each `--simulated-lifecycle` mode, each on a fresh control plane. */
export interface FleetModeRun {
  mode: SimulatedLifecycle;
  nodes: number;
  readyMs: number;
  runningMs: number;
  rssBytes: number;
  heapUsedBytes: number;
}

export async function runFleetModes(nodes: number): Promise<FleetModeRun[]> {
  const runs: FleetModeRun[] = [];
  for (const mode of SIMULATED_LIFECYCLES) {
    console.error(`fleet: ${nodes} nodes in ${mode} mode, on a fresh control plane…`);
    const cluster = await startLocalCluster({ nodes: [] });
    try {
      runs.push({ mode, nodes, ...(await convergeFleet(cluster, { nodes, podsPerNode: FLEET_PODS_PER_NODE, prefix: 'fm-', namespace: 'fleet-modes', simulatedLifecycle: mode })) });
    } finally {
      await cluster.dispose();
    }
  }
  return runs;
}

export function fleetModesTable(runs: readonly FleetModeRun[]): string {
  const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  return [
    '| `--simulated-lifecycle` | nodes × static pods | all Nodes Ready | all mirrors Running | RSS after a full GC | heap used |',
    '|---|---|---:|---:|---:|---:|',
    ...runs.map((r) => `| ${r.mode} | ${r.nodes.toLocaleString('en-US')} × ${FLEET_PODS_PER_NODE} | ${(r.readyMs / 1000).toFixed(1)} s | ${(r.runningMs / 1000).toFixed(1)} s | ${mib(r.rssBytes)} | ${mib(r.heapUsedBytes)} |`),
  ].join('\n');
}
