// The shared parts an adopted node joins after the fleet started: the pod fan-out gives it the
// pods bound to it before (src/fleet/pod-fan-out.ts, keepOtherNodes), and the Lease shards try
// its Lease from then on and forget it when it is released (src/fleet/lease-shards.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PodList } from '@kubernetes/client-node';
import { createLeaseShards } from '../../../src/fleet/lease-shards.js';
import { createPodFanOut } from '../../../src/fleet/pod-fan-out.js';
import { createApiserverSource } from '../../../src/sources/apiserver-source.js';
import type { PodListWatch, WatchEventType } from '../../../src/sources/pod-list-watch.js';
import type { Pod } from '../../../src/pod/types.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';
import { realClock } from '../../../src/time/clock.js';
import { FakeLeaseApi } from '../../helpers/fake-lease-api.js';
import { waitFor } from '../../helpers/wait.js';

let rv = 1;
const pod = (name: string, node: string, uid = name): Pod => ({ metadata: { name, namespace: 'ns', uid, resourceVersion: String(++rv) }, spec: { nodeName: node, containers: [] } });

function fakeServer(initial: Pod[]) {
  let push: ((type: WatchEventType, object: unknown) => void) | undefined;
  const listWatch: PodListWatch = {
    list: async (): Promise<V1PodList> => ({ metadata: { resourceVersion: String(rv) }, items: initial }),
    watch: async (_rv, onEvent) => {
      push = onEvent;
      return { abort: () => (push = undefined) };
    },
  };
  return { listWatch, send: (type: WatchEventType, p: Pod) => push?.(type, p), watching: () => push !== undefined };
}

describe('pod fan-out: nodes added after the start', () => {
  async function sourceOf(fanOut: ReturnType<typeof createPodFanOut>, node: string) {
    fanOut.addNode(node);
    let names: string[] | undefined;
    const source = createApiserverSource({ listWatch: fanOut.listWatchFor(node), nodeName: node, onUpdate: (u) => (names = u.pods.map((p) => p.metadata!.name!).sort()), clock: realClock });
    source.start();
    return { source, names: () => names?.join() };
  }

  it('with keepOtherNodes, a node added late starts with the pods listed and watched for it before', async () => {
    const server = fakeServer([pod('listed', 'late'), pod('mine', 'n1')]);
    const fanOut = createPodFanOut({ listWatch: server.listWatch, clock: realClock, keepOtherNodes: true });
    fanOut.addNode('n1');
    fanOut.start();
    await waitFor(() => server.watching(), 'the shared watch');
    server.send('ADDED', pod('watched', 'late'));
    server.send('ADDED', pod('brief', 'late'));
    server.send('DELETED', pod('brief', 'late'));
    const late = await sourceOf(fanOut, 'late');
    await waitFor(() => late.names() === 'listed,watched', "the late node's pods so far");
    server.send('ADDED', pod('after', 'late'));
    await waitFor(() => late.names() === 'after,listed,watched', 'and those that come after');
    // Released: the stream goes, the pods are kept for a node of that name adopted again.
    await late.source.stop();
    fanOut.removeNode('late');
    server.send('DELETED', pod('listed', 'late'));
    const again = await sourceOf(fanOut, 'late');
    await waitFor(() => again.names() === 'after,watched', 'the pods of the node adopted again');
    await again.source.stop();
    await fanOut.stop();
  });

  it('without it, the pods of a node not added are dropped', async () => {
    const server = fakeServer([pod('listed', 'late')]);
    const fanOut = createPodFanOut({ listWatch: server.listWatch, clock: realClock });
    fanOut.start();
    await waitFor(() => server.watching(), 'the shared watch');
    const late = await sourceOf(fanOut, 'late');
    await waitFor(() => late.names() === '', 'an empty first set');
    await late.source.stop();
    await fanOut.stop();
  });
});

describe('Lease shards: nodes added after the start', () => {
  it('takes the Lease of a node added later within a second, and not once it is removed', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const acquired: string[] = [];
    const shards = createLeaseShards({ identity: 'replica-a', nodes: [], api, clock, onAcquired: (name) => acquired.push(name) });
    shards.start();
    shards.addNode('karp-a');
    await clock.advance(1000);
    await settle();
    assert.deepEqual(acquired, ['karp-a']);
    assert.equal(api.lease?.spec?.holderIdentity, 'replica-a');
    assert.deepEqual(shards.held(), ['karp-a']);
    await shards.removeNode('karp-a');
    assert.deepEqual(shards.held(), []);
    await shards.stop();
  });

  it('a node removed before its first try is never claimed', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const acquired: string[] = [];
    const shards = createLeaseShards({ identity: 'replica-a', nodes: [], api, clock, onAcquired: (name) => acquired.push(name) });
    shards.start();
    shards.addNode('karp-b');
    await shards.removeNode('karp-b');
    await clock.advance(30_000);
    await settle();
    assert.deepEqual(acquired, []);
    assert.deepEqual(api.calls, []);
    await shards.stop();
  });

  it('a node removed while its claim is in flight is not started', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const create = api.createNamespacedLease.bind(api);
    api.createNamespacedLease = async (p) => {
      await held;
      return create(p);
    };
    const acquired: string[] = [];
    const shards = createLeaseShards({ identity: 'replica-a', nodes: [], api, clock, onAcquired: (name) => acquired.push(name) });
    shards.start();
    shards.addNode('karp-c');
    await clock.advance(1000);
    await settle();
    assert.deepEqual(api.calls, ['read'], 'the claim is in flight');
    const removed = shards.removeNode('karp-c');
    release();
    await removed;
    await settle();
    assert.deepEqual(acquired, []);
    assert.deepEqual(shards.held(), []);
    await shards.stop();
  });
});
