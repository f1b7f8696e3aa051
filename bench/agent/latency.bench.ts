// Reaction latency of the agent, observed the way a user sees it: through a watch on the API
// server (pods with spec.nodeName=<node>). Three scenarios, one sample at a time:
//   create   manifest written → its mirror pod ADDED in the watch
//   recreate mirror deleted with the API (default grace, as `kubectl delete pod`) → a mirror
//            with a new UID ADDED
//   remove   manifest removed → mirror DELETED
// The agent runs as its own process (bench/agent/agent-child.ts) with default settings, once
// per lifecycle mode: `instant` (raw speed) and `kubelet` (the default: a removed pod is
// terminated first and its mirror deleted by the next 2 s housekeeping, as the kubelet does).
// Then the real kubelet (`real-kubelet`: tools/hollow-kubelet, v1.34.4 with kubemark's fake
// runtime, its defaults) on a node of its own, the same scenarios; at most REAL_SAMPLES samples,
// as each of its samples takes about 10 s (its recreated mirror's status comes 6-7 s later).
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import { AgentChild, NodePodObserver, createNamespace, kubeConfigFromFile, manifestYaml, percentiles, tempDir, type Percentiles } from './common.js';
import { isMirrorPod } from '../../src/pod/classify.js';
import { startHollowKubelet } from '../../test/helpers/hollow-kubelet.js';

export const LATENCY_NODE = 'bench-latency';
/** The real kubelet's node (a Node of its own: it registers it with its own status). */
export const LATENCY_REAL_NODE = 'bench-latency-real';
const REAL_SAMPLES = 10;

export type LatencyMode = 'instant' | 'kubelet' | 'real-kubelet';
export const LATENCY_MODES: readonly LatencyMode[] = ['instant', 'kubelet', 'real-kubelet'];

export interface LatencyModeResult {
  mode: LatencyMode;
  scenarios: Record<'create' | 'createRunning' | 'recreate' | 'remove', Percentiles>;
}

export interface LatencyResult {
  samplesPerScenario: number;
  modes: LatencyModeResult[];
}

export async function runLatencyBench(cluster: LocalCluster, samples: number): Promise<LatencyResult> {
  const adminKc = kubeConfigFromFile(cluster.adminKubeconfig);
  const admin = adminKc.makeApiClient(CoreV1Api);
  await createNamespace(admin, 'bench-latency');
  const modes: LatencyModeResult[] = [];
  // The real kubelet's samples are the slow ones: a third of ours, at most REAL_SAMPLES.
  const realSamples = Math.min(REAL_SAMPLES, Math.ceil(samples / 3));
  for (const mode of LATENCY_MODES) modes.push(await runMode(cluster, mode === 'real-kubelet' ? realSamples : samples, mode));
  return { samplesPerScenario: samples, modes };
}

async function runMode(cluster: LocalCluster, samples: number, mode: LatencyMode): Promise<LatencyModeResult> {
  const node = mode === 'real-kubelet' ? LATENCY_REAL_NODE : LATENCY_NODE;
  const adminKc = kubeConfigFromFile(cluster.adminKubeconfig);
  const admin = adminKc.makeApiClient(CoreV1Api);
  const namespace = 'bench-latency';
  const dir = await tempDir('kp-bench-lat-');
  const staging = await tempDir('kp-bench-lat-staging-');
  const observer = new NodePodObserver(adminKc, node);
  await observer.start();
  const agent: { stop(): Promise<void> } =
    mode === 'real-kubelet'
      ? await startHollowKubelet({ cluster, nodeName: node, staticPodPath: dir })
      : await AgentChild.start({ kubeconfig: cluster.nodeKubeconfigs[node]!, node, manifestDir: dir, simulatedLifecycle: mode, ...(process.env.BENCH_AGENT_LOG ? { logFile: process.env.BENCH_AGENT_LOG, logLevel: 'debug' } : {}) });
  // Names per mode: the second agent finds the first one's mirrors gone or going.
  const mirrorName = (i: number): string => `${mode}-lat-${i}-${node}`;
  const file = (i: number): string => join(dir, `${mode}-lat-${i}.yaml`);
  try {
    // Warm up: node registered, watch connections open, JIT warm.
    for (let i = 0; i < 5; i++) {
      const seen = observer.next((e) => e.type === 'ADDED' && e.pod.metadata?.name === `${mode}-warm-${i}-${node}`, 'warm-up mirror', 60_000);
      await writeFile(join(dir, `${mode}-warm-${i}.yaml`), manifestYaml(`${mode}-warm-${i}`, namespace));
      await seen;
    }

    const create: number[] = [];
    const createRunning: number[] = [];
    for (let i = 0; i < samples; i++) {
      // Written beside the directory, then renamed in: the manifest appears whole, at t0.
      const staged = join(staging, `${mode}-lat-${i}.yaml`);
      await writeFile(staged, manifestYaml(`${mode}-lat-${i}`, namespace));
      const seen = observer.next((e) => e.type === 'ADDED' && e.pod.metadata?.name === mirrorName(i) && isMirrorPod(e.pod), `mirror ${i}`);
      const running = observer.next((e) => e.pod.metadata?.name === mirrorName(i) && e.pod.status?.phase === 'Running', `mirror ${i} Running`);
      const t0 = performance.now();
      await rename(staged, file(i));
      create.push((await seen).at - t0);
      createRunning.push((await running).at - t0);
    }

    const recreate: number[] = [];
    for (let i = 0; i < samples; i++) {
      const name = mirrorName(i);
      const old = observer.pods.get(`${namespace}/${name}`);
      const oldUID = old?.metadata?.uid;
      if (!oldUID) throw new Error(`no mirror ${name} before deleting it`);
      const back = observer.next((e) => e.type === 'ADDED' && e.pod.metadata?.name === name && e.pod.metadata?.uid !== oldUID, `mirror ${name} recreated`);
      const t0 = performance.now();
      await admin.deleteNamespacedPod({ namespace, name });
      recreate.push((await back).at - t0);
      // Let its status write land before the next sample.
      await observer.until(() => observer.pods.get(`${namespace}/${name}`)?.status?.phase === 'Running', `${name} Running again`, 20_000);
    }

    const remove: number[] = [];
    for (let i = 0; i < samples; i++) {
      const gone = observer.next((e) => e.type === 'DELETED' && e.pod.metadata?.name === mirrorName(i), `mirror ${i} gone`);
      const t0 = performance.now();
      await rm(file(i));
      remove.push((await gone).at - t0);
      // Kubelet mode: the mirror is deleted by housekeeping up to 2 s after the pod stopped.
    }

    return {
      mode,
      scenarios: {
        create: percentiles(create),
        createRunning: percentiles(createRunning),
        recreate: percentiles(recreate),
        remove: percentiles(remove),
      },
    };
  } finally {
    await agent.stop();
    observer.stop();
    await admin.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => {});
    await rm(dir, { recursive: true, force: true });
    await rm(staging, { recursive: true, force: true });
  }
}
