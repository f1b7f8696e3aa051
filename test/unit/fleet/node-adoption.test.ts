// Nodes that others create, taken over by the fleet (src/fleet/node-adoption.ts) from its one
// Node watch (src/fleet/node-cache.ts), and what an adopted node's registration writes
// (src/node/node-registration.ts, `adopted`). On the FakeClock, over a scripted list/watch and
// an in-memory Node API.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { resolveFleetConfig } from '../../../src/fleet/fleet-config.js';
import { adoptedMaxPods, createNodeAdoption, selectingTemplate, type ReleaseReason } from '../../../src/fleet/node-adoption.js';
import { createNodeCache } from '../../../src/fleet/node-cache.js';
import type { ListWatch, ObjectList, WatchEventType } from '../../../src/kube/list-watch.js';
import { createNodeRegistration, type NodeApi } from '../../../src/node/node-registration.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';

const status = (code: number, reason: string) => new ApiException(code, `HTTP ${code}`, JSON.stringify({ kind: 'Status', reason }), {});

/** The Nodes as a list and a watch the test drives; `expire()` ends the watch with 410, so the reflector relists. */
class ScriptedNodes implements ListWatch<V1Node> {
  items: V1Node[] = [];
  lists = 0;
  #watch: { onEvent: (type: WatchEventType, object: unknown) => void; done: (err: unknown) => void } | undefined;
  async list(): Promise<ObjectList<V1Node>> {
    this.lists++;
    return { items: this.items, metadata: { resourceVersion: String(100 + this.lists) } };
  }
  async watch(_rv: string, onEvent: (type: WatchEventType, object: unknown) => void, done: (err: unknown) => void): Promise<{ abort(): void }> {
    this.#watch = { onEvent, done };
    return { abort: () => {} };
  }
  send(type: WatchEventType, node: V1Node): void {
    this.#watch!.onEvent(type, node);
  }
  expire(): void {
    this.#watch!.done(status(410, 'Expired'));
  }
}

let rv = 0;
const node = (name: string, uid: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}, extra: Partial<V1Node> = {}): V1Node => ({
  metadata: { name, uid, resourceVersion: String(++rv), labels, annotations },
  ...extra,
});
const KWOK = { 'kwok.x-k8s.io/node': 'fake' };

const config = resolveFleetConfig(
  {
    kubeconfig: '/k',
    templates: [
      { name: 'sim-{i}', count: 2 },
      { annotationSelector: 'kwok.x-k8s.io/node=fake', staticPodPath: '/first' },
      { labelSelector: 'pool=auto', staticPodPath: '/second' },
    ],
  },
  {},
);
const named = new Set(['sim-0', 'sim-1']);

/** The node cache with adoption, as the fleet wires them, recording what happens in order. */
function setup(inShard?: (name: string) => boolean) {
  const clock = new FakeClock();
  const nodes = new ScriptedNodes();
  const log: string[] = [];
  const adoption = createNodeAdoption({
    templates: config.templates,
    isNamed: (name) => named.has(name),
    ...(inShard !== undefined ? { inShard } : {}),
    onAdopt: (name, template) => log.push(`adopt ${name} by templates[${template}]`),
    onRelease: (name, reason: ReleaseReason) => log.push(`release ${name} (${reason})`),
  });
  const gets: string[] = [];
  const core = {
    readNode: async ({ name }: { name: string }) => {
      gets.push(name);
      throw status(404, 'NotFound');
    },
  } as unknown as NodeApi;
  const cache = createNodeCache({
    kubeConfig: {} as KubeConfig,
    clock,
    isFleetNode: (name) => named.has(name) || adoption.isAdopted(name),
    observer: adoption,
    listWatch: nodes,
  });
  const api = cache.nodeApi(core);
  /** What the node `name` hears from its own-Node watch, into the same log. */
  const listen = (name: string) => cache.nodeWatch(name).start((n) => log.push(`${name} hears ${n === undefined ? 'gone' : n.metadata?.uid}`));
  /** Starts the cache and lets its first list arrive. */
  const start = async (): Promise<void> => {
    cache.start();
    await clock.advance(0);
  };
  return { clock, nodes, log, adoption, cache, api, gets, listen, start };
}

describe('node adoption', () => {
  it('adopts the listed Nodes a selector matches, never a named node or one no selector matches', async () => {
    const t = setup();
    t.nodes.items = [
      node('sim-0', 'u0', {}, KWOK), // named: the fleet's by name even though the selector matches
      node('karp-a', 'ua', {}, KWOK),
      node('real-1', 'ur', { pool: 'manual' }),
      node('ca-b', 'ub', { pool: 'auto' }, KWOK), // both selectors match: the first template wins
      node('ca-c', 'uc', { pool: 'auto' }),
    ];
    await t.start();
    assert.deepEqual(t.log, ['adopt karp-a by templates[1]', 'adopt ca-b by templates[1]', 'adopt ca-c by templates[2]']);
    assert.deepEqual([...t.adoption.adopted()], [['karp-a', 1], ['ca-b', 1], ['ca-c', 2]]);
    // The cache keeps the adopted Nodes: their read-backs are answered without a GET.
    assert.equal((await t.api.readNode({ name: 'karp-a' })).metadata?.uid, 'ua');
    assert.deepEqual(t.gets, []);
    await assert.rejects(t.api.readNode({ name: 'real-1' }));
    assert.deepEqual(t.gets, ['real-1'], 'a Node not the fleet\'s is not kept');
    await t.cache.stop();
  });

  it('adopts a Node created later, and releases it when its label goes or when it is deleted, after its node heard', async () => {
    const t = setup();
    await t.start();
    t.nodes.send('ADDED', node('auto-1', 'a1', { pool: 'auto' }));
    t.listen('auto-1');
    t.nodes.send('ADDED', node('auto-2', 'a2', { pool: 'auto' }));
    t.listen('auto-2');
    t.nodes.send('MODIFIED', node('auto-1', 'a1', { pool: 'auto', extra: 'x' }));
    t.nodes.send('MODIFIED', node('auto-2', 'a2', { pool: 'gone' }));
    t.nodes.send('DELETED', node('auto-1', 'a1', { pool: 'auto' }));
    await settle();
    assert.deepEqual(t.log, [
      'adopt auto-1 by templates[2]',
      'auto-1 hears a1',
      'adopt auto-2 by templates[2]',
      'auto-2 hears a2',
      'auto-1 hears a1',
      // Released while the Node exists: its node is stopped, not told the Node is gone.
      'release auto-2 (unmatched)',
      // The node hears of the deletion first (it stops writing), then it is released.
      'auto-1 hears gone',
      'release auto-1 (deleted)',
    ]);
    assert.deepEqual([...t.adoption.adopted().keys()], []);
    await assert.rejects(t.api.readNode({ name: 'auto-2' }));
    assert.deepEqual(t.gets, ['auto-2'], 'a released Node is no longer kept');
    await t.cache.stop();
  });

  it('keeps a Node being deleted until it is gone, ignores the deletion of an older Node of the same name', async () => {
    const t = setup();
    await t.start();
    t.nodes.send('ADDED', node('karp-x', 'old', {}, KWOK));
    t.nodes.send('MODIFIED', node('karp-x', 'old', {}, KWOK, { metadata: { name: 'karp-x', uid: 'old', annotations: KWOK, deletionTimestamp: new Date() } }));
    assert.deepEqual([...t.adoption.adopted().keys()], ['karp-x'], 'draining: still run');
    // Deleted and created again faster than the watch: the new one is seen first by a relist.
    t.nodes.items = [node('karp-x', 'new', {}, KWOK)];
    t.nodes.expire();
    await t.clock.advance(1000);
    assert.equal(t.nodes.lists, 2);
    t.nodes.send('DELETED', node('karp-x', 'old', {}, KWOK));
    assert.deepEqual(t.log, ['adopt karp-x by templates[1]'], 'one adoption, no release');
    t.nodes.send('DELETED', node('karp-x', 'new', {}, KWOK));
    assert.deepEqual(t.log, ['adopt karp-x by templates[1]', 'release karp-x (deleted)']);
    await t.cache.stop();
  });

  it('releases an adopted Node a relist no longer shows', async () => {
    const t = setup();
    t.nodes.items = [node('karp-a', 'ua', {}, KWOK), node('karp-b', 'ub', {}, KWOK)];
    await t.start();
    t.listen('karp-a');
    t.nodes.items = [node('karp-b', 'ub', {}, KWOK)];
    t.nodes.expire();
    await t.clock.advance(1000);
    assert.deepEqual(t.log, ['adopt karp-a by templates[1]', 'adopt karp-b by templates[1]', 'karp-a hears ua', 'karp-a hears gone', 'release karp-a (deleted)']);
    await t.cache.stop();
  });

  it('with --shard i/n, adopts only the nodes of its shard', async () => {
    const t = setup((name) => name.endsWith('-even'));
    t.nodes.items = [node('a-even', '1', {}, KWOK), node('a-odd', '2', {}, KWOK)];
    await t.start();
    assert.deepEqual(t.log, ['adopt a-even by templates[1]']);
    await t.cache.stop();
  });

  it('selectingTemplate and adoptedMaxPods read what the creator set', () => {
    assert.equal(selectingTemplate(config.templates, node('x', 'u', { pool: 'auto' })), 2);
    assert.equal(selectingTemplate(config.templates, node('x', 'u', { pool: 'other' })), undefined);
    assert.equal(adoptedMaxPods({ status: { allocatable: { pods: '58' }, capacity: { pods: '110' } } }), 58);
    assert.equal(adoptedMaxPods({ status: { capacity: { pods: '1k' } } }), 1000);
    assert.equal(adoptedMaxPods({ status: { capacity: { cpu: '2' } } }), undefined);
    assert.equal(adoptedMaxPods({ status: { allocatable: { pods: '1.5' } } }), undefined);
  });
});


/** A Node API holding one Node as its creator made it; status patches merge as a JSON merge patch does at the top of status. */
class CreatorsNode implements NodeApi {
  readonly calls: string[] = [];
  constructor(public node: V1Node | undefined) {}
  async createNode(): Promise<V1Node> {
    this.calls.push('create');
    throw status(403, 'Forbidden');
  }
  async readNode(): Promise<V1Node> {
    this.calls.push('read');
    if (this.node === undefined) throw status(404, 'NotFound');
    return structuredClone(this.node);
  }
  async patchNodeStatus(param: { body: unknown }): Promise<V1Node> {
    this.calls.push('patch');
    if (this.node === undefined) throw status(404, 'NotFound');
    const body = JSON.parse(JSON.stringify(param.body)) as { status: V1Node['status'] };
    this.node = { ...this.node, status: { ...this.node.status, ...body.status } };
    return structuredClone(this.node);
  }
}

describe("an adopted node's registration", () => {
  const created = (): V1Node => ({
    metadata: { name: 'karp-a', uid: 'u1', labels: { 'karpenter.sh/nodepool': 'default', 'node.kubernetes.io/instance-type': 'c-4x' }, annotations: KWOK },
    spec: { providerID: 'kwok://karp-a', taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] },
    status: { capacity: { cpu: '4', memory: '16Gi', pods: '58' }, allocatable: { cpu: '3900m', memory: '15Gi', pods: '58' }, phase: 'Pending' },
  });

  it('takes the Node as it is: no create, the creator\'s resources kept, the status ours', async () => {
    const api = new CreatorsNode(created());
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00Z'));
    const reg = createNodeRegistration({ nodeName: 'karp-a', api, clock, maxPods: 58, adopted: true, capacity: { cpu: '99' }, random: () => 0.5 });
    reg.start();
    await clock.advance(0);
    await settle();
    assert.deepEqual(api.calls, ['read', 'patch']);
    const n = api.node!;
    assert.deepEqual(n.status?.capacity, { cpu: '4', memory: '16Gi', pods: '58' }, 'capacity kept (the template\'s cpu is not written over it)');
    assert.deepEqual(n.status?.allocatable, { cpu: '3900m', memory: '15Gi', pods: '58' });
    assert.deepEqual(n.metadata, created().metadata);
    assert.deepEqual(n.spec, created().spec);
    assert.equal(n.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.equal(n.status?.nodeInfo?.kubeletVersion !== undefined, true);
    assert.deepEqual(n.status?.addresses, [{ type: 'Hostname', address: 'karp-a' }]);
    assert.equal(n.status?.daemonEndpoints?.kubeletEndpoint?.Port, 10250);
    // The next period: nothing changed, nothing written.
    await clock.advance(10_000);
    assert.deepEqual(api.calls, ['read', 'patch', 'read']);
    await reg.stop();
  });

  it('fills in only the resources the creator left out, from the template over the machine', async () => {
    const api = new CreatorsNode({ metadata: { name: 'bare', uid: 'u2' } });
    const clock = new FakeClock();
    const reg = createNodeRegistration({ nodeName: 'bare', api, clock, maxPods: 110, adopted: true, capacity: { cpu: '8' }, random: () => 0.5 });
    reg.start();
    await clock.advance(0);
    await settle();
    assert.equal(api.node!.status?.capacity?.['cpu'], '8');
    assert.equal(api.node!.status?.capacity?.['pods'], '110');
    assert.equal(api.node!.status?.allocatable?.['cpu'], '8');
    await reg.stop();
  });

  it('a Node already gone is not created: nothing is written for it', async () => {
    const api = new CreatorsNode(undefined);
    const clock = new FakeClock();
    const reg = createNodeRegistration({ nodeName: 'gone', api, clock, adopted: true });
    reg.start();
    await clock.advance(0);
    await settle();
    assert.equal(reg.nodeGone(), true);
    await clock.advance(30_000);
    assert.equal(api.calls.includes('create'), false);
    assert.equal(api.calls.includes('patch'), false);
    await reg.stop();
  });
});
