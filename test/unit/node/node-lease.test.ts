// The node lease (pkg/kubelet/nodelease and component-helpers' lease controller tests:
// TestNewNodeLease, TestRetryUpdateNodeLease), with an in-memory Lease API.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import { hasErrorCode } from '../../../src/errors.js';
import { createNodeLease, MAX_RENEWALS_FROM_HELD_COPY } from '../../../src/node/node-lease.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { deadlineError, wasNotSent } from '../../../src/kube/api-transport.js';
import { apiError, FakeLeaseApi } from '../../helpers/fake-lease-api.js';

const nodeWithUID = (uid: string): V1Node => ({ metadata: { name: 'node-a', uid } });

describe('createNodeLease', () => {
  it('creates kube-node-lease/<node> held by the node, 40 s, owned by the Node', async () => {
    const api = new FakeLeaseApi();
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00.123Z'));
    const lease = createNodeLease({ nodeName: 'node-a', api, clock, getNode: async () => nodeWithUID('node-uid') });
    lease.start();
    await clock.advance(0);
    assert.deepEqual(api.calls, ['read', 'create']);
    assert.equal(api.lease?.metadata?.name, 'node-a');
    assert.equal(api.lease?.metadata?.namespace, 'kube-node-lease');
    assert.equal(api.lease?.spec?.holderIdentity, 'node-a');
    assert.equal(api.lease?.spec?.leaseDurationSeconds, 40);
    // MicroTime: six fractional digits on the wire.
    assert.equal(String(api.lease?.spec?.renewTime), '2026-05-01T12:00:00.123000Z');
    assert.deepEqual(api.lease?.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'node-uid' }]);
    assert.equal(api.lease?.spec?.acquireTime, undefined, 'the kubelet sets no acquireTime on a node lease');
    await lease.stop();
  });

  it('renews every 10 s from its cached copy', async () => {
    const api = new FakeLeaseApi();
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00Z'));
    const lease = createNodeLease({ nodeName: 'node-a', api, clock });
    lease.start();
    await clock.advance(0);
    await clock.advance(9_999);
    assert.deepEqual(api.calls, ['read', 'create']);
    await clock.advance(1);
    await clock.advance(10_000);
    assert.deepEqual(api.calls, ['read', 'create', 'replace', 'replace']);
    assert.equal(String(api.lease?.spec?.renewTime), '2026-05-01T12:00:20.000000Z');
    assert.equal(api.lease?.spec?.acquireTime, undefined, 'no acquireTime, as the kubelet writes its lease');
    await lease.stop();
    assert.equal(clock.pendingTimers, 0);
  });

  it('adds the owner reference once the Node is known', async () => {
    const api = new FakeLeaseApi();
    let node: V1Node | undefined;
    const lease = createNodeLease({ nodeName: 'node-a', api, clock: new FakeClock(), getNode: async () => node });
    assert.equal(await lease.syncNow(), true);
    assert.equal(api.lease?.metadata?.ownerReferences, undefined);
    node = nodeWithUID('later-uid');
    assert.equal(await lease.syncNow(), true);
    const refs = (api.lease as V1Lease | undefined)?.metadata?.ownerReferences ?? [];
    assert.deepEqual(refs.map((r) => r.uid), ['later-uid']);
  });

  it('re-reads after a conflict and takes over a lease held by someone else', async () => {
    const api = new FakeLeaseApi();
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00Z'));
    const lease = createNodeLease({ nodeName: 'node-a', api, clock });
    assert.equal(await lease.syncNow(), true);
    // Another writer bumps the lease behind our back.
    api.lease = { ...api.lease, metadata: { ...api.lease?.metadata, resourceVersion: '99' }, spec: { ...api.lease?.spec, holderIdentity: 'intruder' } };
    assert.equal(await lease.syncNow(), true, 'stale resourceVersion: a conflict, then read and renewed in the same attempt');
    assert.deepEqual(api.calls, ['read', 'create', 'replace', 'read', 'replace']);
    assert.equal(api.lease?.spec?.holderIdentity, 'node-a');
    assert.equal(api.lease?.spec?.acquireTime, undefined);
  });

  it('reads the Lease again after a renewal abandoned in flight: one written whose answer came too late leaves no stale copy behind', async () => {
    const api = new FakeLeaseApi();
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00Z'));
    const lease = createNodeLease({ nodeName: 'node-a', api, clock });
    assert.equal(await lease.syncNow(), true);
    api.lostAnswers = [deadlineError('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a', 10_000)];
    assert.equal(await lease.syncNow(), false, 'the deadline passed, though the server wrote the renewal');
    assert.equal(lease.currentLease(), undefined);
    await clock.advance(1000);
    assert.equal(await lease.syncNow(), true, 'renewed from a fresh read, not refused as a conflict');
    assert.equal(await lease.syncNow(), true);
    assert.deepEqual(api.calls, ['read', 'create', 'replace', 'read', 'replace', 'replace']);
  });

  it('renews from its copy after a call that never left, or a failure the server answered with anything but 404 or 409', async () => {
    const api = new FakeLeaseApi();
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00Z'));
    const lease = createNodeLease({ nodeName: 'node-a', api, clock });
    assert.equal(await lease.syncNow(), true);
    const notSent = deadlineError('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a', 10_000, true);
    assert.equal(wasNotSent(notSent), true);
    api.failures = [notSent, apiError(429, 'TooManyRequests'), apiError(500, 'InternalError')];
    for (let i = 0; i < 3; i++) assert.equal(await lease.syncNow(), false);
    assert.equal(await lease.syncNow(), true);
    assert.deepEqual(api.calls, ['read', 'create', 'replace', 'replace', 'replace', 'replace'], 'no read between the renewals');
  });

  it('renews from its copy through at most five such failures in a row, then reads the Lease, as the kubelet', async () => {
    const api = new FakeLeaseApi();
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00Z'));
    const lease = createNodeLease({ nodeName: 'node-a', api, clock });
    assert.equal(await lease.syncNow(), true);
    assert.equal(MAX_RENEWALS_FROM_HELD_COPY, 5);
    const unavailable = (): Error => apiError(503, 'ServiceUnavailable');
    api.failures = [unavailable(), unavailable(), unavailable(), unavailable()];
    for (let i = 0; i < 4; i++) assert.equal(await lease.syncNow(), false);
    assert.deepEqual(api.calls, ['read', 'create', 'replace', 'replace', 'replace', 'replace'], 'no read between failed renewals');
    assert.equal(await lease.syncNow(), true, 'a success ends the run of failures');
    api.calls.length = 0;
    api.failures = Array.from({ length: MAX_RENEWALS_FROM_HELD_COPY }, unavailable);
    for (let i = 0; i < MAX_RENEWALS_FROM_HELD_COPY; i++) assert.equal(await lease.syncNow(), false);
    assert.equal(lease.currentLease(), undefined, 'the copy is given up after the fifth');
    assert.equal(await lease.syncNow(), true);
    assert.deepEqual(api.calls, [...Array<string>(MAX_RENEWALS_FROM_HELD_COPY).fill('replace'), 'read', 'replace']);
  });

  it('recreates a deleted lease and retries errors with backoff', async () => {
    const api = new FakeLeaseApi();
    const clock = new FakeClock();
    const lease = createNodeLease({ nodeName: 'node-a', api, clock, retryInitialMs: 200 });
    lease.start();
    await clock.advance(0);
    api.lease = undefined;
    api.failures = [];
    await clock.advance(10_000); // replace → 404
    assert.deepEqual(api.calls, ['read', 'create', 'replace']);
    await clock.advance(200);
    assert.deepEqual(api.calls, ['read', 'create', 'replace', 'read', 'create']);
    assert.ok(lease.currentLease());
    await lease.stop();
  });

  it('tells onRenewed the renewTime of each successful write, and nothing of a failed one', async () => {
    const api = new FakeLeaseApi();
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00Z'));
    const renewed: string[] = [];
    const lease = createNodeLease({ nodeName: 'node-a', api, clock, onRenewed: (t) => renewed.push(t.toISOString()) });
    assert.equal(await lease.syncNow(), true);
    await clock.advance(10_000);
    api.failures = [apiError(503, 'ServiceUnavailable')];
    assert.equal(await lease.syncNow(), false);
    await clock.advance(1_000);
    assert.equal(await lease.syncNow(), true);
    assert.deepEqual(renewed, ['2026-05-01T12:00:00.000Z', '2026-05-01T12:00:11.000Z']);
    assert.equal(String(api.lease?.spec?.renewTime), '2026-05-01T12:00:11.000000Z', 'the time told is the one written');
  });

  it('keeps the objects it holds across renewals: an answer that differs only in resourceVersion and renewTime is not held', async () => {
    // A server that may change more than the renewal asked (as a mutating webhook would).
    const api = new (class extends FakeLeaseApi {
      labels: Record<string, string> | undefined;
      override replaceNamespacedLease(p: { name: string; namespace: string; body: V1Lease }): Promise<V1Lease> {
        const body = this.labels === undefined ? p.body : { ...p.body, metadata: { ...p.body.metadata, labels: this.labels } };
        return super.replaceNamespacedLease({ ...p, body });
      }
    })();
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00Z'));
    const lease = createNodeLease({ nodeName: 'node-a', api, clock, getNode: async () => nodeWithUID('node-uid') });
    assert.equal(await lease.syncNow(), true);
    const first = lease.currentLease()!;
    await clock.advance(10_000);
    assert.equal(await lease.syncNow(), true);
    const second = lease.currentLease()!;
    assert.equal(second.metadata?.resourceVersion, api.lease?.metadata?.resourceVersion, 'the resourceVersion of the write');
    assert.equal(second.spec?.renewTime, '2026-05-01T12:00:10.000000Z', 'the renewTime of the write');
    assert.deepEqual(second, api.lease, 'the Lease as the server holds it');
    // The fake answers with fresh objects, as JSON.parse would: these are the first answer's.
    assert.equal(second.metadata?.ownerReferences, first.metadata?.ownerReferences);
    assert.notEqual(second, first);

    // Anything else the server changed is taken from the answer.
    api.labels = { team: 'x' };
    await clock.advance(10_000);
    assert.equal(await lease.syncNow(), true);
    const third = lease.currentLease()!;
    assert.deepEqual(third.metadata?.labels, { team: 'x' });
    assert.deepEqual(third, api.lease);
    assert.notEqual(third.metadata?.ownerReferences, first.metadata?.ownerReferences);
  });

  it('validates its options', () => {
    const api = new FakeLeaseApi();
    assert.throws(() => createNodeLease({ nodeName: 'a', api, leaseDurationSeconds: 0 }), (e: unknown) => hasErrorCode(e, 'KP_ERR_NODE_OPTIONS'));
    assert.throws(() => createNodeLease({ nodeName: 'UPPER', api }), (e: unknown) => hasErrorCode(e, 'KP_ERR_NODE_OPTIONS'));
  });
});
