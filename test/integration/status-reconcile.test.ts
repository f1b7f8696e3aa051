// What the node writes after someone else changes its pods, on the real kube-apiserver.
//
// When someone else changes a status the node wrote (a mirror pod's or an ordinary pod's), the
// kubelet's full batch
// (status_manager.go, syncBatch → needsReconcile → syncPod, which reads the pod first) sees its
// pod manager's copy differ from its own status and writes its status again. The pod manager's
// copy keeps the resourceVersion of the version first seen (config.go, checkAndUpdatePod takes
// only the status of a status-only change), so no version number can tell it from our own write.
//
// A graceful deletion raises the pod's generation; checkAndUpdatePod takes it with the deletion,
// and the kubelet reports it as observedGeneration in the terminal status.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PatchStrategy, setHeaderOptions, Watch, type V1Pod } from '@kubernetes/client-node';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { podManifestYaml } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const NODE = 'status-reconcile';
const cp = useControlPlane({ nodes: [NODE] });
let agent: Agent | undefined;
let dir: string | undefined;
after(async () => {
  await agent?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const ready = (pod: V1Pod): string | undefined => pod.status?.conditions?.find((c) => c.type === 'Ready')?.status;
const SLOW = { timeoutMs: 60_000, intervalMs: 250 };

/** The node's agent, with one static pod; started by the first test that asks. */
async function startedAgent(): Promise<Agent> {
  if (agent !== undefined) return agent;
  dir = await mkdtemp(join(tmpdir(), 'kp-status-reconcile-'));
  await writeFile(join(dir, 'static.yaml'), podManifestYaml('static', cp.namespace));
  const { config } = await resolveRunConfig([
    '--kubeconfig', cp.cluster.nodeKubeconfigs[NODE]!,
    '--hostname-override', NODE,
    '--pod-manifest-path', dir,
    '--port', '0', '--read-only-port', '0', '--healthz-port', '0',
  ]);
  agent = createAgent({ config, listenPorts: { readOnly: 0, healthz: 0 } });
  await agent.start();
  return agent;
}

it("writes its status again over someone else's change to a kubelet-owned field, on a mirror pod and on an ordinary pod", async () => {
  const ns = cp.namespace;
  await startedAgent();
  await cp.adminApi.createNamespacedPod({
    namespace: ns,
    body: { metadata: { name: 'ordinary' }, spec: { nodeName: NODE, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } },
  });
  const names = ['ordinary', `static-${NODE}`];
  const read = (name: string): Promise<V1Pod> => cp.adminApi.readNamespacedPod({ namespace: ns, name });
  for (const name of names) await waitFor(async () => ready(await read(name)) === 'True', `${name} Ready`, SLOW);
  // Let a full batch (every 10 s) see the watch's copies of the Running writes first.
  await new Promise((resolve) => setTimeout(resolve, 12_000));

  for (const name of names) {
    await cp.adminApi.patchNamespacedPodStatus(
      { namespace: ns, name, body: { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Tampered' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    assert.equal(ready(await read(name)), 'False', `${name}: the change took`);
  }
  for (const name of names) {
    const back = await waitFor(async () => {
      const pod = await read(name);
      return ready(pod) === 'True' ? pod : undefined;
    }, `${name} Ready again, written by the node`, SLOW);
    assert.equal(back.status?.conditions?.find((c) => c.type === 'Ready')?.reason, undefined, `${name}: the node's Ready, not the change's`);
    assert.equal(back.status?.phase, 'Running');
  }
});

it('reports the generation a graceful deletion raised in the terminal status, as observedGeneration', async () => {
  await startedAgent();
  const ns = cp.namespace;
  const created = await cp.adminApi.createNamespacedPod({
    namespace: ns,
    body: { metadata: { name: 'deleted' }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 3, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } },
  });
  await waitFor(async () => ready(await cp.adminApi.readNamespacedPod({ namespace: ns, name: 'deleted' })) === 'True', 'deleted Ready', SLOW);
  const versions: V1Pod[] = [];
  const watch = await new Watch(kubeConfigFromFile(cp.cluster.adminKubeconfig)).watch(
    `/api/v1/namespaces/${ns}/pods`,
    { fieldSelector: 'metadata.name=deleted', resourceVersion: created.metadata?.resourceVersion },
    (type: string, pod: V1Pod) => {
      if (type !== 'BOOKMARK') versions.push(pod);
    },
    () => {},
  );
  try {
    await cp.adminApi.deleteNamespacedPod({ namespace: ns, name: 'deleted' });
    await waitFor(() => versions.some((p) => p.metadata?.deletionTimestamp !== undefined && (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed')), 'the terminal status', SLOW);
  } finally {
    watch.abort();
  }
  const terminal = versions.find((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed')!;
  const generation = terminal.metadata?.generation ?? 0;
  assert.ok(generation > (created.metadata?.generation ?? 0), `the deletion raised the generation (${created.metadata?.generation} → ${generation})`);
  assert.equal(terminal.status?.observedGeneration, generation, 'status.observedGeneration');
  assert.equal(terminal.status?.conditions?.find((c) => c.type === 'Ready')?.observedGeneration, generation, 'Ready.observedGeneration');
  for (const c of terminal.status?.conditions ?? []) {
    if (c.observedGeneration !== undefined) assert.equal(c.observedGeneration, generation, `${c.type}.observedGeneration`);
  }
});
