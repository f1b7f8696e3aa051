// What kube-scheduler and kube-controller-manager cost in the local control plane
// (docs/control-plane.md): for the API server alone and with both components, in turn, each on a
// fresh control plane: the time from start to ready (the components' health endpoints
// answering), each process's RSS right after and its CPU over an idle window, then a fleet of N
// nodes × 5 static pods (bench/agent/fleet-child.ts) from its fork to all Nodes Ready and all
// mirrors Running, the node lifecycle controller watching every Lease when the components run.
import { readFileSync, readdirSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { startLocalCluster } from '../../src/cluster/local-cluster.js';
import { FLEET_PODS_PER_NODE } from './fleet.bench.js';
import { convergeFleet } from './fleet-process.js';
import { procCpuMs, procRss } from './subjects.js';

export const CLUSTER_SETUPS = ['api server only', 'with scheduler and controller manager'] as const;
export type ClusterSetup = (typeof CLUSTER_SETUPS)[number];

export interface ProcessCost {
  /** `kube-apiserver + etcd`, `kube-scheduler` or `kube-controller-manager`. */
  process: string;
  rssBytes: number;
  anonBytes: number;
  idleCpuPercent: number;
}

export interface ClusterRound {
  setup: ClusterSetup;
  readyMs: number;
  processes: ProcessCost[];
  fleet: { nodes: number; readyMs: number; runningMs: number };
}

export interface ClusterBenchOptions {
  rounds: number;
  idleWindowMs: number;
  fleetNodes: number;
}

/** The process's parent pid, from /proc/<pid>/stat (after the command, whose name may hold spaces). */
function parentPid(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
}

/**
 * The control plane's processes below this one, named by what they run: the program itself
 * (etcd and kube-apiserver in one process) and each component it started as a child of its own.
 */
function controlPlaneProcesses(): Map<string, number> {
  const byParent = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = parentPid(Number(entry));
      byParent.set(ppid, [...(byParent.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const found = new Map<string, number>();
  const visit = (pid: number): void => {
    for (const child of byParent.get(pid) ?? []) {
      let argv: string[];
      try {
        argv = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0');
      } catch {
        continue;
      }
      if (argv[0]?.endsWith('kube-control-plane')) {
        const component = argv[1] === 'component' ? argv[2] : undefined;
        found.set(component ?? 'kube-apiserver + etcd', child);
      }
      visit(child);
    }
  };
  visit(process.pid);
  return found;
}

async function runRound(setup: ClusterSetup, o: ClusterBenchOptions): Promise<ClusterRound> {
  const components = setup !== 'api server only';
  const t0 = performance.now();
  const cluster = await startLocalCluster({ nodes: [], scheduler: components, controllerManager: components });
  try {
    const readyMs = Math.round(performance.now() - t0);
    const pids = controlPlaneProcesses();
    const expected = components ? 3 : 1;
    if (pids.size !== expected) throw new Error(`cluster bench: expected ${expected} control plane processes, found ${[...pids.keys()].join(', ') || 'none'}`);
    const memory = new Map([...pids].map(([name, pid]) => [name, procRss(pid)]));
    const cpu0 = new Map([...pids].map(([name, pid]) => [name, procCpuMs(pid)]));
    const w0 = performance.now();
    await delay(o.idleWindowMs);
    const wall = performance.now() - w0;
    const processes = [...pids].map(([name, pid]) => ({
      process: name,
      rssBytes: memory.get(name)!.rss,
      anonBytes: memory.get(name)!.anon,
      idleCpuPercent: Math.round(((procCpuMs(pid) - cpu0.get(name)!) / wall) * 10_000) / 100,
    }));
    const fleet = { nodes: o.fleetNodes, ...(await convergeFleet(cluster, { nodes: o.fleetNodes, podsPerNode: FLEET_PODS_PER_NODE, prefix: 'cb-', namespace: 'cluster-bench' })) };
    return { setup, readyMs, processes, fleet };
  } finally {
    await cluster.dispose();
  }
}

/** Every setup in turn, `rounds` times, alternating so that a change of load hits both alike. */
export async function runClusterBench(o: ClusterBenchOptions): Promise<ClusterRound[]> {
  const rounds: ClusterRound[] = [];
  for (let r = 0; r < o.rounds; r++) {
    for (const setup of CLUSTER_SETUPS) {
      console.error(`cluster: round ${r + 1} of ${o.rounds}, ${setup}…`);
      rounds.push(await runRound(setup, o));
    }
  }
  return rounds;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

export function clusterTable(rounds: readonly ClusterRound[]): string {
  const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(0)} MiB`;
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const range = (values: readonly number[], fmt: (n: number) => string): string => {
    const lo = Math.min(...values);
    const hi = Math.max(...values);
    return lo === hi ? fmt(lo) : `${fmt(lo)}–${fmt(hi)} (median ${fmt(median(values))})`;
  };
  const lines = [
    '| setup | start → ready | fleet: all Nodes Ready | fleet: all mirrors Running |',
    '|---|---:|---:|---:|',
  ];
  for (const setup of CLUSTER_SETUPS) {
    const of = rounds.filter((r) => r.setup === setup);
    if (of.length === 0) continue;
    const nodes = of[0]!.fleet.nodes;
    lines.push(`| ${setup} | ${range(of.map((r) => r.readyMs), s)} | ${range(of.map((r) => r.fleet.readyMs), s)} (${nodes} nodes) | ${range(of.map((r) => r.fleet.runningMs), s)} (${nodes * FLEET_PODS_PER_NODE} mirrors) |`);
  }
  lines.push('', '| setup | process | RSS right after ready (private) | idle CPU |', '|---|---|---:|---:|');
  for (const setup of CLUSTER_SETUPS) {
    const of = rounds.filter((r) => r.setup === setup);
    for (const name of new Set(of.flatMap((r) => r.processes.map((p) => p.process)))) {
      const costs = of.flatMap((r) => r.processes.filter((p) => p.process === name));
      lines.push(`| ${setup} | ${name} | ${range(costs.map((c) => c.rssBytes), mib)} (${range(costs.map((c) => c.anonBytes), mib)}) | ${range(costs.map((c) => c.idleCpuPercent), (n) => `${n.toFixed(2)} %`)} |`);
    }
  }
  return lines.join('\n');
}
