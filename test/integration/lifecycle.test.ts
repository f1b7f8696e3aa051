// The kubelet lifecycle (--simulated-lifecycle=kubelet, the default) end to end on the real
// kube-apiserver + etcd: what a watcher of the mirror pods sees when a manifest is removed,
// edited, or removed and put back, with grace periods of 1 s and 5 s. Each node's requests go
// through a recording proxy (test/differential/api-proxy.ts) so that the DELETE's grace period
// and UID precondition are checked, and a recorder watches the mirrors as the admin. Every pod
// ignores SIGTERM (simulation.kubelet-pods.io/stop-seconds: 600), so it is killed at the end of
// its kill budget, max(grace, 2 s): exit code 137.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { stringify } from 'yaml';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import type { Logger } from '../../src/logger.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { startClusterProxy, type RecordingProxy } from '../differential/api-proxy.js';
import { EventRecorder } from '../differential/event-recorder.js';
import { describeDeleteOptions } from '../differential/request-body.js';
import type { WatchRecord } from '../differential/event-sequence.js';

const NODES = ['lc-remove-1', 'lc-remove-5', 'lc-edit-1', 'lc-edit-5', 'lc-readd', 'lc-ordinary', 'lc-graceful', 'lc-completed', 'lc-affinity', 'lc-resources'];
const agents: Agent[] = [];
const proxies: RecordingProxy[] = [];
let recorder: EventRecorder | undefined;
after(async () => {
  recorder?.stop();
  await Promise.all(agents.map((a) => a.stop()));
  await Promise.all(proxies.map((p) => p.close()));
});
const cp = useControlPlane({ nodes: NODES });


interface Node {
  agent: Agent;
  proxy: RecordingProxy;
  dir: string;
}

/**
 * `files` are written before the agent starts: a manifest written in the moment the file
 * source sets up its watch can wait for the next full listing (fileCheckFrequency, 20 s).
 */
async function startNode(node: string, files: Record<string, string> = {}): Promise<Node> {
  const proxy = await startClusterProxy(cp.cluster);
  proxies.push(proxy);
  const dir = await mkdtemp(join(tmpdir(), `kp-${node}-`));
  const kubeconfig = join(dir, 'kubeconfig');
  await proxy.writeKubeconfig(cp.cluster.nodeKubeconfigs[node]!, kubeconfig);
  const manifests = join(dir, 'manifests');
  await mkdir(manifests);
  for (const [file, text] of Object.entries(files)) await writeManifest(manifests, file, text);
  const { config } = await resolveRunConfig(['--kubeconfig', kubeconfig, '--hostname-override', node, '--pod-manifest-path', manifests]);
  assert.equal(config.simulatedLifecycle, 'kubelet', 'the kubelet lifecycle is the default');
  // The kubelet's housekeeping period (2 s), the default.
  const agent = createAgent({ config, listenPorts: { readOnly: 0, healthz: 0 }, ...(process.env.LIFECYCLE_LOG ? { logger: stderrLogger(node) } : {}) });
  agents.push(agent);
  await agent.start();
  return { agent, proxy, dir: manifests };
}

/** LIFECYCLE_LOG=1: every log line of the agents on stderr, to look at a failure. */
function stderrLogger(node: string): Logger {
  const line = (level: string) => (obj: object, msg?: string) => process.stderr.write(`${new Date().toISOString()} ${node} ${level} ${msg ?? ''} ${JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? v.message : v))}\n`);
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}

function manifest(name: string, namespace: string, o: { grace: number; image?: string }): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, annotations: { 'simulation.kubelet-pods.io/stop-seconds': '600' } },
    spec: { terminationGracePeriodSeconds: o.grace, containers: [{ name: 'main', image: o.image ?? 'registry.k8s.io/pause:3.10' }] },
  });
}

async function writeManifest(dir: string, file: string, text: string): Promise<void> {
  await writeFile(join(dir, `.${file}.tmp`), text);
  await rename(join(dir, `.${file}.tmp`), join(dir, file));
}

type Status = { phase?: string; containerStatuses?: Array<{ ready?: boolean; state?: { running?: unknown; terminated?: { exitCode?: number } } }> };
const statusOf = (r: WatchRecord): Status => (r.object.status ?? {}) as Status;
const isRunning = (r: WatchRecord): boolean => statusOf(r).phase === 'Running' && statusOf(r).containerStatuses?.[0]?.ready === true;
const killedCode = (r: WatchRecord): number | undefined => statusOf(r).containerStatuses?.[0]?.state?.terminated?.exitCode;

function mirrorRecords(node: string, pod: string, namespace: string): WatchRecord[] {
  return recorder!.about('pod', `${pod}-${node}`, namespace);
}

async function waitRunning(node: string, pod: string, namespace: string): Promise<WatchRecord> {
  return waitFor(() => mirrorRecords(node, pod, namespace).find((r) => r.type !== 'DELETED' && isRunning(r)), `${pod} mirror Running on ${node}`, {
    timeoutMs: 20_000,
    intervalMs: 50,
  }).catch((err: unknown) => {
    const seen = mirrorRecords(node, pod, namespace).map((r) => `${r.type} ${JSON.stringify(r.object.status?.['phase'])}`);
    throw new Error(`${(err as Error).message}; records: ${seen.join(', ') || 'none'} (of ${recorder!.records.length})`);
  });
}

function deletesOf(proxy: RecordingProxy, namespace: string, name: string): string[] {
  return proxy.requests
    .filter((r) => r.method === 'DELETE' && r.path === `/api/v1/namespaces/${namespace}/pods/${name}` && r.status >= 200 && r.status < 300)
    .map((r) => describeDeleteOptions(r.deleteOptions));
}

/**
 * The node's DELETEs of a pod already seen gone: the proxy records a DELETE when its answer
 * arrives, which can be just after the test's own watch saw the pod go.
 */
async function deletesOfGone(proxy: RecordingProxy, namespace: string, name: string): Promise<string[]> {
  await waitFor(() => deletesOf(proxy, namespace, name).length > 0, `a DELETE of ${name} recorded`, { timeoutMs: 2_000, intervalMs: 10 }).catch(() => undefined);
  return deletesOf(proxy, namespace, name);
}

const budgetMs = (grace: number): number => Math.max(grace, 2) * 1000;

describe('kubelet lifecycle on a real control plane', () => {
  before(async () => {
    recorder = await EventRecorder.start(cp.cluster.adminKubeconfig, NODES);
  });

  for (const grace of [1, 5]) {
    it(`manifest removed (grace ${grace} s): the mirror shows the killed container, then is deleted with grace 0 and no precondition`, async () => {
      const node = `lc-remove-${grace}`;
      const ns = cp.namespace;
      const { dir, proxy } = await startNode(node, { 'web.yaml': manifest('web', ns, { grace }) });
      await waitRunning(node, 'web', ns);
      const t0 = performance.now();
      await rm(join(dir, 'web.yaml'));
      const deleted = await waitFor(() => mirrorRecords(node, 'web', ns).find((r) => r.type === 'DELETED'), 'mirror deleted', { timeoutMs: 30_000, intervalMs: 50 });
      const after = mirrorRecords(node, 'web', ns).filter((r) => r.t >= t0);
      const killed = after.find((r) => r.type === 'MODIFIED' && killedCode(r) === 137);
      assert.ok(killed, 'the mirror showed the container killed (137) before it was deleted');
      assert.ok(killed.t < deleted.t);
      // Killed at the end of the budget, which begins when the pod worker's termination step
      // runs: at the relist after its last sync, up to 2 s after the removal right after the
      // pod turned Running (docs/lifecycle.md, "The relist"). The record's time adds the status
      // write and the watch event, which a loaded machine stretches past half a second.
      const killedAfter = killed.t - t0;
      assert.ok(killedAfter >= budgetMs(grace) - 50 && killedAfter < budgetMs(grace) + 3500, `killed ${Math.round(killedAfter)} ms after the removal`);
      // Deleted by the next housekeeping (every 2 s) once terminated.
      assert.ok(deleted.t - killed.t < 2000 + 1000, `deleted ${Math.round(deleted.t - killed.t)} ms after the final status`);
      const graceful = after.filter((r) => r.type === 'MODIFIED' && (r.object.metadata?.deletionGracePeriodSeconds ?? 0) !== 0);
      assert.equal(graceful.length, 0, 'no graceful deletion first');
      assert.deepEqual(await deletesOfGone(proxy, ns, `web-${node}`), ['grace 0']);
    });
  }

  for (const grace of [1, 5]) {
    it(`manifest edited (grace ${grace} s): the old mirror keeps its status, the new one comes once the old pod finished, after a UID-preconditioned delete`, async () => {
      const node = `lc-edit-${grace}`;
      const ns = cp.namespace;
      const { dir, proxy, agent } = await startNode(node, { 'api.yaml': manifest('api', ns, { grace, image: 'registry.k8s.io/pause:3.9' }) });
      const first = await waitRunning(node, 'api', ns);
      const oldUID = first.object.metadata?.uid;
      const t0 = performance.now();
      await writeManifest(dir, 'api.yaml', manifest('api', ns, { grace, image: 'registry.k8s.io/pause:3.10' }));
      const created = await waitFor(
        () => mirrorRecords(node, 'api', ns).find((r) => r.type === 'ADDED' && r.t >= t0),
        'the new mirror',
        { timeoutMs: 40_000, intervalMs: 50 },
      );
      const replacedAfter = created.t - t0;
      // The old pod is killed after its budget; the new one starts at its first retry that
      // finds the full name free: 10–15 s after a refused start.
      assert.ok(replacedAfter >= Math.max(10_000, budgetMs(grace)), `replaced ${Math.round(replacedAfter)} ms after the edit`);
      assert.ok(replacedAfter < budgetMs(grace) + 15_000 + 2000, `replaced ${Math.round(replacedAfter)} ms after the edit`);
      const old = mirrorRecords(node, 'api', ns).filter((r) => r.t >= t0 && r.object.metadata?.uid === oldUID);
      assert.equal(old.filter((r) => r.type === 'MODIFIED' && !isRunning(r)).length, 0, "the old mirror kept its Running status: the old pod's writes are dropped");
      assert.ok(old.some((r) => r.type === 'DELETED'), 'the old mirror was deleted');
      assert.deepEqual(await deletesOfGone(proxy, ns, `api-${node}`), ['grace 0, uid precondition']);
      const running = await waitFor(
        () => mirrorRecords(node, 'api', ns).find((r) => r.object.metadata?.uid === created.object.metadata?.uid && r.type === 'MODIFIED' && isRunning(r)),
        'the new mirror Running',
        { timeoutMs: 20_000, intervalMs: 50 },
      );
      assert.equal((running.object.spec as { containers: Array<{ image: string }> }).containers[0]!.image, 'registry.k8s.io/pause:3.10');
      assert.equal(agent.podManager.getPods().length, 1);
    });
  }

  it('an ordinary pod bound to the node runs, and its graceful deletion is completed: killed after the grace period, final status, DELETE grace 0 with its UID', async () => {
    const node = 'lc-ordinary';
    const ns = cp.namespace;
    const { proxy } = await startNode(node);
    await cp.adminApi.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'plain', annotations: { 'simulation.kubelet-pods.io/stop-seconds': '600' } },
        spec: { nodeName: node, terminationGracePeriodSeconds: 3, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    const running = await waitFor(() => recorder!.about('pod', 'plain', ns).find(isRunning), 'the pod Running', { timeoutMs: 20_000, intervalMs: 50 });
    const uid = running.object.metadata?.uid;
    const t0 = performance.now();
    await cp.adminApi.deleteNamespacedPod({ namespace: ns, name: 'plain' });
    const gone = await waitFor(() => recorder!.about('pod', 'plain', ns).find((r) => r.type === 'DELETED'), 'the pod deleted', { timeoutMs: 20_000, intervalMs: 50 });
    const final = recorder!.about('pod', 'plain', ns).find((r) => r.t >= t0 && killedCode(r) === 137);
    assert.ok(final, 'the final status (killed, 137) was written before the pod went');
    assert.equal(statusOf(final).phase, 'Failed', 'an ordinary pod stopped by the kubelet is terminal');
    // The grace period runs from the termination step, at the relist after the worker's last sync.
    assert.ok(final.t - t0 >= 2950 && final.t - t0 < 5500, `killed ${Math.round(final.t - t0)} ms after the deletion (grace 3 s)`);
    assert.ok(gone.t >= final.t);
    assert.deepEqual(await deletesOfGone(proxy, ns, 'plain'), ['grace 0, uid precondition']);
    assert.ok(uid);
  });

  it('kubectl delete of an ordinary pod right after it turned Running: Terminating for 1–2 s, as beside the kubelet (two relists), then gone', async () => {
    // The default grace period (30 s) and the default stop time (0): the containers stop at once,
    // so what keeps the pod Terminating is the pod worker's two relists: its termination step
    // waits for a relist newer than its last sync (the one that wrote Running), the clean-up
    // step for the relist after the termination; then the final DELETE.
    const node = 'lc-graceful';
    const ns = cp.namespace;
    const { proxy } = await startNode(node);
    await cp.adminApi.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'graceful' }, spec: { nodeName: node, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } },
    });
    const running = await waitFor(() => recorder!.about('pod', 'graceful', ns).find(isRunning), 'the pod Running', { timeoutMs: 20_000, intervalMs: 10 });
    const t0 = performance.now();
    await cp.adminApi.deleteNamespacedPod({ namespace: ns, name: 'graceful' });
    const gone = await waitFor(() => recorder!.about('pod', 'graceful', ns).find((r) => r.type === 'DELETED'), 'the pod deleted', { timeoutMs: 20_000, intervalMs: 10 });
    const records = recorder!.about('pod', 'graceful', ns);
    const terminating = records.find((r) => r.object.metadata?.deletionTimestamp !== undefined && r.object.metadata?.deletionTimestamp !== null);
    assert.ok(terminating, 'seen with a deletionTimestamp');
    const terminatingMs = gone.t - terminating.t;
    const final = records.find((r) => r.t >= t0 && statusOf(r).phase === 'Succeeded');
    assert.ok(final, 'the final status (Succeeded: the container stopped with 0) before the pod went');
    process.stderr.write(
      `# graceful deletion ${Math.round(t0 - running.t)} ms after Running was seen: Terminating for ${Math.round(terminatingMs)} ms, final status ${Math.round(final.t - t0)} ms, gone ${Math.round(gone.t - t0)} ms after the delete\n`,
    );
    // Only a delete within a relist period of the sync that wrote Running finds the worker busy
    // (a busy test process can see Running late); later, one relist remains (0–1 s).
    if (t0 - running.t < 800) assert.ok(terminatingMs >= 950, `Terminating for ${Math.round(terminatingMs)} ms`);
    // Two relists, or three when the worker's sync ends just after a relist began, so that its
    // termination step waits for the next (as the kubelet's waits for a cache newer than its sync):
    // seen with another test file running beside this one. Never the 30 s grace period.
    assert.ok(gone.t - t0 < 4000, `gone ${Math.round(gone.t - t0)} ms after the delete`);
    assert.ok(final.t < gone.t);
    assert.deepEqual(await deletesOfGone(proxy, ns, 'graceful'), ['grace 0, uid precondition']);
  });

  it("an ordinary pod whose node selector the node does not match is rejected at admission with the kubelet's reason", async () => {
    const node = 'lc-affinity';
    const ns = cp.namespace;
    await startNode(node);
    await cp.adminApi.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'picky' }, spec: { nodeName: node, nodeSelector: { zone: 'nowhere' }, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } },
    });
    const rejected = await waitFor(() => recorder!.about('pod', 'picky', ns).find((r) => statusOf(r).phase === 'Failed'), 'the pod Failed', { timeoutMs: 20_000, intervalMs: 50 });
    assert.equal(rejected.object.status?.['reason'], 'NodeAffinity');
    assert.equal(rejected.object.status?.['message'], "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector");
  });

  it("an ordinary pod whose CPU or memory requests do not fit the node's allocatable is rejected with OutOfcpu / OutOfmemory, the kubelet's message", async () => {
    const node = 'lc-resources';
    const ns = cp.namespace;
    await startNode(node);
    const registered = await waitFor(
      async () => (await cp.adminApi.readNode({ name: node }).catch(() => undefined))?.status?.allocatable,
      'the Node registered with its allocatable',
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    const milliCPU = Math.round(Number(registered['cpu']) * 1000);
    const create = (name: string, requests: Record<string, string>) =>
      cp.adminApi.createNamespacedPod({
        namespace: ns,
        body: { metadata: { name }, spec: { nodeName: node, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { requests } }] } },
      });
    // Half the node's CPU fits; then more than what is left does not.
    await create('half', { cpu: `${Math.floor(milliCPU / 2)}m` });
    await waitFor(() => recorder!.about('pod', 'half', ns).find(isRunning), 'the fitting pod Running', { timeoutMs: 20_000, intervalMs: 50 });
    await create('too-much-cpu', { cpu: `${milliCPU - Math.floor(milliCPU / 2) + 1}m` });
    await create('too-much-memory', { memory: '1000Ti' });
    const failed = (name: string) =>
      waitFor(() => recorder!.about('pod', name, ns).find((r) => statusOf(r).phase === 'Failed'), `${name} Failed`, { timeoutMs: 20_000, intervalMs: 50 });
    const cpu = await failed('too-much-cpu');
    assert.equal(cpu.object.status?.['reason'], 'OutOfcpu');
    assert.equal(
      cpu.object.status?.['message'],
      `Pod was rejected: Node didn't have enough resource: cpu, requested: ${milliCPU - Math.floor(milliCPU / 2) + 1}, used: ${Math.floor(milliCPU / 2)}, capacity: ${milliCPU}`,
    );
    const memory = await failed('too-much-memory');
    assert.equal(memory.object.status?.['reason'], 'OutOfmemory');
    assert.match(String(memory.object.status?.['message']), /^Pod was rejected: Node didn't have enough resource: memory, requested: 1099511627776000, used: 0, capacity: \d+$/);
  });

  it('a static pod with restartPolicy Never completes: the mirror shows Failed, and a mirror the user deletes then is not recreated (kubernetes issue 116483)', async () => {
    const node = 'lc-completed';
    const ns = cp.namespace;
    const { proxy } = await startNode(node, {
      'job.yaml': stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'job', namespace: ns, annotations: { 'simulation.kubelet-pods.io/exit': 'main=3@1' } },
        spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
      }),
    });
    const failed = await waitFor(() => mirrorRecords(node, 'job', ns).find((r) => statusOf(r).phase === 'Failed'), 'the mirror Failed', { timeoutMs: 20_000, intervalMs: 50 });
    assert.equal(killedCode(failed), 3);
    await cp.adminApi.deleteNamespacedPod({ namespace: ns, name: `job-${node}` });
    await waitFor(() => mirrorRecords(node, 'job', ns).some((r) => r.object.metadata?.deletionTimestamp !== undefined), 'the deletion requested', { timeoutMs: 5000, intervalMs: 20 });
    // A deliberate window of two housekeeping periods: nothing may happen in it.
    const recreated = await waitFor(() => mirrorRecords(node, 'job', ns).some((r) => r.type === 'ADDED' && r.object.metadata?.uid !== failed.object.metadata?.uid), 'a new mirror', {
      timeoutMs: 4500,
      intervalMs: 100,
    }).then(
      () => true,
      () => false,
    );
    assert.equal(recreated, false, 'the mirror of a completed static pod is not recreated');
    assert.deepEqual(deletesOf(proxy, ns, `job-${node}`), [], 'nor deleted by the node: it stays Terminating, as beside the kubelet');
  });

  it('manifest removed and put back while the pod stops: the same mirror shows it killed, then Running again (restarted pod)', async () => {
    const node = 'lc-readd';
    const ns = cp.namespace;
    const text = manifest('same', ns, { grace: 5 });
    const { dir, proxy, agent } = await startNode(node, { 'same.yaml': text });
    const first = await waitRunning(node, 'same', ns);
    const t0 = performance.now();
    await rm(join(dir, 'same.yaml'));
    await waitFor(() => agent.podManager.getPods().length === 0, 'the agent saw the removal', { timeoutMs: 5000, intervalMs: 20 });
    await writeManifest(dir, 'same.yaml', text);
    const killed = await waitFor(() => mirrorRecords(node, 'same', ns).find((r) => r.t >= t0 && killedCode(r) === 137), 'killed status', {
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    assert.ok(killed.t - t0 >= 4950, 'killed at the end of its 5 s grace period');
    const again = await waitFor(() => mirrorRecords(node, 'same', ns).find((r) => r.t > killed.t && isRunning(r)), 'Running again', {
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    assert.equal(again.object.metadata?.uid, first.object.metadata?.uid, 'the same mirror');
    assert.deepEqual(deletesOf(proxy, ns, `same-${node}`), [], 'never deleted');
    const { port } = agent.addresses().readOnly!;
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(metrics, /^kubelet_restarted_pods_total\{static="true"\} 1$/m);
  });
});
