// The differential suite's event-sequence helpers on their own (test/differential/
// event-sequence.ts, request-body.ts): how watch records become compared steps, and how a
// DELETE's options are read from the kubelet's protobuf and our agent's JSON. (No kubelet
// counterpart: test infrastructure.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import type { RecordedRequest } from '../../differential/api-proxy.js';
import { podOfRequest } from '../../differential/api-proxy.js';
import {
  clusterDNSWarnings,
  collapse,
  eventContext,
  eventReasons,
  leaseSteps,
  nodeSteps,
  outsideWindow,
  podSteps,
  reaction,
  realTimingOff,
  refusedRequests,
  requestCounts,
  requestsAboutPod,
  settledSteps,
  summarisePodStatus,
  windowSteps,
  type ApiObject,
  type Step,
  type WatchRecord,
} from '../../differential/event-sequence.js';
import { decodeProtobufDeleteOptions, describeDeleteOptions, readDeleteOptions, readObjectName } from '../../differential/request-body.js';

// --- a minimal protobuf writer, to build bodies as client-go sends them ---------------------
function varint(n: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return out;
}
const varintField = (n: number, v: bigint): number[] => [...varint(BigInt(n << 3)), ...varint(v)];
const bytesField = (n: number, b: number[] | Buffer): number[] => [...varint(BigInt((n << 3) | 2)), ...varint(BigInt(b.length)), ...b];
const str = (s: string): number[] => [...Buffer.from(s, 'utf8')];
function envelope(kind: string, raw: number[]): Buffer {
  const typeMeta = [...bytesField(1, str('v1')), ...bytesField(2, str(kind))];
  return Buffer.from([0x6b, 0x38, 0x73, 0x00, ...bytesField(1, typeMeta), ...bytesField(2, raw), ...bytesField(4, str('application/vnd.kubernetes.protobuf'))]);
}

function pod(uid: string, extra: { hash?: string; deletionTimestamp?: string; grace?: number; status?: Record<string, unknown> } = {}): ApiObject {
  return {
    metadata: {
      name: 'web-real-1',
      namespace: 'ns',
      uid,
      annotations: { 'kubernetes.io/config.hash': extra.hash ?? 'h-a' },
      ...(extra.deletionTimestamp !== undefined ? { deletionTimestamp: extra.deletionTimestamp, deletionGracePeriodSeconds: extra.grace ?? 0 } : {}),
    },
    spec: { containers: [{ name: 'main' }] },
    status: extra.status ?? { phase: 'Pending' },
  };
}
const running = { phase: 'Running', containerStatuses: [{ name: 'main', ready: true, state: { running: {} } }] };
const rec = (t: number, type: WatchRecord['type'], object: ApiObject, kind: WatchRecord['kind'] = 'pod'): WatchRecord => ({ t, kind, type, object });
const del = (t: number, status: number, options: RecordedRequest['deleteOptions']): RecordedRequest => ({
  t,
  method: 'DELETE',
  path: '/api/v1/namespaces/ns/pods/web-real-1',
  query: new URLSearchParams(),
  status,
  watch: false,
  ...(options !== undefined ? { deleteOptions: options } : {}),
});
const texts = (steps: readonly Step[]): string[] => steps.map((s) => s.text);

describe('differential request bodies', () => {
  it('reads grace period and UID precondition from a protobuf DeleteOptions, as the kubelet sends it', () => {
    const preconditions = bytesField(1, str('uid-1'));
    const body = envelope('DeleteOptions', [...varintField(1, 0n), ...bytesField(2, preconditions)]);
    assert.deepEqual(decodeProtobufDeleteOptions(body), { gracePeriodSeconds: 0, uidPrecondition: 'uid-1' });
    assert.deepEqual(readDeleteOptions(body, 'application/vnd.kubernetes.protobuf', new URLSearchParams()), { gracePeriodSeconds: 0, uidPrecondition: 'uid-1' });
  });

  it('an empty preconditions message is no precondition; negative and large grace periods survive', () => {
    const body = envelope('DeleteOptions', [...varintField(1, -1n), ...bytesField(2, []), ...bytesField(4, str('Background'))]);
    assert.deepEqual(decodeProtobufDeleteOptions(body), { gracePeriodSeconds: -1, propagationPolicy: 'Background' });
    const big = envelope('DeleteOptions', varintField(1, 86400n));
    assert.equal(decodeProtobufDeleteOptions(big)?.gracePeriodSeconds, 86400);
  });

  it('reads JSON bodies, falls back to the query without a body, and gives up on garbage', () => {
    const json = Buffer.from(JSON.stringify({ gracePeriodSeconds: 0, preconditions: { uid: 'u' } }));
    assert.deepEqual(readDeleteOptions(json, 'application/json', new URLSearchParams()), { gracePeriodSeconds: 0, uidPrecondition: 'u' });
    assert.deepEqual(readDeleteOptions(Buffer.alloc(0), undefined, new URLSearchParams('gracePeriodSeconds=5&propagationPolicy=Foreground')), {
      gracePeriodSeconds: 5,
      propagationPolicy: 'Foreground',
    });
    assert.equal(readDeleteOptions(Buffer.from('{not json'), 'application/json', new URLSearchParams()), undefined);
    assert.equal(decodeProtobufDeleteOptions(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 0x05, 0x01])), undefined, 'a truncated message');
  });

  it('describes what a DELETE asked for', () => {
    assert.equal(describeDeleteOptions({ gracePeriodSeconds: 0, uidPrecondition: 'u' }), 'grace 0, uid precondition');
    assert.equal(describeDeleteOptions({}), 'grace default');
    assert.equal(describeDeleteOptions(undefined), 'options unreadable');
  });

  it('reads the name of the object a POST creates, from protobuf and JSON', () => {
    const metadata = bytesField(1, str('web-real-1'));
    assert.equal(readObjectName(envelope('Pod', bytesField(1, metadata))), 'web-real-1');
    assert.equal(readObjectName(Buffer.from('{"metadata":{"name":"x"}}')), 'x');
    assert.equal(readObjectName(Buffer.from('[]')), undefined);
  });

  it('tells which pod a request path is about', () => {
    assert.deepEqual(podOfRequest('/api/v1/namespaces/ns/pods/a/status'), { namespace: 'ns', name: 'a', subresource: 'status' });
    assert.deepEqual(podOfRequest('/api/v1/namespaces/ns/pods/a'), { namespace: 'ns', name: 'a' });
    assert.equal(podOfRequest('/api/v1/namespaces/ns/pods'), undefined);
  });
});

describe('differential event sequences', () => {
  it('summarises a status by phase and container states', () => {
    assert.equal(summarisePodStatus(running), 'Running; main=running ready');
    assert.equal(
      summarisePodStatus({
        phase: 'Pending',
        initContainerStatuses: [{ name: 'init', state: { terminated: { reason: 'Completed' } }, restartCount: 2 }],
        containerStatuses: [{ name: 'main', state: { waiting: { reason: 'PodInitializing' } } }],
      }),
      'Pending; init: init=terminated(Completed) restarts=2; main=waiting(PodInitializing)',
    );
    assert.equal(summarisePodStatus(undefined), '(no phase)');
  });

  it('numbers incarnations and hashes, and tells a node DELETE from another one', () => {
    const records = [
      rec(1, 'ADDED', pod('u1')),
      rec(2, 'MODIFIED', pod('u1', { status: running })),
      rec(3, 'MODIFIED', pod('u1', { status: running, deletionTimestamp: '2026-01-01T00:00:00Z', grace: 2 })),
      rec(4, 'DELETED', pod('u1', { status: running, deletionTimestamp: '2026-01-01T00:00:00Z', grace: 0 })),
      rec(5, 'ADDED', pod('u2', { hash: 'h-b' })),
    ];
    const requests = [del(3.5, 200, { gracePeriodSeconds: 0, uidPrecondition: 'u1' })];
    assert.deepEqual(texts(podSteps(records, requests)), [
      'created #1 h1',
      'status #1 Running; main=running ready',
      'deletion requested #1 grace 2 by other',
      'deleted #1 by node (grace 0, uid precondition)',
      'created #2 h2',
    ]);
  });

  it('a DELETE with grace 0 is one step, even though the server first sets deletionTimestamp', () => {
    const records = [
      rec(1, 'ADDED', pod('u1')),
      rec(2, 'MODIFIED', pod('u1', { deletionTimestamp: '2026-01-01T00:00:00Z', grace: 0 })),
      rec(2, 'DELETED', pod('u1', { deletionTimestamp: '2026-01-01T00:00:00Z', grace: 0 })),
    ];
    // The response reached the proxy a little after the watch event.
    assert.deepEqual(texts(podSteps(records, [del(2.4, 200, { gracePeriodSeconds: 0 })])), ['created #1 h1', 'deleted #1 by node (grace 0)']);
    assert.deepEqual(texts(podSteps(records, [del(1.5, 404, { gracePeriodSeconds: 0 })])), ['created #1 h1', 'deleted #1 by other'], 'a refused DELETE is not the one');
  });

  it('reports a change of labels or spec, and nothing for a write that changed nothing it looks at', () => {
    const changed = pod('u1');
    changed.metadata = { ...changed.metadata, labels: { a: 'b' } };
    const records = [rec(1, 'ADDED', pod('u1')), rec(2, 'MODIFIED', changed), rec(3, 'MODIFIED', changed)];
    assert.deepEqual(texts(podSteps(records, [])), ['created #1 h1', 'updated #1 labels']);
  });

  it('settles status writes: the last of a run, none that returns to the start, none just before a deletion', () => {
    const s = (t: number, text: string): Step => ({ t, text });
    assert.deepEqual(texts(settledSteps([s(1, 'created #1 h1'), s(2, 'status #1 Pending'), s(3, 'status #1 Running')])), ['created #1 h1', 'status #1 Running']);
    const before = s(0, 'status #1 Running; main=running ready');
    assert.deepEqual(texts(settledSteps([s(1, 'status #1 Pending; main=waiting(ContainerCreating)'), s(2, before.text)], before)), []);
    assert.deepEqual(texts(settledSteps([s(1, 'status #1 Pending; main=waiting(ContainerCreating)')], before)), ['status #1 Pending; main=waiting(ContainerCreating)'], 'a lasting change stays');
    assert.deepEqual(texts(settledSteps([s(1, 'status #1 Running; main=terminated() ready'), s(2, 'deleted #1 by node (grace 0)')])), ['deleted #1 by node (grace 0)']);
    assert.deepEqual(
      texts(settledSteps([s(1, 'status #1 Running; main=running ready'), s(2, 'deleted #1 by node (grace 0)')], s(0, 'created #1 h1'))),
      ['status #1 Running; main=running ready', 'deleted #1 by node (grace 0)'],
      'a running status before a deletion stays',
    );
    assert.deepEqual(texts(settledSteps([s(1, 'status #1 A'), s(2, 'status #2 B')])), ['status #1 A', 'status #2 B'], 'other incarnations do not fold');
  });

  it('collapses repeats and windows times relative to the action', () => {
    const steps = collapse([
      { t: 1, text: 'a' },
      { t: 2, text: 'a' },
      { t: 3, text: 'b' },
    ]);
    assert.deepEqual(steps, [
      { t: 1, text: 'a' },
      { t: 3, text: 'b' },
    ]);
    assert.deepEqual(windowSteps(steps, 2, 10), [{ t: 1, text: 'b' }]);
  });

  it('Node and Lease steps: lifecycle, readiness and holder, not heartbeats', () => {
    const node = (ready: string): ApiObject => ({ metadata: { name: 'n', uid: 'n1' }, status: { conditions: [{ type: 'Ready', status: ready, reason: 'KubeletReady' }] } });
    assert.deepEqual(texts(nodeSteps([rec(1, 'ADDED', node('False'), 'node'), rec(2, 'MODIFIED', node('True'), 'node'), rec(3, 'MODIFIED', node('True'), 'node')])), [
      'created #1',
      'ready #1 False KubeletReady',
      'ready #1 True KubeletReady',
    ]);
    const lease = (holder: string): ApiObject => ({ metadata: { name: 'n', uid: 'l1' }, spec: { holderIdentity: holder } });
    assert.deepEqual(texts(leaseSteps([rec(1, 'ADDED', lease('n'), 'lease'), rec(2, 'MODIFIED', lease('n'), 'lease'), rec(3, 'DELETED', lease('n'), 'lease')])), [
      'created #1',
      'held #1 by holder1',
      'deleted #1',
    ]);
  });

  it('refused requests leave out the races (404, 409); counts keep everything', () => {
    const requests = [
      del(1, 200, {}),
      del(2, 409, {}),
      del(3, 404, {}),
      { ...del(4, 403, {}), method: 'POST', path: '/api/v1/namespaces/ns/pods', objectName: 'web-real-1' },
      { ...del(5, 422, {}), method: 'PATCH', path: '/api/v1/namespaces/ns/pods/web-real-1/status' },
    ];
    assert.deepEqual(refusedRequests(requests), ['PATCH status 422', 'POST 403']);
    assert.equal(requestCounts(requests), 'DELETE 200 ×1, DELETE 409 ×1, DELETE 404 ×1, POST 403 ×1, PATCH status 422 ×1');
    assert.equal(requestsAboutPod(requests, 'ns', 'web-real-1').length, 5);
    assert.equal(requestsAboutPod(requests, 'ns', 'other').length, 0);
  });

  it('a read refused after the pod was deleted is the Node authorizer\'s not-found; one before is refused', () => {
    const get = (t: number, status: number): RecordedRequest => ({ ...del(t, status, {}), method: 'GET' });
    assert.deepEqual(refusedRequests([get(1, 403), del(2, 200, {}), get(3, 403)]), ['GET 403']);
    assert.deepEqual(refusedRequests([del(2, 200, {}), get(3, 403)]), []);
    assert.deepEqual(refusedRequests([del(2, 500, {}), get(3, 403)]), ['DELETE 500', 'GET 403']);
  });

  it('event reasons: unique, sorted, without Pulling', () => {
    const event = (reason: string): WatchRecord => rec(1, 'ADDED', { reason } as ApiObject, 'event');
    assert.deepEqual(eventReasons([event('Started'), event('Pulling'), event('Created'), event('Started')]), ['Created', 'Started']);
  });

  it("reaction: the first own step within 0.75 s is at once; the user's own steps do not count", () => {
    assert.equal(reaction([{ t: 20, text: 'deleted #1 by node (grace 0)' }]), 'at once');
    assert.equal(reaction([{ t: 5, text: 'deletion requested #1 grace 2 by other' }, { t: 1200, text: 'deleted #1 by node (grace 0)' }]), 'later');
    assert.equal(reaction([]), undefined);
    // A scenario may set its own bound.
    assert.equal(reaction([{ t: 1200, text: 'created #2 h1' }], 10_000), 'at once');
    assert.equal(reaction([{ t: 63_000, text: 'created #2 h1' }], 10_000), 'later');
  });

  it("timing: the kubelet outside the window or beyond the tolerance is a difference; ours is judged by the window alone", () => {
    const window = [0, 2500] as const;
    // Both inside, close: no difference.
    assert.equal(realTimingOff(120, 60, 2500, window), false);
    // The kubelet at its periodic sync after a race (KD-111?): outside the window.
    assert.equal(realTimingOff(73_880, 52, 2500, window), true);
    // Within the tolerance of ours, but outside the window (a preStop hook's 30 s window).
    assert.equal(realTimingOff(29_500, 30_600, 4000, [30_000, 34_500]), true);
    // Inside the window but further from ours than the tolerance.
    assert.equal(realTimingOff(2400, 100, 1000, window), true);
    // Without a window only the tolerance counts.
    assert.equal(realTimingOff(15_040, 10_540, 6000), false);
    assert.equal(realTimingOff(15_040, 8_000, 6000), true);
    // A step either side did not take is a difference.
    assert.equal(realTimingOff(undefined, 60, 2500, window), true);
    assert.equal(realTimingOff(60, undefined, 2500, window), true);
    // The window's own test: its ends are inside; no time or no window is never outside.
    assert.equal(outsideWindow(2500, window), false);
    assert.equal(outsideWindow(2501, window), true);
    assert.equal(outsideWindow(-1, window), true);
    assert.equal(outsideWindow(undefined, window), false);
    assert.equal(outsideWindow(99_000, undefined), false);
  });

  it("event details: the node name, the pod's UIDs and a pod name a controller chose are replaced", () => {
    const ordinary: ApiObject = { metadata: { name: 'web-real-1-7dd87f8bb-dvgrc', namespace: 'ns', uid: 'u-1' } };
    const warning = (name: string, uid: string): ApiObject => ({
      type: 'Warning',
      reason: 'MissingClusterDNS',
      involvedObject: { uid, resourceVersion: '5' },
      message: `pod: "${name}_ns(${uid})". node real-1 has no ClusterDNS IP`,
    });
    const event = (name: string, uid: string): WatchRecord => rec(1, 'ADDED', warning(name, uid), 'event');
    const records = [event('web-real-1-7dd87f8bb-dvgrc', 'u-1')];
    const expected = 'Warning MissingClusterDNS (pod) ref=pod+rv: pod: "<pod>_ns(<uid>)". node <node> has no ClusterDNS IP';
    assert.deepEqual(clusterDNSWarnings(records, eventContext('real-1', [rec(0, 'ADDED', ordinary)], 'web-real-1-7dd87f8bb-dvgrc')), [expected]);
    // Without the name, the name is kept (with the node name inside it replaced): mirrors' names differ by the node only.
    assert.deepEqual(clusterDNSWarnings(records, eventContext('real-1', [rec(0, 'ADDED', ordinary)])), [
      'Warning MissingClusterDNS (pod) ref=pod+rv: pod: "web-<node>-7dd87f8bb-dvgrc_ns(<uid>)". node <node> has no ClusterDNS IP',
    ]);
  });
});
