// The `api` pod source against a real kube-apiserver + etcd, listing and watching as the
// node (counterpart of pkg/kubelet/config/apiserver_test.go, which drives a fake list-watch;
// here the events come from the real server, and the recovery paths are exercised for real).
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import type { CoreV1Api } from '@kubernetes/client-node';

import { API_SERVER_SOURCE, PodOperation } from '../../src/constants.js';
import { apiErrorInfo } from '../../src/kube/api-error.js';
import type { Pod } from '../../src/pod/types.js';
import { createApiserverSource, type ApiserverSource, type ApiserverSourceOptions } from '../../src/sources/apiserver-source.js';
import { kubePodListWatch, type PodListWatch } from '../../src/sources/pod-list-watch.js';
import type { PodUpdate } from '../../src/sources/types.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { Recorder, waitFor } from '../helpers/wait.js';

// Each test watches its own node, so pods left by one test never show up in another.
const NODES = ['as-1', 'as-2', 'as-3', 'gone', 'watchdog', 'restart'] as const;
const cp = useControlPlane({ nodes: NODES });

/** Deadline of each wait on the real API server. */
const T = 15_000;

const IMAGE_ONE = 'registry.k8s.io/one:1';
const IMAGE_TWO = 'registry.k8s.io/two:2';

function pod(name: string, namespace: string, node: string, image = 'registry.k8s.io/blah:1'): Pod {
  return {
    metadata: { name, namespace },
    spec: { nodeName: node, containers: [{ name: 'main', image }] },
  };
}

async function createPod(api: CoreV1Api, p: Pod): Promise<Pod> {
  return api.createNamespacedPod({ namespace: p.metadata!.namespace!, body: p });
}

async function deletePod(api: CoreV1Api, name: string, namespace: string): Promise<void> {
  await api.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
}

/** `<ns>/<name>` of each pod in an update, sorted. */
const keys = (u: PodUpdate): string[] => u.pods.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort();

const imageOf = (u: PodUpdate, name: string): string | undefined =>
  u.pods.find((p) => p.metadata?.name === name)?.spec?.containers[0]?.image;

const running: ApiserverSource[] = [];
function startSource(node: string, extra: Partial<ApiserverSourceOptions> = {}): { source: ApiserverSource; updates: Recorder<PodUpdate> } {
  const updates = new Recorder<PodUpdate>();
  const source = createApiserverSource({
    kubeConfig: cp.kubeConfig(node),
    nodeName: node,
    onUpdate: updates.push,
    backoffInitialMs: 100,
    backoffMaxMs: 1000,
    ...extra,
  });
  source.start();
  running.push(source);
  return { source, updates };
}

function assertAllSets(updates: Recorder<PodUpdate>): void {
  for (const u of updates.items) {
    assert.equal(u.op, PodOperation.SET);
    assert.equal(u.source, API_SERVER_SOURCE);
  }
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});
after(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

describe('AS api source', () => {
  it('AS-1 TestNewSourceApiserver_UpdatesAndMultiplePods', async () => {
    const ns = cp.namespace;
    const node = 'as-1';
    await createPod(cp.adminApi, pod('p', ns, node, IMAGE_ONE));
    const { updates } = startSource(node);

    const first = await updates.next('SET [p] from the list', T);
    assert.deepEqual(keys(first), [`${ns}/p`]);

    await createPod(cp.adminApi, pod('q', ns, node, 'registry.k8s.io/blah:1'));
    await updates.nextMatching((u) => keys(u).join() === `${ns}/p,${ns}/q`, 'SET {p, q}', T);

    const current = await cp.adminApi.readNamespacedPod({ name: 'p', namespace: ns });
    current.spec!.containers[0]!.image = IMAGE_TWO;
    await cp.adminApi.replaceNamespacedPod({ name: 'p', namespace: ns, body: current });
    const modified = await updates.nextMatching((u) => imageOf(u, 'p') === IMAGE_TWO, "SET {p', q}", T);
    assert.deepEqual(keys(modified), [`${ns}/p`, `${ns}/q`]);

    await deletePod(cp.adminApi, 'p', ns);
    await updates.nextMatching((u) => keys(u).join() === `${ns}/q`, 'SET [q]', T);

    await deletePod(cp.adminApi, 'q', ns);
    await updates.nextMatching((u) => u.pods.length === 0, 'SET []', T);
    assertAllSets(updates);
  });

  it('AS-1 pods are passed on unmodified (the objects the API server sent)', async () => {
    const ns = cp.namespace;
    const created = await createPod(cp.adminApi, pod('raw', ns, 'as-1'));
    const { updates } = startSource('as-1');
    const u = await updates.nextMatching((x) => keys(x).includes(`${ns}/raw`), 'SET with raw', T);
    const seen = u.pods.find((p) => p.metadata?.name === 'raw')!;
    assert.equal(seen.metadata?.uid, created.metadata?.uid);
    assert.equal(seen.metadata?.annotations, created.metadata?.annotations, 'no annotations added');
    assert.equal(seen.metadata?.resourceVersion, created.metadata?.resourceVersion);
  });

  it('AS-2 TestNewSourceApiserver_TwoNamespacesSameName', async () => {
    const one = cp.namespace;
    const two = await cp.createNamespace();
    await createPod(cp.adminApi, pod('p', one, 'as-2'));
    await createPod(cp.adminApi, pod('p', two, 'as-2'));
    const { updates } = startSource('as-2');

    const first = await updates.next('the first SET', T);
    assert.equal(first.pods.length, 2, 'keyed by namespace and name, both pods are kept');

    // The real server may first report the deletion as a MODIFIED (deletionTimestamp set),
    // so wait for the SET without it rather than taking the very next one.
    await deletePod(cp.adminApi, 'p', one);
    const next = await updates.nextMatching((u) => u.pods.length === 1, 'a SET with one pod after deleting p in the first namespace', T);
    assert.deepEqual(keys(next), [`${two}/p`]);
    assertAllSets(updates);
  });

  it('AS-3 TestNewSourceApiserverInitialEmptySendsEmptyPodUpdate', async () => {
    const { updates } = startSource('as-3');
    const first = await updates.next('the first SET', T);
    assert.equal(first.op, PodOperation.SET);
    assert.equal(first.source, API_SERVER_SOURCE);
    assert.deepEqual(first.pods, []);
  });
});

describe('api source recovery', () => {
  it('relists when the API server answers 410 Gone to an expired resourceVersion', async () => {
    const node = 'gone';
    const real = kubePodListWatch(cp.kubeConfig(node), node, 1);
    const oldRV = (await real.list()).metadata!.resourceVersion!;
    // A restarted API server's watch cache starts at etcd's current revision; one write
    // makes that newer than oldRV, which the server then answers with 410 Gone.
    await cp.createNamespace('filler');
    await cp.cluster.restart();
    assert.equal(await watchOutcome(real, oldRV), 'gone', `a watch from ${oldRV} is answered with 410`);

    let first = true;
    const expiring: PodListWatch = {
      list: () => real.list(),
      // The first watch asks for the compacted resourceVersion.
      watch: (rv, onEvent, done) => {
        const asked = first ? oldRV : rv;
        first = false;
        return real.watch(asked, onEvent, done);
      },
    };
    const infos: string[] = [];
    const logger = { debug: () => {}, info: (_: object, msg: string) => infos.push(msg), warn: () => {}, error: () => {} };
    const { source, updates } = startSource(node, { listWatch: expiring, logger });
    await updates.next('the SET from the first list', T);
    await waitFor(() => source.stats().lists >= 2, 'a relist after 410 Gone', { timeoutMs: T });
    assert.ok(infos.includes('watch resourceVersion expired, relisting'));

    await createPod(cp.adminApi, pod('after-gone', cp.namespace, node));
    await updates.nextMatching((u) => keys(u).includes(`${cp.namespace}/after-gone`), 'SET with the pod created after the relist', T);
  });

  it('the watchdog restarts a silent watch without leaking connections', async () => {
    const node = 'watchdog';
    const { source, updates } = startSource(node, { watchdogMs: 400, watchTimeoutSeconds: 300 });
    await updates.next('the first SET', T);
    await waitFor(() => source.stats().watchdogRestarts >= 1, 'a first watchdog restart', { timeoutMs: T });
    const socketsBefore = openTlsSockets();
    await waitFor(() => source.stats().watchdogRestarts >= 4, 'three more watchdog restarts', { timeoutMs: T });
    // Each restart aborted the previous request: the count of open TLS connections stays flat.
    assert.ok(openTlsSockets() <= socketsBefore + 1, `TLS sockets grew from ${socketsBefore} to ${openTlsSockets()}`);
    assert.equal(source.stats().lists, 1, 'a watchdog restart re-watches from the last resourceVersion; it does not relist');

    await createPod(cp.adminApi, pod('seen', cp.namespace, node));
    await updates.nextMatching((u) => keys(u).includes(`${cp.namespace}/seen`), 'SET with the pod created after the restarts', T);
  });

  it('recovers after the real control plane restarts', async () => {
    const node = 'restart';
    const ns = cp.namespace;
    await createPod(cp.adminApi, pod('before', ns, node));
    const { source, updates } = startSource(node);
    await updates.nextMatching((u) => keys(u).includes(`${ns}/before`), 'SET with the pod created before the restart', T);

    // Stop, let the source notice the outage, create nothing, start again on the same data.
    const errorsBefore = source.stats().errors;
    await cp.cluster.stop();
    await waitFor(() => source.stats().errors > errorsBefore, 'the source to see the API server gone', { timeoutMs: T });
    await cp.cluster.start();

    await createPod(cp.adminApi, pod('after', ns, node));
    const u = await updates.nextMatching(
      (x) => keys(x).includes(`${ns}/after`),
      'SET with the pod created after the restart',
      60_000,
    );
    assert.deepEqual(keys(u), [`${ns}/after`, `${ns}/before`], 'the data survived the restart');
    assert.ok(source.stats().watches >= 2, 'the watch was restarted');
    assertAllSets(updates);
  });
});

function openTlsSockets(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'TLSWrap' || r === 'TLSWRAP').length;
}

/** How a watch from `rv` ends: 'gone' on 410 (as an ERROR event or an HTTP status), else 'ok'. */
async function watchOutcome(lw: PodListWatch, rv: string): Promise<'gone' | 'ok'> {
  return new Promise((resolve) => {
    let handle: { abort(): void } | undefined;
    let settled = false;
    const settle = (outcome: 'gone' | 'ok'): void => {
      if (settled) return;
      settled = true;
      handle?.abort();
      resolve(outcome);
    };
    void lw
      .watch(
        rv,
        (type, object) => {
          if (type === 'ERROR') settle(apiErrorInfo(object).code === 410 ? 'gone' : 'ok');
        },
        (err) => settle(apiErrorInfo(err).code === 410 ? 'gone' : 'ok'),
      )
      .then((h) => {
        handle = h;
        if (settled) h.abort();
      });
  });
}
