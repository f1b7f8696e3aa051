// src/fleet/shared-pod-parts.ts: the fleet's watch of pods holds the parts pods of one template
// have in common once; each pod keeps its own top level and metadata.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../../src/pod/types.js';
import { sharePodParts } from '../../../src/fleet/shared-pod-parts.js';
import { createSharedValues } from '../../../src/values/shared-values.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

/** A pod of a ReplicaSet as the API server sends it: a fresh tree every time. */
function replicaPod(name: string, node: string): Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      resourceVersion: '7',
      labels: { app: 'web', 'pod-template-hash': '5d4f' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d4f', uid: 'rs-uid', controller: true }],
    },
    spec: {
      nodeName: node,
      containers: [{ name: 'main', image: 'nginx:1.27', resources: {} }],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    },
    status: { phase: 'Pending', qosClass: 'BestEffort' },
  };
}

describe('shared pod parts', () => {
  test('pods of one template, fresh from the wire one after another, share their common parts; metadata stays their own', () => {
    const values = createSharedValues();
    const [a, b, c] = [replicaPod('web-0', 'n1'), replicaPod('web-1', 'n1'), replicaPod('web-2', 'n1'), replicaPod('web-3', 'n2')]
      .map((pod) => sharePodParts(values, pod))
      .slice(1) as [Pod, Pod, Pod];
    // The first of a kind is seen once; the second enters the table; from then on they share.
    // Same node: the whole spec is one object; another node: all but the node name.
    assert.equal(a.spec, b.spec);
    assert.notEqual(a.spec, c.spec);
    assert.equal(a.spec!.containers, c.spec!.containers);
    assert.equal(a.spec!.tolerations, c.spec!.tolerations);
    assert.equal(a.status, c.status);
    assert.equal(a.metadata!.labels, c.metadata!.labels);
    assert.equal(a.metadata!.ownerReferences, c.metadata!.ownerReferences);
    assert.notEqual(a.metadata, b.metadata);
    assert.ok(Object.isFrozen(a.spec));
    assert.ok(!Object.isFrozen(a.metadata) && !Object.isFrozen(a));
    assert.equal(c.spec!.nodeName, 'n2');
  });

  test('a pod being deleted is not walked into the table: its parts stay its own and the table learns nothing', () => {
    const values = createSharedValues();
    const deleting = (name: string): Pod => {
      const pod = replicaPod(name, 'n1');
      pod.metadata!.deletionTimestamp = new Date('2026-11-29T10:00:00Z');
      return pod;
    };
    const [a, b] = [deleting('web-0'), deleting('web-1'), deleting('web-2')].map((pod) => sharePodParts(values, pod)).slice(1) as [Pod, Pod];
    assert.notEqual(a.spec, b.spec);
    assert.ok(!Object.isFrozen(a.spec));
    // Had the deleted ones been walked, the first live pod would take their spec from the table.
    const [live, next, third] = ['web-3', 'web-4', 'web-5'].map((name) => sharePodParts(values, replicaPod(name, 'n1'))) as [Pod, Pod, Pod];
    assert.notEqual(live.spec, a.spec);
    assert.notEqual(live.spec, b.spec);
    assert.notEqual(live.spec, next.spec, 'the first live pod of the kind is the first the table sees');
    assert.equal(third.spec, next.spec);
  });

  test("the metadata's namespace and creation time are held once, the values unchanged", async () => {
    // Fresh from the wire, as the watch decodes them: every string a copy of its own. Names and
    // UIDs as long as real ones: V8 interns the short strings JSON.parse makes, and the growth of
    // its table of them moved the readings between processes.
    const metadataOnly = (i: number): Pod =>
      JSON.parse(
        JSON.stringify({
          metadata: {
            name: `web-5d4f8c7b9-${i}`,
            namespace: 'simulated-nodes-workload',
            uid: `6f1c2d3e-0000-4000-8000-${String(i).padStart(12, '0')}`,
            creationTimestamp: '2026-11-29T16:19:13Z',
          },
        }),
      ) as Pod;
    const values = createSharedValues();
    const shared = await retainedBytesPer(50_000, (i) => sharePodParts(values, metadataOnly(i)));
    const own = await retainedBytesPer(50_000, (i) => metadataOnly(i));
    // The namespace and the time are 40 bytes a copy each.
    assert.ok(own - shared >= 60, `${shared.toFixed(0)} bytes a pod shared, ${own.toFixed(0)} as decoded`);
    const pod = sharePodParts(values, metadataOnly(3));
    assert.deepEqual(pod, metadataOnly(3));
  });
});
