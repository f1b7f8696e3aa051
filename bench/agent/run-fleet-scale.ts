// `--agent=fleet-scale`: the fleet at scale (bench/agent/fleet-scale.bench.ts), written to
// bench/results/agent-fleet-scale[-quick].{json,md} at the default sizes; with any of the
// BENCH_FLEET_SCALE_* knobs set only printed (a partial or experimental size is not a result).
import { loadavg } from 'node:os';
import { FLEET_SCALE_KNOBS, fleetScaleSizes, fleetScaleTable, runFleetScaleBench } from './fleet-scale.bench.js';
import type { Write } from './run-agent.js';

export async function runFleetScale(quick: boolean, write: Write): Promise<void> {
  const sizes = fleetScaleSizes(quick);
  const loadBefore = loadavg();
  const started = performance.now();
  const result = await runFleetScaleBench(sizes);
  const runtimeS = Math.round((performance.now() - started) / 1000);
  const table = fleetScaleTable(result);
  const note =
    `One \`kubelet-pods fleet\` process (bench/agent/fleet-child.ts, the shipped ClusterRole's token, kubelet lifecycle, no static pods, ${sizes.kubeAPIQPS !== undefined ? `kubeAPIQPS ${sizes.kubeAPIQPS}` : 'its default kubeAPIQPS for this many nodes'}) on a fresh local control plane (bench/agent/fleet-scale.bench.ts): ${sizes.nodes.toLocaleString('en-US')} nodes until all are Ready, then ${sizes.podsPerNode} ordinary pods per node created through the API with spec.nodeName (${sizes.concurrency} in flight, as admin, retried on 429/5xx) until all are Running, ${sizes.settleMs / 1000} s to settle, an idle window of ${sizes.idleWindowMs / 1000} s, then every pod deleted until none is left. ` +
    `Ready, Running and gone: from watches opened before the step. Lease lateness: the gap between two renewals of one Lease arriving in a watch of kube-node-lease (opened once the Nodes are Ready), less 10.4 s (period + 4 % jitter); the same between the Leases' own renewTimes (the fleet's share), with the fleet's event loop delay and full-GC pauses (perf_hooks, in the fleet's process; the settle GC's collections, src/fleet/settle-gc.ts, counted apart). ` +
    `CPU (utime + stime) and RSS from /proc of the fleet, of the control plane program (kube-apiserver and etcd share one process), of its kube-scheduler and kube-controller-manager, and of this harness; the API server's requests, latency, etcd latency and API Priority and Fairness from two readings of its /metrics per phase. ` +
    `Load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before the run, ${loadavg().map((l) => l.toFixed(2)).join(' ')} after; the run took ${runtimeS} s.`;
  const overrides = FLEET_SCALE_KNOBS.filter((name) => process.env[name] !== undefined && process.env[name] !== '');
  if (overrides.length > 0) {
    console.log(`\nThe fleet at scale (${overrides.join(', ')} set: results not written)\n${note}\n\n${table}\n${JSON.stringify({ ...result, runtimeS, loadAverageBefore: loadBefore, loadAverageAfter: loadavg() })}`);
    return;
  }
  write('agent-fleet-scale', 'The fleet at scale: nodes, pods, Leases and who the bottleneck is', note, { ...result, runtimeS, loadAverageBefore: loadBefore }, table, sizes);
}
