// Memory and CPU of the process that holds only the agent (bench/agent/agent-child.ts): RSS and
// V8 heap after a full GC once N static pods are mirrored and Running and the mirror queue is
// idle, against the same process with no static pods; then CPU over two consecutive windows in
// which nothing changes (the agent's own timers still run: housekeeping every 2 s, node status
// every 10 s, the lease, the file source re-list every 20 s, the status resync every 10 s).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import { AgentChild, NodePodObserver, createNamespace, kubeConfigFromFile, manifestYaml, pool, tempDir, writeConfigFile, type MemorySample } from './common.js';

export const resourceNode = (size: number): string => `bench-res-${size}`;

export interface ResourceRow {
  pods: number;
  convergeMs: number;
  memory: MemorySample;
  /** (rss − rss with 0 pods) ÷ pods */
  rssBytesPerPod: number | null;
  heapBytesPerPod: number | null;
  idleWindowMs: number;
  /** CPU time ÷ wall time over the window right after convergence, in % of one core. */
  settlingCpuPercent: number;
  /** CPU time ÷ wall time over the next window (the steady state), in % of one core. */
  idleCpuPercent: number;
}

/** CPU time of the agent process (all threads) ÷ wall time over `ms`, in % of one core. */
async function cpuOver(agent: AgentChild, ms: number): Promise<{ percent: number; wallMs: number }> {
  const cpu0 = await agent.cpu();
  const w0 = performance.now();
  await delay(ms);
  const cpu1 = await agent.cpu();
  const wall = performance.now() - w0;
  const used = cpu1.user - cpu0.user + (cpu1.system - cpu0.system);
  return { percent: Math.round((used / 1000 / wall) * 100 * 100) / 100, wallMs: Math.round(wall) };
}

async function measure(cluster: LocalCluster, size: number, idleWindowMs: number): Promise<Omit<ResourceRow, 'rssBytesPerPod' | 'heapBytesPerPod'>> {
  const node = resourceNode(size);
  const adminKc = kubeConfigFromFile(cluster.adminKubeconfig);
  const admin = adminKc.makeApiClient(CoreV1Api);
  const namespace = node;
  await createNamespace(admin, namespace);
  const dir = await tempDir('kp-bench-res-');
  const manifests = join(dir, 'manifests');
  await mkdir(manifests);
  await pool(
    Array.from({ length: size }, (_, i) => i),
    64,
    (i) => writeFile(join(manifests, `res-${i}.yaml`), manifestYaml(`res-${i}`, namespace)),
  );
  const configFile = await writeConfigFile(dir, { kubeAPIQPS: 0, kubeAPIBurst: 100 });
  const observer = new NodePodObserver(adminKc, node);
  await observer.start();
  const t0 = performance.now();
  const agent = await AgentChild.start({ kubeconfig: cluster.nodeKubeconfigs[node]!, node, manifestDir: manifests, configFile, simulatedLifecycle: 'instant' });
  try {
    if (size === 0) {
      // No pods: wait (with a deadline) for the Node object the agent registers.
      const deadline = Date.now() + 60_000;
      while (!(await admin.readNode({ name: node }).then(() => true, () => false))) {
        if (Date.now() > deadline) throw new Error(`node ${node} not registered within 60 s`);
        await delay(100);
      }
    } else {
      await observer.until(() => observer.running === size, `${size} mirrors Running`, 60_000 + size * 100);
    }
    const convergeMs = performance.now() - t0;
    await agent.idle();
    const memory = await agent.memory();
    // Two measurement windows, not waits for a condition: CPU is sampled over each. The first
    // starts as soon as all mirrors are Running and still holds the tail of the convergence
    // (our last status writes coming back through the watch, V8 sweeping after the full GC);
    // the second is the steady state.
    const settling = await cpuOver(agent, idleWindowMs);
    const idle = await cpuOver(agent, idleWindowMs);
    return {
      pods: size,
      convergeMs: Math.round(convergeMs),
      memory,
      idleWindowMs: idle.wallMs,
      settlingCpuPercent: settling.percent,
      idleCpuPercent: idle.percent,
    };
  } finally {
    await agent.stop();
    observer.stop();
    await admin.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runResourcesBench(cluster: LocalCluster, sizes: readonly number[], idleWindowMs: number): Promise<ResourceRow[]> {
  const base = await measure(cluster, 0, idleWindowMs);
  const rows: ResourceRow[] = [{ ...base, rssBytesPerPod: null, heapBytesPerPod: null }];
  for (const size of sizes) {
    const m = await measure(cluster, size, idleWindowMs);
    rows.push({
      ...m,
      rssBytesPerPod: Math.round((m.memory.rss - base.memory.rss) / size),
      heapBytesPerPod: Math.round((m.memory.heapUsed - base.memory.heapUsed) / size),
    });
  }
  return rows;
}
