// `--agent=kwok`: kwok and the fleet on the same workload (bench/agent/kwok.bench.ts), written to
// bench/results/agent-kwok[-quick].{json,md}; with BENCH_KWOK_PODS_PER_NODE=100 (and nothing
// else changed) to agent-kwok-100-pods-per-node.{json,md}; with any other override (node flags for the
// fleet in BENCH_AGENT_NODE_OPTIONS included) only printed.
import { loadavg } from 'node:os';
import { kwokBenchPeers, kwokBenchSizes, kwokTable, runKwokBench, type KwokBenchSizes } from './kwok.bench.js';
import type { Write } from './run-agent.js';

const OVERRIDES = ['BENCH_KWOK_NODES', 'BENCH_KWOK_IDLE_MS', 'BENCH_KWOK_PEERS', 'BENCH_KWOK_FLEET_SETTINGS', 'BENCH_AGENT_NODE_OPTIONS'] as const;

/** The results' name for these settings, or undefined when they are not a run to keep. */
export function kwokResultsName(quick: boolean, sizes: KwokBenchSizes, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (OVERRIDES.some((name) => env[name] !== undefined && env[name] !== '')) return undefined;
  const plain = kwokBenchSizes(quick, {});
  if (sizes.podsPerNode === plain.podsPerNode) return 'agent-kwok';
  if (!quick && sizes.podsPerNode === 100) return 'agent-kwok-100-pods-per-node';
  return undefined;
}

export async function runKwok(quick: boolean, write: Write): Promise<void> {
  const sizes = kwokBenchSizes(quick);
  const peers = kwokBenchPeers();
  const loadBefore = loadavg();
  const started = performance.now();
  const result = await runKwokBench(sizes, peers);
  const runtimeS = Math.round((performance.now() - started) / 1000);
  const table = kwokTable(result);
  const note =
    `The same workload for each, one after the other, each on a fresh local control plane (bench/agent/kwok.bench.ts): ${sizes.nodes.toLocaleString('en-US')} nodes without static pods, then ${sizes.podsPerNode} ordinary pods per node created through the API with spec.nodeName (${sizes.concurrency} requests in flight, one keep-alive pool, the same for all), then all deleted. ` +
    `kwok: ${result.kwok.version} built from its Go module (tools/kwok, \`sigs.k8s.io/kwok/cmd/kwok\`) as a default kwokctl cluster runs it: node Leases of ${result.kwok.nodeLeaseDurationSeconds} s (renewed every quarter of that, as the kubelet renews its own) and its shipped stages ${result.kwok.stages.map((x) => `\`${x}\``).join(', ')} (read from the module: ${result.kwok.stageFiles.map((f) => f.split('/').pop()).join(', ') || 'not run'}), managing the Nodes annotated ${'`kwok.x-k8s.io/node=fake`'} that the harness creates first (timed on its own row), with the admin kubeconfig. ` +
    `The fleet: \`kubelet-pods fleet --config\` (the real command, its defaults: kubeAPIQPS 500 / burst 1000) with one template of ${sizes.nodes.toLocaleString('en-US')} nodes and the shipped ClusterRole's ServiceAccount token, in its default \`--simulated-lifecycle=kubelet\` (\`instant\` runs static pods only, so it has no row here)${peers.includes('fleet') ? '' : ' (not run)'}. ` +
    `Ready, Running and gone: from watches opened before the step. Idle windows: ${sizes.settleMs / 1000} s after the step, then ${sizes.idleWindowMs / 1000} s: VmRSS (mean of 1 s samples), CPU (utime + stime) of the subject and of the control plane process (kube-apiserver, etcd, kube-scheduler and kube-controller-manager in one process), the harness's watches closed. ` +
    `Memory per node: against the same program serving one node on the same control plane (${sizes.baseSettleMs / 1000} s, then ${sizes.baseWindowMs / 1000} s). Load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before the run; the run took ${runtimeS} s.`;
  const name = kwokResultsName(quick, sizes);
  if (name === undefined) {
    console.log(`\nkwok and the fleet (sizes or peers overridden: results not written)\n${table}`);
    return;
  }
  write(name, 'Beside kwok: kwok and kubelet-pods fleet on the same workload', note, { ...result, runtimeS, loadAverageBefore: loadBefore }, table, sizes);
}
