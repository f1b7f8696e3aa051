// The mirror status writer: the static/mirror part of the kubelet's status manager
// (pkg/kubelet/status/status_manager_test.go: TestStaticPod, TestSyncBatch*, TestReconcilePodStatus).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiException, type ConfigurationOptions, type V1PodStatus } from '@kubernetes/client-node';
import { pino } from 'pino';
import { CONFIG_MIRROR_ANNOTATION_KEY, CONFIG_SOURCE_ANNOTATION_KEY } from '../../../src/constants.js';
import { hasErrorCode } from '../../../src/errors.js';
import { PodManager } from '../../../src/pod/manager.js';
import type { Pod } from '../../../src/pod/types.js';
import {
  createMirrorStatusWriter,
  type PodStatusApi,
  type StatusPodManager,
  type StatusWriteResult,
} from '../../../src/status/mirror-status-writer.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import type { StatusProvider } from '../../../src/status/status-provider.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

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

type Item = Record<string, unknown>;

/**
 * In-memory stand-in for the status PATCH, enforcing the UID precondition like the API server,
 * which gives every object it stores a new resourceVersion (one counter, as etcd's revision).
 */
class FakePodApi implements PodStatusApi {
  readonly pods = new Map<string, Pod>();
  readonly patches: PatchCall[] = [];
  failNext: ApiException<string> | undefined;
  #revision = 0;

  /** Stores `pod` as the server would (a new resourceVersion) and returns what it stored. */
  put(pod: Pod): Pod {
    const stored = structuredClone(pod);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.#revision) };
    this.pods.set(`${pod.metadata?.namespace}/${pod.metadata?.name}`, stored);
    return structuredClone(stored);
  }

  /** The reads made, by namespace/name. */
  readonly reads: string[] = [];

  failNextRead: ApiException<string> | undefined;

  async readNamespacedPod(param: { name: string; namespace: string }): Promise<Pod> {
    const key = `${param.namespace}/${param.name}`;
    this.reads.push(key);
    const err = this.failNextRead;
    this.failNextRead = undefined;
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
    // As JSON, like the wire (times become strings).
    const body = JSON.parse(JSON.stringify(param.body)) as PatchCall['body'];
    this.patches.push({ name: param.name, namespace: param.namespace, body, contentType });
    const err = this.failNext;
    this.failNext = undefined;
    if (err) throw err;
    const key = `${param.namespace}/${param.name}`;
    const pod = this.pods.get(key);
    if (!pod) throw apiError(404, 'NotFound');
    if (body.metadata.uid !== pod.metadata?.uid) {
      // What kube-apiserver 1.34 answers: the patched uid is an immutable-field violation.
      throw new ApiException(422, 'HTTP 422', JSON.stringify({ kind: 'Status', reason: 'Invalid', details: { causes: [{ reason: 'FieldValueInvalid', field: 'metadata.uid' }] } }), {});
    }
    pod.status = strategicMerge(JSON.parse(JSON.stringify(pod.status ?? {})) as Item, body.status) as V1PodStatus;
    pod.metadata = { ...pod.metadata, resourceVersion: String(++this.#revision) };
    return structuredClone(pod);
  }
}

// The API server's strategic merge of a pod status patch, for what the writer sends: null
// deletes a field; conditions merge by type and podIPs/hostIPs by ip, element by element,
// unless the list carries `$patch: replace`; other fields are replaced.
function strategicMerge(current: Item, patch: Item): Item {
  const mergeKeys: Record<string, string> = { conditions: 'type', podIPs: 'ip', hostIPs: 'ip' };
  const out = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    const mergeKey = mergeKeys[key];
    if (value === null) delete out[key];
    else if (mergeKey === undefined) out[key] = value;
    else out[key] = mergeList((out[key] ?? []) as Item[], value as Item[], mergeKey);
  }
  return out;
}

function mergeList(current: Item[], patch: Item[], mergeKey: string): Item[] {
  if (patch.some((i) => i.$patch === 'replace')) return patch.filter((i) => i.$patch === undefined);
  const out = [...current];
  for (const item of patch) {
    const at = out.findIndex((o) => o[mergeKey] === item[mergeKey]);
    const merged: Item = at < 0 ? {} : { ...out[at] };
    for (const [k, v] of Object.entries(item)) {
      if (v === null) delete merged[k];
      else merged[k] = v;
    }
    if (at < 0) out.push(merged);
    else out[at] = merged;
  }
  return out;
}

/** A pod whose `status` reads are counted (the writer's comparisons read it). */
function countStatusReads(pod: Pod): { pod: Pod; reads: () => number } {
  let reads = 0;
  const { status, ...rest } = pod;
  const counted = { ...rest } as Pod;
  Object.defineProperty(counted, 'status', { enumerable: true, get: () => (reads++, status) });
  return { pod: counted, reads: () => reads };
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

/** A started writer with the mirror in place, over a provider that reports a change when told. */
function startWithNotifyingProvider(statusFor: () => V1PodStatus) {
  let listener: ((uid: string) => void) | undefined;
  const provider: StatusProvider = {
    statusFor,
    onChange: (l) => {
      listener = l;
      return () => {};
    },
  };
  const parts = setup({ provider });
  parts.writer.start();
  parts.podManager.addPod(mirrorPod('mirror-1'));
  parts.api.put(mirrorPod('mirror-1'));
  return { ...parts, notify: () => listener!('static-1') };
}

// --- tests ------------------------------------------------------------------------------

const conditionTypes = (status: Record<string, unknown> | V1PodStatus | undefined) =>
  ((status?.conditions ?? []) as { type: string }[]).map((c) => c.type).sort();

describe('createMirrorStatusWriter', () => {
  it('keeps the status of a static pod without a mirror and writes it once the mirror appears', async () => {
    const { podManager, api, writer } = setup();
    await writer.syncBatch(false);
    await writer.syncBatch(true);
    assert.equal(api.patches.length, 0, 'no API call without a mirror');
    assert.equal(writer.getPodStatus('static-1')?.phase, 'Running');

    const mirror = mirrorPod('mirror-1');
    api.put(mirror);
    podManager.addPod(mirror);
    await writer.syncBatch(false);
    assert.equal(api.patches.length, 1, 'one request per write: the PATCH, no GET');
    const patch = api.patches[0]!;
    assert.equal(patch.body.metadata.uid, 'mirror-1', 'UID precondition is the mirror UID');
    assert.equal(patch.contentType, 'application/strategic-merge-patch+json');
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
    assert.deepEqual(results, ['success']);
  });

  it('treats a status already on the mirror as written (the patch would only carry the uid)', async () => {
    const { podManager, api, writer, results, provider, clock } = setup();
    const desired = provider.statusFor(staticPod(), clock.now());
    const mirror = mirrorPod('mirror-1', 'static-1', 'web', { ...desired, qosClass: 'BestEffort' });
    api.put(mirror);
    podManager.addPod(mirror);
    await writer.syncBatch(false);
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
    // Pending set a reason on Ready; the strategic merge must not keep it on the True condition.
    const ready = api.pods.get('default/web')?.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(ready?.reason, undefined);
    await writer.stop();
    provider.stop();
    assert.equal(clock.pendingTimers, 0);
  });

  it('drops the cached status and writes nothing when the mirror belongs to another static pod', async () => {
    // The kubelet's stale-translation case: the pod manager maps the mirror's UID to another
    // incarnation (static-2) of the static pod.
    const { podManager, api, writer, results } = setup({ pods: [staticPod('static-1'), mirrorPod('mirror-1', 'static-1')] });
    api.put(mirrorPod('mirror-1', 'static-1'));
    const translate = podManager.translatePodUID.bind(podManager);
    podManager.translatePodUID = ((uid: string) => (uid === 'mirror-1' ? 'static-2' : translate(uid))) as typeof podManager.translatePodUID;
    await writer.syncBatch(false);
    assert.equal(api.patches.length, 0, "no write to another static pod's mirror");
    assert.deepEqual(results, []);
    assert.equal(writer.getPodStatus('static-1'), undefined, 'cached status dropped');
  });

  it('sends the mirror UID as precondition: a replaced mirror is refused (422 on metadata.uid) and nothing throws', async () => {
    const { podManager, api, writer, results } = setup();
    // The pod manager still holds mirror-1; in the API server it was replaced by another object.
    podManager.addPod(mirrorPod('mirror-1'));
    api.put(mirrorPod('mirror-new'));
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
    assert.deepEqual(results, []);
    api.put(mirrorPod('mirror-1'));
    api.failNext = apiError(500, 'InternalError');
    await writer.syncBatch(false);
    assert.deepEqual(results, ['error']);
    await writer.syncBatch(false);
    assert.deepEqual(results, ['error', 'success']);
    assert.equal(api.pods.get('default/web')?.status?.phase, 'Running');
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

  it("sends only the kubelet's conditions, so others' survive the server's merge", async () => {
    const { podManager, api, writer } = setup({
      provider: {
        statusFor: () => ({
          phase: 'Running',
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'example.com/Ours', status: 'True' },
          ],
          resourceClaimStatuses: [{ name: 'claim' }],
          podIP: '10.0.0.9',
          podIPs: [{ ip: '10.0.0.9' }],
        }),
      },
    });
    // The pod manager's copy does not know the foreign condition: it need not.
    podManager.addPod(mirrorPod('mirror-1'));
    api.put(
      mirrorPod('mirror-1', 'static-1', 'web', {
        phase: 'Pending',
        conditions: [
          { type: 'example.com/Gate', status: 'True' },
          { type: 'Ready', status: 'False', reason: 'ContainersNotReady' },
        ],
        podIP: '10.0.0.1',
        podIPs: [{ ip: '10.0.0.1' }],
      }),
    );
    await writer.syncBatch(false);
    const sent = api.patches[0]?.body.status;
    assert.deepEqual(conditionTypes(sent), ['Ready'], 'only kubelet-owned conditions are sent');
    assert.equal(sent?.resourceClaimStatuses, undefined);
    const stored = api.pods.get('default/web')?.status;
    assert.deepEqual(conditionTypes(stored), ['Ready', 'example.com/Gate']);
    assert.deepEqual(stored?.conditions?.find((c) => c.type === 'Ready'), { type: 'Ready', status: 'True' }, 'fields we leave out are cleared');
    assert.deepEqual(stored?.podIPs, [{ ip: '10.0.0.9' }], 'pod IPs are replaced, not merged');
  });

  it('stops publishing a static pod that left the pod manager', async () => {
    const forgotten: string[] = [];
    const simulated = createSimulatedStatusProvider({ startDelayMs: 0 });
    const { podManager, api, writer } = setup({ provider: { statusFor: (p, now) => simulated.statusFor(p, now), forget: (uid) => forgotten.push(uid) } });
    await writer.syncBatch(false);
    podManager.setPods([]);
    await writer.syncBatch(true);
    assert.equal(writer.getPodStatus('static-1'), undefined);
    assert.deepEqual(forgotten, ['static-1']);
    assert.equal(api.patches.length, 0);
  });

  it('asks a provider with change notifications only about new pods and pods it reported changed, in any batch', async () => {
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
    await writer.syncBatch(true);
    assert.deepEqual(asked, [], 'nothing changed: nothing asked, not even by a full batch');
    notify!('s2');
    await writer.syncBatch(true);
    assert.deepEqual(asked, ['s2'], 'only the pod the provider reported');
    await writer.stop();
  });

  it('polls a provider without change notifications on every full batch', async () => {
    const asked: string[] = [];
    const provider: StatusProvider = {
      statusFor: (pod) => {
        asked.push(pod.metadata!.uid!);
        return { phase: 'Running' };
      },
    };
    const { writer } = setup({ provider, pods: [staticPod('s1', 'a'), staticPod('s2', 'b')] });
    await writer.syncBatch(false);
    asked.length = 0;
    await writer.syncBatch(false);
    assert.deepEqual(asked, []);
    await writer.syncBatch(true);
    assert.deepEqual(asked.sort(), ['s1', 's2']);
  });

  it('does not version a status again when only time precision or condition order differ', async () => {
    let calls = 0;
    let notify: ((uid: string) => void) | undefined;
    const provider: StatusProvider = {
      statusFor: () => {
        calls++;
        const ready = { type: 'Ready', status: 'True', lastTransitionTime: new Date('2026-03-01T10:00:00.000Z') };
        const scheduled = { type: 'PodScheduled', status: 'True' };
        if (calls === 1) return { phase: 'Running', conditions: [ready, scheduled] };
        return { phase: 'Running', message: '', conditions: [scheduled, { ...ready, lastTransitionTime: new Date('2026-03-01T10:00:00.400Z') }] };
      },
      onChange: (listener) => {
        notify = listener;
        return () => {};
      },
    };
    const { podManager, api, writer } = setup({ provider });
    writer.start();
    podManager.addPod(mirrorPod('mirror-1'));
    api.put(mirrorPod('mirror-1'));
    await writer.syncBatch(false);
    assert.equal(api.patches.length, 1);
    notify!('static-1');
    await writer.syncBatch(false);
    assert.equal(calls, 2);
    assert.equal(api.patches.length, 1, 'the same status: no new version, nothing sent');
    await writer.stop();
  });

  it('a full batch with nothing changed neither asks the provider nor compares the same mirror again', async () => {
    let asked = 0;
    const provider: StatusProvider = {
      statusFor: () => {
        asked++;
        return { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
      },
      onChange: () => () => {},
    };
    const { podManager, api, writer, results } = setup({ provider });
    writer.start();
    podManager.addPod(mirrorPod('mirror-1'));
    api.put(mirrorPod('mirror-1'));
    await writer.syncBatch(false);
    assert.deepEqual(results, ['success']);
    // Our write comes back through the watch as a new object.
    const seen = countStatusReads(structuredClone(api.pods.get('default/web')!));
    podManager.updatePod(seen.pod);
    await writer.syncBatch(true);
    const readsAfterFirstCompare = seen.reads();
    assert.ok(readsAfterFirstCompare > 0, 'the new mirror object is compared once');
    for (let i = 0; i < 3; i++) await writer.syncBatch(true);
    assert.equal(seen.reads(), readsAfterFirstCompare, 'the same mirror object and version are not compared again');
    assert.equal(asked, 1, 'the provider was asked once, when the pod was new');
    assert.deepEqual(results, ['success'], 'nothing written');

    // Someone else changes the mirror's status: the pod manager gets a new object, and the
    // next full batch compares it and writes ours again.
    const tampered = api.pods.get('default/web')!;
    tampered.status = { ...tampered.status, phase: 'Unknown' };
    podManager.updatePod(structuredClone(tampered));
    await writer.syncBatch(true);
    assert.deepEqual(results, ['success', 'success']);
    assert.equal(api.pods.get('default/web')?.status?.phase, 'Running');
    await writer.stop();
  });

  it("does not trust a mirror copy older than its own last write to say 'unchanged'", async () => {
    let phase = 'Pending';
    const { api, writer, results, notify } = startWithNotifyingProvider(() => ({ phase }));
    await writer.syncBatch(false);
    assert.deepEqual(results, ['unchanged'], 'the mirror already shows Pending');
    phase = 'Running';
    notify();
    await writer.syncBatch(false);
    // Back to Pending before the watch delivered the Running write: the pod manager's copy
    // still shows Pending, but the server holds Running.
    phase = 'Pending';
    notify();
    await writer.syncBatch(false);
    assert.deepEqual(results, ['unchanged', 'success', 'success']);
    assert.equal(api.pods.get('default/web')?.status?.phase, 'Pending');
    await writer.stop();
  });

  it('a full batch does not write a status again for the late echo of an earlier write (the kubelet reads the pod before writing)', async () => {
    // Under load the watch lags: the Pending write comes back only after Running was written.
    // The kubelet's reconciliation reads the pod from the server first (status_manager.go,
    // syncPod) and finds Running there, so it sends nothing; neither may we.
    let phase = 'Pending';
    let listener: ((uid: string) => void) | undefined;
    const provider: StatusProvider = {
      statusFor: () => ({ phase, hostIP: '10.0.0.5' }),
      onChange: (l) => {
        listener = l;
        return () => {};
      },
    };
    const { podManager, api, writer, results } = setup({ provider });
    writer.start();
    podManager.addPod(api.put(mirrorPod('mirror-1')));
    await writer.syncBatch(false);
    assert.deepEqual(results, ['success'], 'Pending written');
    const pendingEcho = structuredClone(api.pods.get('default/web')!);
    phase = 'Running';
    listener!('static-1');
    await writer.syncBatch(false);
    assert.deepEqual(results, ['success', 'success'], 'Running written, the watch still behind');
    const runningEcho = structuredClone(api.pods.get('default/web')!);

    podManager.updatePod(pendingEcho);
    await writer.syncBatch(true);
    assert.equal(api.patches.length, 2, 'the late echo of the Pending write is no reason to write Running again');
    assert.deepEqual(api.reads, ['default/web'], 'the server was read, as the kubelet reads it');
    assert.equal(api.pods.get('default/web')?.status?.phase, 'Running');

    podManager.updatePod(runningEcho);
    await writer.syncBatch(true);
    assert.equal(api.patches.length, 2, 'the watch caught up: in sync');

    // Someone else changes the status afterwards: reconciled as before.
    const tampered = structuredClone(api.pods.get('default/web')!);
    tampered.status = { ...tampered.status, phase: 'Unknown' };
    podManager.updatePod(api.put(tampered));
    await writer.syncBatch(true);
    assert.equal(api.patches.length, 3, 'a newer change by someone else is written over');
    assert.equal(api.pods.get('default/web')?.status?.phase, 'Running');
    await writer.stop();
  });

  it("with the merger's copies (a status-only change keeps the first-seen resourceVersion), lets go of a written status and writes over someone else's change", async () => {
    let asked = 0;
    const running: V1PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    const { podManager, api, writer, results } = startWithNotifyingProvider(() => (asked++, structuredClone(running)));
    const first = podManager.getMirrorPodByPod(podManager.getPodByUID('static-1')!)!;
    // What the watch delivers, as the merger stores it: the server's status on the first metadata.
    const watchShowsServer = () => podManager.updatePod({ ...first, status: structuredClone(api.pods.get('default/web')!.status) });
    await writer.syncBatch(false);
    assert.deepEqual(results, ['success']);
    watchShowsServer();
    await writer.syncBatch(true);
    assert.equal(writer.getPodStatus('static-1')?.phase, 'Running');
    assert.equal(asked, 2, 'the status was let go once the copy showed it written');
    assert.deepEqual(api.reads, [], 'the copy shows the write: nothing to ask the server');

    // Someone else sets Ready False: the next full batch reads the pod and writes Ready back.
    api.pods.get('default/web')!.status!.conditions = [{ type: 'Ready', status: 'False', reason: 'Tampered' }];
    watchShowsServer();
    await writer.syncBatch(true);
    assert.deepEqual(results, ['success', 'success'], "someone else's change is written over");
    assert.deepEqual(api.reads, ['default/web']);
    assert.equal(api.pods.get('default/web')?.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    await writer.stop();
  });

  it('the read before writing over a changed copy: a failed read lets the write go ahead; a mirror gone or replaced on the server gets none', async () => {
    const running: V1PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    // A writer that wrote Running, then someone else set Ready False (the watch showed it).
    const tampered = async () => {
      const parts = startWithNotifyingProvider(() => structuredClone(running));
      await parts.writer.syncBatch(false);
      assert.deepEqual(parts.results, ['success']);
      const first = parts.podManager.getMirrorPodByPod(parts.podManager.getPodByUID('static-1')!)!;
      parts.api.pods.get('default/web')!.status!.conditions = [{ type: 'Ready', status: 'False', reason: 'Tampered' }];
      parts.podManager.updatePod({ ...first, status: structuredClone(parts.api.pods.get('default/web')!.status) });
      return parts;
    };

    const failed = await tampered();
    failed.api.failNextRead = apiError(500, 'InternalError');
    await failed.writer.syncBatch(true);
    assert.deepEqual(failed.results, ['success', 'success'], 'the read failed: written as without it');
    assert.equal(failed.api.reads.length, 1);
    await failed.writer.stop();

    const gone = await tampered();
    gone.api.pods.delete('default/web');
    await gone.writer.syncBatch(true);
    assert.deepEqual([gone.api.reads.length, gone.api.patches.length], [1, 1], 'read, found gone, nothing written');
    await gone.writer.stop();

    // Replaced on the server (another UID under the name) before the watch told the pod manager.
    const replaced = await tampered();
    const other = structuredClone(replaced.api.pods.get('default/web')!);
    other.metadata = { ...other.metadata, uid: 'mirror-2' };
    replaced.api.pods.set('default/web', other);
    await replaced.writer.syncBatch(true);
    assert.deepEqual([replaced.api.reads.length, replaced.api.patches.length], [1, 1], 'read, found replaced, nothing written');
    assert.equal(replaced.api.pods.get('default/web')?.status?.conditions?.[0]?.reason, 'Tampered');
    await replaced.writer.stop();
  });

  it('a batch requested for the pods of an update looks at those pods only, and forgets removed ones', async () => {
    const clock = new FakeClock(Date.parse('2026-03-01T10:00:00Z'));
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 0 });
    let asked = 0;
    const counting: StatusProvider = { ...provider, onChange: provider.onChange.bind(provider), forget: provider.forget.bind(provider), statusFor: (pod, now) => (asked++, provider.statusFor(pod, now)) };
    const podManager = new PodManager();
    const statics = Array.from({ length: 200 }, (_, i) => staticPod(`static-${i}`, `web-${i}`));
    podManager.setPods(statics);
    let mirrorLookups = 0;
    const countingPm: StatusPodManager = {
      getPods: () => podManager.getPods(),
      getPodByUID: (uid) => podManager.getPodByUID(uid),
      getPodByFullName: (name) => podManager.getPodByFullName(name),
      translatePodUID: (uid) => podManager.translatePodUID(uid),
      getMirrorPodByPod: (pod) => (mirrorLookups++, podManager.getMirrorPodByPod(pod)),
    };
    const api = new FakePodApi();
    const writer = createMirrorStatusWriter({ podManager: countingPm, statusProvider: counting, api, clock });
    writer.start();
    await clock.advance(0); // the first full batch
    await settle();
    assert.equal(asked, 200);
    asked = 0;
    mirrorLookups = 0;

    // The mirror of web-7 arrives through the API source: only web-7 is looked at, and written.
    const mirror = mirrorPod('mirror-7', 'static-7', 'web-7');
    api.put(mirror);
    podManager.addPod(mirror);
    writer.requestSync([mirror]);
    await clock.advance(0);
    await settle();
    assert.equal(mirrorLookups, 1, 'one static pod looked at, not 200');
    assert.equal(asked, 0, 'its status was already known');
    assert.deepEqual(api.patches.map((p) => p.name), ['web-7']);

    // web-3 is removed: its status is forgotten without a scan.
    podManager.removePod(statics[3]!);
    writer.requestSync([statics[3]!]);
    await clock.advance(0);
    await settle();
    assert.equal(writer.getPodStatus('static-3'), undefined);
    assert.ok(writer.getPodStatus('static-4'));
    await writer.stop();
    provider.stop();
  });

  it('logs a failed write as a registry error with status, reason and the Status message, never headers or the raw body', async () => {
    const secret = 'token-6f1d2c';
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const clock = new FakeClock(Date.parse('2026-03-01T10:00:00Z'));
    const podManager = new PodManager();
    const mirror = mirrorPod('mirror-1');
    podManager.setPods([staticPod(), mirror]);
    const api = new FakePodApi();
    api.put(mirror);
    api.failNext = new ApiException(500, `HTTP 500 ${secret}`, JSON.stringify({ kind: 'Status', reason: 'InternalError', message: 'etcd is unavailable', details: { name: secret } }), {
      'www-authenticate': `Bearer ${secret}`,
    });
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 0 });
    const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api, clock, logger });
    await writer.syncBatch(false);
    const warn = lines.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.msg === 'failed to write pod status');
    assert.ok(warn, 'the failure was logged');
    assert.equal(warn.err.type, 'KubeletPodsError', 'err is logged as an Error');
    assert.equal(warn.err.code, 'KP_ERR_STATUS_WRITE');
    assert.match(warn.err.message, /HTTP 500 InternalError/);
    assert.equal(warn.httpStatus, 500);
    assert.equal(warn.pod, 'web_default');
    assert.match(lines.join('\n'), /etcd is unavailable/, "the server's Status message is kept, as the cause");
    assert.ok(!lines.join('\n').includes(secret), 'no header and nothing else of the response reaches the log');
  });

  it('logs a batch that fails as a whole (the provider threw) and keeps going', async () => {
    const lines: string[] = [];
    const logger = pino({}, { write: (line: string) => void lines.push(line) });
    const cause = new Error('provider broke');
    let fail = true;
    const provider: StatusProvider = {
      statusFor: () => {
        if (fail) throw cause;
        return { phase: 'Running' };
      },
    };
    const podManager = new PodManager();
    podManager.setPods([staticPod()]);
    const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api: new FakePodApi(), logger });
    await writer.syncBatch(true);
    const error = lines.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.msg === 'status batch failed');
    assert.ok(error, 'the failure was logged');
    assert.equal(error.err.code, 'KP_ERR_STATUS_BATCH');
    assert.match(error.err.message, /full status batch failed: provider broke/, 'the cause is part of the logged error');
    fail = false;
    await writer.syncBatch(true);
    assert.equal(writer.getPodStatus('static-1')?.phase, 'Running', 'the next batch ran');
  });

  it("lets go of a status once the watch shows it written, and versions and writes the provider's next ones as before", async () => {
    let current: V1PodStatus = {
      phase: 'Running',
      message: 'starting',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: new Date('2026-03-01T10:00:00.000Z') },
        { type: 'example.com/gate', status: 'True' },
      ],
    };
    let asked = 0;
    const { podManager, api, writer, results, notify } = startWithNotifyingProvider(() => (asked++, structuredClone(current)));
    const watchShowsServer = () => podManager.updatePod(structuredClone(api.pods.get('default/web')!));
    const change = async (next: V1PodStatus) => {
      current = next;
      notify();
      await writer.syncBatch(false);
      watchShowsServer();
      await writer.syncBatch(true);
    };
    await writer.syncBatch(false);
    assert.deepEqual(results, ['success']);
    watchShowsServer();
    await writer.syncBatch(true);
    assert.equal(asked, 1);
    // Let go: what the writer answers for the pod is the provider's again.
    assert.equal(writer.getPodStatus('static-1')?.phase, 'Running');
    assert.equal(asked, 2, 'the status was let go once the watch showed it written');

    // Only milliseconds and condition order differ: the same status, no new version.
    await change({ ...current, conditions: [current.conditions![1]!, { ...current.conditions![0]!, lastTransitionTime: new Date('2026-03-01T10:00:00.600Z') }] });
    assert.deepEqual(results, ['success']);
    // The message is gone and the gate (not the kubelet's) changed: a new version, as against
    // the status itself, though the server's object, compared by the kubelet's fields, needs
    // no write (a patch does not remove a field it leaves out).
    await change({ ...current, message: undefined, conditions: [current.conditions![1]!, { type: 'example.com/gate', status: 'False' }] });
    assert.deepEqual(results, ['success', 'unchanged']);
    // A change of the kubelet's own.
    await change({ ...current, phase: 'Succeeded' });
    assert.deepEqual(results, ['success', 'unchanged', 'success']);
    assert.equal(api.pods.get('default/web')?.status?.phase, 'Succeeded');
    assert.equal(api.pods.get('default/web')?.status?.message, 'starting', 'never sent as empty');

    // The mirror is replaced (a new UID): the status let go is asked for again and written to it.
    podManager.removePod(podManager.getMirrorPodByPod(podManager.getPodByUID('static-1')!)!);
    const replaced = mirrorPod('mirror-2');
    api.put(replaced);
    podManager.addPod(replaced);
    const before = asked;
    await writer.syncBatch(true);
    assert.deepEqual(results, ['success', 'unchanged', 'success', 'success']);
    assert.equal(api.patches.at(-1)?.body.metadata.uid, 'mirror-2');
    assert.equal(api.patches.at(-1)?.body.status.phase, 'Succeeded');
    assert.equal(asked, before + 1);
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

/** A writer publishing one ordinary pod; `current` is the pod as the pod source last showed it. */
function setupOrdinary(first: Pod, current: () => Pod = () => first) {
  const clock = new FakeClock(Date.parse('2026-03-01T10:00:00Z'));
  const podManager = new PodManager();
  podManager.setPods([first]);
  const api = new FakePodApi();
  api.put(first);
  const provider = createSimulatedStatusProvider({ clock, startDelayMs: 0, hostIP: '10.0.0.5' });
  const uid = first.metadata?.uid;
  const writer = createMirrorStatusWriter({
    podManager,
    statusProvider: provider,
    api,
    clock,
    publishedPods: { list: () => [current()], byUID: (u) => (u === uid ? current() : undefined) },
  });
  return { podManager, api, provider, writer };
}

describe('published pods (the kubelet lifecycle)', () => {
  it("an ordinary pod's status is written to the pod itself, with its own UID as precondition", async () => {
    const { api, writer } = setupOrdinary({
      metadata: { name: 'plain', namespace: 'default', uid: 'api-1', annotations: { [CONFIG_SOURCE_ANNOTATION_KEY]: 'api' } },
      spec: { nodeName: 'node-a', containers: [{ name: 'app', image: 'nginx' }] },
      status: { phase: 'Pending', qosClass: 'BestEffort' },
    });
    await writer.syncBatch(true);
    assert.equal(api.patches.length, 1);
    assert.equal(api.patches[0]!.name, 'plain');
    assert.equal(api.patches[0]!.body.metadata.uid, 'api-1');
    assert.equal(api.pods.get('default/plain')?.status?.phase, 'Running');
  });

  it("writes the pod's generation as observedGeneration, on the status and the kubelet's conditions, and again when it changes", async () => {
    let plain: Pod = {
      metadata: { name: 'plain', namespace: 'default', uid: 'api-1', generation: 2, annotations: { [CONFIG_SOURCE_ANNOTATION_KEY]: 'api' } },
      spec: { nodeName: 'node-a', containers: [{ name: 'app', image: 'nginx' }] },
      status: { phase: 'Pending', qosClass: 'BestEffort', conditions: [{ type: 'example.com/Gate', status: 'True' }] },
    };
    const { podManager, api, provider, writer } = setupOrdinary(plain, () => plain);
    const generations = (status: Record<string, unknown> | V1PodStatus | undefined) =>
      Object.fromEntries(((status?.conditions ?? []) as { type: string; observedGeneration?: number }[]).map((c) => [c.type, c.observedGeneration]));
    await writer.syncBatch(true);
    assert.equal(api.patches.length, 1);
    assert.equal(api.patches[0]!.body.status.observedGeneration, 2);
    assert.deepEqual(generations(api.patches[0]!.body.status), { ContainersReady: 2, Initialized: 2, PodReadyToStartContainers: 2, PodScheduled: 2, Ready: 2 });
    // Another controller's condition is left as it was.
    assert.equal(generations(api.pods.get('default/plain')?.status)['example.com/Gate'], undefined);

    // The spec changes (generation 3) while the runtime's status does not: written again.
    plain = { ...structuredClone(api.pods.get('default/plain')!), metadata: { ...api.pods.get('default/plain')!.metadata, generation: 3 } };
    podManager.updatePod(plain);
    writer.requestSync([plain]);
    await writer.syncBatch(false);
    assert.equal(api.patches.length, 2);
    assert.equal(api.pods.get('default/plain')?.status?.observedGeneration, 3);
    assert.equal(generations(api.pods.get('default/plain')?.status).Ready, 3);
    await writer.stop();
    provider.stop();
  });

  it('a static pod (no generation) gets no observedGeneration on its mirror, as from the kubelet', async () => {
    const { podManager, api, writer } = setup();
    const mirror = mirrorPod('mirror-1');
    api.put(mirror);
    podManager.addPod(mirror);
    await writer.syncBatch(false);
    assert.equal(api.patches.length, 1);
    assert.equal('observedGeneration' in api.patches[0]!.body.status, false);
    const ready = (api.patches[0]!.body.status.conditions as Record<string, unknown>[]).find((c) => c.type === 'Ready');
    assert.equal(ready?.observedGeneration, null, 'sent as null, as every condition field we leave out');
  });

  it('a static pod that is not published (waiting to start) gets no write; its mirror keeps its status', async () => {
    const { clock, podManager, api, provider } = setup();
    podManager.updatePod(mirrorPod('mirror-1'));
    api.put(mirrorPod('mirror-1'));
    const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api, clock, publishedPods: { list: () => [], byUID: () => undefined } });
    await writer.syncBatch(true);
    assert.equal(api.patches.length, 0);
  });

  it('a pod published again after its status was forgotten (a UID restarted) has its next status written at once', async () => {
    const clock = new FakeClock(Date.parse('2026-03-01T10:00:00Z'));
    const podManager = new PodManager();
    const mirror = mirrorPod('mirror-1');
    podManager.setPods([staticPod(), mirror]);
    const api = new FakePodApi();
    api.put(mirror);
    let phase = 'Running';
    const provider: StatusProvider = { statusFor: () => ({ phase }), onChange: () => () => {} };
    let published = true;
    const writer = createMirrorStatusWriter({
      podManager,
      statusProvider: provider,
      api,
      clock,
      publishedPods: { list: () => (published ? [staticPod()] : []), byUID: (uid) => (published && uid === 'static-1' ? staticPod() : undefined) },
    });
    writer.start();
    await clock.advance(0);
    for (const next of ['Failed', 'Succeeded']) {
      phase = next;
      writer.invalidate('static-1');
      await clock.advance(0);
    }
    assert.deepEqual(api.patches.map((p) => p.body.status.phase), ['Running', 'Failed', 'Succeeded']);
    // Finished: no longer published, its status forgotten; then the same UID runs again.
    published = false;
    writer.invalidate('static-1');
    await clock.advance(0);
    published = true;
    phase = 'Running';
    writer.invalidate('static-1');
    await clock.advance(0);
    assert.deepEqual(api.patches.map((p) => p.body.status.phase), ['Running', 'Failed', 'Succeeded', 'Running'], 'not left to the next full batch');
    await writer.stop();
  });

  it("a static pod's status waits for its own mirror: one of another hash (an edited manifest's) is left as it is", async () => {
    const clock = new FakeClock(Date.parse('2026-03-01T10:00:00Z'));
    const podManager = new PodManager();
    const edited = staticPod('static-2');
    const outdated = mirrorPod('mirror-1', 'static-1', 'web', { phase: 'Running' });
    podManager.setPods([edited, outdated]);
    const api = new FakePodApi();
    api.put(outdated);
    const provider: StatusProvider = { statusFor: () => ({ phase: 'Pending' }), onChange: () => () => {} };
    const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api, clock });
    await writer.syncBatch(false);
    await writer.syncBatch(true);
    assert.equal(api.patches.length, 0, 'nothing written to the outdated mirror');
    // Mirror sync replaces it.
    podManager.removePod(outdated);
    const replacement = mirrorPod('mirror-2', 'static-2', 'web', {});
    api.pods.delete('default/web');
    api.put(replacement);
    podManager.addPod(replacement);
    await writer.syncBatch(false);
    assert.deepEqual(api.patches.map((p) => [p.body.metadata.uid, p.body.status.phase]), [['mirror-2', 'Pending']]);
  });

  it('a writer with no pods holds no tables of its own (a fleet node without pods makes none)', async () => {
    const podManager = new PodManager();
    const api = new FakePodApi();
    const provider: StatusProvider = { statusFor: () => ({ phase: 'Pending' }) };
    const bytes = await retainedBytesPer(20_000, () => createMirrorStatusWriter({ podManager, statusProvider: provider, api }));
    // About 410 bytes; with its two maps and weak set made up front, and a settled promise and
    // a closure of its own, about 1,120.
    assert.ok(bytes < 700, `${bytes.toFixed(1)} bytes per writer`);
    // Made at the first status, the tables work as before.
    const writer = createMirrorStatusWriter({ podManager, statusProvider: provider, api });
    const pod = staticPod();
    const mirror = mirrorPod('mirror-1', 'static-1', 'web', {});
    podManager.setPods([pod, mirror]);
    api.put(mirror);
    await writer.syncBatch(true);
    assert.deepEqual(api.patches.map((p) => p.body.status.phase), ['Pending']);
    assert.equal(writer.getPodStatus('static-1')?.phase, 'Pending');
  });
});
