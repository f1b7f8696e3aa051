// The consumers of mirror pods as our judges: the real kube-scheduler (v1.34.4) counts our
// static pods, through their mirrors, when it places ordinary pods, as it counts a kubelet's.
// A static pod asking for 80 % of the node's allocatable CPU keeps an ordinary pod that asks
// for 40 % off the node (FailedScheduling, `Insufficient cpu`) until its manifest is removed;
// static pods whose mirrors fill `maxPods` keep a pod off (`Too many pods`). For
// `kubelet-pods run` (the process, capacity from the machine's cores) and for fleet nodes
// (capacity from their template). docs/kubelet-differences.md, "As the cluster's controllers
// see it".
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, describe, it } from 'node:test';

import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';

import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { useControlPlane } from '../helpers/control-plane.js';
import {
  describePods,
  eventsAbout,
  machineMillicores,
  manifestDir,
  Nodes,
  ordinaryPod,
  podCondition,
  podReady,
  readOrUndefined,
  staticPodYaml,
  TempDirs,
  waitGone,
  waitNodeSchedulable,
  writeKubeletConfig,
  writeManifest,
} from '../helpers/consumers.js';
import { waitFor } from '../helpers/wait.js';

const RUN_CPU = 'sc-run-cpu';
const RUN_MAX = 'sc-run-max';
const cp = useControlPlane({ nodes: [RUN_CPU, RUN_MAX] });
const nodes = new Nodes();
const temp = new TempDirs();
after(async () => {
  await nodes.stopAll();
  await temp.removeAll();
});

/** A CPU quantity ("2", "1500m", "0.5") in millicores. */
function millicores(quantity: string | undefined): number {
  if (quantity === undefined) return NaN;
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) : Math.round(Number(quantity) * 1000);
}

async function readPod(namespace: string, name: string): Promise<V1Pod | undefined> {
  return readOrUndefined(() => cp.adminApi.readNamespacedPod({ namespace, name }));
}

async function waitRunningOn(namespace: string, name: string, node: string, timeoutMs = 60_000): Promise<V1Pod> {
  return waitFor(
    async () => {
      const pod = await readPod(namespace, name);
      return pod?.spec?.nodeName === node && pod.status?.phase === 'Running' && podReady(pod) ? pod : undefined;
    },
    `${namespace}/${name} Running and Ready on ${node}`,
    { timeoutMs, intervalMs: 250 },
  ).catch(async (err: unknown) => {
    const pod = await readPod(namespace, name);
    throw new Error(`${(err as Error).message}; now: ${pod ? describePods([pod]) : 'absent'}; events: ${(await eventsAbout(cp.adminApi, namespace, name)).join(' | ')}`);
  });
}

/**
 * Creates the ordinary pod, waits for the scheduler's FailedScheduling Event whose message
 * matches `why` and for its PodScheduled condition, and checks that the pod stays unbound
 * and unschedulable.
 */
async function expectUnschedulable(api: CoreV1Api, namespace: string, pod: V1Pod, why: RegExp): Promise<string> {
  const name = pod.metadata!.name!;
  await api.createNamespacedPod({ namespace, body: pod });
  const event = await waitFor(
    async () => (await eventsAbout(api, namespace, name)).find((e) => e.startsWith('FailedScheduling: ') && why.test(e)),
    `a FailedScheduling Event matching ${why} about ${name}`,
    { timeoutMs: 60_000, intervalMs: 250 },
  ).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}; events: ${(await eventsAbout(api, namespace, name)).join(' | ')}`);
  });
  // The scheduler records the Event before it patches the condition, so the condition is
  // waited for rather than read once.
  const now = await waitFor(
    async () => {
      const pod = await api.readNamespacedPod({ namespace, name });
      return pod.status?.conditions?.some((c) => c.type === 'PodScheduled') ? pod : undefined;
    },
    `the PodScheduled condition on ${name}`,
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  assert.equal(now.spec?.nodeName, undefined, `${name} is not bound`);
  const scheduled = now.status?.conditions?.find((c) => c.type === 'PodScheduled');
  assert.equal(scheduled?.status, 'False');
  assert.equal(scheduled?.reason, 'Unschedulable');
  assert.match(scheduled?.message ?? '', why);
  return event;
}

async function waitMirrorRunning(namespace: string, name: string, timeoutMs = 60_000): Promise<V1Pod> {
  return waitFor(
    async () => {
      const pod = await readPod(namespace, name);
      return pod?.status?.phase === 'Running' ? pod : undefined;
    },
    `mirror pod ${namespace}/${name} Running`,
    { timeoutMs, intervalMs: 250 },
  );
}

describe('kube-scheduler counts static pods through their mirrors', () => {
  it('kubelet-pods run: a static pod requesting 80 % of the CPU keeps an ordinary pod out (Insufficient cpu) until its manifest is removed', async (t) => {
    const ns = cp.namespace;
    const { dir } = await manifestDir(temp, 'kp-sc-cpu-');
    const allocatable = machineMillicores();
    const staticCpu = Math.floor(allocatable * 0.8);
    const podCpu = Math.ceil(allocatable * 0.4);
    await writeManifest(dir, 'hog.yaml', staticPodYaml('hog', ns, { cpu: `${staticCpu}m` }));
    nodes.agent({ nodeName: RUN_CPU, kubeconfig: cp.cluster.nodeKubeconfigs[RUN_CPU]!, manifestDir: dir });

    const node = await waitNodeSchedulable(cp.adminApi, RUN_CPU);
    assert.equal(millicores(node.status?.allocatable?.['cpu']), allocatable, 'the Node reports the machine\'s cores as allocatable CPU');
    const mirror = await waitMirrorRunning(ns, `hog-${RUN_CPU}`);
    assert.equal(mirror.spec?.containers[0]?.resources?.requests?.['cpu'], `${staticCpu}m`, 'the mirror carries the request');

    const event = await expectUnschedulable(cp.adminApi, ns, ordinaryPod('web', RUN_CPU, { cpu: `${podCpu}m` }), /Insufficient cpu/);
    assert.match(event, /0\/\d+ nodes are available: .*1 Insufficient cpu/);

    const removedAt = performance.now();
    await rm(join(dir, 'hog.yaml'));
    await waitGone(() => cp.adminApi.readNamespacedPod({ namespace: ns, name: `hog-${RUN_CPU}` }), 'the mirror of the removed manifest');
    await waitRunningOn(ns, 'web', RUN_CPU);
    const seconds = ((performance.now() - removedAt) / 1000).toFixed(1);
    const events = await eventsAbout(cp.adminApi, ns, 'web');
    assert.ok(events.some((e) => e.startsWith(`Scheduled: Successfully assigned ${ns}/web to ${RUN_CPU}`)), `a Scheduled Event; got ${events.join(' | ')}`);
    t.diagnostic(`run: the ordinary pod Running ${seconds} s after the manifest was removed`);

    await cp.adminApi.deleteNamespacedPod({ namespace: ns, name: 'web' });
    await waitGone(() => cp.adminApi.readNamespacedPod({ namespace: ns, name: 'web' }), 'the ordinary pod (deleted gracefully through the agent)');
  });

  it('kubelet-pods run: mirrors of static pods fill maxPods, and the scheduler refuses another pod (Too many pods) until one manifest is removed', async () => {
    const ns = cp.namespace;
    const { root, dir } = await manifestDir(temp, 'kp-sc-max-');
    await writeManifest(dir, 'a.yaml', staticPodYaml('a', ns));
    await writeManifest(dir, 'b.yaml', staticPodYaml('b', ns));
    const config = await writeKubeletConfig(root, { maxPods: 2 });
    nodes.agent({ nodeName: RUN_MAX, kubeconfig: cp.cluster.nodeKubeconfigs[RUN_MAX]!, manifestDir: dir, extraArgs: ['--config', config] });

    const node = await waitNodeSchedulable(cp.adminApi, RUN_MAX);
    assert.equal(node.status?.allocatable?.['pods'], '2');
    await waitMirrorRunning(ns, `a-${RUN_MAX}`);
    await waitMirrorRunning(ns, `b-${RUN_MAX}`);

    const event = await expectUnschedulable(cp.adminApi, ns, ordinaryPod('third', RUN_MAX), /Too many pods/);
    assert.match(event, /1 Too many pods/);

    await rm(join(dir, 'b.yaml'));
    await waitGone(() => cp.adminApi.readNamespacedPod({ namespace: ns, name: `b-${RUN_MAX}` }), 'the mirror of the removed manifest');
    await waitRunningOn(ns, 'third', RUN_MAX);
    const a = await readPod(ns, `a-${RUN_MAX}`);
    assert.equal(a?.status?.phase, 'Running', 'the other static pod runs on');

    await cp.adminApi.deleteNamespacedPod({ namespace: ns, name: 'third' });
    await waitGone(() => cp.adminApi.readNamespacedPod({ namespace: ns, name: 'third' }), 'the ordinary pod');
  });

  it('fleet nodes: the template\'s CPU capacity and pods capacity are what the scheduler accounts the mirrors against', async () => {
    const ns = cp.namespace;
    const root = await temp.make('kp-sc-fleet-');
    const cpuDir = (await manifestDir(temp, 'kp-sc-fcpu-')).dir;
    const maxDir = (await manifestDir(temp, 'kp-sc-fmax-')).dir;
    await writeManifest(cpuDir, 'hog.yaml', staticPodYaml('hog', ns, { cpu: '800m' }));
    await writeManifest(maxDir, 'a.yaml', staticPodYaml('a', ns));
    await writeManifest(maxDir, 'b.yaml', staticPodYaml('b', ns));
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(root, 'fleet.kubeconfig') });
    await nodes.fleet({
      kubeconfig,
      templates: [
        { name: 'sc-fcpu-{i}', count: 1, staticPodPath: cpuDir, capacity: { cpu: '1', memory: '4Gi', pods: '110' } },
        { name: 'sc-fmax-{i}', count: 1, staticPodPath: maxDir, capacity: { cpu: '4', memory: '8Gi', pods: '2' } },
      ],
    });
    const cpuNode = await waitNodeSchedulable(cp.adminApi, 'sc-fcpu-0');
    const maxNode = await waitNodeSchedulable(cp.adminApi, 'sc-fmax-0');
    assert.equal(cpuNode.status?.allocatable?.['cpu'], '1');
    assert.equal(maxNode.status?.allocatable?.['pods'], '2');
    await waitMirrorRunning(ns, 'hog-sc-fcpu-0');
    await waitMirrorRunning(ns, 'a-sc-fmax-0');
    await waitMirrorRunning(ns, 'b-sc-fmax-0');

    await expectUnschedulable(cp.adminApi, ns, ordinaryPod('web', 'sc-fcpu-0', { cpu: '400m' }), /Insufficient cpu/);
    await expectUnschedulable(cp.adminApi, ns, ordinaryPod('third', 'sc-fmax-0'), /Too many pods/);

    await rm(join(cpuDir, 'hog.yaml'));
    await rm(join(maxDir, 'b.yaml'));
    await waitRunningOn(ns, 'web', 'sc-fcpu-0');
    await waitRunningOn(ns, 'third', 'sc-fmax-0');
    assert.equal(await readPod(ns, 'hog-sc-fcpu-0'), undefined, 'the removed static pod has no mirror');
    const left = (await cp.adminApi.listNamespacedPod({ namespace: ns })).items;
    assert.deepEqual(left.map((p) => p.metadata?.name).sort(), ['a-sc-fmax-0', 'third', 'web'], describePods(left));
    assert.equal(podCondition(left.find((p) => p.metadata?.name === 'a-sc-fmax-0'), 'Ready'), 'True');

    for (const name of ['web', 'third']) await cp.adminApi.deleteNamespacedPod({ namespace: ns, name });
    for (const name of ['web', 'third']) await waitGone(() => cp.adminApi.readNamespacedPod({ namespace: ns, name }), `the ordinary pod ${name}`);
  });
});
