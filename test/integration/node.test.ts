// Node registration and the node lease against a real kube-apiserver, authenticated as the
// node itself (NodeRestriction lets a node create and update only its own Node and Lease).
// Counterparts: pkg/kubelet/kubelet_node_status_test.go, pkg/kubelet/nodelease.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoordinationV1Api, type V1Node } from '@kubernetes/client-node';
import { createNodeLease, NODE_LEASE_NAMESPACE } from '../../src/node/node-lease.js';
import { createNodeRegistration } from '../../src/node/node-registration.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';

const NODE_REG = 'node-reg';
const NODE_AGAIN = 'node-again';
const NODE_OTHER = 'node-other';

const cp = useControlPlane({ nodes: [NODE_REG, NODE_AGAIN, NODE_OTHER] });

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
      assert.deepEqual(
        withStatus.status?.addresses?.map((a) => a.type),
        ['InternalIP', 'Hostname'],
      );

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

  it('registers the Node again after it is deleted', async () => {
    const registration = createNodeRegistration({
      nodeName: NODE_AGAIN,
      api: cp.nodeApi(NODE_AGAIN),
      nodeStatusUpdateFrequencyMs: 300,
      retryInitialMs: 50,
    });
    const ready: string[] = [];
    registration.onReady((n) => ready.push(n.metadata?.uid ?? ''));
    registration.start();
    try {
      const first = await waitFor(() => readNodeOrUndefined(NODE_AGAIN), 'the Node to be created', TIMEOUT);
      await cp.adminApi.deleteNode({ name: NODE_AGAIN });
      const second = await waitFor(
        async () => {
          const n = await readNodeOrUndefined(NODE_AGAIN);
          return n && n.metadata?.uid !== first.metadata?.uid ? n : undefined;
        },
        'the Node to be registered again with a new UID',
        TIMEOUT,
      );
      await waitFor(() => ready.length === 2, 'a second ready notification', TIMEOUT);
      assert.deepEqual(ready, [first.metadata?.uid, second.metadata?.uid]);
      await waitFor(
        async () => (await registration.getNode())?.metadata?.uid === second.metadata?.uid,
        'getNode to serve the new Node',
        TIMEOUT,
      );
      await waitFor(
        async () => readyCondition(await readNodeOrUndefined(NODE_AGAIN))?.status === 'True',
        'the new Node to report Ready',
        TIMEOUT,
      );
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
