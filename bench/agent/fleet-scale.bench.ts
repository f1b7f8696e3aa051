// The fleet at scale (issue 22): one `kubelet-pods fleet` process (bench/agent/fleet-child.ts,
// the shipped ClusterRole's token, no static pods) on a fresh local control plane, through the
// phases
//
//   fork → every Node Ready → P ordinary pods per node created through the API with
//   spec.nodeName → every pod Running → an idle window → every pod deleted → none left
//
// (with P = 0: Ready, then the idle window). For each phase: its duration, the Lease renewal
// lateness seen in a watch of kube-node-lease (opened once the Nodes are Ready), as it arrived
// and between the Leases' own renewTimes, how long the fleet's event loop was held and its full
// GCs' pauses (the settle GC's apart), CPU (utime +
// stime) and RSS of the fleet, of the control plane program (kube-apiserver and etcd in one
// process), of kube-scheduler, kube-controller-manager and this harness, the fleet's own
// request rate, and the API server's account from its /metrics: requests per second by verb and
// resource with their latency, etcd's latency, and what API Priority and Fairness queued or
// refused. Together they say which process is the bottleneck.
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { startLocalCluster } from '../../src/cluster/local-cluster.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { createApiClients, createConnectionPool } from '../../src/kube/api-clients.js';
import { unlimited } from '../../src/kube/rate-limiter.js';
import { waitForDefaultServiceAccount } from '../../test/helpers/control-plane.js';
import { apiServerPhase, readApiServerMetrics, type ApiServerPhase, type MetricsReading } from './api-server-metrics.js';
import { benchNodeOptions, createNamespace, envWholeNumber, pool, tempDir } from './common.js';
import { leaseLateness, quantile, stampedLeaseLateness, watchLeaseRenewals } from './fleet.bench.js';
import { createPod, ordinaryPod } from './fleet-memory.bench.js';
import { FleetChild } from './fleet-process.js';
import { nodeWatch, podWatch, withRetries } from './kwok.bench.js';
import { controlPlaneProcesses, PhaseUsage, type ProcessPhase, type WatchedProcess } from './process-usage.js';
import { childPidWithArg } from './subjects.js';

const PREFIX = 'fs-';
const NAMESPACE = 'fleet-scale';

export interface FleetScaleSizes {
  nodes: number;
  podsPerNode: number;
  /** The window in which every Lease must be on time. */
  idleWindowMs: number;
  /** Pause between a convergence and the idle window. */
  settleMs: number;
  /** Pod creates and deletes in flight at once. */
  concurrency: number;
  /** The fleet's kubeAPIQPS when set (else its default for this many nodes). */
  kubeAPIQPS?: number;
}

/** The environment knobs; any of them set means a run whose results are printed, not written. */
export const FLEET_SCALE_KNOBS = ['BENCH_FLEET_SCALE_NODES', 'BENCH_FLEET_SCALE_PODS', 'BENCH_FLEET_SCALE_IDLE_MS', 'BENCH_FLEET_SCALE_CONCURRENCY', 'BENCH_FLEET_SCALE_QPS', 'BENCH_FLEET_FULL_COMPACTION_HEAP_MIB'] as const;

export function fleetScaleSizes(quick: boolean, env: NodeJS.ProcessEnv = process.env): FleetScaleSizes {
  // Quick: two Lease rounds in the window, so lateness has gaps to measure.
  const base = quick ? { nodes: 20, podsPerNode: 5, idleWindowMs: 25_000, settleMs: 5_000, concurrency: 32 } : { nodes: 1_000, podsPerNode: 100, idleWindowMs: 600_000, settleMs: 20_000, concurrency: 32 };
  const num = (name: (typeof FLEET_SCALE_KNOBS)[number], fallback: number, min: number): number => envWholeNumber(env, name, fallback, min);
  // Unset: the fleet's own default for this many nodes.
  const qps = envWholeNumber(env, 'BENCH_FLEET_SCALE_QPS', undefined, 0);
  return {
    nodes: num('BENCH_FLEET_SCALE_NODES', base.nodes, 1),
    podsPerNode: num('BENCH_FLEET_SCALE_PODS', base.podsPerNode, 0),
    idleWindowMs: num('BENCH_FLEET_SCALE_IDLE_MS', base.idleWindowMs, 1),
    settleMs: base.settleMs,
    concurrency: num('BENCH_FLEET_SCALE_CONCURRENCY', base.concurrency, 1),
    ...(qps === undefined ? {} : { kubeAPIQPS: qps }),
  };
}

export interface LeaseLateness {
  renewals: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface ScalePhase {
  name: 'ready' | 'running' | 'idle' | 'gone';
  /** What the phase waited for, from its start. */
  ms: number;
  /** running: first create sent → last answered; gone: first delete sent → last answered. */
  requestsSentMs?: number;
  /** The fleet's own non-watch requests per second. */
  fleetRequestsPerSecond: number;
  /** Renewals that arrived within the phase (none for `ready`: the watch opens after it). */
  lease?: LeaseLateness;
  /** The same renewals' lateness between their `spec.renewTime`s: the fleet's own share. */
  leaseStamped?: LeaseLateness;
  /** The fleet's event loop held and its full GCs within the phase (not for `ready`). */
  fleetPauses?: FleetPauses;
  processes: ProcessPhase[];
  apiServer: ApiServerPhase;
}

/** From the fleet child's `pauses` op (bench/agent/fleet-child.ts). */
export interface FleetPauses {
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  majorGcs: number;
  majorGcTotalMs: number;
  majorGcMaxMs: number;
  /** Of the full GCs, the settle GC's (src/fleet/settle-gc.ts); absent in results from before 2026-12-02 18:00. */
  settleGcs?: number;
  settleGcTotalMs?: number;
}

export interface FleetScaleResult {
  sizes: FleetScaleSizes;
  phases: ScalePhase[];
  /** Times the harness's Lease watch ended and was opened again. */
  leaseWatchReopened: number;
  /** Pods left in the namespace at the end, by a list (0 expected). */
  podsLeft: number;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

/** p50, p99 and max of sorted lateness values, and how many there are. */
export function latenessOf(values: readonly number[]): LeaseLateness {
  return { renewals: values.length, p50Ms: round2(quantile(values, 0.5)), p99Ms: round2(quantile(values, 0.99)), maxMs: round2(values.at(-1) ?? 0) };
}

export async function runFleetScaleBench(sizes: FleetScaleSizes): Promise<FleetScaleResult> {
  const { nodes, podsPerNode } = sizes;
  console.error(`fleet scale: ${nodes} nodes × ${podsPerNode} pods, idle ${sizes.idleWindowMs / 1000} s, on a fresh control plane…`);
  const cluster = await startLocalCluster({ nodes: [] });
  const dir = await tempDir('kp-bench-fleet-scale-');
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.adminKubeconfig);
  const admin = kc.makeApiClient(CoreV1Api);
  const metrics = (): Promise<MetricsReading> => readApiServerMetrics(cluster.server, cluster.adminKubeconfig, cluster.caFile);
  let stopFleet = async (): Promise<void> => undefined;
  let stopLeases = (): void => undefined;
  try {
    await createNamespace(admin, NAMESPACE);
    await waitForDefaultServiceAccount(admin, NAMESPACE);
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
    const controlPlane = controlPlaneProcesses(childPidWithArg(`--dir=${cluster.dir}`));

    const nodesWatch = nodeWatch(kc, admin, (name) => name.startsWith(PREFIX));
    await nodesWatch.start();
    const script = fileURLToPath(new URL('./fleet-child.js', import.meta.url));
    const args = { kubeconfig, nodes, prefix: PREFIX, log: true, ...(sizes.kubeAPIQPS !== undefined ? { fleet: { kubeAPIQPS: sizes.kubeAPIQPS } } : {}) };
    const phases: ScalePhase[] = [];
    let leases: Awaited<ReturnType<typeof watchLeaseRenewals>> | undefined;

    // One phase: usage and metrics from its start to the end of `work`.
    const phase = async (name: ScalePhase['name'], work: () => Promise<{ ms: number; requestsSentMs?: number }>): Promise<void> => {
      const m0 = await metrics();
      const req0 = name === 'ready' ? 0 : await fleet.call<number>('requests');
      if (name !== 'ready') await fleet.call('pauses');
      const usage = new PhaseUsage(procs);
      const t0 = performance.now();
      const done = await work();
      const t1 = performance.now();
      const processes = usage.end();
      const req1 = (await fleet.call<number>('requests')) - req0;
      const fleetPauses = name === 'ready' ? undefined : await fleet.call<FleetPauses>('pauses');
      const apiServer = apiServerPhase(m0, await metrics());
      phases.push({
        name,
        ms: Math.round(done.ms),
        ...(done.requestsSentMs !== undefined ? { requestsSentMs: Math.round(done.requestsSentMs) } : {}),
        fleetRequestsPerSecond: round2((req1 / (t1 - t0)) * 1000),
        ...(leases !== undefined ? { lease: latenessOf(leaseLateness(leases.renewals, t0, t1)), leaseStamped: latenessOf(stampedLeaseLateness(leases.renewals, t0, t1)) } : {}),
        ...(fleetPauses !== undefined ? { fleetPauses } : {}),
        processes,
        apiServer,
      });
      // Each phase as it ends: a long run stopped early still leaves what it measured.
      console.error(`fleet scale: ${name} after ${(done.ms / 1000).toFixed(1)} s ${JSON.stringify(phases.at(-1))}`);
    };

    const forkedAt = performance.now();
    const child = fork(script, [JSON.stringify(args)], { execArgv: ['--expose-gc', ...benchNodeOptions()], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const fleet = new FleetChild(child);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    stopFleet = async () => {
      await fleet.call('stop').catch(() => undefined);
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    };
    const procs: WatchedProcess[] = [{ name: 'kubelet-pods fleet', pid: child.pid! }, ...controlPlane];
    try {
      await phase('ready', async () => {
        await fleet.call('started');
        const at = await nodesWatch.until((c) => c.matching === nodes, `${nodes} Nodes Ready`, 120_000 + nodes * 300);
        return { ms: at - forkedAt };
      });
    } finally {
      nodesWatch.stop();
    }
    leases = await watchLeaseRenewals(kc, PREFIX);
    stopLeases = () => leases?.stop();

    const total = nodes * podsPerNode;
    const bodies: V1Pod[] = [];
    // Round by round over the nodes: every node has its first pod before any has its second.
    for (let i = 0; i < podsPerNode; i++) for (let n = 0; n < nodes; n++) bodies.push(ordinaryPod(`${PREFIX}${n}`, i, NAMESPACE));
    const lean = createApiClients(kc, unlimited, { pool: createConnectionPool(sizes.concurrency) }).core;
    // Sends a phase's requests with a pod watch open, then waits for `done`; both timed from the first request.
    const podStep = async (send: () => Promise<void>, done: (c: { total: number; matching: number }) => boolean, what: string): Promise<{ ms: number; requestsSentMs: number }> => {
      const watch = podWatch(kc, admin, NAMESPACE);
      await watch.start();
      try {
        const t0 = performance.now();
        await send();
        const sent = performance.now() - t0;
        const at = await watch.until(done, what, 120_000 + total * 50);
        return { ms: at - t0, requestsSentMs: sent };
      } finally {
        watch.stop();
      }
    };
    if (total > 0) {
      await phase('running', () => podStep(() => pool(bodies, sizes.concurrency, (body) => createPod(lean, body)), (c) => c.matching === total, `${total} pods Running`));
    }
    await delay(sizes.settleMs);
    await phase('idle', async () => {
      await delay(sizes.idleWindowMs);
      return { ms: sizes.idleWindowMs };
    });
    if (total > 0) {
      const deleteAll = async (): Promise<void> => {
        let failed = 0;
        await pool(bodies, sizes.concurrency, async (pod) => {
          const name = pod.metadata!.name!;
          if (!(await withRetries(() => lean.deleteNamespacedPod({ namespace: NAMESPACE, name }), (s) => s === 404))) failed++;
        });
        if (failed > 0) throw new Error(`${failed} of ${total} pods could not be deleted`);
      };
      await phase('gone', () => podStep(deleteAll, (c) => c.total === 0, `all ${total} pods gone`));
    }
    const podsLeft = (await admin.listNamespacedPod({ namespace: NAMESPACE })).items.length;
    const leaseWatchReopened = leases.reopened();
    return { sizes, phases, leaseWatchReopened, podsLeft };
  } finally {
    stopLeases();
    await stopFleet();
    await cluster.dispose();
  }
}

const s = (ms: number | undefined): string => (ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s`);
const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(0)} MiB`;

export function fleetScaleTable(r: FleetScaleResult): string {
  const { nodes, podsPerNode } = r.sizes;
  const by = (name: ScalePhase['name']): ScalePhase | undefined => r.phases.find((p) => p.name === name);
  const idle = by('idle');
  const late = (l: LeaseLateness | undefined): string => (l === undefined ? '–' : l.renewals === 0 ? 'none seen' : `${l.p50Ms} / ${l.p99Ms} / ${l.maxMs} ms (${l.renewals.toLocaleString('en-US')})`);
  const running = by('running');
  const gone = by('gone');
  const lines = [
    '| nodes × pods per node | all Nodes Ready | pods: creates answered / all Running | pods: deletes answered / all gone | Lease lateness in the idle window p50 / p99 / max (renewals) | pods left |',
    '|---|---:|---:|---:|---:|---:|',
    `| ${nodes.toLocaleString('en-US')} × ${podsPerNode} | ${s(by('ready')?.ms)} | ${running ? `${s(running.requestsSentMs)} / ${s(running.ms)}` : '–'} | ${gone ? `${s(gone.requestsSentMs)} / ${s(gone.ms)}` : '–'} | ${late(idle?.lease)} | ${r.podsLeft} |`,
    '',
    `## Who used the cores, per phase (CPU: utime + stime, % of one core; RSS: largest 1 s sample)`,
    '',
    `| phase (length) | ${r.phases[0]!.processes.map((p) => p.name).join(' | ')} | fleet's requests/s | API server requests/s (429/5xx) | Lease lateness p50 / p99 / max (renewals) |`,
    `|---|${r.phases[0]!.processes.map(() => '---:').join('|')}|---:|---:|---:|`,
  ];
  const length = (p: ScalePhase): string => s(p.apiServer.seconds * 1000);
  for (const p of r.phases) {
    lines.push(`| ${p.name} (${length(p)}) | ${p.processes.map((x) => `${x.cpuPercent} % · ${mib(x.rssMaxBytes)}`).join(' | ')} | ${p.fleetRequestsPerSecond} | ${p.apiServer.requestsPerSecond} (${p.apiServer.failed}) | ${late(p.lease)} |`);
  }
  lines.push(
    '',
    "## Whose lateness: the fleet's own renewals (between `spec.renewTime`s), its event loop and its full GCs",
    '',
    "| phase | Lease lateness by renewTime p50 / p99 / max | event loop held p99 / max | full GCs: count, total, longest pause | of them the settle GC's: count, total |",
    '|---|---:|---:|---:|---:|',
    ...r.phases
      .filter((p) => p.fleetPauses !== undefined)
      .map((p) => `| ${p.name} | ${late(p.leaseStamped)} | ${p.fleetPauses!.loopDelayP99Ms} / ${p.fleetPauses!.loopDelayMaxMs} ms | ${p.fleetPauses!.majorGcs}, ${p.fleetPauses!.majorGcTotalMs} ms, ${p.fleetPauses!.majorGcMaxMs} ms | ${p.fleetPauses!.settleGcs === undefined ? 'not counted' : `${p.fleetPauses!.settleGcs}, ${p.fleetPauses!.settleGcTotalMs} ms`} |`),
  );
  for (const p of r.phases) {
    lines.push(
      '',
      `## The API server in phase \`${p.name}\``,
      '',
      '| busiest requests | per s | mean | p99 |',
      '|---|---:|---:|---:|',
      ...p.apiServer.requests.map((x) => `| ${x.key} | ${x.perSecond} | ${x.meanMs} ms | ${x.p99Ms} ms |`),
      '',
      '| busiest etcd operations | per s | mean | p99 |',
      '|---|---:|---:|---:|',
      ...p.apiServer.etcd.map((x) => `| ${x.key} | ${x.perSecond} | ${x.meanMs} ms | ${x.p99Ms} ms |`),
      '',
      '| APF priority level | dispatched/s | rejected | queue wait mean / p99 |',
      '|---|---:|---:|---:|',
      ...p.apiServer.priorityLevels.map((x) => `| ${x.level} | ${x.perSecond} | ${x.rejected} | ${x.waitMeanMs} / ${x.waitP99Ms} ms |`),
    );
  }
  return lines.join('\n');
}
