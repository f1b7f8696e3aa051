// A fleet file's `scenarios:` (docs/fleet.md, "Scenarios") on the real control plane: one list
// for the whole fleet, its node selectors picking pools by the templates' labels. The crash
// loop reaches only the pods on pool a's nodes (through the fleet's one status provider), the
// NotReady window only pool b's Nodes (through each node's agent).
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { createFleet, type Fleet } from '../../src/fleet/fleet.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { podManifestYaml as manifest } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const cp = useControlPlane({ nodes: [] });
let fleet: Fleet | undefined;
after(async () => fleet?.stop());

const MIRROR = 'kubernetes.io/config.mirror';

it('fleet scenarios: pool a\'s crashy pods crash-loop, pool b\'s Nodes go NotReady in their window, nothing else', async () => {
  const ns = cp.namespace;
  const dir = await mkdtemp(join(tmpdir(), 'fleet-scenarios-'));
  const shared = join(dir, 'shared');
  await mkdir(shared);
  await writeFile(join(shared, 'crashy.yaml'), manifest('crashy', ns, 'registry.k8s.io/pause:3.10', { terminationGracePeriodSeconds: 1 }));
  const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
  const config = resolveFleetConfig(
    {
      kubeconfig,
      templates: [
        { name: 'fsa-{i}', count: 2, staticPodPath: shared, labels: { pool: 'a' }, kubelet: { nodeStatusUpdateFrequency: '2s' } },
        { name: 'fsb-{i}', count: 2, staticPodPath: shared, labels: { pool: 'b' }, kubelet: { nodeStatusUpdateFrequency: '2s' } },
      ],
      scenarios: [
        { name: 'crash-a', match: { labels: { app: 'crashy' }, nodeLabels: { pool: 'a' } }, exit: { code: 2, after: '1s' } },
        { name: 'b-down', match: { nodeLabels: { pool: 'b' } }, nodeCondition: { type: 'NotReady', from: '6s', until: '30s' } },
      ],
    },
    {},
  );
  fleet = await createFleet({ config, readOnlyPort: 0, shutdownTimeoutMs: 2000 });
  await fleet.start();

  const mirrors = async (): Promise<V1Pod[]> => {
    const list = await cp.adminApi.listNamespacedPod({ namespace: ns });
    return list.items.filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined);
  };
  const main = (p: V1Pod) => p.status?.containerStatuses?.[0];
  const looping = await waitFor(async () => {
    const pods = (await mirrors()).filter((p) => p.spec?.nodeName?.startsWith('fsa-'));
    return pods.length === 2 && pods.every((p) => main(p)?.state?.waiting?.reason === 'CrashLoopBackOff') ? pods : undefined;
  }, 'both pool a mirrors in CrashLoopBackOff', { timeoutMs: 60_000, intervalMs: 500 });
  for (const p of looping!) assert.deepEqual([main(p)?.lastState?.terminated?.exitCode, main(p)?.restartCount], [2, 1]);

  const ready = (n: V1Node) => n.status?.conditions?.find((c) => c.type === 'Ready');
  const nodes = async (): Promise<V1Node[]> => (await cp.adminApi.listNode()).items.filter((n) => /^fs[ab]-/.test(n.metadata?.name ?? ''));
  const down = await waitFor(async () => {
    const list = await nodes();
    const b = list.filter((n) => n.metadata!.name!.startsWith('fsb-'));
    return b.length === 2 && b.every((n) => ready(n)?.status === 'False') ? list : undefined;
  }, 'both pool b Nodes NotReady', { timeoutMs: 40_000, intervalMs: 250 });
  for (const n of down!) {
    const want = n.metadata!.name!.startsWith('fsb-') ? ['False', 'KubeletNotReady', 'container runtime is down'] : ['True', 'KubeletReady', 'kubelet is posting ready status'];
    assert.deepEqual([ready(n)?.status, ready(n)?.reason, ready(n)?.message], want, n.metadata!.name);
  }

  // Pool b's pods were not picked by the crash scenario: still on their first run.
  const b = (await mirrors()).filter((p) => p.spec?.nodeName?.startsWith('fsb-'));
  assert.equal(b.length, 2);
  for (const p of b) {
    assert.equal(main(p)?.restartCount, 0, p.metadata?.name);
    assert.ok(main(p)?.state?.running, p.metadata?.name);
  }
});
