// The fleet's watches cut managedFields out of each event's text before parsing it
// (src/kube/managed-fields.ts, withoutManagedFieldsText), which relies on where the API server
// writes them. This reads raw watch events of the real kube-apiserver, as kubectl prints them,
// for a pod written by two managers (its creator and the node's status) and for a Node, and
// checks that the cut finds the array there and leaves exactly the trimmed object.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { withoutManagedFields, withoutManagedFieldsText } from '../../src/kube/managed-fields.js';
import { PatchStrategy, setHeaderOptions } from '../../src/kube/request-options.js';
import type { Pod } from '../../src/pod/types.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { kubectl } from '../helpers/kubectl.js';

const NODE = 'cut-node';
const cp = useControlPlane({ nodes: [NODE], registerNodes: true, scheduler: false });

async function rawWatchLines(path: string): Promise<string[]> {
  const text = await kubectl(cp.cluster.adminKubeconfig, 'get', '--raw', `${path}${path.includes('?') ? '&' : '?'}watch=true&resourceVersion=0&timeoutSeconds=1`);
  return text.split('\n').filter((line) => line.trim() !== '');
}

it("the real API server's watch events of a pod and a Node: the cut finds managedFields and leaves the object withoutManagedFields keeps", async () => {
  const ns = cp.namespace;
  await cp.adminApi.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 'cut-me', labels: { app: 'x' }, annotations: { spelled: ',"managedFields":[]},"spec":{}' } },
      spec: { nodeName: NODE, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
    },
  });
  await cp.nodeApi(NODE).patchNamespacedPodStatus(
    { name: 'cut-me', namespace: ns, body: { status: { phase: 'Running', podIP: '10.0.0.7', podIPs: [{ ip: '10.0.0.7' }], conditions: [{ type: 'Ready', status: 'True' }] } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch) as never,
  );
  // A Node created with fields of its own: one created bare (as registration here creates it)
  // never gets managedFields, even from later writes.
  const labelled = 'cut-labelled-node';
  await cp.adminApi.createNode({ body: { metadata: { name: labelled, labels: { cut: 'yes' } } } });
  await cp.adminApi.patchNodeStatus(
    { name: labelled, body: { status: { capacity: { cpu: '4', memory: '8Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch) as never,
  );

  const lines = [...(await rawWatchLines(`/api/v1/namespaces/${ns}/pods`)), ...(await rawWatchLines(`/api/v1/nodes?fieldSelector=metadata.name%3D${labelled}`))];
  assert.equal(lines.length, 2, lines.join('\n'));
  for (const line of lines) {
    const whole = JSON.parse(line) as { type: string; object: Pod };
    assert.equal(whole.type, 'ADDED');
    assert.ok((whole.object.metadata?.managedFields?.length ?? 0) >= 1, `${whole.object.kind} ${whole.object.metadata?.name} has managedFields`);
    const cut = withoutManagedFieldsText(line);
    assert.ok(cut.length < line.length, `the cut found managedFields in ${whole.object.kind} ${whole.object.metadata?.name}`);
    assert.deepEqual((JSON.parse(cut) as { object: Pod }).object, withoutManagedFields(whole.object));
  }
  const pod = (JSON.parse(withoutManagedFieldsText(lines[0]!)) as { object: Pod }).object;
  assert.deepEqual(pod.metadata?.annotations, { spelled: ',"managedFields":[]},"spec":{}' });
  assert.equal(pod.status?.podIP, '10.0.0.7');
});
