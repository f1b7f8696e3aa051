// The consumers of mirror pods as our judges: the workload controllers of the real
// kube-controller-manager (v1.34.4) and the real kube-scheduler, with our nodes as the only
// nodes of the cluster: one `kubelet-pods run` process and a fleet of three.
//
// - A Deployment (pinned to the run node by a node selector on kubernetes.io/hostname) rolls
//   out, scales up, rolls out a new template, scales down; every pod it lets go finishes its
//   graceful deletion on our node (final status, then gone).
// - A DaemonSet gets exactly one Running pod on every node (run and fleet).
// - A Job (restartPolicy OnFailure, the simulated container exits 0 after 3 s) completes, its
//   pods Succeeded.
// - A namespace holding pods on our nodes (ordinary pods on both kinds of node, and a static
//   pod's mirror) is deleted and disappears.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';

import { AppsV1Api, BatchV1Api, PatchStrategy, setHeaderOptions, type V1Deployment, type V1Pod } from '@kubernetes/client-node';

import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { EventRecorder } from '../differential/event-recorder.js';
import { micros, readAuditLog, writeAuditPolicy } from '../helpers/audit-log.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import {
  describePods,
  manifestDir,
  Nodes,
  ordinaryPod,
  PAUSE,
  podReady,
  podTemplate,
  readOrUndefined,
  staticPodYaml,
  TempDirs,
  waitGone,
  waitNodeSchedulable,
  writeManifest,
} from '../helpers/consumers.js';
import { waitFor } from '../helpers/wait.js';

const RUN = 'cw-run';
const FLEET = ['cw-f-0', 'cw-f-1', 'cw-f-2'];
const ALL = [RUN, ...FLEET];
const cp = useControlPlane({ nodes: [RUN], auditPolicyFile: writeAuditPolicy() });
const nodes = new Nodes();
const temp = new TempDirs();
let apps: AppsV1Api;
let batch: BatchV1Api;
let staticDir: string;

after(async () => {
  await nodes.stopAll();
  await temp.removeAll();
});

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

async function podsWithApp(namespace: string, app: string): Promise<V1Pod[]> {
  return (await cp.adminApi.listNamespacedPod({ namespace, labelSelector: `app=${app}` })).items;
}

/**
 * Waits until the Deployment's rollout is complete with `replicas` pods, all of the current
 * template (image `image`), Running and Ready on `node`, and no other pod of it left (none
 * terminating).
 */
async function waitRollout(namespace: string, name: string, replicas: number, image: string, node: string): Promise<V1Pod[]> {
  let last: { d?: V1Deployment; pods: V1Pod[] } = { pods: [] };
  return waitFor(
    async () => {
      const d = await apps.readNamespacedDeployment({ namespace, name });
      const pods = await podsWithApp(namespace, name);
      last = { d, pods };
      const s = d.status ?? {};
      const complete =
        (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
        s.replicas === replicas &&
        s.updatedReplicas === replicas &&
        s.readyReplicas === replicas &&
        s.availableReplicas === replicas &&
        d.status?.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'NewReplicaSetAvailable');
      const podsOk =
        pods.length === replicas &&
        pods.every((p) => p.spec?.nodeName === node && p.status?.phase === 'Running' && podReady(p) && !p.metadata?.deletionTimestamp && p.spec?.containers[0]?.image === image);
      return complete && podsOk ? pods : undefined;
    },
    `Deployment ${name}: ${replicas} replicas of ${image} rolled out on ${node}`,
    { timeoutMs: 90_000, intervalMs: 250 },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; status: ${JSON.stringify(last.d?.status)}; pods: ${describePods(last.pods)}`);
  });
}

/**
 * Asserts that each pod of `uids` went, as a watcher saw it, through graceful deletion on our
 * node: a deletionTimestamp, then a terminal phase (the final status the node writes), then
 * gone.
 */
function assertGracefullyDeleted(recorder: EventRecorder, namespace: string, uids: readonly string[]): void {
  for (const uid of uids) {
    const records = recorder.records.filter((r) => r.kind === 'pod' && r.object.metadata?.namespace === namespace && (r.object.metadata as { uid?: string }).uid === uid);
    const name = records[0]?.object.metadata?.name ?? uid;
    const marked = records.findIndex((r) => (r.object.metadata as { deletionTimestamp?: string }).deletionTimestamp !== undefined);
    const final = records.findIndex((r, i) => i > marked && ['Succeeded', 'Failed'].includes(String((r.object.status as { phase?: string })?.phase)));
    const gone = records.findIndex((r) => r.type === 'DELETED');
    const seen = records.map((r) => `${r.type}:${(r.object.status as { phase?: string })?.phase}${(r.object.metadata as { deletionTimestamp?: string }).deletionTimestamp ? '(deleting)' : ''}`).join(' ');
    assert.ok(marked >= 0 && final > marked && gone >= final, `${name}: deletionTimestamp, then the final status, then gone; seen: ${seen}`);
  }
}

describe('workload controllers on our nodes', () => {
  // In the suite: the file's control plane has started by then.
  before(async () => {
    apps = kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(AppsV1Api);
    batch = kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(BatchV1Api);
    staticDir = (await manifestDir(temp, 'kp-cw-')).dir;
    nodes.agent({ nodeName: RUN, kubeconfig: cp.cluster.nodeKubeconfigs[RUN]!, manifestDir: staticDir });
    const fleetDir = (await manifestDir(temp, 'kp-cwf-')).dir;
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(fleetDir, '..', 'fleet.kubeconfig') });
    await nodes.fleet({ kubeconfig, templates: [{ name: 'cw-f-{i}', count: FLEET.length, staticPodPath: fleetDir, labels: { pool: 'cw-fleet' } }] });
    for (const node of ALL) await waitNodeSchedulable(cp.adminApi, node);
  });

  it('a Deployment on the run node rolls out, scales up, rolls out a new template and scales down; every pod let go finishes its graceful deletion', async (t) => {
    const ns = cp.namespace;
    const recorder = await EventRecorder.start(cp.cluster.adminKubeconfig, [RUN]);
    t.after(() => recorder.stop());
    const started = performance.now();
    const lap = (what: string): void => t.diagnostic(`${what} at ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: { metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: podTemplate('web', RUN) } },
    });
    await waitRollout(ns, 'web', 2, PAUSE, RUN);
    lap('2 replicas available');

    await apps.patchNamespacedDeployment({ namespace: ns, name: 'web', body: { spec: { replicas: 4 } } }, mergePatch);
    const four = await waitRollout(ns, 'web', 4, PAUSE, RUN);
    lap('scaled up to 4');

    const image = 'registry.k8s.io/pause:3.9';
    await apps.patchNamespacedDeployment(
      { namespace: ns, name: 'web', body: { spec: { template: { spec: { containers: [{ name: 'main', image }] } } } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const updated = await waitRollout(ns, 'web', 4, image, RUN);
    lap('new template rolled out');
    const replicaSets = (await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: 'app=web' })).items;
    assert.equal(replicaSets.length, 2, 'the old and the new ReplicaSet');
    assert.deepEqual(replicaSets.map((rs) => rs.status?.replicas ?? 0).sort(), [0, 4], 'the old ReplicaSet scaled to 0');

    await apps.patchNamespacedDeployment({ namespace: ns, name: 'web', body: { spec: { replicas: 1 } } }, mergePatch);
    const one = await waitRollout(ns, 'web', 1, image, RUN);
    lap('scaled down to 1');

    const remaining = new Set(one.map((p) => p.metadata!.uid!));
    const letGo = [...four, ...updated].map((p) => p.metadata!.uid!).filter((uid) => !remaining.has(uid));
    assert.equal(new Set(letGo).size, 7, 'the 4 pods of the old template and 3 of the new were let go');
    assertGracefullyDeleted(recorder, ns, [...new Set(letGo)]);

    await apps.deleteNamespacedDeployment({ namespace: ns, name: 'web', propagationPolicy: 'Foreground' });
    await waitFor(async () => (await podsWithApp(ns, 'web')).length === 0, 'the pods of the deleted Deployment gone', { timeoutMs: 60_000, intervalMs: 250 });
    assertGracefullyDeleted(recorder, ns, [...remaining]);
  });

  it('a DaemonSet gets exactly one Running pod on every node (the run node and a fleet of three)', async () => {
    const ns = cp.namespace;
    const clusterNodes = (await cp.adminApi.listNode()).items.map((n) => n.metadata!.name!).sort();
    assert.deepEqual(clusterNodes, [...ALL].sort(), 'our nodes are the cluster\'s nodes');
    await apps.createNamespacedDaemonSet({
      namespace: ns,
      body: { metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: podTemplate('agent', undefined) } },
    });
    const pods = await waitFor(
      async () => {
        const ds = await apps.readNamespacedDaemonSet({ namespace: ns, name: 'agent' });
        const s = ds.status;
        const pods = await podsWithApp(ns, 'agent');
        const counted = s?.desiredNumberScheduled === ALL.length && s.currentNumberScheduled === ALL.length && s.numberReady === ALL.length && s.numberAvailable === ALL.length && s.updatedNumberScheduled === ALL.length && s.numberMisscheduled === 0;
        return counted && pods.length === ALL.length && pods.every((p) => p.status?.phase === 'Running' && podReady(p)) ? pods : undefined;
      },
      `the DaemonSet's ${ALL.length} pods Running and Ready, counted in its status`,
      { timeoutMs: 90_000, intervalMs: 250 },
    ).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}; pods: ${describePods(await podsWithApp(ns, 'agent'))}`);
    });
    assert.deepEqual(pods.map((p) => p.spec?.nodeName).sort(), [...ALL].sort(), 'exactly one pod per node');

    await apps.deleteNamespacedDaemonSet({ namespace: ns, name: 'agent' });
    await waitFor(async () => (await podsWithApp(ns, 'agent')).length === 0, 'the DaemonSet\'s pods deleted from every node', { timeoutMs: 60_000, intervalMs: 250 }).catch(
      async (err: unknown) => {
        throw new Error(`${(err as Error).message}; pods: ${describePods(await podsWithApp(ns, 'agent'))}`);
      },
    );
  });

  it('a Job (restartPolicy OnFailure, containers exiting 0 after 3 s) runs to completion on the run node, its pods Succeeded', async () => {
    const ns = cp.namespace;
    const template = podTemplate('job', RUN, { restartPolicy: 'OnFailure', annotations: { 'simulation.kubelet-pods.io/exit': 'main=0@3' } });
    await batch.createNamespacedJob({ namespace: ns, body: { metadata: { name: 'job' }, spec: { completions: 2, parallelism: 2, template } } });
    const job = await waitFor(
      async () => {
        const job = await batch.readNamespacedJob({ namespace: ns, name: 'job' });
        return job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ? job : undefined;
      },
      'the Job Complete',
      { timeoutMs: 90_000, intervalMs: 250 },
    ).catch(async (err: unknown) => {
      const job = await readOrUndefined(() => batch.readNamespacedJob({ namespace: ns, name: 'job' }));
      throw new Error(`${(err as Error).message}; status: ${JSON.stringify(job?.status)}; pods: ${describePods(await podsWithApp(ns, 'job'))}`);
    });
    assert.equal(job.status?.succeeded, 2);
    assert.equal(job.status?.failed ?? 0, 0);
    const pods = (await cp.adminApi.listNamespacedPod({ namespace: ns, labelSelector: 'batch.kubernetes.io/job-name=job' })).items;
    assert.equal(pods.length, 2, describePods(pods));
    for (const pod of pods) {
      assert.equal(pod.spec?.nodeName, RUN);
      assert.equal(pod.status?.phase, 'Succeeded', describePods([pod]));
      const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
      assert.equal(terminated?.exitCode, 0);
      assert.equal(terminated?.reason, 'Completed');
      assert.equal(pod.status?.containerStatuses?.[0]?.restartCount, 0);
    }
    // The Job controller counted them and let go of its tracking finalizer.
    await waitFor(
      async () => (await cp.adminApi.listNamespacedPod({ namespace: ns, labelSelector: 'batch.kubernetes.io/job-name=job' })).items.every((p) => !(p.metadata?.finalizers ?? []).length),
      'the Job\'s pods without finalizers',
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await batch.deleteNamespacedJob({ namespace: ns, name: 'job', propagationPolicy: 'Background' });
  });

  it('a namespace holding pods on our nodes (ordinary pods on the run and a fleet node, a static pod\'s mirror) is deleted and disappears', async (t) => {
    const ns = await cp.createNamespace('gone');
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: { metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: podTemplate('web', RUN) } },
    });
    await cp.adminApi.createNamespacedPod({ namespace: ns, body: ordinaryPod('lone', FLEET[0]) });
    await writeManifest(staticDir, 'gone.yaml', staticPodYaml('sp', ns));
    try {
      const want = ['lone', `sp-${RUN}`];
      await waitFor(
        async () => {
          const pods = (await cp.adminApi.listNamespacedPod({ namespace: ns })).items;
          const running = pods.filter((p) => p.status?.phase === 'Running' && podReady(p));
          return running.length === 4 && want.every((n) => running.some((p) => p.metadata?.name === n)) ? pods : undefined;
        },
        'two pods of the Deployment, the lone pod and the mirror Running',
        { timeoutMs: 60_000, intervalMs: 250 },
      );
      const deletedAt = performance.now();
      const deletedWall = micros(new Date().toISOString());
      await cp.adminApi.deleteNamespace({ name: ns });
      await waitGone(() => cp.adminApi.readNamespace({ name: ns }), `namespace ${ns}`, 120_000).catch(async (err: unknown) => {
        const left = await readOrUndefined(() => cp.adminApi.readNamespace({ name: ns }));
        const pods = (await cp.adminApi.listNamespacedPod({ namespace: ns })).items;
        throw new Error(`${(err as Error).message}; namespace status: ${JSON.stringify(left?.status)}; pods: ${describePods(pods)}`);
      });
      t.diagnostic(`namespace gone ${((performance.now() - deletedAt) / 1000).toFixed(1)} s after its deletion`);
      const everywhere = (await cp.adminApi.listPodForAllNamespaces()).items.filter((p) => p.metadata?.namespace === ns);
      assert.deepEqual(everywhere.map((p) => p.metadata?.name), [], 'no pod of the namespace left');
      // What became of the mirror (reported): who deleted it, and the agent's attempts to
      // create it again, which the API server refuses in a terminating or missing namespace.
      const aboutMirror = readAuditLog(cp.cluster.auditLogFile!).filter(
        (e) => micros(e.requestReceivedTimestamp) > deletedWall && e.objectRef?.resource === 'pods' && e.objectRef.namespace === ns && e.objectRef.name === `sp-${RUN}` && !e.objectRef.subresource,
      );
      const counts = new Map<string, number>();
      for (const e of aboutMirror) {
        const key = `${e.verb} ${e.responseStatus?.code} by ${e.user?.username}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      t.diagnostic(`the mirror after the namespace's deletion: ${[...counts].map(([k, n]) => `${k} ×${n}`).join('; ')}`);
      const created = aboutMirror.filter((e) => e.verb === 'create' && (e.responseStatus?.code ?? 0) < 300);
      assert.deepEqual(created.map((e) => e.requestReceivedTimestamp), [], 'no mirror created in the namespace once it was being deleted');
    } finally {
      await rm(join(staticDir, 'gone.yaml'), { force: true });
    }
  });
});
