// Node registration and status heartbeats (pkg/kubelet/kubelet_node_status_test.go:
// TestRegisterWithApiServer, TestUpdateNewNodeStatus), with an in-memory Node API.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiException, type ConfigurationOptions, type V1Node } from '@kubernetes/client-node';
import { hasErrorCode } from '../../../src/errors.js';
import { createNodeRegistration, type NodeApi } from '../../../src/node/node-registration.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';

const apiError = (code: number, reason: string) => new ApiException(code, `HTTP ${code}`, JSON.stringify({ kind: 'Status', reason }), {});

class FakeNodeApi implements NodeApi {
  node: V1Node | undefined;
  readonly calls: string[] = [];
  readonly patchTypes: (string | undefined)[] = [];
  failures: ApiException<string>[] = [];
  #uid = 0;

  #fail(): void {
    const err = this.failures.shift();
    if (err) throw err;
  }

  async createNode(param: { body: V1Node }): Promise<V1Node> {
    this.calls.push('create');
    this.#fail();
    if (this.node) throw apiError(409, 'AlreadyExists');
    this.node = { ...structuredClone(param.body), metadata: { ...param.body.metadata, uid: `uid-${++this.#uid}` } };
    return structuredClone(this.node);
  }

  async readNode(param: { name: string }): Promise<V1Node> {
    this.calls.push('read');
    this.#fail();
    if (!this.node || this.node.metadata?.name !== param.name) throw apiError(404, 'NotFound');
    return structuredClone(this.node);
  }

  async patchNodeStatus(param: { name: string; body: unknown }, options?: ConfigurationOptions): Promise<V1Node> {
    this.calls.push('patch');
    for (const m of (options?.middleware ?? []) as { pre?: (r: unknown) => unknown }[]) {
      m.pre?.({ setHeaderParam: (k: string, v: string) => (k === 'Content-Type' ? this.patchTypes.push(v) : undefined) });
    }
    this.#fail();
    if (!this.node) throw apiError(404, 'NotFound');
    const body = JSON.parse(JSON.stringify(param.body)) as { status: V1Node['status'] };
    this.node = { ...this.node, status: { ...this.node.status, ...body.status } };
    return structuredClone(this.node);
  }
}

function setup(api = new FakeNodeApi()) {
  const clock = new FakeClock(Date.parse('2026-05-01T12:00:00.250Z'));
  const reg = createNodeRegistration({
    nodeName: 'node-a',
    api,
    clock,
    internalIP: '10.0.0.7',
    capacity: { cpu: '2' },
    nodeStatusUpdateFrequencyMs: 10_000,
    retryInitialMs: 100,
  });
  return { api, clock, reg };
}

const conditions = (node: V1Node | undefined) => Object.fromEntries((node?.status?.conditions ?? []).map((c) => [c.type, c]));

describe('createNodeRegistration', () => {
  it('creates the Node with labels, addresses and capacity, then reports Ready', async () => {
    const { api, clock, reg } = setup();
    const ready: V1Node[] = [];
    reg.onReady((n) => ready.push(n));
    assert.equal(await reg.getNode(), undefined);
    reg.start();
    await clock.advance(0);
    assert.deepEqual(api.calls, ['create', 'patch']);
    assert.equal(ready.length, 1, 'ready fired once the Node existed');
    assert.equal(ready[0]?.metadata?.uid, 'uid-1');
    const labels = api.node?.metadata?.labels ?? {};
    assert.equal(labels['kubernetes.io/hostname'], 'node-a');
    assert.equal(labels['kubernetes.io/os'], 'linux');
    assert.ok(labels['kubernetes.io/arch']);
    assert.equal(labels['node.kubernetes.io/instance-type'], undefined);
    assert.deepEqual(api.node?.status?.addresses, [
      { type: 'InternalIP', address: '10.0.0.7' },
      { type: 'Hostname', address: 'node-a' },
    ]);
    assert.deepEqual(api.node?.status?.capacity, { cpu: '2', memory: '8Gi', pods: '110' });
    assert.deepEqual(api.node?.status?.allocatable, { cpu: '2', memory: '8Gi', pods: '110' });
    assert.equal(api.node?.status?.nodeInfo?.kubeletVersion, 'v1.34.0-kubelet-pods');
    const c = conditions(api.node);
    assert.equal(c.Ready?.status, 'True');
    assert.equal(c.Ready?.reason, 'KubeletReady');
    assert.equal(c.MemoryPressure?.status, 'False');
    assert.equal(c.DiskPressure?.status, 'False');
    assert.equal(c.PIDPressure?.status, 'False');
    assert.equal(String(c.Ready?.lastHeartbeatTime), '2026-05-01T12:00:00Z');
    assert.deepEqual(api.patchTypes, ['application/merge-patch+json']);
    assert.equal((await reg.getNode())?.metadata?.uid, 'uid-1');
    await reg.stop();
  });

  it('moves the heartbeat every period but keeps the transition time', async () => {
    const { api, clock, reg } = setup();
    reg.start();
    await clock.advance(0);
    await clock.advance(10_000);
    assert.deepEqual(api.calls, ['create', 'patch', 'patch']);
    const c = conditions(api.node);
    assert.equal(String(c.Ready?.lastHeartbeatTime), '2026-05-01T12:00:10Z');
    assert.equal(String(c.Ready?.lastTransitionTime), '2026-05-01T12:00:00Z');
    assert.equal(conditions(await reg.getNode()).Ready?.lastHeartbeatTime, c.Ready?.lastHeartbeatTime, 'cache refreshed');
    await reg.stop();
    assert.equal(clock.pendingTimers, 0);
  });

  it('adopts an existing Node (AlreadyExists) instead of failing', async () => {
    const api = new FakeNodeApi();
    api.node = { metadata: { name: 'node-a', uid: 'existing' }, status: {} };
    const { reg } = setup(api);
    assert.equal(await reg.syncNow(), true);
    assert.deepEqual(api.calls, ['create', 'read', 'patch']);
    assert.equal((await reg.getNode())?.metadata?.uid, 'existing');
  });

  it('registers again when the Node disappears, and fires ready again', async () => {
    const { api, clock, reg } = setup();
    const ready: string[] = [];
    reg.onReady((n) => ready.push(n.metadata?.uid ?? ''));
    reg.start();
    await clock.advance(0);
    api.node = undefined; // deleted by someone
    await clock.advance(10_000);
    assert.equal(await reg.getNode(), undefined, 'no Node known after the NotFound');
    await clock.advance(100); // first retry
    assert.deepEqual(api.calls, ['create', 'patch', 'patch', 'create', 'patch']);
    assert.deepEqual(ready, ['uid-1', 'uid-2']);
    assert.equal((await reg.getNode())?.metadata?.uid, 'uid-2');
    await reg.stop();
  });

  it('retries failures with backoff and never throws out of the loop', async () => {
    const { api, clock, reg } = setup();
    api.failures = [apiError(500, 'InternalError'), apiError(503, 'ServiceUnavailable'), apiError(429, 'TooManyRequests')];
    reg.start();
    await clock.advance(0);
    assert.deepEqual(api.calls, ['create']);
    await clock.advance(100);
    assert.deepEqual(api.calls, ['create', 'create']);
    await clock.advance(199);
    assert.equal(api.calls.length, 2, 'second retry waits twice as long');
    await clock.advance(1);
    await clock.advance(400);
    assert.deepEqual(api.calls, ['create', 'create', 'create', 'create', 'patch']);
    assert.ok(await reg.getNode());
    await reg.stop();
  });

  it('shows a Node being deleted (deletionTimestamp) through getNode', async () => {
    const { api, clock, reg } = setup();
    reg.start();
    await clock.advance(0);
    api.node = { ...api.node, metadata: { ...api.node?.metadata, deletionTimestamp: new Date('2026-05-01T12:00:05Z') } };
    await clock.advance(10_000);
    assert.ok((await reg.getNode())?.metadata?.deletionTimestamp);
    await reg.stop();
  });

  it('shares one attempt between concurrent syncNow calls', async () => {
    const { api, reg } = setup();
    const [a, b] = await Promise.all([reg.syncNow(), reg.syncNow()]);
    assert.ok(a && b);
    assert.deepEqual(api.calls, ['create', 'patch']);
    await settle();
  });

  it('validates its options', () => {
    const api = new FakeNodeApi();
    assert.throws(() => createNodeRegistration({ nodeName: 'Node_A', api }), (e: unknown) => hasErrorCode(e, 'KP_ERR_NODE_OPTIONS'));
    assert.throws(() => createNodeRegistration({ nodeName: '', api }), (e: unknown) => hasErrorCode(e, 'KP_ERR_NODE_OPTIONS'));
    assert.throws(
      () => createNodeRegistration({ nodeName: 'a', api, nodeStatusUpdateFrequencyMs: 0 }),
      (e: unknown) => hasErrorCode(e, 'KP_ERR_NODE_OPTIONS') && e.message.includes('nodeStatusUpdateFrequencyMs'),
    );
  });
});
