// The mirror status writer: the static/mirror part of the kubelet's status manager
// (pkg/kubelet/status/status_manager_test.go: TestStaticPod, TestSyncBatch*, TestReconcilePodStatus).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiException, type ConfigurationOptions, type V1PodStatus } from '@kubernetes/client-node';
import { CONFIG_MIRROR_ANNOTATION_KEY, CONFIG_SOURCE_ANNOTATION_KEY } from '../../../src/constants.js';
import { hasErrorCode } from '../../../src/errors.js';
import { PodManager } from '../../../src/pod/manager.js';
import type { Pod } from '../../../src/pod/types.js';
import {
  createMirrorStatusWriter,
  mergeStatus,
  sameStatus,
  type PodStatusApi,
  type StatusWriteResult,
} from '../../../src/status/mirror-status-writer.js';
import { createSimulatedStatusProvider, type StatusProvider } from '../../../src/status/status-provider.js';
import { FakeClock, settle } from '../../helpers/fake-clock.js';

// --- fixtures ---------------------------------------------------------------------------

function staticPod(uid = 'static-1', name = 'web'): Pod {
  return {
    metadata: { name, namespace: 'default', uid, annotations: { [CONFIG_SOURCE_ANNOTATION_KEY]: 'file', 'kubernetes.io/config.hash': uid } },
    spec: { nodeName: 'node-a', containers: [{ name: 'app', image: 'nginx' }] },
  };
}

function mirrorPod(uid: string, staticUID = 'static-1', name = 'web', status: V1PodStatus = { phase: 'Pending', qosClass: 'BestEffort' }): Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      uid,
      annotations: { [CONFIG_SOURCE_ANNOTATION_KEY]: 'api', [CONFIG_MIRROR_ANNOTATION_KEY]: staticUID },
    },
    spec: { nodeName: 'node-a', containers: [{ name: 'app', image: 'nginx' }] },
    status,
  };
}

const apiError = (code: number, reason: string) =>
  new ApiException(code, `HTTP ${code}`, JSON.stringify({ kind: 'Status', reason }), {});

interface PatchCall {
  name: string;
  namespace: string;
  body: { metadata: { uid: string }; status: Record<string, unknown> };
  contentType: string | undefined;
}

/** In-memory stand-in for the two Pod calls, enforcing the UID precondition like the API server. */
class FakePodApi implements PodStatusApi {
  readonly pods = new Map<string, Pod>();
  readonly reads: string[] = [];
  readonly patches: PatchCall[] = [];
  failNext: ApiException<string> | undefined;

  put(pod: Pod): void {
    this.pods.set(`${pod.metadata?.namespace}/${pod.metadata?.name}`, structuredClone(pod));
  }

  async readNamespacedPod(param: { name: string; namespace: string }): Promise<Pod> {
    const key = `${param.namespace}/${param.name}`;
    this.reads.push(key);
    const err = this.failNext;
    this.failNext = undefined;
    if (err) throw err;
    const pod = this.pods.get(key);
    if (!pod) throw apiError(404, 'NotFound');
    return structuredClone(pod);
  }

  async patchNamespacedPodStatus(param: { name: string; namespace: string; body: unknown }, options?: ConfigurationOptions): Promise<Pod> {
    let contentType: string | undefined;
    for (const m of (options?.middleware ?? []) as { pre?: (r: unknown) => unknown }[]) {
      m.pre?.({ setHeaderParam: (k: string, v: string) => (k === 'Content-Type' ? (contentType = v) : undefined) });
    }
    const body = param.body as PatchCall['body'];
    this.patches.push({ name: param.name, namespace: param.namespace, body: JSON.parse(JSON.stringify(body)), contentType });
    const key = `${param.namespace}/${param.name}`;
    const pod = this.pods.get(key);
    if (!pod) throw apiError(404, 'NotFound');
    if (body.metadata.uid !== pod.metadata?.uid) {
      // What kube-apiserver 1.34 answers: the patched uid is an immutable-field violation.
      throw new ApiException(422, 'HTTP 422', JSON.stringify({ kind: 'Status', reason: 'Invalid', details: { causes: [{ reason: 'FieldValueInvalid', field: 'metadata.uid' }] } }), {});
    }
    // Merge patch of the status: top-level keys replaced, as JSON.
    pod.status = { ...pod.status, ...(JSON.parse(JSON.stringify(body.status)) as V1PodStatus) };
    return structuredClone(pod);
  }
}

function setup(options: { provider?: StatusProvider; pods?: Pod[] } = {}) {
  const clock = new FakeClock(Date.parse('2026-03-01T10:00:00Z'));
  const podManager = new PodManager();
  podManager.setPods(options.pods ?? [staticPod()]);
  const api = new FakePodApi();
  const provider = options.provider ?? createSimulatedStatusProvider({ clock, startDelayMs: 0, hostIP: '10.0.0.5' });
  const results: StatusWriteResult[] = [];
  const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api, clock, onWrite: (r) => results.push(r) });
  return { clock, podManager, api, provider, writer, results };
}

// --- tests ------------------------------------------------------------------------------

describe('createMirrorStatusWriter', () => {
  it('keeps the status of a static pod without a mirror and writes it once the mirror appears', async () => {
    const { podManager, api, writer } = setup();
    await writer.syncBatch(false);
    await writer.syncBatch(true);
    assert.equal(api.reads.length + api.patches.length, 0, 'no API call without a mirror');
    assert.equal(writer.getPodStatus('static-1')?.phase, 'Running');

    const mirror = mirrorPod('mirror-1');
    api.put(mirror);
    podManager.addPod(mirror);
    await writer.syncBatch(false);
    assert.deepEqual(api.reads, ['default/web']);
    assert.equal(api.patches.length, 1);
    const patch = api.patches[0]!;
    assert.equal(patch.body.metadata.uid, 'mirror-1', 'UID precondition is the mirror UID');
    assert.equal(patch.contentType, 'application/merge-patch+json');
    assert.equal(patch.body.status.phase, 'Running');
    assert.equal(api.pods.get('default/web')?.status?.phase, 'Running');
    // A mirror UID is translated to its static pod's.
    assert.equal(writer.getPodStatus('mirror-1')?.phase, 'Running');
  });

  it('does not re-send an unchanged status, in incremental or full batches', async () => {
    const { podManager, api, writer, results } = setup();
    const mirror = mirrorPod('mirror-1');
    api.put(mirror);
    podManager.addPod(mirror);
    await writer.syncBatch(false);
    assert.equal(api.patches.length, 1);
    // The pod manager now sees the mirror as the API server stores it.
    podManager.updatePod(structuredClone(api.pods.get('default/web')!));
    await writer.syncBatch(false);
    await writer.syncBatch(true);
    await writer.syncBatch(true);
    assert.equal(api.patches.length, 1);
    assert.equal(api.reads.length, 1);
    assert.deepEqual(results, ['success']);
  });

  it('treats a status already on the mirror as written (the patch would only carry the uid)', async () => {
    const { podManager, api, writer, results, provider, clock } = setup();
    const desired = provider.statusFor(staticPod(), clock.now());
    const mirror = mirrorPod('mirror-1', 'static-1', 'web', { ...desired, qosClass: 'BestEffort' });
    api.put(mirror);
    podManager.addPod(mirror);
    await writer.syncBatch(false);
    assert.equal(api.reads.length, 1);
    assert.equal(api.patches.length, 0);
    assert.deepEqual(results, ['unchanged']);
  });

  it('writes a new version when the provider reports a change (incremental, on notification)', async () => {
    const clock = new FakeClock(Date.parse('2026-03-01T10:00:00Z'));
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 1000 });
    const podManager = new PodManager();
    const mirror = mirrorPod('mirror-1');
    podManager.setPods([staticPod(), mirror]);
    const api = new FakePodApi();
    api.put(mirror);
    const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api, clock, resyncIntervalMs: 10_000 });
    writer.start();
    await clock.advance(0);
    await settle();
    assert.equal(api.patches.length, 1);
    assert.equal(api.patches[0]?.body.status.phase, 'Pending');
    await clock.advance(1000);
    await settle();
    assert.equal(api.patches.length, 2, 'the Running status was written on the change notification, before the resync');
    assert.equal(api.patches[1]?.body.status.phase, 'Running');
    await writer.stop();
    provider.stop();
    assert.equal(clock.pendingTimers, 0);
  });

  it('drops the cached status and writes nothing when the mirror belongs to another static pod', async () => {
    // The kubelet's stale-translation case: by the time the mirror is read, the pod manager
    // maps its UID to another incarnation (static-2) of the static pod.
    const { podManager, api, writer } = setup({ pods: [staticPod('static-1'), mirrorPod('mirror-1', 'static-1')] });
    api.put(mirrorPod('mirror-1', 'static-1'));
    const translate = podManager.translatePodUID.bind(podManager);
    podManager.translatePodUID = ((uid: string) => (uid === 'mirror-1' ? 'static-2' : translate(uid))) as typeof podManager.translatePodUID;
    await writer.syncBatch(false);
    assert.deepEqual(api.reads, ['default/web']);
    assert.equal(api.patches.length, 0, "no write to another static pod's mirror");
    assert.equal(writer.getPodStatus('static-1'), undefined, 'cached status dropped');
  });

  it('sends the mirror UID as precondition: a replaced mirror is refused (422 on metadata.uid) and nothing throws', async () => {
    const { podManager, api, writer, results } = setup();
    podManager.addPod(mirrorPod('mirror-1'));
    api.put(mirrorPod('mirror-1'));
    // Between the GET and the PATCH the mirror is replaced by another object.
    const read = api.readNamespacedPod.bind(api);
    api.readNamespacedPod = async (p) => {
      const pod = await read(p);
      api.put(mirrorPod('mirror-new'));
      return pod;
    };
    await writer.syncBatch(false);
    assert.equal(api.patches.length, 1);
    assert.equal(api.patches[0]?.body.metadata.uid, 'mirror-1');
    assert.deepEqual(results, ['conflict']);
    assert.equal(api.pods.get('default/web')?.status?.phase, 'Pending', 'the new mirror was not written');
  });

  it('gives up silently on a missing mirror and retries after errors', async () => {
    const { podManager, api, writer, results } = setup();
    podManager.addPod(mirrorPod('mirror-1'));
    await writer.syncBatch(false); // not in the API: 404
    assert.equal(api.patches.length, 0);
    assert.deepEqual(results, []);
    api.put(mirrorPod('mirror-1'));
    api.failNext = apiError(500, 'InternalError');
    await writer.syncBatch(false);
    assert.deepEqual(results, ['error']);
    await writer.syncBatch(false);
    assert.equal(api.patches.length, 1);
    assert.deepEqual(results, ['error', 'success']);
  });

  it('full batches reconcile: a mirror status changed by someone else is written again', async () => {
    const { podManager, api, writer } = setup();
    podManager.addPod(mirrorPod('mirror-1'));
    api.put(mirrorPod('mirror-1'));
    await writer.syncBatch(false);
    assert.equal(api.patches.length, 1);
    // Someone resets the mirror's phase; the pod manager sees it.
    const tampered = api.pods.get('default/web')!;
    tampered.status = { ...tampered.status, phase: 'Unknown' };
    podManager.updatePod(structuredClone(tampered));
    await writer.syncBatch(false);
    assert.equal(api.patches.length, 1, 'incremental batches only write new versions');
    await writer.syncBatch(true);
    assert.equal(api.patches.length, 2);
    assert.equal(api.pods.get('default/web')?.status?.phase, 'Running');
  });

  it('keeps conditions the kubelet does not own', async () => {
    const { podManager, api, writer } = setup();
    const mirror = mirrorPod('mirror-1', 'static-1', 'web', {
      phase: 'Pending',
      conditions: [{ type: 'example.com/Gate', status: 'True' }],
    });
    podManager.addPod(mirror);
    api.put(mirror);
    await writer.syncBatch(false);
    const types = (api.patches[0]?.body.status.conditions as { type: string }[]).map((c) => c.type);
    assert.ok(types.includes('example.com/Gate'));
    assert.ok(types.includes('Ready'));
  });

  it('stops publishing a static pod that left the pod manager', async () => {
    const { podManager, api, writer } = setup();
    await writer.syncBatch(false);
    podManager.setPods([]);
    await writer.syncBatch(true);
    assert.equal(writer.getPodStatus('static-1'), undefined);
    assert.equal(api.reads.length, 0);
  });

  it('incremental batches ask the provider only about new pods and pods it reported changed; full batches ask about all', async () => {
    const asked: string[] = [];
    let notify: ((uid: string) => void) | undefined;
    const provider: StatusProvider = {
      statusFor: (pod) => {
        asked.push(pod.metadata!.uid!);
        return { phase: 'Running' };
      },
      onChange: (listener) => {
        notify = listener;
        return () => {};
      },
    };
    const pods = [staticPod('s1', 'a'), staticPod('s2', 'b'), staticPod('s3', 'c')];
    const { writer } = setup({ provider, pods });
    writer.start();
    await writer.syncBatch(false);
    assert.deepEqual(asked.sort(), ['s1', 's2', 's3'], 'new pods are asked about');
    asked.length = 0;
    await writer.syncBatch(false);
    assert.deepEqual(asked, [], 'nothing changed: nothing asked');
    notify!('s2');
    await writer.syncBatch(false);
    assert.deepEqual(asked, ['s2'], 'only the pod the provider reported');
    asked.length = 0;
    await writer.syncBatch(true);
    assert.deepEqual(asked.sort(), ['s1', 's2', 's3'], 'a full batch asks about every pod');
    await writer.stop();
  });

  it('rejects a non-positive resync interval', () => {
    const { podManager, api, provider } = setup();
    assert.throws(
      () => createMirrorStatusWriter({ podManager, api, statusProvider: provider, resyncIntervalMs: 0 }),
      (err: unknown) => hasErrorCode(err, 'KP_ERR_STATUS_OPTIONS'),
    );
  });
});

describe('mergeStatus / sameStatus', () => {
  it('normalises times to seconds, ignores empty values and server-only fields', () => {
    const ours: V1PodStatus = {
      phase: 'Running',
      startTime: new Date('2026-01-01T00:00:00.000Z'),
      containerStatuses: [{ name: 'a', image: 'x', imageID: '', ready: true, restartCount: 0 }],
    };
    const theirs = JSON.parse(
      '{"phase":"Running","qosClass":"BestEffort","startTime":"2026-01-01T00:00:00Z","containerStatuses":[{"name":"a","image":"x","ready":true,"restartCount":0}]}',
    ) as V1PodStatus;
    assert.ok(sameStatus(ours, theirs));
    assert.ok(!sameStatus({ ...ours, phase: 'Pending' }, theirs));
  });

  it('takes kubelet conditions from ours and others from the API object', () => {
    const merged = mergeStatus(
      { conditions: [{ type: 'Ready', status: 'False' }, { type: 'x/Custom', status: 'True' }], resourceClaimStatuses: [{ name: 'c' }] },
      { conditions: [{ type: 'Ready', status: 'True' }] },
    );
    assert.deepEqual(merged.conditions, [{ type: 'x/Custom', status: 'True' }, { type: 'Ready', status: 'True' }]);
    assert.deepEqual(merged.resourceClaimStatuses, [{ name: 'c' }]);
  });
});
