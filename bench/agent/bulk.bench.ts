// Bulk: N static pods appear at once (renamed into the manifest directory in one burst) → all
// mirrored, then all Running; then all removed → all mirrors gone. Compared with a ceiling
// measured in the same run on the same API server: a plain @kubernetes/client-node loop, with
// node credentials like the agent's, creating N mirror pods and then deleting them at the
// agent's mirror concurrency (32). Ceiling and agent run twice each, alternating; the better run
// of each counts. Then the same bulk with kubeAPIQPS/kubeAPIBurst on, recording
// every non-watch request the agent sends, to check the token bucket bound over every window.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import { AGENT_CONFIG_DEFAULTS } from '../../src/config/agent-config.js';
import { createApiClients, createConnectionPool } from '../../src/kube/api-clients.js';
import { unlimited } from '../../src/kube/rate-limiter.js';
import { AgentChild, NodePodObserver, createNamespace, kubeConfigFromFile, manifestYaml, pool, tempDir, writeConfigFile } from './common.js';

export const BULK_NODES = ['bench-ceiling', 'bench-bulk', 'bench-qps'] as const;
/** MirrorSync's default concurrency: the ceiling loop uses the same. */
export const CONCURRENCY = 32;

export interface PhaseRate {
  pods: number;
  ms: number;
  podsPerSecond: number;
}

export interface BulkRun {
  mirrored: PhaseRate;
  running: PhaseRate;
  removed: PhaseRate;
}

export interface QpsAdherence {
  qps: number;
  burst: number;
  requests: number;
  spanMs: number;
  /** max over all windows [t_i, t_j] of (requests in window) − (burst + qps × window); ≤ 1 means adherent (one token of rounding). */
  maxExcess: number;
  /** (requests − burst) ÷ span: the sustained rate once the burst is spent. */
  sustainedQps: number;
  /** Largest number of requests in any 1 s window. */
  maxPerSecond: number;
}

export interface BulkResult {
  pods: number;
  concurrency: number;
  /** The better of the two ceiling runs, phase by phase; `ceilingRuns` has both. */
  ceiling: { create: PhaseRate; delete: PhaseRate };
  ceilingRuns: Array<{ create: PhaseRate; delete: PhaseRate }>;
  /** The better of the two agent runs, phase by phase; `unlimitedRuns` has both. */
  unlimited: BulkRun;
  unlimitedRuns: BulkRun[];
  ratio: { mirrored: number; removed: number; running: number };
  /** `adherence`: every request but event writes against kubeAPIQPS; `eventAdherence`: event writes against eventRecordQPS. */
  limited: BulkRun & { adherence: QpsAdherence; eventAdherence: QpsAdherence };
}

export const rate = (pods: number, ms: number): PhaseRate => ({ pods, ms: Math.round(ms), podsPerSecond: Math.round((pods / ms) * 1000 * 10) / 10 });

export interface CreateLoopOptions {
  /** Whose credentials create the pods (a node's, or the fleet's token). */
  kubeconfig: string;
  adminKubeconfig: string;
  /** The Node the pods are bound to and owned by; created when missing. */
  node: string;
  /** Created when missing. */
  namespace: string;
  pods: number;
  concurrency: number;
  /** Part of the pod names, so that runs never collide. */
  round: number;
  /**
   * Over one keep-alive connection pool (src/kube/api-clients.ts, as the agent and the fleet
   * send) instead of plain client-node, which opens a new TLS connection for every request.
   */
  keepAlive?: boolean;
}

/**
 * The ceiling: a plain client-node loop that creates `pods` mirror-like pods with `concurrency`
 * in flight, then deletes them (which also cleans up for the next run). Pod names and bodies
 * are what an agent's mirrors look like, so the API server does the same work for both.
 */
export async function createLoop(o: CreateLoopOptions): Promise<{ create: PhaseRate; delete: PhaseRate }> {
  const { node, namespace, round } = o;
  const kc = kubeConfigFromFile(o.kubeconfig);
  const api = o.keepAlive ? createApiClients(kc, unlimited, { pool: createConnectionPool(o.concurrency) }).core : kc.makeApiClient(CoreV1Api);
  const admin = kubeConfigFromFile(o.adminKubeconfig).makeApiClient(CoreV1Api);
  await admin.readNamespace({ name: namespace }).catch(() => createNamespace(admin, namespace));
  const nodeObject = await api
    .readNode({ name: node })
    .catch(() => api.createNode({ body: { apiVersion: 'v1', kind: 'Node', metadata: { name: node } } }));
  const names = Array.from({ length: o.pods }, (_, i) => `ceil-${round}-${i}-${node}`);
  const body = (name: string): V1Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { app: name },
      annotations: { 'kubernetes.io/config.mirror': name, 'kubernetes.io/config.hash': name, 'kubernetes.io/config.source': 'file' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, uid: nodeObject.metadata!.uid!, controller: true }],
    },
    spec: { nodeName: node, containers: [{ name: 'main', image: 'nginx:1.27' }] },
  });
  let t0 = performance.now();
  await pool(names, o.concurrency, async (name) => {
    await api.createNamespacedPod({ namespace, body: body(name) });
  });
  const create = rate(o.pods, performance.now() - t0);
  t0 = performance.now();
  await pool(names, o.concurrency, async (name) => {
    await api.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0 } });
  });
  return { create, delete: rate(o.pods, performance.now() - t0) };
}

function ceiling(cluster: LocalCluster, pods: number, round: number): Promise<{ create: PhaseRate; delete: PhaseRate }> {
  const node = 'bench-ceiling';
  return createLoop({ kubeconfig: cluster.nodeKubeconfigs[node]!, adminKubeconfig: cluster.adminKubeconfig, node, namespace: 'bench-ceiling', pods, concurrency: CONCURRENCY, round });
}

async function agentBulk(
  cluster: LocalCluster,
  node: string,
  pods: number,
  kubelet: { kubeAPIQPS: number; kubeAPIBurst: number },
  record: boolean,
  round = 0,
): Promise<{ run: BulkRun; requestTimes: number[]; eventTimes: number[] }> {
  const adminKc = kubeConfigFromFile(cluster.adminKubeconfig);
  const admin = adminKc.makeApiClient(CoreV1Api);
  const namespace = node;
  if (round === 0) await createNamespace(admin, namespace);
  const dir = await tempDir('kp-bench-bulk-');
  const manifests = join(dir, 'manifests');
  const staging = join(dir, 'staging');
  await mkdir(manifests);
  await mkdir(staging);
  const configFile = await writeConfigFile(dir, kubelet);
  const observer = new NodePodObserver(adminKc, node);
  await observer.start();
  const agent = await AgentChild.start({ kubeconfig: cluster.nodeKubeconfigs[node]!, node, manifestDir: manifests, configFile, recordRequests: record, simulatedLifecycle: 'instant' });
  try {
    // Warm-up pod: the Node is registered and the agent is connected before the clock starts.
    await writeFile(join(manifests, 'warm.yaml'), manifestYaml('warm', namespace));
    await observer.until(() => observer.running === 1, 'warm-up mirror Running', 60_000);
    await agent.idle();
    const names = Array.from({ length: pods }, (_, i) => `bulk-${i}`);
    await pool(names, 64, (n) => writeFile(join(staging, `${n}.yaml`), manifestYaml(n, namespace)));
    // Clears what was recorded so far: the window starts here.
    await agent.requests();
    await agent.eventRequests();
    const total = pods + 1;
    const t0 = performance.now();
    await pool(names, 64, (n) => rename(join(staging, `${n}.yaml`), join(manifests, `${n}.yaml`)));
    const timeout = 60_000 + pods * 200;
    let tMirrored = 0;
    const mirrored = observer.until(() => observer.mirrors === total, `${pods} mirrors`, timeout).then(() => (tMirrored = performance.now()));
    await observer.until(() => observer.running === total, `${pods} mirrors Running`, timeout);
    await mirrored;
    const tRunning = performance.now();
    await agent.idle();
    const t1 = performance.now();
    await pool(names, 64, (n) => rm(join(manifests, `${n}.yaml`)));
    await observer.until(() => observer.mirrors === 1, `${pods} mirrors removed`, timeout);
    const tRemoved = performance.now();
    const requestTimes = await agent.requests();
    const eventTimes = await agent.eventRequests();
    return {
      run: { mirrored: rate(pods, tMirrored - t0), running: rate(pods, tRunning - t0), removed: rate(pods, tRemoved - t1) },
      requestTimes,
      eventTimes,
    };
  } finally {
    await agent.stop();
    observer.stop();
    await admin.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

/** Checks request times (ms) against a token bucket of `qps`, `burst` that starts full. */
export function adherence(times: readonly number[], qps: number, burst: number): QpsAdherence {
  const t = [...times].sort((a, b) => a - b);
  let maxExcess = -Infinity;
  let maxPerSecond = 0;
  let k = 0;
  for (let i = 0; i < t.length; i++) {
    for (let j = i; j < t.length; j++) {
      const excess = j - i + 1 - (burst + (qps * (t[j]! - t[i]!)) / 1000);
      if (excess > maxExcess) maxExcess = excess;
    }
    while (t[k]! - t[i]! < 1000 && k < t.length) k++;
    maxPerSecond = Math.max(maxPerSecond, k - i);
  }
  const spanMs = t.length > 1 ? t[t.length - 1]! - t[0]! : 0;
  return {
    qps,
    burst,
    requests: t.length,
    spanMs: Math.round(spanMs),
    maxExcess: t.length === 0 ? 0 : Math.round(maxExcess * 100) / 100,
    sustainedQps: spanMs > 0 ? Math.round(((t.length - burst) / spanMs) * 1000 * 10) / 10 : 0,
    maxPerSecond,
  };
}

/** The faster of two measurements, phase by phase: the ratio is taken against the harder target. */
const best = (a: PhaseRate, b: PhaseRate): PhaseRate => (a.podsPerSecond >= b.podsPerSecond ? a : b);

export async function runBulkBench(cluster: LocalCluster, pods: number): Promise<BulkResult> {
  // Both sides vary by ±30 % between runs on a shared 2-core machine: each is measured twice,
  // alternating, and the better figure of each phase is compared with the better one.
  const unlimitedConfig = { kubeAPIQPS: 0, kubeAPIBurst: 100 };
  const before = await ceiling(cluster, pods, 0);
  const first = (await agentBulk(cluster, 'bench-bulk', pods, unlimitedConfig, false, 0)).run;
  const after = await ceiling(cluster, pods, 1);
  const second = (await agentBulk(cluster, 'bench-bulk', pods, unlimitedConfig, false, 1)).run;
  const ceil = { create: best(before.create, after.create), delete: best(before.delete, after.delete) };
  const unlimited = { mirrored: best(first.mirrored, second.mirrored), running: best(first.running, second.running), removed: best(first.removed, second.removed) };
  const qps = 50;
  const burst = 100;
  const limited = await agentBulk(cluster, 'bench-qps', pods, { kubeAPIQPS: qps, kubeAPIBurst: burst }, true);
  const r = (n: number): number => Math.round(n * 100) / 100;
  return {
    pods,
    concurrency: CONCURRENCY,
    ceiling: ceil,
    ceilingRuns: [before, after],
    unlimitedRuns: [first, second],
    unlimited,
    ratio: {
      mirrored: r(unlimited.mirrored.podsPerSecond / ceil.create.podsPerSecond),
      running: r(unlimited.running.podsPerSecond / ceil.create.podsPerSecond),
      removed: r(unlimited.removed.podsPerSecond / ceil.delete.podsPerSecond),
    },
    limited: {
      ...limited.run,
      adherence: adherence(limited.requestTimes, qps, burst),
      eventAdherence: adherence(limited.eventTimes, AGENT_CONFIG_DEFAULTS.eventRecordQPS, AGENT_CONFIG_DEFAULTS.eventBurst),
    },
  };
}
