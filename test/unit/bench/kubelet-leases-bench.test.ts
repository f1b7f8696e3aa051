// The benchmark that puts the kubelet's own Lease controller beside the fleet's renewals
// (bench/agent/kubelet-leases.bench.ts): its sizes and knobs, and the side-by-side table's
// ratios, which divide the fleet's figure by the kubelet code's and leave a cell without both.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { kubeletLeasesSizes, kubeletLeasesTable, type LeasePeerRun } from '../../../bench/agent/kubelet-leases.bench.js';

describe('kubelet Leases benchmark: sizes', () => {
  it('10,000 nodes by default, 20 in quick mode, both peers', () => {
    const full = kubeletLeasesSizes(false, {});
    assert.equal(full.nodes, 10_000);
    assert.equal(full.idleWindowMs, 120_000);
    assert.deepEqual(full.peers, ['kubelet', 'fleet']);
    assert.equal(kubeletLeasesSizes(true, {}).nodes, 20);
  });

  it('takes the knobs, and names the one it cannot read', () => {
    const sizes = kubeletLeasesSizes(false, { BENCH_KUBELET_LEASES_NODES: '3000', BENCH_KUBELET_LEASES_IDLE_MS: '60000', BENCH_KUBELET_LEASES_PEERS: 'fleet' });
    assert.equal(sizes.nodes, 3000);
    assert.equal(sizes.idleWindowMs, 60_000);
    assert.deepEqual(sizes.peers, ['fleet']);
    assert.throws(() => kubeletLeasesSizes(false, { BENCH_KUBELET_LEASES_NODES: '1e3x' }), /BENCH_KUBELET_LEASES_NODES: expected a whole number/);
    assert.throws(() => kubeletLeasesSizes(false, { BENCH_KUBELET_LEASES_PEERS: 'kwok' }), /BENCH_KUBELET_LEASES_PEERS: expected some of kubelet, fleet/);
  });
});

function run(peer: LeasePeerRun['peer'], p99Ms: number, peerCpu: number): LeasePeerRun {
  const lateness = { renewals: 1000, p50Ms: 0, p99Ms, maxMs: p99Ms * 2 };
  return {
    peer,
    heldMs: 50_000,
    idle: {
      ms: 120_000,
      lease: lateness,
      leaseStamped: lateness,
      processes: [
        { name: peer, cpuPercent: peerCpu, rssMaxBytes: 100 * 2 ** 20, rssEndBytes: 90 * 2 ** 20 },
        { name: 'kube-apiserver + etcd', cpuPercent: 130, rssMaxBytes: 2 ** 30, rssEndBytes: 2 ** 30 },
      ],
      apiServer: { seconds: 120, requestsPerSecond: 610, failed: 0, requests: [{ key: 'PUT leases', perSecond: 600, meanMs: 14, p99Ms: 80 }], etcd: [], priorityLevels: [] },
    },
    leaseWatchReopened: 0,
  };
}

describe('kubelet Leases benchmark: table', () => {
  it('fleet ÷ kubelet per row', () => {
    const table = kubeletLeasesTable([run('kubelet', 8000, 40), run('fleet', 10_000, 20)], 10_000);
    assert.match(table, /\| idle: Lease lateness p99, as the renewals arrive \| 8\.0 s \| 10\.0 s \| 1\.25 \|/);
    assert.match(table, /\| idle: the peer's CPU \(% of one core\) \| 40 % \| 20 % \| 0\.50 \|/);
    assert.match(table, /\| idle: renewals a second needed \(one a node every 10 s\) \| 1,000 \| 1,000 \| 1\.00 \|/);
    assert.match(table, /\| idle: API server, Lease PUTs a second \(429s included\) \| 600 \| 600 \| 1\.00 \|/);
  });

  it('no ratio where the peers do different work: the start, and the RSS', () => {
    const table = kubeletLeasesTable([run('kubelet', 8000, 40), run('fleet', 10_000, 20)], 10_000);
    assert.match(table, /\| start → all 10,000 Leases held \(the fleet: all Nodes registered and Ready\) \| 50\.0 s \| 50\.0 s \| – \|/);
    assert.match(table, /\| idle: the peer's RSS, largest sample \(the fleet: its Nodes and their pod machinery too\) \| 100 MiB \| 100 MiB \| – \|/);
  });

  it('one peer alone: its column, no ratio', () => {
    const table = kubeletLeasesTable([run('fleet', 90, 2)], 20);
    assert.match(table, /\| idle: Lease lateness p99, as the renewals arrive \| – \| 90 ms \| – \|/);
  });
});
