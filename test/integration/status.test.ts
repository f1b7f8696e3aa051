// The mirror status writer against a real kube-apiserver, writing as the node: statuses of
// static pods land on their mirror pods' status subresource with the mirror UID as
// precondition, as the kubelet's status manager writes them (pkg/kubelet/status/
// status_manager.go), and NodeRestriction lets the node patch the status of its own pods.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PatchStrategy, setHeaderOptions, type CoreV1Api, type V1Node, type V1PodStatus } from '@kubernetes/client-node';
import { pino } from 'pino';
import { CONFIG_MIRROR_ANNOTATION_KEY, CONFIG_SOURCE_ANNOTATION_KEY } from '../../src/constants.js';
import { PodManager } from '../../src/pod/manager.js';
import type { Pod } from '../../src/pod/types.js';
import { createMirrorStatusWriter, type StatusWriteResult } from '../../src/status/mirror-status-writer.js';
import { createSimulatedStatusProvider } from '../../src/runtime/simulated-runtime.js';
import type { StatusProvider } from '../../src/status/status-provider.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { staticPodObject } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const NODE = 'node-status';
const cp = useControlPlane({ nodes: [NODE], registerNodes: true });
const TIMEOUT = { timeoutMs: 20_000, intervalMs: 50 };

const staticPod = (name: string, namespace: string, hash: string): Pod => staticPodObject(name, namespace, { hash, node: NODE });

/**
 * Creates the mirror of `pod` as the node, the way NodeRestriction allows: mirror annotation,
 * nodeName = the node, exactly one controller owner reference to the Node with its UID.
 */
async function createMirror(nodeApi: CoreV1Api, node: V1Node, pod: Pod): Promise<Pod> {
  const hash = pod.metadata?.uid ?? '';
  return nodeApi.createNamespacedPod({
    namespace: pod.metadata?.namespace ?? '',
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: pod.metadata?.name ?? '',
        namespace: pod.metadata?.namespace ?? '',
        annotations: { ...pod.metadata?.annotations, [CONFIG_MIRROR_ANNOTATION_KEY]: hash },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: node.metadata?.uid ?? '', controller: true }],
      },
      spec: structuredClone(pod.spec),
    },
  });
}

/** The mirror as the API-server source would hand it to the pod manager. */
const asSeenByPodManager = (mirror: Pod): Pod => ({
  ...mirror,
  metadata: { ...mirror.metadata, annotations: { ...mirror.metadata?.annotations, [CONFIG_SOURCE_ANNOTATION_KEY]: 'api' } },
});

const condition = (status: V1PodStatus | undefined, type: string) => status?.conditions?.find((c) => c.type === type)?.status;

describe('mirror status writer (real API server)', () => {
  it("writes a static pod's simulated start to its mirror pod as the node", async () => {
    const node = await cp.adminApi.readNode({ name: NODE });
    const nodeApi = cp.nodeApi(NODE);
    const pod = staticPod('web', cp.namespace, 'hash-web-1');
    const podManager = new PodManager();
    podManager.setPods([pod]);
    const provider = createSimulatedStatusProvider({ startDelayMs: 300, hostIP: '127.0.0.1' });
    const results: StatusWriteResult[] = [];
    const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api: nodeApi, onWrite: (r) => results.push(r) });
    writer.start();
    try {
      // No mirror yet: the status is kept, nothing is written.
      await waitFor(() => writer.getPodStatus('hash-web-1'), 'the status to be cached', TIMEOUT);
      assert.equal(results.length, 0, 'nothing written without a mirror');

      const mirror = await createMirror(nodeApi, node, pod);
      const mirrorUID = mirror.metadata?.uid ?? '';
      assert.notEqual(mirrorUID, 'hash-web-1', 'the API server assigns the mirror its own UID');
      podManager.addPod(asSeenByPodManager(mirror));
      writer.requestSync();

      const running = await waitFor(
        async () => {
          const p = await cp.adminApi.readNamespacedPod({ name: 'web', namespace: cp.namespace });
          return p.status?.phase === 'Running' ? p : undefined;
        },
        'the mirror pod to show phase Running',
        TIMEOUT,
      );
      assert.equal(running.metadata?.uid, mirrorUID);
      for (const type of ['Ready', 'ContainersReady', 'Initialized', 'PodScheduled']) {
        assert.equal(condition(running.status, type), 'True', type);
      }
      const cs = running.status?.containerStatuses?.[0];
      assert.equal(cs?.name, 'main');
      assert.equal(cs?.ready, true);
      assert.equal(cs?.started, true);
      assert.equal(cs?.restartCount, 0);
      assert.equal(cs?.containerID, 'kubelet-pods://hash-web-1/main');
      assert.ok(cs?.state?.running?.startedAt);
      assert.equal(running.status?.hostIP, '127.0.0.1');
      assert.ok(running.status?.startTime);
      assert.ok(results.includes('success'));

      // Nothing more to send: later batches (incremental and full) write nothing new.
      podManager.updatePod(asSeenByPodManager(running));
      // The read above can see the write before the writer has its response: let the batch in
      // flight finish (batches run one after another) before counting.
      await writer.syncBatch(false);
      const before = results.filter((r) => r === 'success').length;
      await writer.syncBatch(true);
      await writer.syncBatch(false);
      assert.equal(results.filter((r) => r === 'success').length, before, 'an unchanged status is not re-sent');
      assert.ok(!results.includes('error'), `no errors: ${results.join(',')}`);
    } finally {
      await writer.stop();
      provider.stop();
    }
  });

  it('writes nothing when the mirror UID maps to another static pod', async () => {
    // A stale pairing: the pod manager still holds static pod A paired with its old mirror
    // M1, while in the API server M1 was replaced by M2, the mirror of a newer incarnation B
    // with the same name. A's status must not land on B's mirror.
    const node = await cp.adminApi.readNode({ name: NODE });
    const nodeApi = cp.nodeApi(NODE);
    const ns = cp.namespace;
    const podA = staticPod('db', ns, 'hash-db-a');
    const podB = staticPod('db', ns, 'hash-db-b');
    const m1 = await createMirror(nodeApi, node, podA);
    const podManager = new PodManager();
    podManager.setPods([podA, asSeenByPodManager(m1)]);

    await nodeApi.deleteNamespacedPod({ name: 'db', namespace: ns, gracePeriodSeconds: 0 });
    await waitFor(
      () => cp.adminApi.readNamespacedPod({ name: 'db', namespace: ns }).then(() => false, () => true),
      'the old mirror to be gone',
      TIMEOUT,
    );
    const m2 = await createMirror(nodeApi, node, podB);
    podManager.updatePod(asSeenByPodManager(m2));
    podManager.addPod(podB);
    assert.equal(podManager.translatePodUID(m1.metadata?.uid ?? ''), 'hash-db-a', 'stale translation kept');
    assert.equal(podManager.translatePodUID(m2.metadata?.uid ?? ''), 'hash-db-b');

    // Statuses that tell A and B apart.
    const simulated = createSimulatedStatusProvider({ startDelayMs: 0 });
    const ipOf: Record<string, string> = { 'hash-db-a': '10.9.0.1', 'hash-db-b': '10.9.0.2' };
    const provider: StatusProvider = {
      statusFor: (pod, now) => {
        const ip = ipOf[pod.metadata?.uid ?? ''] ?? '10.9.9.9';
        return { ...simulated.statusFor(pod, now), podIP: ip, podIPs: [{ ip }] };
      },
    };
    const results: StatusWriteResult[] = [];
    const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api: nodeApi, onWrite: (r) => results.push(r) });

    await writer.syncBatch(false);
    // Only B's status was written (A's attempt would show as a 422 'conflict').
    assert.deepEqual(results, ['success']);
    assert.equal(writer.getPodStatus('hash-db-a'), undefined, "A's cached status was dropped");
    const onM2 = await cp.adminApi.readNamespacedPod({ name: 'db', namespace: ns });
    assert.equal(onM2.metadata?.uid, m2.metadata?.uid);
    assert.equal(onM2.status?.podIP, '10.9.0.2');
    assert.equal(onM2.status?.phase, 'Running');
    simulated.stop();
  });

  it('is refused by the UID precondition when the mirror was replaced since the watch showed it', async () => {
    const node = await cp.adminApi.readNode({ name: NODE });
    const nodeApi = cp.nodeApi(NODE);
    const ns = cp.namespace;
    const pod = staticPod('cache', ns, 'hash-cache');
    const m1 = await createMirror(nodeApi, node, pod);
    const podManager = new PodManager();
    podManager.setPods([pod, asSeenByPodManager(m1)]);
    // The API server replaces the mirror; the pod manager has not heard yet and still holds m1.
    await nodeApi.deleteNamespacedPod({ name: 'cache', namespace: ns, gracePeriodSeconds: 0 });
    await waitFor(
      () => nodeApi.readNamespacedPod({ name: 'cache', namespace: ns }).then(() => false, () => true),
      'the mirror to be deleted',
      TIMEOUT,
    );
    const replaced = await createMirror(nodeApi, node, pod);
    const simulated = createSimulatedStatusProvider({ startDelayMs: 0 });
    const results: StatusWriteResult[] = [];
    const logs: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });
    const writer = createMirrorStatusWriter({ podManager, statusProvider: simulated, api: nodeApi, logger, onWrite: (r) => results.push(r) });
    await writer.syncBatch(false);
    assert.deepEqual(results, ['conflict'], logs.join(''));
    const current = await cp.adminApi.readNamespacedPod({ name: 'cache', namespace: ns });
    assert.equal(current.metadata?.uid, replaced.metadata?.uid);
    assert.notEqual(current.status?.phase, 'Running', 'the replacement mirror was not written');
    simulated.stop();
  });

  it('keeps a condition another controller set on the mirror, without the pod manager knowing it', async () => {
    const node = await cp.adminApi.readNode({ name: NODE });
    const nodeApi = cp.nodeApi(NODE);
    const ns = cp.namespace;
    const pod = staticPod('gated', ns, 'hash-gated');
    const mirror = await createMirror(nodeApi, node, pod);
    const podManager = new PodManager();
    // The pod manager's copy predates the foreign condition.
    podManager.setPods([pod, asSeenByPodManager(mirror)]);
    await cp.adminApi.patchNamespacedPodStatus(
      { name: 'gated', namespace: ns, body: { status: { conditions: [{ type: 'example.com/gate', status: 'True', reason: 'Opened' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    // Pending first (Ready False with a reason), then Running, as two writes.
    const provider = createSimulatedStatusProvider({ startDelayMs: 300, hostIP: '127.0.0.1' });
    const results: StatusWriteResult[] = [];
    const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api: nodeApi, onWrite: (r) => results.push(r) });
    writer.start();
    try {
      const running = await waitFor(
        async () => {
          const p = await cp.adminApi.readNamespacedPod({ name: 'gated', namespace: ns });
          return p.status?.phase === 'Running' ? p : undefined;
        },
        'the mirror pod to show phase Running',
        TIMEOUT,
      );
      await writer.syncBatch(false); // let the batch in flight finish (see above)
      assert.deepEqual(results, ['success', 'success'], 'Pending, then Running');
      const gate = running.status?.conditions?.find((c) => c.type === 'example.com/gate');
      assert.equal(gate?.status, 'True', 'the foreign condition survived both writes');
      assert.equal(gate?.reason, 'Opened');
      for (const type of ['Ready', 'ContainersReady', 'Initialized', 'PodScheduled', 'PodReadyToStartContainers']) {
        assert.equal(condition(running.status, type), 'True', type);
      }
      const ready = running.status?.conditions?.find((c) => c.type === 'Ready');
      assert.equal(ready?.reason, undefined, "Pending's reason was cleared by the merge");
      const cs = running.status?.containerStatuses;
      assert.equal(cs?.length, 1);
      assert.equal(cs?.[0]?.ready, true);
      assert.ok(cs?.[0]?.state?.running?.startedAt);
      assert.equal(cs?.[0]?.state?.waiting, undefined);
    } finally {
      await writer.stop();
      provider.stop();
    }
  });

  it('replaces podIPs and hostIPs (merged by key on the server) instead of adding to them', async () => {
    const node = await cp.adminApi.readNode({ name: NODE });
    const nodeApi = cp.nodeApi(NODE);
    const ns = cp.namespace;
    const pod = staticPod('moving', ns, 'hash-moving');
    const mirror = await createMirror(nodeApi, node, pod);
    const podManager = new PodManager();
    podManager.setPods([pod, asSeenByPodManager(mirror)]);
    let ip = '10.1.0.1';
    // No change notifications: full batches poll it.
    const provider: StatusProvider = {
      statusFor: () => ({ phase: 'Running', hostIP: ip, hostIPs: [{ ip }], podIP: ip, podIPs: [{ ip }] }),
    };
    const results: StatusWriteResult[] = [];
    const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api: nodeApi, onWrite: (r) => results.push(r) });
    await writer.syncBatch(false);
    ip = '10.1.0.2';
    await writer.syncBatch(true);
    assert.deepEqual(results, ['success', 'success']);
    const current = await cp.adminApi.readNamespacedPod({ name: 'moving', namespace: ns });
    assert.deepEqual(current.status?.podIPs?.map((p) => p.ip), ['10.1.0.2']);
    assert.deepEqual(current.status?.hostIPs?.map((p) => p.ip), ['10.1.0.2']);
    assert.equal(current.status?.podIP, '10.1.0.2');
  });
});
