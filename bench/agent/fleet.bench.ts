// `kubelet-pods fleet` at scale (docs/fleet.md): N nodes × 5 static pods from one process
// (bench/agent/fleet-child.ts) on a local control plane of its own, with the one credential
// of the shipped ClusterRole. Measures the time until every Node is Ready and every mirror is
// Running, RSS and heap (total and per node, after a full GC), CPU and API requests per second
// while idle, and the Lease renewal lateness seen through a watch of kube-node-lease: for each
// Lease, the gap between two consecutive renewals arriving, less the period and its largest
// jitter (10 s + 4 %), 0 when on time.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { createNamespace, manifestYaml, tempDir } from './common.js';

export const FLEET_PODS_PER_NODE = 5;
const PREFIX = 'fb-';
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
  idleRequestsPerSecond: number;
  idleRequestsPerSecondPerNode: number;
  /** TLS connections opened during the idle window (0 when keep-alive holds). */
  idleNewConnections: number;
  leaseRenewals: number;
  leaseLatenessMaxMs: number;
  leaseLatenessP99Ms: number;
}

class FleetChild {
  #id = 0;
  #pending = new Map<number, (v: unknown) => void>();
  constructor(readonly child: ChildProcess) {
    child.on('message', (m: { id: number; value?: unknown; error?: string }) => {
      this.#pending.get(m.id)?.(m.error !== undefined ? new Error(m.error) : m.value);
      this.#pending.delete(m.id);
    });
  }
  async call<T>(op: string): Promise<T> {
    const id = ++this.#id;
    const value = await new Promise<unknown>((resolve) => {
      this.#pending.set(id, resolve);
      this.child.send({ id, op });
    });
    if (value instanceof Error) throw value;
    return value as T;
  }
}

const quantile = (sorted: readonly number[], q: number): number => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);

export async function runFleetBench(cluster: LocalCluster, nodes: number, idleWindowMs: number): Promise<FleetBenchResult> {
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

  // Leases as they arrive: per name, the arrival times of its renewals.
  const renewals = new Map<string, number[]>();
  const leaseWatch = await new Watch(adminKc).watch(
    '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
    {},
    (_type: string, lease: { metadata?: { name?: string } }) => {
      const name = lease.metadata?.name ?? '';
      if (!name.startsWith(PREFIX)) return;
      const list = renewals.get(name) ?? [];
      list.push(performance.now());
      renewals.set(name, list);
    },
    () => undefined,
  );

  const t0 = performance.now();
  const script = fileURLToPath(new URL('./fleet-child.js', import.meta.url));
  const child = fork(script, [JSON.stringify({ kubeconfig, manifestDir: manifests, nodes, prefix: PREFIX })], { execArgv: ['--expose-gc', ...(process.env.BENCH_AGENT_NODE_OPTIONS ?? '').split(' ').filter(Boolean)], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const fleet = new FleetChild(child);
  try {
    await fleet.call('started');
    let readyMs = 0;
    let runningMs = 0;
    const pollMs = nodes > 200 ? 2000 : 500;
    const deadline = t0 + 600_000;
    while (readyMs === 0 || runningMs === 0) {
      if (performance.now() > deadline) throw new Error(`fleet of ${nodes} not converged in 600 s`);
      if (readyMs === 0) {
        const list = await admin.listNode();
        const ready = list.items.filter((n) => n.metadata?.name?.startsWith(PREFIX) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
        if (ready === nodes) readyMs = performance.now() - t0;
      }
      if (runningMs === 0) {
        const pods = await admin.listNamespacedPod({ namespace });
        const running = pods.items.filter((p) => p.status?.phase === 'Running').length;
        if (running === nodes * FLEET_PODS_PER_NODE) runningMs = performance.now() - t0;
      }
      if (readyMs === 0 || runningMs === 0) await delay(pollMs);
    }
    // Let the convergence settle (status resyncs, one more Lease round), then measure idle.
    await delay(15_000);
    const memory = await fleet.call<{ rss: number; heapUsed: number; heapTotal: number }>('memory');
    const idleFrom = performance.now();
    const cpu0 = await fleet.call<{ user: number; system: number }>('cpu');
    const req0 = await fleet.call<number>('requests');
    const conn0 = await fleet.call<number>('connections');
    const w0 = performance.now();
    await delay(idleWindowMs);
    const cpu1 = await fleet.call<{ user: number; system: number }>('cpu');
    const req1 = await fleet.call<number>('requests');
    const conn1 = await fleet.call<number>('connections');
    const wall = performance.now() - w0;
    const cpuPercent = ((cpu1.user - cpu0.user + cpu1.system - cpu0.system) / 1000 / wall) * 100;
    const rps = ((req1 - req0) / wall) * 1000;
    const lateness: number[] = [];
    for (const times of renewals.values()) {
      for (let i = 1; i < times.length; i++) {
        if (times[i - 1]! < idleFrom) continue;
        lateness.push(Math.max(0, times[i]! - times[i - 1]! - ALLOWED_MS));
      }
    }
    lateness.sort((a, b) => a - b);
    const round = (n: number): number => Math.round(n * 100) / 100;
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
      idleCpuPercent: round(cpuPercent),
      idleRequestsPerSecond: round(rps),
      idleRequestsPerSecondPerNode: round(rps / nodes),
      idleNewConnections: conn1 - conn0,
      leaseRenewals: lateness.length,
      leaseLatenessMaxMs: round(lateness.at(-1) ?? 0),
      leaseLatenessP99Ms: round(quantile(lateness, 0.99)),
    };
  } finally {
    leaseWatch.abort();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await fleet.call('stop').catch(() => undefined);
    // A normal exit writes --cpu-prof profiles; SIGKILL only if it hangs.
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}

export function fleetTable(r: FleetBenchResult): string {
  const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  const kib = (b: number): string => `${(b / 1024).toFixed(0)} KiB`;
  return [
    '| nodes × static pods | all Nodes Ready | all mirrors Running | RSS (per node) | heap used (per node) | heap total | idle CPU | idle API req/s (per node) | new connections while idle | Lease renewals seen | Lease lateness p99 / max |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${r.nodes.toLocaleString('en-US')} × ${r.podsPerNode} | ${(r.readyMs / 1000).toFixed(1)} s | ${(r.runningMs / 1000).toFixed(1)} s | ${mib(r.rssBytes)} (${kib(r.rssBytesPerNode)}) | ${mib(r.heapUsedBytes)} (${kib(r.heapUsedBytesPerNode)}) | ${mib(r.heapTotalBytes)} | ${r.idleCpuPercent} % | ${r.idleRequestsPerSecond} (${r.idleRequestsPerSecondPerNode}) | ${r.idleNewConnections} | ${r.leaseRenewals} | ${r.leaseLatenessP99Ms} / ${r.leaseLatenessMaxMs} ms |`,
  ].join('\n');
}
