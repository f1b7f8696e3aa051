// The API source's SET coalescing: watch events that arrive in one turn of the event loop are
// sent as one SET (a burst would otherwise cost O(pods²) in the merge), and nothing is lost.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApiserverSource, type PodListWatch } from '../../../src/sources/apiserver-source.js';
import type { PodUpdate } from '../../../src/sources/types.js';
import { Recorder, waitFor } from '../../helpers/wait.js';

test('a burst of watch events in one turn is one SET with every pod; later events give later SETs', async () => {
  let push: ((type: 'ADDED' | 'DELETED', object: unknown) => void) | undefined;
  const listWatch: PodListWatch = {
    list: async () => ({ items: [], metadata: { resourceVersion: '1' } }),
    watch: async (_rv, onEvent) => {
      push = onEvent;
      return { abort: () => {} };
    },
  };
  const rec = new Recorder<PodUpdate>();
  const source = createApiserverSource({ listWatch, nodeName: 'n', update: rec.push });
  source.start();
  try {
    assert.equal((await rec.next('the SET after the list')).pods.length, 0);
    await waitFor(() => push !== undefined, 'the watch');
    const pod = (i: number): unknown => ({ metadata: { name: `p-${i}`, namespace: 'ns', resourceVersion: String(i + 2) } });
    for (let i = 0; i < 500; i++) push!('ADDED', pod(i));
    const set = await rec.next('the SET after the burst');
    assert.equal(set.pods.length, 500);
    assert.equal(rec.pending, 0);
    push!('DELETED', pod(0));
    assert.equal((await rec.next('the SET after the delete')).pods.length, 499);
    assert.equal(rec.items.length, 3, 'one SET for the list, one for the burst, one for the delete');
  } finally {
    await source.stop();
  }
});
