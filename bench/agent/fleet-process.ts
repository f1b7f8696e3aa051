// A `kubelet-pods fleet` in a child process of its own (fleet-child.ts), so that its RSS, heap
// and CPU are the fleet's: the IPC client, and a plain run from the fork to all Nodes Ready and
// all mirrors Running, for the benchmarks that compare setups rather than study the fleet.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import type { SimulatedLifecycle } from '../../src/config/types.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { createNamespace, manifestYaml, tempDir } from './common.js';
import { procCpuMs } from './subjects.js';

/** Calls an op of the child's serveChildOps and awaits its answer. */
export class FleetChild {
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

export interface ConvergeOptions {
  nodes: number;
  podsPerNode: number;
  /** Node names start with it; the static pods live in `namespace`. */
  prefix: string;
  namespace: string;
  /** The nodes' `simulatedLifecycle` (the fleet's default, `kubelet`, when absent). */
  simulatedLifecycle?: SimulatedLifecycle;
  /** More fields of the fleet file. */
  fleet?: Record<string, unknown>;
  /** A selector template instead of named nodes; `beforeFork` then creates the Nodes it adopts. */
  selector?: Record<string, string>;
  beforeFork?: (admin: CoreV1Api) => Promise<void>;
  /** Also measure the fleet's CPU over this long once converged (after the memory reading). */
  idleWindowMs?: number;
}

export interface Converged {
  /** From the fork. */
  readyMs: number;
  runningMs: number;
  /** After a full GC, once converged. */
  rssBytes: number;
  heapUsedBytes: number;
  /** utime + stime ÷ wall time over `idleWindowMs`, in % of one core. */
  idleCpuPercent?: number;
}

/** Polls the API server (every `pollMs`) until every fleet Node is Ready and every mirror Running; times from `t0`. */
export async function untilConverged(
  admin: CoreV1Api,
  o: Pick<ConvergeOptions, 'nodes' | 'podsPerNode' | 'prefix' | 'namespace'>,
  t0: number,
  pollMs = o.nodes > 200 ? 1000 : 250,
): Promise<{ readyMs: number; runningMs: number }> {
  let readyMs = 0;
  let runningMs = 0;
  const deadline = t0 + 600_000;
  while (readyMs === 0 || runningMs === 0) {
    if (performance.now() > deadline) throw new Error(`a fleet of ${o.nodes} nodes did not converge in 600 s`);
    if (readyMs === 0) {
      const list = await admin.listNode();
      const ready = list.items.filter((n) => n.metadata?.name?.startsWith(o.prefix) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
      if (ready === o.nodes) readyMs = performance.now() - t0;
    }
    if (runningMs === 0) {
      const list = await admin.listNamespacedPod({ namespace: o.namespace });
      if (list.items.filter((p) => p.status?.phase === 'Running').length === o.nodes * o.podsPerNode) runningMs = performance.now() - t0;
    }
    if (readyMs === 0 || runningMs === 0) await delay(pollMs);
  }
  return { readyMs: Math.round(readyMs), runningMs: Math.round(runningMs) };
}

/**
 * Forks a fleet of `nodes` × `podsPerNode` static pods with the shipped ClusterRole's token,
 * waits until it has converged, reads its memory, and stops it (its mirrors stay).
 */
export async function convergeFleet(cluster: LocalCluster, o: ConvergeOptions): Promise<Converged> {
  const adminKc = new KubeConfig();
  adminKc.loadFromFile(cluster.adminKubeconfig);
  const admin = adminKc.makeApiClient(CoreV1Api);
  await createNamespace(admin, o.namespace);
  const dir = await tempDir(`kp-bench-${o.prefix}`);
  const manifests = join(dir, 'manifests');
  await mkdir(manifests);
  for (let i = 0; i < o.podsPerNode; i++) await writeFile(join(manifests, `p${i}.yaml`), manifestYaml(`p${i}`, o.namespace));
  const kubeconfig = await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
  const t0 = performance.now();
  await o.beforeFork?.(admin);
  const script = fileURLToPath(new URL('./fleet-child.js', import.meta.url));
  const args = { kubeconfig, manifestDir: manifests, nodes: o.nodes, prefix: o.prefix, simulatedLifecycle: o.simulatedLifecycle, fleet: o.fleet, selector: o.selector };
  const child = fork(script, [JSON.stringify(args)], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const fleet = new FleetChild(child);
  try {
    await fleet.call('started');
    const times = await untilConverged(admin, o, t0);
    const memory = await fleet.call<{ rss: number; heapUsed: number }>('memory');
    let idleCpuPercent: number | undefined;
    if (o.idleWindowMs !== undefined) {
      const cpu0 = procCpuMs(child.pid!);
      const w0 = performance.now();
      await delay(o.idleWindowMs);
      idleCpuPercent = Math.round(((procCpuMs(child.pid!) - cpu0) / (performance.now() - w0)) * 10_000) / 100;
    }
    return { ...times, rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, ...(idleCpuPercent !== undefined ? { idleCpuPercent } : {}) };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await fleet.call('stop').catch(() => undefined);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}
