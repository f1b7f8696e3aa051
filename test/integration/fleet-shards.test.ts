// Replicas sharing a fleet's nodes by Lease (--shard-by-lease, docs/fleet.md), on the real
// control plane: three replicas over 30 nodes; each node runs in exactly one; one replica
// stops dead (its Leases are left to expire, as after a SIGKILL); its nodes are taken over
// within the Lease duration plus the claim interval; a Lease only ever moves away from the
// replica that stopped, and no mirror is lost or duplicated.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, Watch, type V1Lease } from '@kubernetes/client-node';
import { createFleet, type Fleet } from '../../src/fleet/fleet.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { podManifestYaml as manifest } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const NODES = 30;
const cp = useControlPlane({ nodes: ['fleet-shards-unused'] });
const fleets = new Map<string, Fleet>();
after(async () => {
  await Promise.all([...fleets.values()].map((f) => f.stop()));
});

it('three replicas share 30 nodes by Lease; a dead replica\'s nodes are taken over, each node always by one replica', async (t) => {
  const ns = cp.namespace;
  const dir = await mkdtemp(join(tmpdir(), 'fleet-shards-'));
  await writeFile(join(dir, 'p.yaml'), manifest('p', ns));
  const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });

  // Every holder each Lease has had, in order.
  const holders = new Map<string, string[]>();
  const admin = new KubeConfig();
  admin.loadFromFile(cp.cluster.adminKubeconfig);
  const leaseWatch = await new Watch(admin).watch(
    '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
    {},
    (_type: string, lease: V1Lease) => {
      const name = lease.metadata?.name ?? '';
      const holder = lease.spec?.holderIdentity ?? '';
      if (!name.startsWith('fs-')) return;
      const seen = holders.get(name) ?? [];
      if (seen.at(-1) !== holder) seen.push(holder);
      holders.set(name, seen);
    },
    () => undefined,
  );
  try {
    for (const id of ['r0', 'r1', 'r2']) {
      const fleet = await createFleet({
        config: resolveFleetConfig({ kubeconfig, readOnlyPort: 0, shardByLease: id, templates: [{ name: 'fs-{i}', count: NODES, staticPodPath: dir }] }, {}),
        shutdownTimeoutMs: 1000,
      });
      fleets.set(id, fleet);
    }
    // Started together, as replicas of a Deployment are.
    await Promise.all([...fleets.values()].map((f) => f.start()));
    const running = (): string[][] => [...fleets.values()].map((f) => f.running());
    await waitFor(() => running().flat().length === NODES, 'every node run by some replica', { timeoutMs: 60_000, intervalMs: 200 });
    const all = running().flat();
    for (const [id, f] of fleets) assert.ok(f.running().length > 0, `${id} runs no node`);
    assert.equal(new Set(all).size, NODES, 'no node run by two replicas');
    const mirrorsRunning = async (): Promise<string[]> =>
      (await cp.adminApi.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp).map((p) => p.metadata!.name!);
    await waitFor(async () => (await mirrorsRunning()).length === NODES, 'one Running mirror per node', { timeoutMs: 60_000, intervalMs: 250 });

    // r1 stops dead: its Leases stay as they were, and expire.
    const victim = fleets.get('r1')!;
    const orphaned = victim.running();
    const stoppedAt = Date.now();
    await victim.stop();
    fleets.delete('r1');
    await waitFor(() => running().flat().length === NODES, `r1's ${orphaned.length} nodes taken over`, { timeoutMs: 40_000 + 10_000 + 15_000, intervalMs: 200 });
    const takeoverMs = Date.now() - stoppedAt;
    // The last renewal was at most one interval (10 s) before the stop: expired 40 s after it,
    // then taken within one claim interval (10 s, with up to 10 % jitter).
    assert.ok(takeoverMs <= 40_000 + 11_000 + 1_000, `takeover after ${takeoverMs} ms`);
    assert.equal(new Set(running().flat()).size, NODES, 'no node run by two replicas after the takeover');
    await waitFor(async () => {
      for (const name of orphaned) if (!['r0', 'r2'].includes(holders.get(name)?.at(-1) ?? '')) return false;
      return true;
    }, 'the Leases name their new holders', { timeoutMs: 15_000 });
    // A Lease only ever left r1; those of r0 and r2 never changed hands.
    for (const [name, seen] of holders) {
      if (orphaned.includes(name)) assert.deepEqual(seen.length, 2, `${name}: ${seen.join(' → ')}`);
      else assert.equal(seen.length, 1, `${name}: ${seen.join(' → ')}`);
    }
    const names = await mirrorsRunning();
    assert.equal(new Set(names).size, NODES, 'no mirror duplicated');
    await waitFor(async () => (await mirrorsRunning()).length === NODES, 'no mirror lost', { timeoutMs: 20_000, intervalMs: 250 });
    t.diagnostic(`takeover of ${orphaned.length} nodes ${takeoverMs} ms after r1 stopped`);
  } finally {
    leaseWatch.abort();
  }
});
