// The fleet's bounded start (src/fleet/bounded-start.ts): no more than `limit` nodes between
// their start and their registration, the next one started the moment one registers or gives up,
// everything at once with 0, and nothing started once the fleet stops.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startBounded } from '../../../src/fleet/bounded-start.js';

interface Gate {
  promise: Promise<void>;
  open(): void;
  fail(): void;
}
function gate(): Gate {
  let open!: () => void;
  let fail!: () => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = () => reject(new Error('gave up'));
  });
  return { promise, open, fail };
}
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('startBounded', () => {
  it('keeps at most `limit` nodes registering, and starts the next as soon as one settles, either way', async () => {
    const gates = new Map<number, Gate>(Array.from({ length: 5 }, (_, i) => [i, gate()]));
    const started: number[] = [];
    let registering = 0;
    let most = 0;
    const done = startBounded([0, 1, 2, 3, 4], {
      limit: 2,
      start: async (i) => {
        started.push(i);
        most = Math.max(most, ++registering);
      },
      settled: (i) => gates.get(i)!.promise.finally(() => registering--),
      stopped: () => false,
    });
    await turn();
    assert.deepEqual(started, [0, 1]);
    gates.get(1)!.open();
    await turn();
    assert.deepEqual(started, [0, 1, 2]);
    gates.get(0)!.fail(); // a node that gave up frees its slot too
    await turn();
    assert.deepEqual(started, [0, 1, 2, 3]);
    gates.get(2)!.open();
    await done; // resolves once the last one started, while 3 and 4 still register
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
    assert.equal(most, 2);
    gates.get(3)!.open();
    gates.get(4)!.open();
  });

  it('with 0 starts every node at once without waiting for any registration', async () => {
    const started: number[] = [];
    await startBounded([0, 1, 2], {
      limit: 0,
      start: async (i) => void started.push(i),
      settled: () => new Promise(() => undefined),
      stopped: () => false,
    });
    assert.deepEqual(started, [0, 1, 2]);
  });

  it('starts nothing more once the fleet is stopping', async () => {
    const g = gate();
    let stopping = false;
    const started: number[] = [];
    const done = startBounded([0, 1, 2], {
      limit: 1,
      start: async (i) => void started.push(i),
      settled: () => g.promise,
      stopped: () => stopping,
    });
    await turn();
    stopping = true;
    g.open();
    await done;
    assert.deepEqual(started, [0]);
  });
});
