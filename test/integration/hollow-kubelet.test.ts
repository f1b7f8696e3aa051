// The harness for differential tests: the real kubelet (v1.34, kubemark's fake runtime) on
// the real control plane, started with startHollowKubelet. It must behave as the kubelet the
// differential suite takes as its judge: registers its Node (Ready), renews its Lease, mirrors
// a static pod (annotation and Node owner reference), reports it Running, deletes the mirror
// when the manifest goes away, and stops cleanly.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { CoordinationV1Api } from '@kubernetes/client-node';

import { startHollowKubelet, type HollowKubelet } from '../helpers/hollow-kubelet.js';
import { hasErrorCode } from '../../src/errors.js';
import { useControlPlane, kubeConfigFromFile, readPodIfExists } from '../helpers/control-plane.js';
import { podManifestYaml } from '../helpers/manifests.js';
import { readPods } from '../helpers/node-endpoints.js';
import { waitFor } from '../helpers/wait.js';

const NODE = 'hollow-1';
// Registered before useControlPlane's own `after`, so the kubelets stop before the cluster.
const kubelets: HollowKubelet[] = [];
const manifestDirs: string[] = [];
after(async () => {
  await Promise.all(kubelets.map((k) => k.stop()));
  await Promise.all(manifestDirs.map((d) => rm(d, { recursive: true, force: true })));
});
const cp = useControlPlane({ nodes: [NODE] });


describe('hollow kubelet (the real kubelet with a fake runtime)', () => {
  it('registers a Ready Node, renews its Lease, mirrors a static pod until its manifest is removed, and stops', async () => {
    const manifests = await mkdtemp(join(tmpdir(), 'kp-hollow-'));
    manifestDirs.push(manifests);
    const namespace = cp.namespace;
    await writeFile(join(manifests, 'web.yaml'), podManifestYaml('web', namespace, 'registry.k8s.io/pause:3.10'));

    const kubelet = await startHollowKubelet({
      cluster: cp.cluster,
      nodeName: NODE,
      staticPodPath: manifests,
      fileCheckFrequencyMs: 1000,
      nodeStatusUpdateFrequencyMs: 1000,
      nodeLeaseDurationSeconds: 4,
    });
    kubelets.push(kubelet);
    try {
      assert.equal(kubelet.nodeName, NODE);
      assert.ok(existsSync(kubelet.rootDir));
      for (const port of Object.values(kubelet.ports)) assert.ok(port > 0);
      const healthz = await fetch(`http://127.0.0.1:${kubelet.ports.healthz}/healthz`);
      assert.equal(await healthz.text(), 'ok');

      // The Node, registered by the kubelet itself, with the UID it reported.
      const node = await waitFor(
        async () => {
          const n = await cp.adminApi.readNode({ name: NODE });
          return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
        },
        'Node Ready',
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      assert.equal(node.metadata?.uid, kubelet.nodeUID);
      assert.equal(node.metadata?.labels?.['kubernetes.io/hostname'], NODE);
      assert.equal(node.status?.daemonEndpoints?.kubeletEndpoint?.Port, kubelet.ports.kubelet);
      assert.equal(node.status?.nodeInfo?.kubeletVersion, 'v1.34.4', 'the version is stamped in at link time');

      // The Lease: held by the node, renewed every quarter of its duration (1 s here).
      const leases = kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(CoordinationV1Api);
      const lease = await waitFor(
        () => leases.readNamespacedLease({ namespace: 'kube-node-lease', name: NODE }).catch(() => undefined),
        'Lease',
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      assert.equal(lease.spec?.holderIdentity, NODE);
      assert.equal(lease.spec?.leaseDurationSeconds, 4);
      assert.deepEqual(
        lease.metadata?.ownerReferences?.map((o) => ({ kind: o.kind, name: o.name, uid: o.uid })),
        [{ kind: 'Node', name: NODE, uid: node.metadata?.uid }],
      );
      const firstRenew = new Date(lease.spec!.renewTime!).getTime();
      await waitFor(
        async () => {
          const l = await leases.readNamespacedLease({ namespace: 'kube-node-lease', name: NODE });
          return new Date(l.spec!.renewTime!).getTime() > firstRenew;
        },
        'a renewed Lease',
        { timeoutMs: 15_000, intervalMs: 200 },
      );

      // The mirror pod of web.yaml.
      const name = `web-${NODE}`;
      const mirror = await waitFor(() => readPodIfExists(cp.adminApi, namespace, name), 'mirror pod', { timeoutMs: 60_000, intervalMs: 200 });
      const annotations = mirror.metadata?.annotations ?? {};
      assert.ok(annotations['kubernetes.io/config.mirror'], 'config.mirror annotation');
      assert.equal(annotations['kubernetes.io/config.mirror'], annotations['kubernetes.io/config.hash']);
      assert.equal(annotations['kubernetes.io/config.source'], 'file');
      assert.equal(mirror.spec?.nodeName, NODE);
      assert.deepEqual(
        mirror.metadata?.ownerReferences?.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid, controller: o.controller })),
        [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: node.metadata?.uid, controller: true }],
      );
      const running = await waitFor(
        async () => {
          const p = await readPodIfExists(cp.adminApi, namespace, name);
          return p?.status?.phase === 'Running' ? p : undefined;
        },
        'mirror Running',
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      assert.equal(running.status?.containerStatuses?.[0]?.name, 'main');
      assert.ok(running.status?.containerStatuses?.[0]?.state?.running, 'the fake runtime runs the container');

      // The kubelet's own view on its read-only port lists the static pod.
      assert.ok((await readPods(kubelet.ports.readOnly)).has(name));

      // A restart (as systemd would do it) keeps the ports and the Node, and the kubelet
      // adopts the mirror it finds instead of replacing it.
      const portsBefore = { ...kubelet.ports };
      await kubelet.restart();
      assert.equal(kubelet.running, true);
      assert.deepEqual(kubelet.ports, portsBefore);
      assert.equal(kubelet.nodeUID, node.metadata?.uid);
      await waitFor(
        async () => (await readPods(kubelet.ports.readOnly)).has(name),
        'the restarted kubelet has read its manifests',
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      assert.equal((await readPodIfExists(cp.adminApi, namespace, name))?.metadata?.uid, mirror.metadata?.uid, 'the same mirror pod');

      // Removing the manifest removes the mirror.
      await rm(join(manifests, 'web.yaml'));
      await waitFor(async () => (await readPodIfExists(cp.adminApi, namespace, name)) === undefined, 'mirror deleted', { timeoutMs: 60_000, intervalMs: 200 });
    } catch (err) {
      process.stderr.write(`--- hollow kubelet log (tail) ---\n${(await kubelet.logs()).split('\n').slice(-60).join('\n')}\n`);
      throw err;
    }

    const { healthz } = kubelet.ports;
    await kubelet.stop();
    assert.equal(kubelet.running, false);
    assert.equal(existsSync(kubelet.rootDir), false, 'a temporary root directory is removed');
    await assert.rejects(fetch(`http://127.0.0.1:${healthz}/healthz`), 'nothing answers on its ports any more');
  });

  it('fails with KP_ERR_CLUSTER_KUBELET_START and the end of its log when it cannot start', async () => {
    await assert.rejects(startHollowKubelet({ cluster: cp.cluster, nodeName: 'not-in-the-cluster' }), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_CLUSTER_KUBELET_START'));
      assert.match((err as Error).message, /no kubeconfig for node "not-in-the-cluster"/);
      return true;
    });
    const missing = join(tmpdir(), 'kp-no-such-kubeconfig');
    await assert.rejects(startHollowKubelet({ kubeconfig: missing, nodeName: NODE }), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_CLUSTER_KUBELET_START'));
      assert.match((err as Error).message, /exited with code 1 before it was ready/);
      assert.match((err as Error).message, /hollow-kubelet: read kubeconfig/);
      return true;
    });
  });
});
