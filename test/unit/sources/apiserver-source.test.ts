// The API source's SETs: watch events that arrive in one turn of the event loop are sent as one
// SET (a burst would otherwise cost O(pods²) in the merge) with the delta from the previous
// SET, and nothing is lost.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../../src/pod/types.js';
import { createApiserverSource, type ApiserverSource, type PodListWatch, type WatchEventType } from '../../../src/sources/apiserver-source.js';
import type { PodUpdate } from '../../../src/sources/types.js';
import { Recorder, waitFor } from '../../helpers/wait.js';

/** A list/watch that lists `items` and lets the test push watch events once it is watching. */
type Push = (type: WatchEventType, object: unknown) => void;

function fakeListWatch(items: Pod[]): { listWatch: PodListWatch; push: () => Push | undefined } {
  let onEvent: Push | undefined;
  return {
    listWatch: {
      list: async () => ({ items, metadata: { resourceVersion: '1' } }),
      watch: async (_rv, handler) => {
        onEvent = handler;
        return { abort: () => {} };
      },
    },
    push: () => onEvent,
  };
}

async function startWatching(items: Pod[]): Promise<{ source: ApiserverSource; rec: Recorder<PodUpdate>; first: PodUpdate; push: Push }> {
  const fake = fakeListWatch(items);
  const rec = new Recorder<PodUpdate>();
  const source = createApiserverSource({ listWatch: fake.listWatch, nodeName: 'n', update: rec.push });
  source.start();
  const first = await rec.next('the SET after the list');
  await waitFor(() => fake.push() !== undefined, 'the watch');
  return { source, rec, first, push: fake.push()! };
}

test('a burst of watch events in one turn is one SET with every pod; later events give later SETs', async () => {
  const { source, rec, first, push } = await startWatching([]);
  try {
    assert.equal(first.pods.length, 0);
    const pod = (i: number): unknown => ({ metadata: { name: `p-${i}`, namespace: 'ns', resourceVersion: String(i + 2) } });
    for (let i = 0; i < 500; i++) push('ADDED', pod(i));
    const set = await rec.next('the SET after the burst');
    assert.equal(set.pods.length, 500);
    assert.equal(rec.pending, 0);
    push('DELETED', pod(0));
    assert.equal((await rec.next('the SET after the delete')).pods.length, 499);
    assert.equal(rec.items.length, 3, 'one SET for the list, one for the burst, one for the delete');
  } finally {
    await source.stop();
  }
});

test('SETs after watch events carry the delta from the previous SET; the SET of a list does not', async () => {
  const listed = { metadata: { name: 'listed', namespace: 'ns', uid: 'u-listed', resourceVersion: '1' } };
  const { source, rec, first, push } = await startWatching([listed]);
  try {
    assert.equal(first.delta, undefined, 'a list replaces everything: no delta');
    const pod = (name: string, uid: string, rv: string): { metadata: Record<string, string> } => ({ metadata: { name, namespace: 'ns', uid, resourceVersion: rv } });

    const a = pod('a', 'u-a', '2');
    const transient = pod('t', 'u-t', '3');
    push('ADDED', a);
    push('ADDED', transient);
    push('DELETED', transient); // came and went within the tick: not in the delta
    const second = await rec.next('the SET after the adds');
    assert.equal(second.delta?.base, first.pods, 'the base is the very array of the previous SET');
    assert.deepEqual(second.delta?.changed, [a]);
    assert.deepEqual(second.delta?.removed, []);

    const a2 = pod('a', 'u-a', '4'); // modified: same UID
    const listed2 = pod('listed', 'u-listed-2', '5'); // deleted and created again: a new UID
    push('MODIFIED', a2);
    push('DELETED', listed);
    push('ADDED', listed2);
    const third = await rec.next('the SET after the changes');
    assert.equal(third.delta?.base, second.pods);
    assert.deepEqual(third.delta?.changed, [a2, listed2]);
    assert.deepEqual(third.delta?.removed, [listed]);
    assert.deepEqual(third.pods.map((p) => p.metadata?.uid).sort(), ['u-a', 'u-listed-2']);
  } finally {
    await source.stop();
  }
});
