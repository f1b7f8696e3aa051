// Nodes an autoscaler creates, taken over by the fleet (docs/fleet.md, "Nodes others create"),
// on the real control plane: a script acting as Karpenter's and cluster-autoscaler's kwok
// providers creates Nodes in waves, with the labels, annotations, taints, resources and
// providerID those set; each becomes Ready with them intact and runs a pod bound to it; a Node
// that stops matching is let go; deleted Nodes are released, and the API server's audit log
// shows that nothing was written for them afterwards.
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CoordinationV1Api, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { createFleet, type Fleet } from '../../src/fleet/fleet.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { PatchStrategy, setHeaderOptions } from '../../src/kube/request-options.js';
import { micros, readAuditLog, writeAuditPolicy, type AuditEvent } from '../helpers/audit-log.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { podManifestYaml as manifest } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const cp = useControlPlane({ nodes: [], auditPolicyFile: writeAuditPolicy() });
const fleets: Fleet[] = [];
after(async () => {
  await Promise.all(fleets.map((f) => f.stop()));
});

const KWOK = 'kwok.x-k8s.io/node';
const TAINT = { key: 'autoscaler.example/simulated', value: 'yes', effect: 'NoSchedule' };
const suffix = (): string => randomBytes(3).toString('hex');

/** A Node as Karpenter's kwok provider creates it (kwok/cloudprovider/cloudprovider.go, `toNode`). */
function karpenterNode(name: string): V1Node {
  return {
    metadata: {
      name,
      labels: { 'karpenter.sh/nodepool': 'default', 'node.kubernetes.io/instance-type': 'c-4x-amd64-linux', 'topology.kubernetes.io/zone': 'test-zone-a', 'kubernetes.io/hostname': name, [KWOK]: 'fake' },
      annotations: { [KWOK]: 'fake' },
    },
    // Karpenter's own start-up taint is karpenter.sh/unregistered:NoExecute, which Karpenter
    // removes; no Karpenter runs here, so the script's taint is one a pod can tolerate.
    spec: { providerID: `kwok://${name}`, taints: [TAINT] },
    status: { capacity: { cpu: '4', memory: '16Gi', pods: '20', 'ephemeral-storage': '20Gi' }, allocatable: { cpu: '3900m', memory: '15Gi', pods: '20', 'ephemeral-storage': '18Gi' }, phase: 'Pending' },
  };
}

/** A Node as cluster-autoscaler's kwok provider creates it from its node group's template (kwok_nodegroups.go, `IncreaseSize`). */
function autoscalerNode(name: string, labels: Record<string, string>): V1Node {
  return {
    metadata: { name, labels: { 'kwok-nodegroup': 'ng1', 'kubernetes.io/hostname': name, ...labels }, annotations: { [KWOK]: 'fake', 'cluster-autoscaler.kwok.nodegroup/name': 'ng1' } },
    spec: { providerID: `kwok:${name}`, taints: [TAINT] },
    status: { capacity: { cpu: '2', memory: '8Gi', pods: '30' }, allocatable: { cpu: '2', memory: '8Gi', pods: '30' } },
  };
}

const ready = (n: V1Node | undefined): boolean => n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** A pod bound to `node` by the script (as the scheduler would), tolerating the autoscaler's taint. */
function boundPod(name: string, namespace: string, node: string): V1Pod {
  return {
    metadata: { name, namespace },
    spec: { nodeName: node, tolerations: [{ key: TAINT.key, operator: 'Exists' }], containers: [{ name: 'c', image: 'nginx:1.27', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
  };
}

/** Writes the fleet sent about `node` (its Node, Lease, mirror pods, Events) received after `since` (µs). */
function fleetWritesAbout(log: AuditEvent[], node: string, since: number): AuditEvent[] {
  return log.filter(
    (e) =>
      (e.userAgent ?? '').includes(' kubelet-pods/fleet') &&
      micros(e.requestReceivedTimestamp) > since &&
      (e.objectRef?.name === node || (e.objectRef?.name ?? '').includes(`-${node}`) || (e.objectRef?.name ?? '').startsWith(`${node}.`)),
  );
}

describe('the fleet adopts the Nodes autoscalers create', () => {
  it('waves of Nodes become Ready with their creator\'s labels, taints, resources and providerID, run their pods, and are let go when deleted or no longer selected', async (t) => {
    const ns = cp.namespace;
    const dir = await mkdtemp(join(tmpdir(), 'fleet-adopt-'));
    const shared = join(dir, 'shared');
    await mkdir(shared);
    await writeFile(join(shared, 'agent.yaml'), manifest('agent', ns));
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
    const config = resolveFleetConfig(
      {
        kubeconfig,
        templates: [
          { name: 'fa-named-{i}', count: 2, staticPodPath: shared },
          // kwok's default way (both providers annotate their Nodes so).
          { annotationSelector: `${KWOK}=fake`, labelSelector: '!fa-ignore', staticPodPath: shared },
        ],
      },
      {},
    );
    // When each node's agent says it has stopped: from then on (its calls in flight answered)
    // nothing may be written for it. A renewal sent just before the release may still reach
    // the API server after the fleet stopped listing the node.
    const stoppedAt = new Map<string, number>();
    const note = (obj: object, msg?: string): void => {
      const node = (obj as { node?: unknown }).node;
      if (typeof node === 'string' && msg?.startsWith('agent stopped')) stoppedAt.set(node, Date.now() * 1000);
    };
    const fleet = await createFleet({ config, readOnlyPort: 0, shutdownTimeoutMs: 2000, logger: { debug: note, info: note, warn: note, error: note } });
    fleets.push(fleet);
    await fleet.start();
    const api = cp.adminApi;
    await waitFor(async () => (await api.listNode()).items.filter((n) => n.metadata?.name?.startsWith('fa-named-') && ready(n)).length === 2, 'the named nodes Ready', { timeoutMs: 60_000, intervalMs: 250 });

    // Wave 1, Karpenter's way; wave 2, cluster-autoscaler's; one Node of wave 2 gets a pod
    // bound before it matches, and matches only once the label that keeps it out is removed.
    const wave1 = [1, 2, 3].map(() => karpenterNode(`karp-${suffix()}`));
    const wave2 = [1, 2].map(() => autoscalerNode(`ng1-${suffix()}`, {}));
    const late = autoscalerNode(`ng1-late-${suffix()}`, { 'fa-ignore': 'yes' });
    const adopted = [...wave1, ...wave2, late].map((n) => n.metadata!.name!);
    const creator = new Map([...wave1, ...wave2, late].map((n) => [n.metadata!.name!, n]));

    for (const [i, wave] of [wave1, wave2].entries()) {
      const t0 = performance.now();
      await Promise.all(wave.map((body) => api.createNode({ body })));
      const names = wave.map((n) => n.metadata!.name!);
      await waitFor(async () => (await Promise.all(names.map((name) => api.readNode({ name })))).every(ready), `wave ${i + 1} Ready`, { timeoutMs: 30_000, intervalMs: 100 });
      t.diagnostic(`wave ${i + 1}: ${names.length} Nodes Ready ${((performance.now() - t0) / 1000).toFixed(1)} s after their creation`);
    }
    await api.createNode({ body: late });
    await api.createNamespacedPod({ namespace: ns, body: boundPod('before-adoption', ns, late.metadata!.name!) });
    await delay(1000);
    assert.equal(fleet.running().includes(late.metadata!.name!), false, 'a Node the selector excludes is not adopted');
    await api.patchNode({ name: late.metadata!.name!, body: { metadata: { labels: { 'fa-ignore': null } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch) as never);
    await waitFor(async () => ready(await api.readNode({ name: late.metadata!.name! })), 'the late Node Ready once it matches', { timeoutMs: 30_000, intervalMs: 100 });
    assert.deepEqual(fleet.adopted().sort(), [...adopted].sort());
    assert.deepEqual(fleet.running().sort(), ['fa-named-0', 'fa-named-1', ...adopted].sort());

    // What the creator set is intact; the status is the node's.
    for (const name of adopted) {
      const n = await api.readNode({ name });
      const want = creator.get(name)!;
      for (const [k, v] of Object.entries(want.metadata!.labels!)) if (k !== 'fa-ignore') assert.equal(n.metadata?.labels?.[k], v, `${name}: label ${k}`);
      for (const [k, v] of Object.entries(want.metadata!.annotations!)) assert.equal(n.metadata?.annotations?.[k], v, `${name}: annotation ${k}`);
      assert.equal(n.spec?.providerID, want.spec!.providerID);
      assert.deepEqual({ ...n.spec?.taints?.find((x) => x.key === TAINT.key) }, TAINT, `${name}: the creator's taint`);
      assert.deepEqual(n.status?.capacity, want.status!.capacity, `${name}: capacity`);
      assert.deepEqual(n.status?.allocatable, want.status!.allocatable, `${name}: allocatable`);
      assert.match(n.status?.nodeInfo?.kubeletVersion ?? '', /kubelet-pods/);
      assert.ok(n.status?.addresses?.some((a) => a.type === 'Hostname' && a.address === name), `${name}: the node's addresses`);
    }

    // A pod bound to each of some adopted nodes runs, and so does the one bound before adoption.
    const runOn = [wave1[0]!, wave2[0]!].map((n) => n.metadata!.name!);
    for (const [i, node] of runOn.entries()) await api.createNamespacedPod({ namespace: ns, body: boundPod(`work-${i}`, ns, node) });
    await waitFor(
      async () => {
        const pods = await Promise.all(['work-0', 'work-1', 'before-adoption'].map((name) => api.readNamespacedPod({ namespace: ns, name })));
        return pods.every((p) => p.status?.phase === 'Running');
      },
      'the bound pods Running',
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    // The template's static pods run there too (a mirror per adopted node).
    await waitFor(
      async () => {
        const mirrors = await Promise.all(adopted.map((node) => api.readNamespacedPod({ namespace: ns, name: `agent-${node}` }).catch(() => undefined)));
        return mirrors.every((m) => m?.status?.phase === 'Running');
      },
      'a Running mirror per adopted node',
      { timeoutMs: 30_000, intervalMs: 250 },
    );

    // A Node that no longer matches is let go: its agent stops, the Node stays.
    const unmatched = wave2[1]!.metadata!.name!;
    await api.patchNode({ name: unmatched, body: { metadata: { labels: { 'fa-ignore': 'yes' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch) as never);
    await waitFor(() => !fleet.running().includes(unmatched) && stoppedAt.has(unmatched), 'the unmatched node released and its agent stopped', { timeoutMs: 10_000, intervalMs: 50 });

    // The autoscaler scales down: every adopted Node still selected is deleted.
    const deleted = adopted.filter((n) => n !== unmatched);
    await Promise.all(deleted.map((name) => api.deleteNode({ name })));
    await waitFor(() => deleted.every((name) => !fleet.running().includes(name) && stoppedAt.has(name)), 'the deleted nodes released and their agents stopped', { timeoutMs: 10_000, intervalMs: 20 });
    const releasedAt = new Map([unmatched, ...deleted].map((name) => [name, stoppedAt.get(name)!]));
    assert.deepEqual(fleet.running().sort(), ['fa-named-0', 'fa-named-1'], 'the agents are back to the named nodes');
    assert.deepEqual(fleet.adopted(), []);
    const metrics = await (await fetch(`http://127.0.0.1:${fleet.address()!.port}/metrics`)).text();
    for (const name of adopted) assert.doesNotMatch(metrics, new RegExp(`node="${name}"`), `${name}: its metrics are gone`);

    // A window longer than the Lease renewal and Node status periods (10 s): nothing is
    // written for a released node, while the named nodes keep renewing their Leases.
    await delay(12_000);
    const log = readAuditLog(cp.cluster.auditLogFile!);
    for (const [name, at] of releasedAt) {
      const writes = fleetWritesAbout(log, name, at);
      assert.deepEqual(writes.map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}`), [], `${name}: written after its release`);
      assert.ok(fleetWritesAbout(log, name, 0).length > 0, `${name}: the audit log shows its writes while adopted`);
    }
    const namedRenewals = log.filter((e) => e.objectRef?.resource === 'leases' && e.objectRef.name === 'fa-named-0' && micros(e.requestReceivedTimestamp) > Math.min(...releasedAt.values()));
    assert.ok(namedRenewals.length > 0, 'the named node renewed its Lease in the window (the log is being written)');
    assert.equal((await api.readNode({ name: unmatched })).metadata?.name, unmatched, 'the unmatched Node is left in place');
  });

  it('with replicas sharing by Lease, each adopted node runs in the one replica that holds its Lease', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-adopt-shards-'));
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
    const replicas = new Map<string, Fleet>();
    for (const id of ['ra', 'rb']) {
      const fleet = await createFleet({ config: resolveFleetConfig({ kubeconfig, shardByLease: id, templates: [{ labelSelector: 'fa-shards=yes' }] }, {}), readOnlyPort: 0, shutdownTimeoutMs: 2000 });
      fleets.push(fleet);
      replicas.set(id, fleet);
    }
    await Promise.all([...replicas.values()].map((f) => f.start()));
    const names = Array.from({ length: 12 }, () => `shard-${suffix()}`);
    // Not annotated for kwok: the first test's fleet (still running) selects those.
    const body = (name: string): V1Node => {
      const n = autoscalerNode(name, { 'fa-shards': 'yes' });
      delete n.metadata!.annotations![KWOK];
      return n;
    };
    await Promise.all(names.map((name) => cp.adminApi.createNode({ body: body(name) })));
    const running = (): string[] => [...replicas.values()].flatMap((f) => f.running());
    await waitFor(() => running().length === names.length, 'every node run by some replica', { timeoutMs: 30_000, intervalMs: 100 }).catch((err: Error) => {
      throw new Error(`${err.message}; ${[...replicas].map(([id, f]) => `${id} runs [${f.running().join()}] of adopted [${f.adopted().join()}]`).join('; ')}`);
    });
    assert.equal(new Set(running()).size, names.length, 'no node run by two replicas');
    const leases = await kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: 'kube-node-lease' });
    for (const [id, fleet] of replicas) {
      assert.ok(fleet.running().length > 0, `${id} runs none of the 12 nodes`);
      assert.deepEqual(fleet.adopted().sort(), [...names].sort(), `${id} follows every selected Node`);
      for (const name of fleet.running()) assert.equal(leases.items.find((l) => l.metadata?.name === name)?.spec?.holderIdentity, id, `${name}: its Lease names the replica that runs it`);
    }
    t.diagnostic(`split: ${[...replicas].map(([id, f]) => `${id} ${f.running().length}`).join(', ')}`);
    await waitFor(async () => (await Promise.all(names.map((name) => cp.adminApi.readNode({ name })))).every(ready), 'all Ready', { timeoutMs: 30_000, intervalMs: 100 });
    await Promise.all(names.map((name) => cp.adminApi.deleteNode({ name })));
    await waitFor(() => running().length === 0 && [...replicas.values()].every((f) => f.adopted().length === 0), 'every replica let them go', { timeoutMs: 10_000, intervalMs: 50 });
  });
});
