// Node registration and the node lease against a real kube-apiserver, authenticated as the
// node itself (NodeRestriction lets a node create and update only its own Node and Lease).
// Counterparts: pkg/kubelet/kubelet_node_status_test.go, pkg/kubelet/nodelease.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoordinationV1Api, PatchStrategy, setHeaderOptions, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { createNodeLease, NODE_LEASE_NAMESPACE } from '../../src/node/node-lease.js';
import { createNodeRegistration, type NodeApi } from '../../src/node/node-registration.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { podManifestYaml } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const NODE_REG = 'node-reg';
const NODE_AGAIN = 'node-again';
const NODE_OTHER = 'node-other';
const NODE_IDLE = 'node-idle';
const NODE_FULL = 'node-full';
const NODE_GONE = 'node-gone';

const cp = useControlPlane({ nodes: [NODE_REG, NODE_AGAIN, NODE_OTHER, NODE_IDLE, NODE_FULL, NODE_GONE] });

const agents: Agent[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** An agent for `node` with the given KubeletConfiguration fields and manifest directory. */
async function startAgent(node: string, fields: Record<string, unknown>, manifestDir: string): Promise<Agent> {
  const configFile = join(manifestDir, '..', `${node}-config.yaml`);
  await writeFile(configFile, stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', ...fields }));
  const { config } = await resolveRunConfig([
    '--kubeconfig', cp.cluster.nodeKubeconfigs[node]!,
    '--hostname-override', node,
    '--config', configFile,
    '--pod-manifest-path', manifestDir,
  ]);
  const agent = createAgent({ config, housekeepingIntervalMs: 200, listenPorts: { readOnly: 0, healthz: 0 } });
  agents.push(agent);
  await agent.start();
  return agent;
}

async function manifestDir(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'kp-node-'));
  dirs.push(root);
  const dir = join(root, 'manifests');
  await mkdir(dir);
  return dir;
}

async function mirrorsOn(node: string): Promise<V1Pod[]> {
  const list = await cp.adminApi.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
  return list.items.filter((p) => p.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined);
}

/**
 * The node's own API, counting each call when it starts (`count`) and when its answer is
 * back (`settled`): a read made after a write started may still see the object before it.
 */
function countingNodeApi(
  api: NodeApi,
): NodeApi & { count: Record<keyof NodeApi, number>; settled: Record<keyof NodeApi, number> } {
  const count = { readNode: 0, createNode: 0, patchNodeStatus: 0 };
  const settled = { ...count };
  const counted = <T>(name: keyof NodeApi, call: () => Promise<T>): Promise<T> => {
    count[name]++;
    return call().finally(() => settled[name]++);
  };
  return {
    count,
    settled,
    readNode: (...args) => counted('readNode', () => api.readNode(...args)),
    createNode: (...args) => counted('createNode', () => api.createNode(...args)),
    patchNodeStatus: (...args) => counted('patchNodeStatus', () => api.patchNodeStatus(...args)),
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
      // Kept without managedFields (src/kube/managed-fields.ts), renewed from that copy, and
      // the server's record of the fields stays: a PUT without it keeps the live object's.
      assert.equal(lease.currentLease()?.metadata?.managedFields, undefined);
      assert.equal((await registration.getNode())?.metadata?.managedFields, undefined);
      const afterRenewals = await readLease();
      const fields = JSON.stringify(afterRenewals?.metadata?.managedFields ?? []);
      assert.match(fields, /renewTime/, 'managedFields still record the renewed field');
      assert.match(fields, /holderIdentity/);
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
      await waitFor(() => api.settled.patchNodeStatus === 1, 'the first status write', TIMEOUT);
      const before = await cp.adminApi.readNode({ name: NODE_IDLE });
      await waitFor(() => api.count.readNode >= 20, '20 status checks', TIMEOUT);
      assert.equal(api.count.patchNodeStatus, 1, 'no write while nothing changed');
      // The controller manager may touch the Node (taints by condition), so its resourceVersion
      // can move; the heartbeat time only the node writes must not.
      const heartbeat = (n: V1Node | undefined): unknown => readyCondition(n)?.lastHeartbeatTime?.valueOf();
      assert.equal(heartbeat(await cp.adminApi.readNode({ name: NODE_IDLE })), heartbeat(before));

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
      await waitFor(() => api.settled.patchNodeStatus === 1, 'the first status write', TIMEOUT);
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

  it('the agent admits maxPods static pods and rejects the others (Failed, UnexpectedAdmissionError), mirrors for all', async () => {
    const dir = await manifestDir();
    const namespace = cp.namespace;
    for (const name of ['p1', 'p2', 'p3']) await writeFile(join(dir, `${name}.yaml`), podManifestYaml(name, namespace));
    await startAgent(NODE_FULL, { maxPods: 2, port: 10260 }, dir);
    const node = await waitFor(async () => {
      const n = await readNodeOrUndefined(NODE_FULL);
      return n?.status?.capacity?.['pods'] !== undefined ? n : undefined;
    }, 'the Node with its capacity', TIMEOUT);
    assert.equal(node.status?.capacity?.['pods'], '2');
    assert.equal(node.status?.allocatable?.['pods'], '2');
    assert.equal(node.status?.daemonEndpoints?.kubeletEndpoint?.Port, 10260);
    const settled = await waitFor(async () => {
      const mirrors = await mirrorsOn(NODE_FULL);
      const phases = mirrors.map((m) => `${m.metadata?.name}=${m.status?.phase}`).sort();
      return phases.join(',') === `p1-${NODE_FULL}=Running,p2-${NODE_FULL}=Running,p3-${NODE_FULL}=Failed` ? mirrors : undefined;
    }, 'two Running mirrors and one Failed', TIMEOUT);
    const rejected = settled.find((m) => m.metadata?.name === `p3-${NODE_FULL}`)!;
    assert.equal(rejected.status?.reason, 'UnexpectedAdmissionError');
    assert.match(rejected.status?.message ?? '', /^Pod was rejected: /);
    assert.equal(rejected.status?.podIP, undefined);
    assert.equal(rejected.status?.containerStatuses?.[0]?.state?.terminated?.reason, 'ContainerStatusUnknown');
  });

  it('the agent creates no mirrors after its Node is deleted, and does not register it again', async () => {
    const dir = await manifestDir();
    const namespace = cp.namespace;
    await writeFile(join(dir, 'before.yaml'), podManifestYaml('before', namespace));
    const agent = await startAgent(NODE_GONE, { nodeStatusUpdateFrequency: '200ms', syncFrequency: '300ms' }, dir);
    await waitFor(async () => (await mirrorsOn(NODE_GONE)).length === 1, 'the first mirror', TIMEOUT);
    await cp.adminApi.deleteNode({ name: NODE_GONE });
    await waitFor(async () => (await readNodeOrUndefined(NODE_GONE)) === undefined, 'the Node to be gone', TIMEOUT);
    await writeFile(join(dir, 'after.yaml'), podManifestYaml('after', namespace));
    // Each resync (300 ms) tries the mirror and skips it for want of a Node; fifteen such
    // skips span more than twenty status periods (the Node used to be back within 1.7 s).
    const skipped = async (): Promise<number> => {
      const text = await (await fetch(`http://127.0.0.1:${agent.addresses().readOnly!.port}/metrics`)).text();
      return Number(/^kubelet_pods_mirror_operations_total\{operation="create",result="skipped"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    await waitFor(async () => {
      assert.equal(await readNodeOrUndefined(NODE_GONE), undefined, 'the Node is not registered again');
      return (await skipped()) >= 15;
    }, 'fifteen skipped mirror creations', TIMEOUT);
    await agent.mirrorsIdle();
    const names = (await mirrorsOn(NODE_GONE)).filter((m) => !m.metadata?.deletionTimestamp).map((m) => m.metadata?.name);
    assert.ok(!names.includes(`after-${NODE_GONE}`), 'no mirror while the Node is gone');
  });
});
