// The agent's watch of its own Node (the kubelet's node informer): the moment the Node is
// deleted, nothing is written for it (no mirror pod create, no Node status, no Event on it),
// where the status loop alone would notice at its next read, 10 s later; a Node of that name
// created again is taken at once. The fleet's nodes get the same from its one watch of Nodes.
// All on the FakeClock, over scripted list/watches and in-memory APIs.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiException, type CoreV1Event, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { createEventRecorder, type EventApi } from '../../../src/events/event-recorder.js';
import { nodeEventRef, podEventRef } from '../../../src/events/static-pod-events.js';
import { createNodeCache } from '../../../src/fleet/node-cache.js';
import type { ListWatch, ObjectList, WatchEventType } from '../../../src/kube/list-watch.js';
import { FakeMirrorClient } from '../../../src/mirror/fake-mirror-client.js';
import { createMirrorSync } from '../../../src/mirror/mirror-sync.js';
import type { MachineInfo } from '../../../src/node/machine-info.js';
import { createNodeRegistration, type NodeApi } from '../../../src/node/node-registration.js';
import { createNodeWatch, type NodeWatch, type NodeWatchListener } from '../../../src/node/node-watch.js';
import { PodManager } from '../../../src/pod/manager.js';
import type { Pod } from '../../../src/pod/types.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';

const notFound = () => new ApiException(404, 'HTTP 404', JSON.stringify({ kind: 'Status', reason: 'NotFound' }), {});

/** The Node API as the server has it; `stale` answers reads with a Node already deleted. */
class FakeNodeApi implements NodeApi {
  node: V1Node | undefined;
  stale: V1Node | undefined;
  readonly calls: string[] = [];
  #uid = 0;
  #rv = 0;

  async createNode(param: { body: V1Node }): Promise<V1Node> {
    this.calls.push('create');
    if (this.node) throw new ApiException(409, 'HTTP 409', JSON.stringify({ kind: 'Status', reason: 'AlreadyExists' }), {});
    this.node = { ...structuredClone(param.body), metadata: { ...param.body.metadata, uid: `uid-${++this.#uid}`, resourceVersion: String(++this.#rv) } };
    return structuredClone(this.node);
  }

  async readNode(): Promise<V1Node> {
    this.calls.push('read');
    const node = this.stale ?? this.node;
    if (!node) throw notFound();
    return structuredClone(node);
  }

  async patchNodeStatus(param: { body: unknown }): Promise<V1Node> {
    this.calls.push('patch');
    if (!this.node) throw notFound();
    const body = JSON.parse(JSON.stringify(param.body)) as { status: V1Node['status'] };
    this.node = { ...this.node, metadata: { ...this.node.metadata, resourceVersion: String(++this.#rv) }, status: { ...this.node.status, ...body.status } };
    return structuredClone(this.node);
  }

  /** The resourceVersion of a change made now (a deletion's, as its watch event carries it). */
  nextVersion(): string {
    return String(++this.#rv);
  }

  /** Someone (an admin, a cloud controller) creates the Node of this name. */
  recreate(name: string): V1Node {
    this.node = { metadata: { name, uid: `uid-${++this.#uid}`, resourceVersion: String(++this.#rv) } };
    return structuredClone(this.node);
  }
}

/** A NodeWatch the test drives: what the watch would hand over. */
class DrivenWatch implements NodeWatch {
  listener: NodeWatchListener | undefined;
  start(listener: NodeWatchListener): void {
    this.listener = listener;
  }
  /** The watch shows `node` (undefined: none), as of `resourceVersion`. */
  tell(node: V1Node | undefined, resourceVersion: string): void {
    this.listener!(node, resourceVersion);
  }
  async stop(): Promise<void> {
    this.listener = undefined;
  }
}

/** A list/watch of Nodes whose calls the test answers. */
class ScriptedNodes implements ListWatch<V1Node> {
  items: V1Node[] = [];
  lists = 0;
  readonly watches: { onEvent: (type: WatchEventType, object: unknown) => void }[] = [];
  async list(): Promise<ObjectList<V1Node>> {
    this.lists++;
    return { items: this.items, metadata: { resourceVersion: '10' } };
  }
  async watch(_rv: string, onEvent: (type: WatchEventType, object: unknown) => void): Promise<{ abort(): void }> {
    this.watches.push({ onEvent });
    return { abort: () => {} };
  }
  send(type: WatchEventType, node: V1Node): void {
    this.watches.at(-1)!.onEvent(type, node);
  }
}

const MACHINE: MachineInfo = {
  cpus: 2,
  memoryBytes: 2 ** 33,
  ephemeralStorageBytes: 2 ** 36,
  hugePages: new Map(),
  kernelVersion: '6.1.0',
  osImage: 'test',
  architecture: 'amd64',
  machineID: 'm',
  systemUUID: '',
  bootID: 'b',
};

const staticPod: Pod = {
  metadata: { name: 'web-node-a', namespace: 'default', uid: 'h1', annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'h1' } },
  spec: { nodeName: 'node-a', containers: [{ name: 'main', image: 'nginx' }] },
};

function setup() {
  const clock = new FakeClock();
  const api = new FakeNodeApi();
  const watch = new DrivenWatch();
  const reg = createNodeRegistration({ nodeName: 'node-a', api, watch, clock, machine: MACHINE, random: () => 0.5, retryInitialMs: 100 });
  const ready: string[] = [];
  reg.onReady((n) => ready.push(n.metadata?.uid ?? ''));
  return { clock, api, watch, reg, ready };
}

describe('node registration with a watch of its own Node', () => {
  it('the moment the Node is deleted: no mirror create and no status write, also when a read still shows it', async () => {
    const { clock, api, watch, reg } = setup();
    const podManager = new PodManager();
    const mirrors = new FakeMirrorClient();
    const sync = createMirrorSync({ podManager, mirrorClient: mirrors, getNode: () => reg.getNode(), allSourcesReady: () => true, clock });
    reg.start();
    await clock.advance(0);
    assert.ok(reg.currentNode(), 'registered');
    watch.tell(structuredClone(api.node), api.node!.metadata!.resourceVersion!);
    podManager.addPod(staticPod);
    sync.enqueue('web-node-a_default');
    await clock.advance(0);
    await sync.idle();
    assert.equal(mirrors.getCounts('web-node-a_default').creates, 1);

    // Deleted (the garbage collector then deletes the mirror); the GET is served from a cache
    // that has not caught up.
    api.stale = api.node;
    api.node = undefined;
    watch.tell(undefined, api.nextVersion());
    assert.equal(reg.currentNode(), undefined);
    assert.equal(reg.nodeGone(), true);
    await mirrors.deleteMirrorPod('web-node-a_default');
    sync.enqueueAll();
    sync.enqueue('web-node-a_default');
    await clock.advance(0);
    await sync.idle();
    const patchesBefore = api.calls.filter((c) => c === 'patch').length;
    await clock.advance(60_000);
    sync.enqueue('web-node-a_default');
    await clock.advance(0);
    await sync.idle();
    assert.equal(mirrors.getCounts('web-node-a_default').creates, 1, 'no mirror create after the deletion');
    assert.equal(api.calls.filter((c) => c === 'patch').length, patchesBefore, 'no status write for the deleted Node');
    assert.equal(reg.currentNode(), undefined, 'a stale read does not bring it back');
    assert.equal(api.calls.filter((c) => c === 'create').length, 1, 'registered once per start');
    await reg.stop();
    await sync.stop();
  });

  it('a Node of this name created again is taken at once, and its status written at the next update', async () => {
    const { clock, api, watch, reg, ready } = setup();
    reg.start();
    await clock.advance(0);
    const first = reg.currentNode()!.metadata!.uid!;
    api.node = undefined;
    watch.tell(undefined, api.nextVersion());
    await clock.advance(20_000);
    assert.equal(reg.nodeGone(), true);
    const again = api.recreate('node-a');
    watch.tell(again, again.metadata!.resourceVersion!);
    assert.equal(reg.currentNode()?.metadata?.uid, again.metadata?.uid);
    assert.equal(reg.nodeGone(), false);
    assert.deepEqual(ready, [first, again.metadata?.uid]);
    const patches = api.calls.filter((c) => c === 'patch').length;
    await clock.advance(10_000);
    assert.equal(api.calls.filter((c) => c === 'patch').length, patches + 1, 'the status goes to the new Node');
    assert.equal(api.calls.filter((c) => c === 'create').length, 1);
    await reg.stop();
  });

  it('a view older than the registration is no deletion, and an older version does not replace a newer one', async () => {
    const { clock, api, watch, reg } = setup();
    reg.start();
    // Told "no Node" before the create returned: registration goes on.
    watch.tell(undefined, '0');
    await clock.advance(0);
    const registered = reg.currentNode()!;
    assert.ok(registered);
    // The first list, taken before the create and answered after it.
    watch.tell(undefined, '0');
    assert.equal(reg.nodeGone(), false);
    assert.ok(reg.currentNode());
    const older = { ...registered, metadata: { ...registered.metadata, resourceVersion: '0', labels: { old: 'yes' } } };
    watch.tell(older, '0');
    assert.equal(reg.currentNode()?.metadata?.labels?.['old'], undefined);
    await reg.stop();
    assert.equal(watch.listener, undefined, 'stop() stops the watch');
    assert.ok(api.node);
  });
});

describe('createNodeWatch: a reflector over the one Node', () => {
  it('hands over the Node from the list, its changes, and undefined once deleted', async () => {
    const clock = new FakeClock();
    const lw = new ScriptedNodes();
    const mine: V1Node = { metadata: { name: 'node-a', uid: 'u1', resourceVersion: '5' } };
    lw.items = [mine];
    const seen: (string | undefined)[] = [];
    const w = createNodeWatch({ nodeName: 'node-a', listWatch: lw, clock });
    w.start((n) => seen.push(n?.metadata?.resourceVersion));
    await clock.advance(0);
    lw.send('MODIFIED', { metadata: { name: 'node-a', uid: 'u1', resourceVersion: '11' } });
    lw.send('MODIFIED', { metadata: { name: 'other', uid: 'u2', resourceVersion: '12' } });
    lw.send('DELETED', { metadata: { name: 'node-a', uid: 'u1', resourceVersion: '13' } });
    lw.send('ADDED', { metadata: { name: 'node-a', uid: 'u3', resourceVersion: '14' } });
    assert.deepEqual(seen, ['5', '11', undefined, '14']);
    await w.stop();
  });
});

describe("the fleet's node cache: every node's own-Node watch from one watch", () => {
  it('tells each node only of its own Node, over one list and one watch', async () => {
    const clock = new FakeClock();
    const lw = new ScriptedNodes();
    lw.items = [{ metadata: { name: 'n1', uid: 'a', resourceVersion: '1' } }, { metadata: { name: 'n2', uid: 'b', resourceVersion: '2' } }];
    const cache = createNodeCache({ kubeConfig: {} as KubeConfig, clock, isFleetNode: (n) => n === 'n1' || n === 'n2', listWatch: lw });
    const seen = { n1: [] as (string | undefined)[], n2: [] as (string | undefined)[] };
    cache.nodeWatch('n1').start((n) => seen.n1.push(n?.metadata?.uid));
    cache.start();
    await clock.advance(0);
    // A node that starts after the list hears at once what the cache holds.
    cache.nodeWatch('n2').start((n) => seen.n2.push(n?.metadata?.uid));
    lw.send('DELETED', { metadata: { name: 'n1', uid: 'a', resourceVersion: '20' } });
    lw.send('ADDED', { metadata: { name: 'n1', uid: 'c', resourceVersion: '21' } });
    await settle();
    assert.deepEqual(seen, { n1: ['a', undefined, 'c'], n2: ['b'] });
    assert.equal(lw.lists, 1);
    assert.equal(lw.watches.length, 1);
    await cache.stop();
  });
});

describe("the fleet's node cache: what nodes of one template have alike", () => {
  // A Node as a fleet node's status write leaves it: the template's parts, and the node's own
  // name, address and heartbeat times.
  const templateNode = (name: string, i: number, rv: number): V1Node =>
    JSON.parse(
      JSON.stringify({
        metadata: { name, uid: `uid-${name}`, resourceVersion: String(rv), labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' } },
        spec: {},
        status: {
          capacity: { cpu: '4', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' },
          allocatable: { cpu: '4', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' },
          daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
          nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12 (bookworm)', kubeletVersion: 'v1.34.4', machineID: 'machine-id-of-the-host', bootID: 'boot-id-of-the-host' },
          addresses: [{ type: 'InternalIP', address: '10.0.0.1' }, { type: 'Hostname', address: name }],
          conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: `2026-11-29T10:00:${String(i % 60).padStart(2, '0')}Z`, lastTransitionTime: '2026-11-29T09:00:00Z' }],
        },
      }),
    ) as V1Node;

  it('holds the parts equal across Nodes once, frozen, and keeps each Node its own', async () => {
    const clock = new FakeClock();
    const lw = new ScriptedNodes();
    const names = ['n1', 'n2', 'n3', 'n4'];
    lw.items = names.map((name, i) => templateNode(name, i, i + 1));
    const cache = createNodeCache({ kubeConfig: {} as KubeConfig, clock, isFleetNode: () => true, listWatch: lw });
    const kept = new Map<string, V1Node | undefined>();
    for (const name of names) cache.nodeWatch(name).start((n) => kept.set(name, n));
    cache.start();
    await clock.advance(0);
    // A version that a watch event brings is shared with what the list brought.
    lw.send('MODIFIED', templateNode('n4', 33, 40));
    await settle();
    // A part is tabled once a second Node has it: the first Node's stays its own until its next version.
    const [, b, c, d] = names.map((name) => kept.get(name)!);
    for (const part of ['capacity', 'allocatable', 'daemonEndpoints', 'nodeInfo'] as const) {
      assert.equal(b!.status![part], c!.status![part], `${part} is held once`);
      assert.equal(b!.status![part], d!.status![part], `${part} of a watched version too`);
      assert.ok(Object.isFrozen(b!.status![part]), `${part} is frozen`);
    }
    assert.equal(b!.status!.addresses![0], c!.status!.addresses![0], 'the same InternalIP entry');
    assert.notEqual(b!.status!.addresses, c!.status!.addresses, 'each has its own hostname');
    names.forEach((name, i) => assert.deepEqual(kept.get(name), name === 'n4' ? templateNode('n4', 33, 40) : templateNode(name, i, i + 1), `${name} reads as it came`));
    await cache.stop();
  });
});

describe('the event recorder while the Node is gone', () => {
  it('drops events about the Node, also those queued before, and writes the others', async () => {
    const clock = new FakeClock();
    const written: CoreV1Event[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const api = {
      createNamespacedEvent: async (req: { body: CoreV1Event }) => {
        // The first write takes a while: what comes meanwhile is queued.
        if (written.length === 0) await held;
        written.push(req.body);
        return req.body;
      },
      patchNamespacedEvent: async () => ({}),
    } as unknown as EventApi;
    let gone = false;
    const results: string[] = [];
    const recorder = createEventRecorder({ api, nodeName: 'node-a', clock, nodeGone: () => gone, onResult: (r) => results.push(r) });
    recorder.event(nodeEventRef('node-a'), 'Warning', 'Before', 'written');
    recorder.event(nodeEventRef('node-a'), 'Warning', 'Queued', 'queued, then the Node is deleted');
    gone = true;
    recorder.event(podEventRef(staticPod, undefined), 'Normal', 'Started', 'about a pod');
    recorder.event(nodeEventRef('node-a'), 'Warning', 'After', 'dropped');
    release();
    await recorder.idle();
    assert.deepEqual(written.map((e) => e.reason), ['Before', 'Started']);
    assert.deepEqual(results, ['created', 'dropped', 'created', 'dropped']);
    await recorder.stop();
  });
});
