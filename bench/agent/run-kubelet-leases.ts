// `--agent=kubelet-leases`: the kubelet's own Lease controller beside the fleet's renewals
// (bench/agent/kubelet-leases.bench.ts), written to bench/results/agent-kubelet-leases[-quick].{json,md}
// at the default sizes; with any of the BENCH_KUBELET_LEASES_* knobs set only printed.
import { loadavg } from 'node:os';
import { KUBELET_LEASES_KNOBS, kubeletLeasesSizes, kubeletLeasesTable, runKubeletLeasesBench } from './kubelet-leases.bench.js';
import type { Write } from './run-agent.js';

export async function runKubeletLeases(quick: boolean, write: Write): Promise<void> {
  const sizes = kubeletLeasesSizes(quick);
  const loadBefore = loadavg();
  const started = performance.now();
  const runs = await runKubeletLeasesBench(sizes);
  const runtimeS = Math.round((performance.now() - started) / 1000);
  const table = kubeletLeasesTable(runs, sizes.nodes);
  const note =
    `${sizes.nodes.toLocaleString('en-US')} node Leases kept, one peer after the other, each on a fresh local control plane with the same credential, the shipped ClusterRole's ServiceAccount token (bench/agent/kubelet-leases.bench.ts). ` +
    `The kubelet's code: tools/kubelet-leases, the node Lease controller of k8s.io/component-helpers v0.34.4 that kubelet.go starts (40 s Leases renewed every 10 s with up to 4 % jitter, the next renewal timed from the end of the last), once per node name in one Go process, started evenly over 10 s, over ${sizes.connections} client sets each set up as the kubelet's heartbeat client (no client-side rate limit, 10 s deadline, protobuf), each its own HTTP/2 connection; Leases only, no Nodes. ` +
    `kubelet-pods fleet: ${sizes.nodes.toLocaleString('en-US')} empty nodes (bench/agent/fleet-child.ts through bench/agent/fleet-scale.bench.ts without pods: Nodes registered and their status kept, Leases), its defaults. ` +
    `Held: from the peer's start until a watch of kube-node-lease opened before it had seen every Lease (the fleet: until every Node was Ready). Then ${sizes.settleMs / 1000} s to settle and an idle window of ${sizes.idleWindowMs / 1000} s: Lease lateness is the gap between two renewals of one Lease arriving in that watch, less 10.4 s (period + 4 % jitter), and the same between the Leases' own renewTimes; CPU (utime + stime) and RSS from /proc; the API server's requests and latency from two readings of its /metrics. ` +
    `Load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before the run, ${loadavg().map((l) => l.toFixed(2)).join(' ')} after; the run took ${runtimeS} s.`;
  const overrides = KUBELET_LEASES_KNOBS.filter((name) => process.env[name] !== undefined && process.env[name] !== '');
  if (overrides.length > 0) {
    console.log(`\nThe kubelet's Lease controller beside the fleet (${overrides.join(', ')} set: results not written)\n${note}\n\n${table}\n${JSON.stringify({ runs, sizes, runtimeS, loadAverageBefore: loadBefore, loadAverageAfter: loadavg() })}`);
    return;
  }
  write('agent-kubelet-leases', "Node Leases at scale: the kubelet's Lease controller beside the fleet", note, { runs, runtimeS, loadAverageBefore: loadBefore }, table, sizes);
}
