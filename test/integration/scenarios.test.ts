// Scenarios on the real control plane: a `run` agent whose KubeletConfiguration file carries a
// `scenarios:` list (docs/lifecycle.md, "Scenarios") shows a crash-looping pod and a pod whose
// image never pulls as `kubectl get pods` shows a kubelet's (CrashLoopBackOff; ErrImagePull, then
// ImagePullBackOff, with the image manager's Events on the pod), a Deployment's pods picked by
// their owner OOM-killed, and its Node goes NotReady for the scenario's window (`kubectl get
// nodes`), then Ready again. No annotation is on the pods.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { kubectl } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

const NODE = 'scenario-node';
const cp = useControlPlane({ nodes: [NODE] });
let agent: Agent | undefined;
after(async () => agent?.stop());

const staticPod = (name: string, namespace: string, labels: Record<string, string>, image: string): string =>
  stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image }] },
  });

const kubeletConfig = (namespace: string): string =>
  stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    nodeStatusUpdateFrequency: '2s',
    scenarios: [
      { name: 'crashers', match: { namespace, labels: { app: 'crashy' } }, exit: { code: 1, after: '1s' } },
      { name: 'broken-images', match: { image: '*:broken' }, imagePullFailure: { message: 'rpc error: code = NotFound desc = manifest unknown' } },
      { name: 'web-oom', match: { owner: { kind: 'Deployment', name: 'web' } }, oomKill: { after: '2s' } },
      { name: 'node-down', match: { node: 'scenario-*' }, nodeCondition: { type: 'NotReady', from: '15s', until: '30s' } },
    ],
  });

it('a scenarios file: CrashLoopBackOff, ErrImagePull then ImagePullBackOff, a Deployment OOM-killed, and the Node NotReady in its window', async () => {
  const ns = cp.namespace;
  const dir = await mkdtemp(join(tmpdir(), 'kp-scenarios-'));
  const manifests = join(dir, 'manifests');
  await mkdir(manifests);
  await writeFile(join(manifests, 'crashy.yaml'), staticPod('crashy', ns, { app: 'crashy' }, 'registry.k8s.io/pause:3.10'));
  await writeFile(join(manifests, 'broken.yaml'), staticPod('broken', ns, { app: 'broken' }, 'app:broken'));
  await writeFile(join(manifests, 'fine.yaml'), staticPod('fine', ns, { app: 'fine' }, 'registry.k8s.io/pause:3.10'));
  await writeFile(join(dir, 'kubelet.yaml'), kubeletConfig(ns));
  const { config } = await resolveRunConfig([
    '--config', join(dir, 'kubelet.yaml'),
    '--kubeconfig', cp.cluster.nodeKubeconfigs[NODE]!,
    '--hostname-override', NODE,
    '--pod-manifest-path', manifests,
    '--port', '0', '--read-only-port', '0', '--healthz-port', '0',
  ]);
  assert.equal(config.scenarios.length, 4);
  const startedAt = Date.now();
  agent = createAgent({ config, listenPorts: { readOnly: 0, healthz: 0 } });
  await agent.start();

  // An ordinary Deployment on the node: its pods are picked by their owner, through the ReplicaSet.
  const apps = kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(AppsV1Api);
  const labels = { app: 'web' };
  await apps.createNamespacedDeployment({
    namespace: ns,
    body: {
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { nodeSelector: { 'kubernetes.io/hostname': NODE }, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
        },
      },
    },
  });

  const mirror = (name: string): Promise<V1Pod | undefined> => cp.adminApi.readNamespacedPod({ name: `${name}-${NODE}`, namespace: ns }).catch(() => undefined);
  const node = (): Promise<V1Node | undefined> => cp.adminApi.readNode({ name: NODE }).catch(() => undefined);
  const ready = (n: V1Node | undefined) => n?.status?.conditions?.find((c) => c.type === 'Ready');

  // The mirror once its container waits with `reason`.
  const waiting = (name: string, reason: string, timeoutMs: number) =>
    waitFor(async () => {
      const p = await mirror(name);
      return p?.status?.containerStatuses?.[0]?.state?.waiting?.reason === reason ? p : undefined;
    }, `${name} in ${reason}`, { timeoutMs, intervalMs: 250 });

  // The crash loop: exits 1 s after each start, restarted at once, then 10 s of back-off.
  const crashy = await waiting('crashy', 'CrashLoopBackOff', 30_000);
  const main = crashy!.status!.containerStatuses![0]!;
  assert.equal(main.restartCount, 1);
  assert.deepEqual([main.lastState?.terminated?.exitCode, main.lastState?.terminated?.reason], [1, 'Error']);
  assert.match(main.state?.waiting?.message ?? '', new RegExp(`^back-off 10s restarting failed container=main pod=crashy-${NODE}_${ns}\\(`));
  assert.equal(crashy?.status?.phase, 'Running');

  // The failing pull: ErrImagePull first, ImagePullBackOff once the second pull's 20 s back-off holds.
  const broken = await waiting('broken', 'ErrImagePull', 30_000);
  assert.equal(broken?.status?.containerStatuses?.[0]?.state?.waiting?.message, 'rpc error: code = NotFound desc = manifest unknown');
  assert.equal(broken?.status?.phase, 'Pending');
  const backingOff = await waiting('broken', 'ImagePullBackOff', 40_000);
  assert.equal(backingOff?.status?.containerStatuses?.[0]?.state?.waiting?.message, 'Back-off pulling image "app:broken": ErrImagePull: rpc error: code = NotFound desc = manifest unknown');

  const table = await kubectl(cp.cluster.adminKubeconfig, 'get', 'pods', '-n', ns, '--no-headers', '--field-selector', `spec.nodeName=${NODE}`);
  assert.match(table, new RegExp(`^broken-${NODE}\\s+0/1\\s+ImagePullBackOff\\s`, 'm'));
  assert.match(table, new RegExp(`^fine-${NODE}\\s+1/1\\s+Running\\s`, 'm'));
  assert.match(table, new RegExp(`^crashy-${NODE}\\s+\\S+\\s+(CrashLoopBackOff|Error|Running)\\s`, 'm'));

  // The image manager's Events, on the mirror as kubectl describe shows them.
  const events = await waitFor(async () => {
    const list = await cp.adminApi.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=broken-${NODE}` });
    const reasons = new Set(list.items.map((e) => `${e.reason}: ${e.message}`));
    return reasons.has('BackOff: Back-off pulling image "app:broken"') ? list.items : undefined;
  }, 'the pull Events of broken', { timeoutMs: 20_000, intervalMs: 500 });
  const messages = events!.map((e) => `${e.type} ${e.reason}: ${e.message}`);
  assert.ok(messages.includes('Normal Pulling: Pulling image "app:broken"'), messages.join('\n'));
  assert.ok(messages.includes('Warning Failed: Failed to pull image "app:broken": rpc error: code = NotFound desc = manifest unknown'), messages.join('\n'));
  assert.ok(messages.includes('Warning Failed: Error: ErrImagePull'), messages.join('\n'));
  assert.ok(messages.includes('Warning Failed: Error: ImagePullBackOff'), messages.join('\n'));

  // The Deployment's pods: OOM-killed 2 s after each start (exit code 137, OOMKilled), restarted.
  const oomKilled = await waitFor(async () => {
    const pods = (await cp.adminApi.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items;
    const killed = pods.filter((p) => p.status?.containerStatuses?.[0]?.lastState?.terminated?.reason === 'OOMKilled');
    return pods.length === 2 && killed.length === 2 ? killed : undefined;
  }, 'both web pods OOM-killed once', { timeoutMs: 40_000, intervalMs: 500 });
  for (const p of oomKilled!) {
    assert.equal(p.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode, 137);
    assert.ok((p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
    assert.equal(p.metadata?.ownerReferences?.[0]?.kind, 'ReplicaSet');
  }

  // The Node: NotReady from 15 s after the start until 30 s (seen at the next 2 s status update).
  const down = await waitFor(async () => {
    const n = await node();
    return ready(n)?.status === 'False' ? n : undefined;
  }, 'the Node NotReady', { timeoutMs: 40_000, intervalMs: 250 });
  assert.ok(Date.now() - startedAt >= 15_000, 'not before the window opens');
  assert.deepEqual([ready(down)?.reason, ready(down)?.message], ['KubeletNotReady', 'container runtime is down']);
  const nodes = await kubectl(cp.cluster.adminKubeconfig, 'get', 'nodes', NODE, '--no-headers');
  assert.match(nodes, new RegExp(`^${NODE}\\s+NotReady\\s`));
  const up = await waitFor(async () => {
    const n = await node();
    return ready(n)?.status === 'True' ? n : undefined;
  }, 'the Node Ready again', { timeoutMs: 40_000, intervalMs: 250 });
  assert.ok(Date.now() - startedAt >= 30_000, 'not before the window closes');
  assert.equal(ready(up)?.reason, 'KubeletReady');
});
