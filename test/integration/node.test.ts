// Node registration and the node lease against a real kube-apiserver, authenticated as the
// node itself (NodeRestriction lets a node create and update only its own Node and Lease).
// Counterparts: pkg/kubelet/kubelet_node_status_test.go, pkg/kubelet/nodelease.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { release } from 'node:os';
import { CoordinationV1Api, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { createNodeLease, NODE_LEASE_NAMESPACE } from '../../src/node/node-lease.js';
import { createNodeRegistration, type NodeApi } from '../../src/node/node-registration.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';

const NODE_REG = 'node-reg';
const NODE_AGAIN = 'node-again';
const NODE_OTHER = 'node-other';
const NODE_IDLE = 'node-idle';

const cp = useControlPlane({ nodes: [NODE_REG, NODE_AGAIN, NODE_OTHER, NODE_IDLE] });

/** The node's own API, counting each call. */
function countingNodeApi(api: NodeApi): NodeApi & { count: Record<keyof NodeApi, number> } {
  const count = { readNode: 0, createNode: 0, patchNodeStatus: 0 };
  return {
    count,
    readNode: (...args) => (count.readNode++, api.readNode(...args)),
    createNode: (...args) => (count.createNode++, api.createNode(...args)),
    patchNodeStatus: (...args) => (count.patchNodeStatus++, api.patchNodeStatus(...args)),
  };
}

const TIMEOUT = { timeoutMs: 20_000, intervalMs: 50 };

async function readNodeOrUndefined(name: string): Promise<V1Node | undefined> {
  try {
    return await cp.adminApi.readNode({ name });
  } catch {
    return undefined;
  }
}

const readyCondition = (node: V1Node | undefined) => node?.status?.conditions?.find((c) => c.type === 'Ready');

describe('node registration and lease (real API server)', () => {
  it('registers the Node as the node itself, keeps it Ready and holds its lease', async () => {
    const registration = createNodeRegistration({
      nodeName: NODE_REG,
      api: cp.nodeApi(NODE_REG),
      internalIP: '127.0.0.1',
      nodeStatusUpdateFrequencyMs: 500,
      // Short, so that the test sees a report write that moves the heartbeat.
      nodeStatusReportFrequencyMs: 1000,
      random: () => 0.5,
    });
    const ready: V1Node[] = [];
    registration.onReady((n) => ready.push(n));
    const lease = createNodeLease({
      nodeName: NODE_REG,
      api: cp.kubeConfig(NODE_REG).makeApiClient(CoordinationV1Api),
      getNode: () => registration.getNode(),
      renewIntervalMs: 500,
    });
    assert.equal(await registration.getNode(), undefined, 'no Node before the first registration');
    registration.start();
    lease.start();
    try {
      const node = await waitFor(() => readNodeOrUndefined(NODE_REG), 'the Node object to be created', TIMEOUT);
      const uid = node.metadata?.uid;
      assert.ok(uid);
      assert.equal(node.metadata?.labels?.['kubernetes.io/hostname'], NODE_REG);
      assert.equal(node.metadata?.labels?.['kubernetes.io/os'], 'linux');
      assert.ok(node.metadata?.labels?.['kubernetes.io/arch']);
      await waitFor(() => ready.length === 1, 'the ready notification', TIMEOUT);
      assert.equal(ready[0]?.metadata?.uid, uid);

      const withStatus = await waitFor(
        async () => {
          const n = await readNodeOrUndefined(NODE_REG);
          return readyCondition(n)?.status === 'True' ? n : undefined;
        },
        'the Node to report Ready=True',
        TIMEOUT,
      );
      assert.equal(readyCondition(withStatus)?.reason, 'KubeletReady');
      for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) {
        assert.equal(withStatus.status?.conditions?.find((c) => c.type === type)?.status, 'False', type);
      }
      assert.equal(withStatus.status?.nodeInfo?.kubeletVersion, 'v1.34.0-kubelet-pods');
      assert.equal(withStatus.status?.capacity?.['pods'], '110');
      assert.ok(withStatus.status?.capacity?.['ephemeral-storage']);
      assert.deepEqual(withStatus.status?.capacity, withStatus.status?.allocatable);
      assert.equal(withStatus.status?.daemonEndpoints?.kubeletEndpoint?.Port, 10250);
      assert.equal(withStatus.status?.nodeInfo?.kernelVersion, release());
      assert.equal(withStatus.metadata?.labels?.['beta.kubernetes.io/os'], 'linux');
      assert.deepEqual(withStatus.status?.addresses?.map((a) => ({ type: a.type, address: a.address })), [
        { type: 'InternalIP', address: '127.0.0.1' },
        { type: 'Hostname', address: NODE_REG },
      ]);

      // Heartbeats move.
      const firstBeat = new Date(readyCondition(withStatus)?.lastHeartbeatTime ?? 0).getTime();
      await waitFor(
        async () => new Date(readyCondition(await readNodeOrUndefined(NODE_REG))?.lastHeartbeatTime ?? 0).getTime() > firstBeat,
        'the Ready heartbeat to advance',
        TIMEOUT,
      );
      assert.equal((await registration.getNode())?.metadata?.uid, uid, 'getNode serves the cached Node');

      // The lease: held by the node, 40 s, owned by the Node, renewed.
      const adminCoordination = kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(CoordinationV1Api);
      const readLease = () => adminCoordination.readNamespacedLease({ name: NODE_REG, namespace: NODE_LEASE_NAMESPACE }).catch(() => undefined);
      const held = await waitFor(
        async () => {
          const l = await readLease();
          return l?.metadata?.ownerReferences?.some((r) => r.uid === uid) ? l : undefined;
        },
        'the lease to exist with an owner reference to the Node',
        TIMEOUT,
      );
      assert.equal(held.spec?.holderIdentity, NODE_REG);
      assert.equal(held.spec?.leaseDurationSeconds, 40);
      assert.equal(held.spec?.acquireTime, undefined, 'no acquireTime, as the kubelet');
      assert.deepEqual(
        held.metadata?.ownerReferences?.map((r) => ({ apiVersion: r.apiVersion, kind: r.kind, name: r.name })),
        [{ apiVersion: 'v1', kind: 'Node', name: NODE_REG }],
      );
      const renewed = String(held.spec?.renewTime);
      await waitFor(async () => String((await readLease())?.spec?.renewTime) !== renewed, 'the lease to be renewed', TIMEOUT);
    } finally {
      await lease.stop();
      await registration.stop();
    }
  });

  it('writes the status only when it changes while idle, and puts a change by someone else right', async () => {
    const api = countingNodeApi(cp.nodeApi(NODE_IDLE));
    const registration = createNodeRegistration({
      nodeName: NODE_IDLE,
      api,
      nodeStatusUpdateFrequencyMs: 100,
      nodeStatusReportFrequencyMs: 600_000,
    });
    registration.start();
    try {
      await waitFor(() => api.count.patchNodeStatus === 1, 'the first status write', TIMEOUT);
      const before = await cp.adminApi.readNode({ name: NODE_IDLE });
      await waitFor(() => api.count.readNode >= 20, '20 status checks', TIMEOUT);
      assert.equal(api.count.patchNodeStatus, 1, 'no write while nothing changed');
      assert.equal((await cp.adminApi.readNode({ name: NODE_IDLE })).metadata?.resourceVersion, before.metadata?.resourceVersion);

      // The node lifecycle controller's way of marking a silent node: Ready Unknown.
      const conditions = (before.status?.conditions ?? []).map((c) =>
        c.type === 'Ready' ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' } : c,
      );
      await cp.adminApi.patchNodeStatus(
        { name: NODE_IDLE, body: { status: { conditions } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      await waitFor(async () => readyCondition(await readNodeOrUndefined(NODE_IDLE))?.status === 'True', 'Ready to be True again', TIMEOUT);
      assert.equal(api.count.patchNodeStatus, 2);
    } finally {
      await registration.stop();
    }
  });

  it('does not register the Node again after it is deleted, and takes back one created again', async () => {
    const api = countingNodeApi(cp.nodeApi(NODE_AGAIN));
    const registration = createNodeRegistration({
      nodeName: NODE_AGAIN,
      api,
      nodeStatusUpdateFrequencyMs: 100,
      retryInitialMs: 50,
    });
    const ready: string[] = [];
    registration.onReady((n) => ready.push(n.metadata?.uid ?? ''));
    registration.start();
    try {
      const first = await waitFor(() => readNodeOrUndefined(NODE_AGAIN), 'the Node to be created', TIMEOUT);
      await waitFor(() => api.count.patchNodeStatus === 1, 'the first status write', TIMEOUT);
      await cp.adminApi.deleteNode({ name: NODE_AGAIN });
      await waitFor(async () => (await registration.getNode()) === undefined, 'getNode to answer undefined', TIMEOUT);
      const readsAfter = api.count.readNode;
      await waitFor(() => api.count.readNode >= readsAfter + 20, '20 more status checks', TIMEOUT);
      assert.equal(api.count.createNode, 1, 'registered once per start, as the kubelet');
      assert.equal(await readNodeOrUndefined(NODE_AGAIN), undefined, 'the Node stays deleted');
      assert.deepEqual(ready, [first.metadata?.uid]);

      // Someone registers it again: the agent takes it, fires ready, and writes its status.
      const again = await cp.adminApi.createNode({ body: { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE_AGAIN } } });
      await waitFor(() => ready.length === 2, 'a second ready notification', TIMEOUT);
      assert.deepEqual(ready, [first.metadata?.uid, again.metadata?.uid]);
      await waitFor(
        async () => readyCondition(await readNodeOrUndefined(NODE_AGAIN))?.status === 'True',
        'the new Node to report Ready',
        TIMEOUT,
      );
      assert.equal(api.count.createNode, 1);
    } finally {
      await registration.stop();
    }
  });

  it("cannot touch another node's Node (NodeRestriction), and keeps retrying without throwing", async () => {
    // NODE_OTHER's credentials used for NODE_REG's name: every call is forbidden.
    const registration = createNodeRegistration({ nodeName: NODE_REG, api: cp.nodeApi(NODE_OTHER), nodeStatusUpdateFrequencyMs: 1000 });
    assert.equal(await registration.syncNow(), false);
    assert.equal(await registration.syncNow(), false);
  });
});
