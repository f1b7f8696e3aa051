// KubeMirrorClient against a real kube-apiserver + etcd, authenticated as the node
// (counterpart of pkg/kubelet/pod/mirror_client_test.go, plus what its fake client could not
// show: NodeRestriction and ServiceAccount admission, AlreadyExists, UID preconditions).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import type { CoreV1Api, V1Node } from '@kubernetes/client-node';

import { CONFIG_MIRROR_ANNOTATION_KEY } from '../../src/constants.js';
import { hasErrorCode } from '../../src/errors.js';
import { KubeMirrorClient, type MirrorNode } from '../../src/mirror/kube-mirror-client.js';
import type { Pod } from '../../src/pod/types.js';
import { useControlPlane, readPodIfExists } from '../helpers/control-plane.js';
import { staticPodObject } from '../helpers/manifests.js';

const NODE_A = 'node-a';
const NODE_B = 'node-b';
const HASH = '123456789';

const cp = useControlPlane({ nodes: [NODE_A, NODE_B], registerNodes: true });

const staticPod = (name: string, namespace: string, hash = HASH, node = NODE_A, mutate?: (pod: Pod) => void): Pod =>
  staticPodObject(name, namespace, { hash, node, ...(mutate ? { mutate } : {}) });

/** A node getter like MC-2's: records which node names it was asked for. */
function nodeGetter(result: () => Promise<MirrorNode | undefined>): {
  asked: string[];
  getNode: (name: string) => Promise<MirrorNode | undefined>;
} {
  const asked: string[] = [];
  return {
    asked,
    getNode: (name) => {
      asked.push(name);
      return result();
    },
  };
}

let nodes: Record<string, V1Node> | undefined;
async function node(name: string): Promise<V1Node> {
  nodes ??= {};
  nodes[name] ??= await cp.nodeApi(name).readNode({ name });
  return nodes[name]!;
}

function clientFor(nodeName: string, asNode = nodeName): KubeMirrorClient {
  return new KubeMirrorClient({ api: cp.nodeApi(asNode), nodeName, getNode: (n) => node(n) });
}

describe('MC-2 TestCreateMirrorPod', () => {
  it('MC-2 TestCreateMirrorPod/cannot get node', async () => {
    const getter = nodeGetter(() => Promise.reject(new Error('expected: cannot get node')));
    const client = new KubeMirrorClient({ api: cp.nodeApi(NODE_A), nodeName: NODE_A, getNode: getter.getNode });
    await assert.rejects(client.createMirrorPod(staticPod('test-pod-name', cp.namespace)), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_MIRROR_NODE_UID'));
      assert.match(err.message, /node "node-a".*expected: cannot get node/);
      return true;
    });
    assert.deepEqual(getter.asked, [NODE_A]);
    assert.equal(await readPodIfExists(cp.adminApi, cp.namespace, 'test-pod-name'), undefined);
  });

  it('MC-2 TestCreateMirrorPod/node missing UID', async () => {
    const getter = nodeGetter(async () => ({ metadata: { name: NODE_A } }));
    const client = new KubeMirrorClient({ api: cp.nodeApi(NODE_A), nodeName: NODE_A, getNode: getter.getNode });
    await assert.rejects(client.createMirrorPod(staticPod('test-pod-name', cp.namespace)), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_MIRROR_NODE_UID'));
      assert.match(err.message, /node "node-a": UID unset/);
      return true;
    });
    assert.deepEqual(getter.asked, [NODE_A]);
    assert.equal(await readPodIfExists(cp.adminApi, cp.namespace, 'test-pod-name'), undefined);
  });

  it('MC-2 TestCreateMirrorPod/node not found', async () => {
    const getter = nodeGetter(async () => undefined);
    const client = new KubeMirrorClient({ api: cp.nodeApi(NODE_A), nodeName: NODE_A, getNode: getter.getNode });
    await assert.rejects(client.createMirrorPod(staticPod('test-pod-name', cp.namespace)), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_MIRROR_NODE_UID'));
      assert.match(err.message, /node "node-a": node not found/);
      return true;
    });
  });

  it('MC-2 TestCreateMirrorPod/successfully fetched node', async () => {
    const realNode = await node(NODE_A);
    const getter = nodeGetter(async () => realNode);
    const client = new KubeMirrorClient({ api: cp.nodeApi(NODE_A), nodeName: NODE_A, getNode: getter.getNode });
    const pod = staticPod('test-pod-name', cp.namespace);
    const before = structuredClone(pod);

    await client.createMirrorPod(pod);

    assert.deepEqual(getter.asked, [NODE_A]);
    assert.deepEqual(pod, before, 'the static pod must not be changed');
    const mirror = await readPodIfExists(cp.adminApi, cp.namespace, 'test-pod-name');
    assert.ok(mirror, 'the mirror pod exists under the static pod name and namespace');
    assert.equal(mirror.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION_KEY], HASH);
    // Every static annotation is carried over.
    for (const [key, value] of Object.entries(pod.metadata!.annotations!)) {
      assert.equal(mirror.metadata?.annotations?.[key], value, key);
    }
    assert.deepEqual(mirror.metadata?.labels, { app: 'test-pod-name' });
    // Through JSON, so fields the client deserialised as undefined count as absent:
    // blockOwnerDeletion in particular must not be set.
    assert.deepEqual(JSON.parse(JSON.stringify(mirror.metadata?.ownerReferences)), [
      { apiVersion: 'v1', kind: 'Node', name: NODE_A, uid: realNode.metadata!.uid!, controller: true },
    ]);
    assert.equal(mirror.spec?.nodeName, NODE_A);
    assert.ok(mirror.metadata?.uid);
    assert.notEqual(mirror.metadata?.uid, pod.metadata?.uid, 'the API server assigns a new UID');
  });
});

describe('createMirrorPod against the API server', () => {
  it('a second create with the same hash succeeds and leaves one pod', async () => {
    const client = clientFor(NODE_A);
    await client.createMirrorPod(staticPod('twice', cp.namespace));
    const first = await readPodIfExists(cp.adminApi, cp.namespace, 'twice');
    await client.createMirrorPod(staticPod('twice', cp.namespace));
    const pods = await cp.adminApi.listNamespacedPod({ namespace: cp.namespace });
    assert.equal(pods.items.length, 1);
    assert.equal(pods.items[0]?.metadata?.uid, first?.metadata?.uid, 'the existing mirror is kept');
  });

  const holders: {
    desc: string;
    create: (namespace: string) => Promise<unknown>;
    expect: (err: unknown) => void;
  }[] = [
    {
      desc: 'an ordinary pod bound to the node',
      create: (namespace) =>
        cp.adminApi.createNamespacedPod({
          namespace,
          body: { metadata: { name: 'taken' }, spec: { nodeName: NODE_A, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } },
        }),
      expect: (err) => {
        assert.ok(hasErrorCode(err, 'KP_ERR_MIRROR_HASH_CONFLICT'));
        assert.match(err.message, /"taken_test-[0-9a-f]+".*another pod with a different hash .*"<not a mirror pod>"/);
      },
    },
    {
      desc: 'a mirror pod with another hash',
      create: (namespace) => clientFor(NODE_A).createMirrorPod(staticPod('taken', namespace, 'older-hash')),
      expect: (err) => {
        assert.ok(hasErrorCode(err, 'KP_ERR_MIRROR_HASH_CONFLICT'));
        assert.match(err.message, /"taken_test-[0-9a-f]+".*another pod with a different hash \("older-hash"\) holds the name/);
      },
    },
    {
      // The node may not even read a pod that is not bound to it (Node authorizer).
      desc: 'a pod on no node',
      create: (namespace) =>
        cp.adminApi.createNamespacedPod({
          namespace,
          // A scheduler name nobody answers to: the cluster's scheduler would otherwise
          // write its PodScheduled condition (no Node fits) and change the resourceVersion.
          body: { metadata: { name: 'taken' }, spec: { schedulerName: 'nobody', containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } },
        }),
      expect: (err) => {
        assert.ok(hasErrorCode(err, 'KP_ERR_MIRROR_CREATE'));
        assert.match(err.message, /"taken_test-[0-9a-f]+": a pod of that name already exists and reading it failed: .*forbidden/);
        assert.doesNotMatch(err.message, /HTTP-Code|Headers|Bearer/);
      },
    },
  ];
  for (const holder of holders) {
    it(`a create fails clearly when ${holder.desc} holds the name, and leaves it alone`, async () => {
      await holder.create(cp.namespace);
      const existing = await readPodIfExists(cp.adminApi, cp.namespace, 'taken');
      assert.ok(existing);

      await assert.rejects(clientFor(NODE_A).createMirrorPod(staticPod('taken', cp.namespace)), (err: unknown) => {
        holder.expect(err);
        return true;
      });
      const after = await readPodIfExists(cp.adminApi, cp.namespace, 'taken');
      assert.equal(after?.metadata?.uid, existing.metadata?.uid);
      assert.equal(after?.metadata?.resourceVersion, existing.metadata?.resourceVersion);
    });
  }

  const refused: { desc: string; mutate: (pod: Pod) => void; message: RegExp }[] = [
    {
      desc: 'a secret volume',
      mutate: (pod) => {
        pod.spec!.volumes = [{ name: 's', secret: { secretName: 'top-secret' } }];
      },
      message: /reference secrets/,
    },
    {
      desc: 'an env configMapKeyRef',
      mutate: (pod) => {
        pod.spec!.containers[0]!.env = [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }];
      },
      message: /reference configmaps/,
    },
    {
      desc: 'a service account',
      mutate: (pod) => {
        pod.spec!.serviceAccountName = 'builder';
      },
      message: /reference (a )?service account/,
    },
  ];
  for (const c of refused) {
    it(`the API server refuses a mirror of a static pod with ${c.desc}, and the error says why`, async () => {
      const pod = staticPod('refused', cp.namespace, HASH, NODE_A, c.mutate);
      await assert.rejects(clientFor(NODE_A).createMirrorPod(pod), (err: unknown) => {
        assert.ok(hasErrorCode(err, 'KP_ERR_MIRROR_CREATE'));
        assert.match(err.message, /failed to create mirror pod "refused_test-[0-9a-f]+": .*forbidden/);
        assert.match(err.message, c.message);
        assert.doesNotMatch(err.message, /HTTP-Code|Headers|Bearer/);
        return true;
      });
      assert.equal(await readPodIfExists(cp.adminApi, cp.namespace, 'refused'), undefined);
    });
  }

  it("node-a's credentials cannot create a mirror pod for node-b", async () => {
    const client = clientFor(NODE_B, NODE_A);
    await assert.rejects(client.createMirrorPod(staticPod('other-node', cp.namespace, HASH, NODE_B)), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_MIRROR_CREATE'));
      assert.match(err.message, /node "node-a" can only create pods with spec\.nodeName set to itself/);
      return true;
    });
    assert.equal(await readPodIfExists(cp.adminApi, cp.namespace, 'other-node'), undefined);
  });

  it('standalone (no API client): create does nothing', async () => {
    const getter = nodeGetter(async () => undefined);
    const client = new KubeMirrorClient({ nodeName: NODE_A, getNode: getter.getNode });
    await client.createMirrorPod(staticPod('standalone', cp.namespace));
    assert.deepEqual(getter.asked, []);
    assert.equal(await readPodIfExists(cp.adminApi, cp.namespace, 'standalone'), undefined);
  });
});

describe('deleteMirrorPod against the API server', () => {
  it('deletes with the right UID precondition; a stale UID resolves false and the pod stays', async () => {
    const client = clientFor(NODE_A);
    await client.createMirrorPod(staticPod('victim', cp.namespace));
    const mirror = await readPodIfExists(cp.adminApi, cp.namespace, 'victim');
    const fullName = `victim_${cp.namespace}`;

    assert.equal(await client.deleteMirrorPod(fullName, 'stale-uid-0000'), false);
    assert.equal((await readPodIfExists(cp.adminApi, cp.namespace, 'victim'))?.metadata?.uid, mirror?.metadata?.uid);

    assert.equal(await client.deleteMirrorPod(fullName, mirror!.metadata!.uid!), true);
    assert.equal(await readPodIfExists(cp.adminApi, cp.namespace, 'victim'), undefined, 'grace period 0 removes it at once');
  });

  it('deletes without a UID precondition', async () => {
    const client = clientFor(NODE_A);
    await client.createMirrorPod(staticPod('no-uid', cp.namespace));
    assert.equal(await client.deleteMirrorPod(`no-uid_${cp.namespace}`), true);
    assert.equal(await readPodIfExists(cp.adminApi, cp.namespace, 'no-uid'), undefined);
  });

  it('deleting a pod that does not exist resolves false', async () => {
    assert.equal(await clientFor(NODE_A).deleteMirrorPod(`ghost_${cp.namespace}`), false);
    assert.equal(await clientFor(NODE_A).deleteMirrorPod(`ghost_${cp.namespace}`, 'some-uid'), false);
  });

  for (const bad of ['barfoo', 'bar_foo_foo', '', 'bar_', '_foo']) {
    it(`deleting the unparsable full name ${JSON.stringify(bad)} rejects`, async () => {
      await assert.rejects(clientFor(NODE_A).deleteMirrorPod(bad), (err: unknown) => hasErrorCode(err, 'KP_ERR_POD_FULL_NAME'));
      const standalone = new KubeMirrorClient({ nodeName: NODE_A, getNode: async () => undefined });
      await assert.rejects(standalone.deleteMirrorPod(bad), (err: unknown) => hasErrorCode(err, 'KP_ERR_POD_FULL_NAME'));
    });
  }

  it("node-a's credentials cannot delete node-b's pods: resolves false, logs, and the pod stays", async () => {
    await clientFor(NODE_B).createMirrorPod(staticPod('b-pod', cp.namespace, HASH, NODE_B));
    const warnings: object[] = [];
    const client = new KubeMirrorClient({
      api: cp.nodeApi(NODE_A),
      nodeName: NODE_A,
      getNode: (n) => node(n),
      logger: { warn: (fields) => warnings.push(fields), debug: () => {} },
    });
    assert.equal(await client.deleteMirrorPod(`b-pod_${cp.namespace}`), false);
    assert.ok(await readPodIfExists(cp.adminApi, cp.namespace, 'b-pod'), "node-b's pod is still there");
    assert.equal(warnings.length, 1);
    const { err } = warnings[0] as { err?: unknown };
    assert.ok(err instanceof Error, 'err is logged as an Error');
    assert.match(err.message, /node "node-a" can only delete pods with spec.nodeName set to itself/);
  });

  it('standalone (no API client): delete resolves false', async () => {
    const client = new KubeMirrorClient({ nodeName: NODE_A, getNode: async () => undefined });
    assert.equal(await client.deleteMirrorPod(`anything_${cp.namespace}`, 'uid'), false);
  });
});
