// The one pod watch of a fleet, handed out by node (src/fleet/pod-fan-out.ts), under the API
// server source of one node: each node sees its own pods, events missed between a list and a
// watch are never lost.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PodList } from '@kubernetes/client-node';
import { createPodFanOut } from '../../../src/fleet/pod-fan-out.js';
import { ApiException } from '../../../src/kube/api-exception.js';
import { createApiserverSource } from '../../../src/sources/apiserver-source.js';
import type { PodListWatch, WatchEventType } from '../../../src/sources/pod-list-watch.js';
import type { PodUpdate, SourceLogger } from '../../../src/sources/types.js';
import type { Pod } from '../../../src/pod/types.js';
import { realClock } from '../../../src/time/clock.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';
import { waitFor } from '../../helpers/wait.js';

let rv = 1;
const pod = (name: string, node: string, uid = name): Pod => ({ metadata: { name, namespace: 'ns', uid, resourceVersion: String(++rv) }, spec: { nodeName: node, containers: [] } });

/** A fake API server: a list of pods, and a watch that the test pushes events into. */
function fakeServer(initial: Pod[]) {
  let push: ((type: WatchEventType, object: unknown) => void) | undefined;
  let end: ((err: unknown) => void) | undefined;
  let items = initial;
  let lists = 0;
  const listWatch: PodListWatch = {
    list: async (): Promise<V1PodList> => {
      lists += 1;
      return { metadata: { resourceVersion: String(rv) }, items };
    },
    watch: async (_rv, onEvent, done) => {
      push = onEvent;
      end = done;
      return { abort: () => (push = end = undefined) };
    },
  };
  return {
    listWatch,
    send: (type: WatchEventType, p: Pod) => push?.(type, p),
    watching: () => push !== undefined,
    lists: () => lists,
    /** The watch's resourceVersion expired: the next list serves `next`. */
    expire(next: Pod[]) {
      items = next;
      const done = end;
      push = end = undefined;
      done?.(new ApiException(410, 'Gone', undefined, {}));
    },
  };
}

describe('pod fan-out', () => {
  it("gives each node's source exactly its pods, through adds, changes and deletes", async () => {
    const server = fakeServer([pod('a', 'n1'), pod('b', 'n2'), pod('c', 'elsewhere')]);
    const fanOut = createPodFanOut({ listWatch: server.listWatch, clock: realClock });
    fanOut.addNode('n1');
    fanOut.addNode('n2');
    const last = new Map<string, string[]>();
    const sources = ['n1', 'n2'].map((node) =>
      createApiserverSource({
        listWatch: fanOut.listWatchFor(node),
        nodeName: node,
        onUpdate: (u: PodUpdate) => last.set(node, u.pods.map((p) => p.metadata!.name!).sort()),
        clock: realClock,
      }),
    );
    fanOut.start();
    sources.forEach((s) => s.start());
    await waitFor(() => last.get('n1')?.join() === 'a' && last.get('n2')?.join() === 'b', 'the listed pods per node');
    await waitFor(() => server.watching(), 'the shared watch');
    server.send('ADDED', pod('d', 'n1'));
    server.send('ADDED', pod('e', 'n2'));
    server.send('ADDED', pod('f', 'other'));
    await waitFor(() => last.get('n1')?.join() === 'a,d' && last.get('n2')?.join() === 'b,e', 'the added pods on their nodes');
    server.send('DELETED', pod('a', 'n1'));
    await waitFor(() => last.get('n1')?.join() === 'd', 'the deleted pod gone from n1');
    assert.equal(last.get('n2')?.join(), 'b,e');
    await Promise.all(sources.map((s) => s.stop()));
    await fanOut.stop();
  });

  it('a node whose source was not watching when its pods changed relists (410) and misses nothing', async () => {
    const server = fakeServer([]);
    const fanOut = createPodFanOut({ listWatch: server.listWatch, clock: realClock });
    fanOut.addNode('n1');
    fanOut.start();
    await waitFor(() => server.watching(), 'the shared watch');
    const lw = fanOut.listWatchFor('n1');
    const list = await lw.list();
    server.send('ADDED', pod('late', 'n1'));
    await waitFor(async () => {
      await new Promise((r) => setImmediate(r));
      return true;
    }, 'a turn');
    const ended = new Promise<unknown>((resolve) => void lw.watch(list.metadata!.resourceVersion!, () => undefined, resolve));
    assert.equal(((await ended) as { code?: number }).code, 410);
    assert.deepEqual((await lw.list()).items.map((p) => p.metadata?.name), ['late']);
    await fanOut.stop();
  });

  // After the shared watch expired, n1's pod changed, one of n2's went and one came, n3's did not.
  async function relistSeenBy(relistSlice?: number): Promise<string[]> {
    const a = pod('a', 'n1');
    const b = pod('b', 'n2');
    const c = pod('c', 'n3');
    const server = fakeServer([a, b, c]);
    const fanOut = createPodFanOut({ listWatch: server.listWatch, clock: realClock, relistSlice });
    const seen: string[] = [];
    for (const node of ['n1', 'n2', 'n3']) fanOut.addNode(node);
    fanOut.start();
    await waitFor(() => server.watching(), 'the shared watch');
    for (const node of ['n1', 'n2', 'n3']) {
      const lw = fanOut.listWatchFor(node);
      const list = await lw.list();
      await lw.watch(
        list.metadata!.resourceVersion!,
        (type, object) => {
          // The first event of the relist marks where the event loop's next turn comes.
          if (seen.length === 0) setImmediate(() => seen.push('(a turn)'));
          seen.push(`${type} ${(object as Pod).metadata!.name}@${node}`);
        },
        () => undefined,
      );
    }
    server.expire([{ ...a, metadata: { ...a.metadata, resourceVersion: String(++rv) } }, pod('g', 'n2'), c]);
    await waitFor(() => server.lists() === 2 && server.watching(), 'the relist, then the watch again');
    await fanOut.stop();
    return seen;
  }

  it('a relist of the shared watch sends each node what changed, the deletions first, and nothing for the pods that did not', async () => {
    assert.deepEqual((await relistSeenBy()).filter((e) => e !== '(a turn)'), ['MODIFIED a@n1', 'DELETED b@n2', 'ADDED g@n2']);
  });

  it('a relist hands its nodes out in slices, the event loop free between them, a node never split; the watch starts after the last', async () => {
    // The default slice holds this small relist whole: the turn comes after it.
    assert.deepEqual(await relistSeenBy(), ['MODIFIED a@n1', 'DELETED b@n2', 'ADDED g@n2', '(a turn)']);
    // A slice of one pod: a turn after each node.
    assert.deepEqual(await relistSeenBy(1), ['MODIFIED a@n1', '(a turn)', 'DELETED b@n2', 'ADDED g@n2']);
  });
});

// A node added after the start: an adopted Node (src/fleet/node-adoption.ts).
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

// The per-node watches live in memory: nothing closes them unless the fan-out does.
describe('pod fan-out: a node without pod events', () => {
  it("has its watch closed before its source's watchdog would call it silent, and watches again without a list", async () => {
    const clock = new FakeClock();
    const server = fakeServer([pod('a', 'n1')]);
    const fanOut = createPodFanOut({ listWatch: server.listWatch, clock, nodeWatchSeconds: 240 });
    fanOut.addNode('n1');
    const perNode = fanOut.listWatchFor('n1');
    const calls: string[] = [];
    const counted: PodListWatch = {
      list: () => (calls.push('list'), perNode.list()),
      watch: (rv, onEvent, done) => (calls.push('watch'), perNode.watch(rv, onEvent, done)),
    };
    const warnings: string[] = [];
    const logger: SourceLogger = { debug() {}, info() {}, error() {}, warn: (_fields: object, msg?: string) => void warnings.push(msg ?? '') };
    let names = '';
    const source = createApiserverSource({
      listWatch: counted,
      nodeName: 'n1',
      onUpdate: (u) => (names = u.pods.map((p) => p.metadata!.name!).sort().join()),
      clock,
      logger,
      watchTimeoutSeconds: 300,
    });
    fanOut.start();
    source.start();
    await settle();
    assert.equal(names, 'a');
    assert.deepEqual(calls, ['list', 'watch']);
    // Twenty minutes without an event: a watch every 4 minutes, never a list, never a warning.
    for (let i = 0; i < 20; i++) await clock.advance(60_000).then(() => settle());
    assert.deepEqual(calls, ['list', 'watch', 'watch', 'watch', 'watch', 'watch', 'watch']);
    assert.deepEqual(warnings, []);
    server.send('ADDED', pod('b', 'n1'));
    await settle();
    assert.equal(names, 'a,b');
    await source.stop();
    await fanOut.stop();
  });
});
