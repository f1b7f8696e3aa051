// Node registration and status heartbeats (pkg/kubelet/kubelet_node_status_test.go:
// TestRegisterWithApiServer, TestUpdateNewNodeStatus), with an in-memory Node API.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiException, type V1Node } from '@kubernetes/client-node';
import type { RequestOptions as ConfigurationOptions } from '../../../src/kube/request-options.js';
import { hasErrorCode } from '../../../src/errors.js';
import type { MachineInfo } from '../../../src/node/machine-info.js';
import { createNodeRegistration, statusChanged, type NodeApi } from '../../../src/node/node-registration.js';
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

const MACHINE: MachineInfo = {
  cpus: 2,
  memoryBytes: 8 * 2 ** 30 + 4096,
  ephemeralStorageBytes: 100 * 2 ** 30,
  hugePages: new Map([[2 * 2 ** 20, 0], [2 ** 30, 2 * 2 ** 30]]),
  kernelVersion: '6.1.0-test',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  architecture: 'amd64',
  machineID: 'machine-1',
  systemUUID: '',
  bootID: 'boot-1',
};

function setup(api = new FakeNodeApi()) {
  const clock = new FakeClock(Date.parse('2026-05-01T12:00:00.250Z'));
  const reg = createNodeRegistration({
    nodeName: 'node-a',
    api,
    clock,
    internalIP: '10.0.0.7',
    machine: MACHINE,
    maxPods: 42,
    kubeletPort: 10251,
    nodeStatusUpdateFrequencyMs: 10_000,
    nodeStatusReportFrequencyMs: 300_000,
    random: () => 0.5,
    retryInitialMs: 100,
  });
  return { api, clock, reg };
}

const conditions = (node: V1Node | undefined) => Object.fromEntries((node?.status?.conditions ?? []).map((c) => [c.type, c]));

/** A fake Node API that also keeps each create's body, as sent. */
function recordingCreates() {
  const api = new FakeNodeApi();
  const created: V1Node[] = [];
  const create = api.createNode.bind(api);
  api.createNode = async (param) => {
    created.push(structuredClone(param.body));
    return create(param);
  };
  return { api, created };
}
const patches = (api: FakeNodeApi) => api.calls.filter((c) => c === 'patch').length;

describe('createNodeRegistration with reads from a watch (the fleet: the same object until the Node changes)', () => {
  it('writes once the watch hands back a changed Node, or the kubelet port moved, and not otherwise', async () => {
    const api = new FakeNodeApi();
    // One object per version of the Node, as a watch cache hands them out.
    let cached: { version: V1Node; copy: V1Node } | undefined;
    const fromWatch: NodeApi = {
      createNode: (p) => api.createNode(p),
      patchNodeStatus: (...args: Parameters<NodeApi['patchNodeStatus']>) => api.patchNodeStatus(...args),
      readNode: async (p) => {
        await api.readNode(p);
        if (cached === undefined || cached.version !== api.node) cached = { version: api.node!, copy: structuredClone(api.node!) };
        return cached.copy;
      },
    } as NodeApi;
    let port = 10251;
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00.250Z'));
    const reg = createNodeRegistration({ nodeName: 'node-a', api: fromWatch, clock, machine: MACHINE, kubeletPort: () => port, random: () => 0.5 });
    reg.start();
    await clock.advance(0);
    await clock.advance(30_000);
    assert.equal(patches(api), 1, 'the same Node status, read three times: no write after the first');

    // The node lifecycle controller marks the node Unknown: a new object comes through.
    api.node = { ...api.node!, status: { ...api.node!.status, conditions: api.node!.status!.conditions!.map((c) => (c.type === 'Ready' ? { ...c, status: 'Unknown' } : c)) } };
    await clock.advance(10_000);
    assert.equal(patches(api), 2);
    assert.equal(conditions(api.node).Ready?.status, 'True');

    // Same object as last time, but the kubelet endpoint's port changed.
    await clock.advance(10_000);
    port = 10260;
    await clock.advance(10_000);
    assert.equal(patches(api), 3);
    assert.deepEqual(api.node?.status?.daemonEndpoints, { kubeletEndpoint: { Port: 10260 } });
    await reg.stop();
  });
});

describe('createNodeRegistration with conditions gone bad (a scenario\'s window)', () => {
  it('reports NotReady and a pressure condition in the kubelet\'s words inside the window, read from a watch too', async () => {
    const api = new FakeNodeApi();
    // One object per version of the Node, as in the fleet: the window must still be seen.
    let cached: { version: V1Node; copy: V1Node } | undefined;
    const fromWatch = {
      createNode: (p: { body: V1Node }) => api.createNode(p),
      patchNodeStatus: (...args: Parameters<NodeApi['patchNodeStatus']>) => api.patchNodeStatus(...args),
      readNode: async (p: { name: string }) => {
        await api.readNode(p);
        if (cached === undefined || cached.version !== api.node) cached = { version: api.node!, copy: structuredClone(api.node!) };
        return cached.copy;
      },
    } as NodeApi;
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00.000Z'));
    const start = clock.now().getTime();
    const reg = createNodeRegistration({
      nodeName: 'node-a',
      api: fromWatch,
      clock,
      machine: MACHINE,
      random: () => 0.5,
      conditionsGoneBad: (now) => {
        const t = now.getTime() - start;
        return new Set(t >= 20_000 && t < 40_000 ? (['Ready', 'MemoryPressure'] as const) : []);
      },
    });
    reg.start();
    await clock.advance(0);
    await clock.advance(10_000);
    assert.equal(conditions(api.node).Ready?.status, 'True');
    await clock.advance(10_000); // 20 s: the window opens at this status update
    const inside = conditions(api.node);
    assert.deepEqual(
      { status: inside.Ready?.status, reason: inside.Ready?.reason, message: inside.Ready?.message },
      { status: 'False', reason: 'KubeletNotReady', message: 'container runtime is down' },
    );
    assert.deepEqual(
      { status: inside.MemoryPressure?.status, reason: inside.MemoryPressure?.reason, message: inside.MemoryPressure?.message },
      { status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available' },
    );
    assert.equal(new Date(String(inside.Ready?.lastTransitionTime)).toISOString(), '2026-05-01T12:00:20.000Z');
    assert.equal(inside.DiskPressure?.status, 'False', 'the others stay as they were');
    const writes = patches(api);
    await clock.advance(10_000); // 30 s: still inside, nothing new to write
    assert.equal(patches(api), writes);
    await clock.advance(10_000); // 40 s: the window closes
    const after = conditions(api.node);
    assert.deepEqual({ status: after.Ready?.status, reason: after.Ready?.reason }, { status: 'True', reason: 'KubeletReady' });
    assert.deepEqual({ status: after.MemoryPressure?.status, reason: after.MemoryPressure?.reason }, { status: 'False', reason: 'KubeletHasSufficientMemory' });
    assert.equal(new Date(String(after.Ready?.lastTransitionTime)).toISOString(), '2026-05-01T12:00:40.000Z');
    await reg.stop();
  });
});

describe('createNodeRegistration', () => {
  it('creates the Node with labels, addresses, capacity and nodeInfo, then reports Ready', async () => {
    const { api, clock, reg } = setup();
    const ready: V1Node[] = [];
    reg.onReady((n) => ready.push(n));
    assert.equal(await reg.getNode(), undefined);
    reg.start();
    await clock.advance(0);
    assert.deepEqual(api.calls, ['create', 'patch']);
    assert.equal(reg.statusWrites(), 1);
    assert.equal(ready.length, 1, 'ready fired once the Node existed');
    assert.equal(ready[0]?.metadata?.uid, 'uid-1');
    assert.deepEqual(api.node?.metadata?.labels, {
      'kubernetes.io/hostname': 'node-a',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'amd64',
    });
    assert.deepEqual(api.node?.status?.addresses, [
      { type: 'InternalIP', address: '10.0.0.7' },
      { type: 'Hostname', address: 'node-a' },
    ]);
    const resources = { cpu: '2', 'ephemeral-storage': '100Gi', memory: '8388612Ki', pods: '42', 'hugepages-2Mi': '0', 'hugepages-1Gi': '2Gi' };
    assert.deepEqual(api.node?.status?.capacity, resources);
    assert.deepEqual(api.node?.status?.allocatable, resources);
    assert.deepEqual(api.node?.status?.daemonEndpoints, { kubeletEndpoint: { Port: 10251 } });
    assert.deepEqual(api.node?.status?.nodeInfo, {
      architecture: 'amd64',
      operatingSystem: 'linux',
      kubeletVersion: 'v1.34.0-kubelet-pods',
      kubeProxyVersion: '',
      bootID: 'boot-1',
      machineID: 'machine-1',
      systemUUID: '',
      kernelVersion: '6.1.0-test',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      containerRuntimeVersion: 'kubelet-pods://simulated',
    });
    assert.equal(api.node?.status?.images, undefined, 'no images: the simulated runtime pulls none');
    const c = conditions(api.node);
    assert.equal(c.Ready?.status, 'True');
    assert.equal(c.Ready?.reason, 'KubeletReady');
    assert.equal(c.Ready?.message, 'kubelet is posting ready status');
    assert.equal(c.MemoryPressure?.status, 'False');
    assert.equal(c.DiskPressure?.status, 'False');
    assert.equal(c.PIDPressure?.status, 'False');
    assert.equal(String(c.Ready?.lastHeartbeatTime), '2026-05-01T12:00:00Z');
    assert.deepEqual(api.patchTypes, ['application/merge-patch+json']);
    assert.equal((await reg.getNode())?.metadata?.uid, 'uid-1');
    await reg.stop();
  });

  it('creates the Node with its conditions, Ready False until the status write that follows, as the kubelet does', async () => {
    const { api, created } = recordingCreates();
    const { clock, reg } = setup(api);
    reg.start();
    await clock.advance(0);
    assert.equal(created.length, 1);
    const atCreate = conditions(created[0]);
    assert.deepEqual(Object.keys(atCreate), ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready']);
    assert.equal(atCreate.MemoryPressure?.status, 'False');
    assert.equal(atCreate.MemoryPressure?.reason, 'KubeletHasSufficientMemory');
    // The kubelet's CSINode needs the Node first, so its create always says so.
    assert.deepEqual(
      { status: atCreate.Ready?.status, reason: atCreate.Ready?.reason, message: atCreate.Ready?.message },
      { status: 'False', reason: 'KubeletNotReady', message: 'CSINode is not yet initialized' },
    );
    assert.deepEqual(api.calls, ['create', 'patch']);
    assert.equal(conditions(api.node).Ready?.status, 'True', 'Ready with the first status write');
    await reg.stop();
  });

  it('a Node created inside a scenario\'s runtime outage carries both errors, as Go joins them', async () => {
    const { api, created } = recordingCreates();
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00.250Z'));
    const reg = createNodeRegistration({ nodeName: 'node-a', api, clock, machine: MACHINE, random: () => 0.5, conditionsGoneBad: () => new Set(['Ready']) });
    reg.start();
    await clock.advance(0);
    assert.equal(conditions(created[0]).Ready?.message, '[container runtime is down, CSINode is not yet initialized]');
    assert.equal(conditions(api.node).Ready?.message, 'container runtime is down');
    await reg.stop();
  });

  it('reads the Node every period but writes nothing while the status is unchanged', async () => {
    const { api, clock, reg } = setup();
    reg.start();
    await clock.advance(0);
    for (let i = 0; i < 29; i++) await clock.advance(10_000);
    assert.equal(patches(api), 1, 'only the first status write in 290 s');
    assert.equal(api.calls.filter((c) => c === 'read').length, 29);
    assert.equal(reg.statusWrites(), 1);
    await reg.stop();
    assert.equal(clock.pendingTimers, 0);
  });

  it('writes again once nodeStatusReportFrequency has passed, moving the heartbeat only', async () => {
    const { api, clock, reg } = setup();
    reg.start();
    await clock.advance(0);
    for (let i = 0; i < 30; i++) await clock.advance(10_000);
    assert.equal(patches(api), 2, 'the report write at 300 s');
    const c = conditions(api.node);
    assert.equal(String(c.Ready?.lastHeartbeatTime), '2026-05-01T12:05:00Z');
    assert.equal(String(c.Ready?.lastTransitionTime), '2026-05-01T12:00:00Z');
    for (let i = 0; i < 29; i++) await clock.advance(10_000);
    assert.equal(patches(api), 2);
    await clock.advance(10_000);
    assert.equal(patches(api), 3, 'and every 300 s after that');
    await reg.stop();
  });

  it('spreads the report period after a start by up to half of it either way', async () => {
    const api = new FakeNodeApi();
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00Z'));
    const reg = createNodeRegistration({ nodeName: 'node-a', api, clock, machine: MACHINE, random: () => 0.1 });
    reg.start();
    await clock.advance(0);
    // 0.1 → 300 s × (0.1 − 0.5) = −120 s: the next report is due after 180 s.
    for (let i = 0; i < 17; i++) await clock.advance(10_000);
    assert.equal(patches(api), 1);
    await clock.advance(10_000);
    assert.equal(patches(api), 2);
    // A write that was merely due sets no new spread: the next one comes 300 s later.
    for (let i = 0; i < 29; i++) await clock.advance(10_000);
    assert.equal(patches(api), 2);
    await clock.advance(10_000);
    assert.equal(patches(api), 3);
    await reg.stop();
  });

  it('writes at once when the status on the server differs (a condition, the capacity)', async () => {
    const { api, clock, reg } = setup();
    reg.start();
    await clock.advance(0);
    await clock.advance(10_000);
    assert.equal(patches(api), 1);
    // The node lifecycle controller marks the node Unknown.
    const status = api.node!.status!;
    status.conditions = status.conditions!.map((c) => (c.type === 'Ready' ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown' } : c));
    await clock.advance(10_000);
    assert.equal(patches(api), 2);
    assert.equal(conditions(api.node).Ready?.status, 'True');
    assert.equal(String(conditions(api.node).Ready?.lastTransitionTime), '2026-05-01T12:00:20Z', 'a new transition');
    api.node!.status!.capacity = { ...api.node!.status!.capacity, pods: '7' };
    await clock.advance(10_000);
    assert.equal(patches(api), 3);
    assert.equal(api.node?.status?.capacity?.['pods'], '42');
    await clock.advance(10_000);
    assert.equal(patches(api), 3, 'settled again');
    await reg.stop();
  });

  it('does not count a quantity spelled another way, or fields others set, as a change', () => {
    const desired = { capacity: { memory: '1Gi', cpu: '2' }, nodeInfo: { a: '1', b: '2' } };
    assert.equal(statusChanged({ capacity: { memory: '1024Mi', cpu: '2000m' }, nodeInfo: { b: '2', a: '1' } as never, volumesInUse: ['x'] }, desired), false);
    assert.equal(statusChanged({ capacity: { memory: '1Gi' }, nodeInfo: { a: '1', b: '2' } as never }, desired), true, 'a resource missing');
    assert.equal(statusChanged({ capacity: { memory: '1Gi', cpu: '2' }, nodeInfo: { a: '1', b: '3' } as never }, desired), true);
  });

  it('adopts an existing Node (AlreadyExists) instead of failing, and writes its status', async () => {
    const api = new FakeNodeApi();
    api.node = { metadata: { name: 'node-a', uid: 'existing' }, status: {} };
    const { reg } = setup(api);
    assert.equal(await reg.syncNow(), true);
    assert.deepEqual(api.calls, ['create', 'read', 'patch']);
    assert.equal((await reg.getNode())?.metadata?.uid, 'existing');
  });

  it('does not register again when the Node is deleted, and takes back one created by someone else', async () => {
    const { api, clock, reg } = setup();
    const ready: string[] = [];
    reg.onReady((n) => ready.push(n.metadata?.uid ?? ''));
    reg.start();
    await clock.advance(0);
    api.node = undefined; // kubectl delete node
    await clock.advance(10_000);
    assert.equal(await reg.getNode(), undefined, 'no Node known after the NotFound');
    for (let i = 0; i < 10; i++) await clock.advance(10_000);
    assert.equal(api.calls.filter((c) => c === 'create').length, 1, 'registered once per start');
    assert.equal(await reg.getNode(), undefined);
    assert.deepEqual(ready, ['uid-1']);
    // Someone registers a Node of that name again (or the agent's earlier run did).
    api.node = { metadata: { name: 'node-a', uid: 'by-admin' }, status: {} };
    await clock.advance(10_000);
    assert.deepEqual(ready, ['uid-1', 'by-admin']);
    assert.equal((await reg.getNode())?.metadata?.uid, 'by-admin');
    assert.equal(conditions(api.node).Ready?.status, 'True', 'its status is written at once');
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

  it('retries a failed status write at the next attempt, not after the report period', async () => {
    const { api, clock, reg } = setup();
    reg.start();
    await clock.advance(0);
    api.node!.status!.conditions = [];
    api.failures = [apiError(500, 'InternalError')];
    await clock.advance(10_000); // the read fails
    api.failures = [];
    await clock.advance(100);
    assert.deepEqual(api.calls.slice(-2), ['read', 'patch']);
    assert.equal(conditions(api.node).Ready?.status, 'True');
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

  it('start({ watch: false }) leaves the Node watch to startWatch(), which starts it once; stopped first, it never starts', async () => {
    const made = (): { reg: ReturnType<typeof createNodeRegistration>; starts: () => number; stops: () => number } => {
      let starts = 0;
      let stops = 0;
      const watch = { start: () => void starts++, stop: () => (stops++, Promise.resolve()) };
      const reg = createNodeRegistration({ nodeName: 'node-a', api: new FakeNodeApi(), clock: new FakeClock(), machine: MACHINE, watch });
      return { reg, starts: () => starts, stops: () => stops };
    };
    const one = made();
    one.reg.start({ watch: false });
    assert.equal(one.starts(), 0);
    assert.ok(await one.reg.syncNow());
    one.reg.startWatch();
    one.reg.startWatch();
    assert.equal(one.starts(), 1);
    await one.reg.stop();
    assert.equal(one.stops(), 1);

    const two = made();
    two.reg.start({ watch: false });
    await two.reg.stop();
    two.reg.startWatch();
    assert.deepEqual([two.starts(), two.stops()], [0, 0]);

    const three = made();
    three.reg.start();
    three.reg.startWatch();
    assert.equal(three.starts(), 1, 'start() starts the watch itself');
    await three.reg.stop();
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
    assert.throws(
      () => createNodeRegistration({ nodeName: 'a', api, machine: MACHINE, nodeStatusReportFrequencyMs: 0 }),
      (e: unknown) => hasErrorCode(e, 'KP_ERR_NODE_OPTIONS') && e.message.includes('nodeStatusReportFrequencyMs'),
    );
    assert.throws(
      () => createNodeRegistration({ nodeName: 'a', api, machine: MACHINE, maxPods: 1.5 }),
      (e: unknown) => hasErrorCode(e, 'KP_ERR_NODE_OPTIONS') && e.message.includes('maxPods'),
    );
  });
});
