// The fleet's memory per node and per pod (issue 22): N nodes without static pods from one
// fleet process (bench/agent/fleet-child.ts), then P ordinary pods per node created through the
// API with spec.nodeName (as a scheduler would bind them), until all are Running. Reports, after
// a full GC once a young generation grown while busy has been given back (growYoungWhileBusy),
// RSS and heap used with the nodes empty and with the pods, per empty node and per
// pod, the time to all Nodes Ready and to all pods Running, and the idle CPU in both states.
// With a snapshot directory the child also writes a heap snapshot in each state, for
// bench/agent/heap-attribution.ts.
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { createApiClients, createConnectionPool } from '../../src/kube/api-clients.js';
import { unlimited } from '../../src/kube/rate-limiter.js';
import { benchNodeOptions, createNamespace, pool, tempDir } from './common.js';
import { FleetChild } from './fleet-process.js';
import { procCpuMs } from './subjects.js';

const PREFIX = 'fm-';
const NAMESPACE = 'fleet-memory';
/** Pods created at once; the API server, not this loop, should be what limits creation. */
const CREATE_CONCURRENCY = 32;
/** Longer than the busy young generation's policy waits for V8 to give it back (src/fleet/young-generation.ts). */
const YOUNG_SETTLE_TIMEOUT_MS = 120_000;

export interface FleetMemoryOptions {
  nodes: number;
  podsPerNode: number;
  /** Pause after each convergence before memory is read. */
  settleMs: number;
  /** CPU is read over this window in each state. */
  idleWindowMs: number;
  /** Where the child writes its heap snapshots (none without it). */
  snapshotDir?: string;
}

export interface FleetMemoryState {
  rssBytes: number;
  heapUsedBytes: number;
  /** The heap V8 has committed (RSS beyond heapUsed is mostly this, code and Node's own). */
  heapTotalBytes: number;
  externalBytes: number;
  /** Per V8 heap space, committed and used KiB. */
  spaces: Record<string, { committedKiB: number; usedKiB: number }>;
  /** How long after the settle pause the fleet's young generation was given back (about 0 when it was not grown). */
  youngSettleMs: number;
  idleCpuPercent: number;
  snapshot?: string;
}

export interface FleetMemoryResult {
  nodes: number;
  podsPerNode: number;
  /** Fork → every Node Ready. */
  readyMs: number;
  /** First pod created → every pod Running (polled from the API server's watch cache). */
  runningMs: number;
  /** Creating the pods alone (the API server's part of runningMs). */
  createMs: number;
  empty: FleetMemoryState;
  withPods: FleetMemoryState;
  rssBytesPerNode: number;
  heapBytesPerNode: number;
  rssBytesPerPod: number;
  heapBytesPerPod: number;
}

/** What fleet-child.ts's `memory` op answers. */
export interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  spaces: Record<string, { committedKiB: number; usedKiB: number }>;
}

/** How many of the namespace's pods are Running, from the API server's watch cache. */
async function runningPods(api: CoreV1Api): Promise<number> {
  const list = await api.listNamespacedPod({ namespace: NAMESPACE, fieldSelector: 'status.phase=Running', resourceVersion: '0' });
  return list.items.length;
}

/** An ordinary pod as a Deployment would make it, bound to `node`. */
export function ordinaryPod(node: string, i: number, namespace = NAMESPACE): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${node}-p${i}`, namespace, labels: { app: namespace, node } },
    spec: { nodeName: node, containers: [{ name: 'main', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] },
  };
}

/**
 * Creates the pod, again after a timeout or overload of a busy API server (504, 429, 5xx, a
 * broken connection); a 409 after such a failure means the first try got through.
 */
export async function createPod(api: Pick<CoreV1Api, 'createNamespacedPod'>, body: V1Pod): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await api.createNamespacedPod({ namespace: body.metadata?.namespace ?? NAMESPACE, body });
      return;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt > 1 && code === 409) return;
      const transient = typeof code !== 'number' || code === 429 || code >= 500;
      if (!transient || attempt >= 10) throw err;
      await delay(500 * attempt);
    }
  }
}

/** Until `check` holds, polling every `pollMs`. */
export async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs: number, pollMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(pollMs);
  }
}

export async function runFleetMemoryBench(cluster: LocalCluster, o: FleetMemoryOptions): Promise<FleetMemoryResult> {
  const { nodes, podsPerNode } = o;
  const adminKc = new KubeConfig();
  adminKc.loadFromFile(cluster.adminKubeconfig);
  const admin = adminKc.makeApiClient(CoreV1Api);
  await createNamespace(admin, NAMESPACE);
  const dir = await tempDir('kp-bench-fleet-memory-');
  const kubeconfig = await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });

  const script = fileURLToPath(new URL('./fleet-child.js', import.meta.url));
  const t0 = performance.now();
  const child = fork(script, [JSON.stringify({ kubeconfig, nodes, prefix: PREFIX, log: true, ...(o.snapshotDir !== undefined ? { snapshotDir: o.snapshotDir } : {}) })], {
    execArgv: ['--expose-gc', ...benchNodeOptions()],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const fleet = new FleetChild(child);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await fleet.call('started');
    const pollMs = nodes > 200 ? 2000 : 500;
    await until(
      async () => {
        const list = await admin.listNode();
        return list.items.filter((n) => n.metadata?.name?.startsWith(PREFIX) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === nodes;
      },
      `${nodes} Nodes Ready`,
      600_000,
      pollMs,
    );
    const readyMs = performance.now() - t0;

    const measure = async (): Promise<FleetMemoryState> => {
      await delay(o.settleMs);
      const s0 = performance.now();
      await until(() => fleet.call<boolean>('youngSettled'), 'the young generation given back', YOUNG_SETTLE_TIMEOUT_MS, 1000);
      const youngSettleMs = Math.round(performance.now() - s0);
      const memory = await fleet.call<Memory>('memory');
      const cpu0 = procCpuMs(child.pid!);
      const w0 = performance.now();
      await delay(o.idleWindowMs);
      const idleCpuPercent = Math.round(((procCpuMs(child.pid!) - cpu0) / (performance.now() - w0)) * 10_000) / 100;
      const snapshot = o.snapshotDir !== undefined ? await fleet.call<string>('snapshot') : undefined;
      return { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, heapTotalBytes: memory.heapTotal, externalBytes: memory.external, spaces: memory.spaces, youngSettleMs, idleCpuPercent, ...(snapshot !== undefined ? { snapshot } : {}) };
    };
    const empty = await measure();

    const api = createApiClients(adminKc, unlimited, { pool: createConnectionPool(CREATE_CONCURRENCY) }).core;
    const bodies: V1Pod[] = [];
    // Node by node, pod by pod: the last node gets its first pod only at the end.
    for (let i = 0; i < podsPerNode; i++) for (let n = 0; n < nodes; n++) bodies.push(ordinaryPod(`${PREFIX}${n}`, i));
    const c0 = performance.now();
    await pool(bodies, CREATE_CONCURRENCY, (body) => createPod(api, body));
    const createMs = performance.now() - c0;
    const total = nodes * podsPerNode;
    await until(async () => (await runningPods(admin)) === total, `${total} pods Running`, 900_000, pollMs);
    const runningMs = performance.now() - c0;
    const withPods = await measure();

    return {
      nodes,
      podsPerNode,
      readyMs: Math.round(readyMs),
      runningMs: Math.round(runningMs),
      createMs: Math.round(createMs),
      empty,
      withPods,
      rssBytesPerNode: Math.round(empty.rssBytes / nodes),
      heapBytesPerNode: Math.round(empty.heapUsedBytes / nodes),
      rssBytesPerPod: Math.round((withPods.rssBytes - empty.rssBytes) / total),
      heapBytesPerPod: Math.round((withPods.heapUsedBytes - empty.heapUsedBytes) / total),
    };
  } finally {
    await fleet.call('stop').catch(() => undefined);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}

export function fleetMemoryTable(r: FleetMemoryResult): string {
  const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  const kb = (b: number): string => `${(b / 1000).toFixed(1)} KB`;
  return [
    '| nodes × pods | all Ready | pods Running (created in) | RSS empty (per node) | heap empty (per node) | RSS with pods (per pod) | heap with pods (per pod) | idle CPU empty / with pods |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    `| ${r.nodes.toLocaleString('en-US')} × ${r.podsPerNode} | ${(r.readyMs / 1000).toFixed(1)} s | ${(r.runningMs / 1000).toFixed(1)} s (${(r.createMs / 1000).toFixed(1)} s) | ${mib(r.empty.rssBytes)} (${kb(r.rssBytesPerNode)}) | ${mib(r.empty.heapUsedBytes)} (${kb(r.heapBytesPerNode)}) | ${mib(r.withPods.rssBytes)} (${kb(r.rssBytesPerPod)}) | ${mib(r.withPods.heapUsedBytes)} (${kb(r.heapBytesPerPod)}) | ${r.empty.idleCpuPercent} % / ${r.withPods.idleCpuPercent} % |`,
  ].join('\n');
}
