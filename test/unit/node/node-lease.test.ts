// The node lease (pkg/kubelet/nodelease and component-helpers' lease controller tests:
// TestNewNodeLease, TestRetryUpdateNodeLease), with an in-memory Lease API.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiException, type V1Lease, type V1Node } from '@kubernetes/client-node';
import { hasErrorCode } from '../../../src/errors.js';
import { createNodeLease, NODE_LEASE_NAMESPACE, type LeaseApi } from '../../../src/node/node-lease.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

const apiError = (code: number, reason: string) => new ApiException(code, `HTTP ${code}`, JSON.stringify({ kind: 'Status', reason }), {});

// Leases go through JSON, as they would on the wire (renewTime is a MicroTime string there).
const wire = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

class FakeLeaseApi implements LeaseApi {
  lease: V1Lease | undefined;
  readonly calls: string[] = [];
  failures: ApiException<string>[] = [];
  #rv = 0;

  #fail(): void {
    const err = this.failures.shift();
    if (err) throw err;
  }

  async readNamespacedLease(p: { name: string; namespace: string }): Promise<V1Lease> {
    this.calls.push('read');
    this.#fail();
    if (!this.lease || p.namespace !== NODE_LEASE_NAMESPACE) throw apiError(404, 'NotFound');
    return wire(this.lease);
  }

  async createNamespacedLease(p: { namespace: string; body: V1Lease }): Promise<V1Lease> {
    this.calls.push('create');
    this.#fail();
    if (this.lease) throw apiError(409, 'AlreadyExists');
    this.lease = wire({ ...p.body, metadata: { ...p.body.metadata, namespace: p.namespace, resourceVersion: String(++this.#rv) } });
    return wire(this.lease);
  }

  async replaceNamespacedLease(p: { name: string; namespace: string; body: V1Lease }): Promise<V1Lease> {
    this.calls.push('replace');
    this.#fail();
    if (!this.lease) throw apiError(404, 'NotFound');
    if (p.body.metadata?.resourceVersion !== this.lease.metadata?.resourceVersion) throw apiError(409, 'Conflict');
    this.lease = wire({ ...p.body, metadata: { ...p.body.metadata, resourceVersion: String(++this.#rv) } });
    return wire(this.lease);
  }
}

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
    assert.equal(await lease.syncNow(), false, 'stale resourceVersion: conflict');
    await clock.advance(1000);
    assert.equal(await lease.syncNow(), true);
    assert.deepEqual(api.calls, ['read', 'create', 'replace', 'read', 'replace']);
    assert.equal(api.lease?.spec?.holderIdentity, 'node-a');
    assert.equal(api.lease?.spec?.acquireTime, undefined);
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

  it('validates its options', () => {
    const api = new FakeLeaseApi();
    assert.throws(() => createNodeLease({ nodeName: 'a', api, leaseDurationSeconds: 0 }), (e: unknown) => hasErrorCode(e, 'KP_ERR_NODE_OPTIONS'));
    assert.throws(() => createNodeLease({ nodeName: 'UPPER', api }), (e: unknown) => hasErrorCode(e, 'KP_ERR_NODE_OPTIONS'));
  });
});
