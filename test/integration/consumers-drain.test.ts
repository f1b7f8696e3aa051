// The consumers of mirror pods as our judges: `kubectl drain` (the real kubectl) of a node run
// by `kubelet-pods run`, with a second agent as the place the evicted replicas go, on the real
// control plane (scheduler, ReplicaSet and disruption controllers). The drain cordons the node,
// evicts the Deployment's pods through the eviction API, where a PodDisruptionBudget
// (minAvailable 1) holds the second back until a replacement is Ready on the other node, leaves
// the static pod's mirror alone (kubectl skips mirror pods by itself), and returns once our
// agent has finished each evicted pod's graceful deletion. The API server's audit log records
// every eviction with its answer.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, it } from 'node:test';

import { AppsV1Api, PolicyV1Api, type V1Pod } from '@kubernetes/client-node';

import { EventRecorder } from '../differential/event-recorder.js';
import { micros, readAuditLog, writeAuditPolicy } from '../helpers/audit-log.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import {
  describePods,
  kubectlRun,
  manifestDir,
  Nodes,
  podReady,
  podTemplate,
  readOrUndefined,
  staticPodYaml,
  TempDirs,
  waitNodeSchedulable,
  writeManifest,
} from '../helpers/consumers.js';
import { waitFor } from '../helpers/wait.js';

const A = 'cd-a';
const B = 'cd-b';
const cp = useControlPlane({ nodes: [A, B], auditPolicyFile: writeAuditPolicy() });
const nodes = new Nodes();
const temp = new TempDirs();
after(async () => {
  await nodes.stopAll();
  await temp.removeAll();
});

const phaseOf = (r: { object: { status?: unknown } }): string | undefined => (r.object.status as { phase?: string } | undefined)?.phase;
const deletingOf = (r: { object: { metadata?: unknown } }): boolean => (r.object.metadata as { deletionTimestamp?: string }).deletionTimestamp !== undefined;
const uidOf = (r: { object: { metadata?: unknown } }): string | undefined => (r.object.metadata as { uid?: string }).uid;

it('kubectl drain: cordons, evicts through the eviction API with the PodDisruptionBudget holding one back, leaves the mirror, and the agent finishes each eviction', async (t) => {
  const ns = cp.namespace;
  const admin = cp.cluster.adminKubeconfig;
  const apps = kubeConfigFromFile(admin).makeApiClient(AppsV1Api);
  const policy = kubeConfigFromFile(admin).makeApiClient(PolicyV1Api);
  const dirA = (await manifestDir(temp, 'kp-cd-a-')).dir;
  const dirB = (await manifestDir(temp, 'kp-cd-b-')).dir;
  await writeManifest(dirA, 'node-agent.yaml', staticPodYaml('node-agent', ns));
  nodes.agent({ nodeName: A, kubeconfig: cp.cluster.nodeKubeconfigs[A]!, manifestDir: dirA });
  nodes.agent({ nodeName: B, kubeconfig: cp.cluster.nodeKubeconfigs[B]!, manifestDir: dirB });
  await waitNodeSchedulable(cp.adminApi, A);
  await waitNodeSchedulable(cp.adminApi, B);
  const mirrorName = `node-agent-${A}`;
  const mirror = await waitFor(
    async () => {
      const pod = await readOrUndefined(() => cp.adminApi.readNamespacedPod({ namespace: ns, name: mirrorName }));
      return pod?.status?.phase === 'Running' ? pod : undefined;
    },
    'the static pod\'s mirror Running on A',
    { timeoutMs: 60_000, intervalMs: 250 },
  );

  // Both replicas on A: B is cordoned while they are placed.
  const cordonB = await kubectlRun(admin, ['cordon', B], 30_000);
  assert.equal(cordonB.code, 0, cordonB.stderr);
  await apps.createNamespacedDeployment({
    namespace: ns,
    body: { metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: podTemplate('web', undefined) } },
  });
  const webPods = async (): Promise<V1Pod[]> => (await cp.adminApi.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items;
  const onA = await waitFor(
    async () => {
      const pods = await webPods();
      return pods.length === 2 && pods.every((p) => p.spec?.nodeName === A && p.status?.phase === 'Running' && podReady(p)) ? pods : undefined;
    },
    'the two replicas Running and Ready on A',
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  await policy.createNamespacedPodDisruptionBudget({
    namespace: ns,
    body: { metadata: { name: 'web' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } },
  });
  await waitFor(
    async () => {
      const pdb = await policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'web' });
      return pdb.status?.currentHealthy === 2 && pdb.status.disruptionsAllowed === 1;
    },
    'the PodDisruptionBudget counting 2 healthy pods, 1 disruption allowed',
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  const uncordonB = await kubectlRun(admin, ['uncordon', B], 30_000);
  assert.equal(uncordonB.code, 0, uncordonB.stderr);

  const recorder = await EventRecorder.start(admin, [A, B]);
  t.after(() => recorder.stop());
  const drainAt = micros(new Date().toISOString());
  const started = performance.now();
  const drain = await kubectlRun(admin, ['drain', A, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=240s'], 300_000);
  t.diagnostic(`kubectl drain took ${((performance.now() - started) / 1000).toFixed(1)} s`);
  assert.equal(drain.code, 0, `kubectl drain succeeded; stdout:\n${drain.stdout}\nstderr:\n${drain.stderr}`);
  assert.match(drain.stdout, new RegExp(`node/${A} cordoned`));
  assert.match(drain.stdout, new RegExp(`node/${A} drained`));
  for (const pod of onA) assert.match(drain.stdout, new RegExp(`pod/${pod.metadata!.name!} evicted`));
  assert.match(drain.stderr, /Cannot evict pod as it would violate the pod's disruption budget/, 'the PodDisruptionBudget held one eviction back');
  assert.doesNotMatch(drain.stdout + drain.stderr, new RegExp(mirrorName), 'kubectl left the mirror pod alone, without a word');

  // The audit log: evictions of the two replicas only, at least one refused (429) by the budget.
  const evictions = readAuditLog(cp.cluster.auditLogFile!).filter(
    (e) => micros(e.requestReceivedTimestamp) > drainAt && e.objectRef?.resource === 'pods' && e.objectRef.subresource === 'eviction',
  );
  const names = new Set(onA.map((p) => p.metadata!.name!));
  assert.ok(evictions.every((e) => names.has(e.objectRef?.name ?? '')), `evictions only of the replicas: ${evictions.map((e) => e.objectRef?.name).join(', ')}`);
  for (const name of names) {
    assert.equal(evictions.filter((e) => e.objectRef?.name === name && e.responseStatus?.code === 201).length, 1, `${name}: evicted once`);
  }
  const refused = evictions.filter((e) => e.responseStatus?.code === 429);
  assert.ok(refused.length >= 1, 'at least one eviction refused with 429');
  t.diagnostic(`evictions: ${evictions.map((e) => `${e.objectRef?.name} ${e.responseStatus?.code}`).join(', ')}`);

  // The second eviction went through only once a replacement was Ready on B.
  const lastEviction = Math.max(...evictions.filter((e) => e.responseStatus?.code === 201).map((e) => micros(e.stageTimestamp) / 1000));
  const readyOnB = recorder.records.find(
    (r) => r.kind === 'pod' && r.object.spec?.['nodeName'] === B && phaseOf(r) === 'Running' && (r.object.status as V1Pod['status'])?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  assert.ok(readyOnB !== undefined, 'a replica became Ready on B');
  assert.ok(performance.timeOrigin + readyOnB.t < lastEviction + 500, 'the last eviction came after a replica was Ready on B');

  // Each evicted pod: deletionTimestamp, final status (containers stopped), then gone; the agent
  // of A deleted it for good (grace 0) once stopped.
  for (const pod of onA) {
    const name = pod.metadata!.name!;
    const records = recorder.records.filter((r) => r.kind === 'pod' && uidOf(r) === pod.metadata!.uid);
    const marked = records.findIndex(deletingOf);
    const final = records.findIndex((r, i) => i > marked && (phaseOf(r) === 'Succeeded' || phaseOf(r) === 'Failed'));
    const gone = records.findIndex((r) => r.type === 'DELETED');
    assert.ok(marked >= 0 && final > marked && gone >= final, `${name}: deletionTimestamp, final status, then gone; seen ${records.map((r) => `${r.type}:${phaseOf(r)}${deletingOf(r) ? '(deleting)' : ''}`).join(' ')}`);
    const finalDelete = readAuditLog(cp.cluster.auditLogFile!).find(
      (e) => e.verb === 'delete' && e.objectRef?.resource === 'pods' && !e.objectRef.subresource && e.objectRef.name === name && e.user?.username === `system:node:${A}`,
    );
    assert.equal(finalDelete?.responseStatus?.code, 200, `${name}: deleted for good by the agent of ${A}`);
  }

  // After: A cordoned, the replicas Running on B, the mirror untouched on A.
  assert.equal((await cp.adminApi.readNode({ name: A })).spec?.unschedulable, true, 'A is cordoned');
  const after_ = await waitFor(
    async () => {
      const pods = await webPods();
      return pods.length === 2 && pods.every((p) => p.spec?.nodeName === B && p.status?.phase === 'Running' && podReady(p) && !p.metadata?.deletionTimestamp) ? pods : undefined;
    },
    'both replicas Running on B',
    { timeoutMs: 60_000, intervalMs: 250 },
  ).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}; pods: ${describePods(await webPods())}`);
  });
  assert.equal(after_.length, 2);
  const mirrorAfter = await cp.adminApi.readNamespacedPod({ namespace: ns, name: mirrorName });
  assert.equal(mirrorAfter.metadata?.uid, mirror.metadata?.uid, 'the same mirror');
  assert.equal(mirrorAfter.metadata?.deletionTimestamp, undefined, 'not being deleted');
  assert.equal(mirrorAfter.status?.phase, 'Running');
  assert.ok(!recorder.records.some((r) => r.kind === 'pod' && r.object.metadata?.name === mirrorName && deletingOf(r)), 'the mirror was never marked for deletion');

  const uncordonA = await kubectlRun(admin, ['uncordon', A], 30_000);
  assert.equal(uncordonA.code, 0, uncordonA.stderr);
  await policy.deleteNamespacedPodDisruptionBudget({ namespace: ns, name: 'web' });
  await apps.deleteNamespacedDeployment({ namespace: ns, name: 'web', propagationPolicy: 'Foreground' });
  await waitFor(async () => (await webPods()).length === 0, 'the replicas deleted', { timeoutMs: 60_000, intervalMs: 250 });
});
