// A spread with alignMs ends each wait after a success on the grid, so many nodes' loops that
// fall due close together run in the same turn of the event loop.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { aligned, createPeriodicLoop } from '../../../src/node/periodic-loop.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

it('aligned rounds the end of a wait up to the grid, never shortening it', () => {
  assert.equal(aligned(1_000, 10_000, 100), 10_000);
  assert.equal(aligned(1_030, 10_000, 100), 10_070);
  assert.equal(aligned(1_030, 10_080, 100), 10_170);
  assert.equal(aligned(0, 1, 100), 100);
});

it('two loops with different phases run on the same grid tick once aligned', async () => {
  const clock = new FakeClock();
  const runs: Record<string, number[]> = { a: [], b: [] };
  const loop = (name: 'a' | 'b', jitter: number) =>
    createPeriodicLoop({
      attempt: async () => (runs[name]!.push(clock.now().getTime()), true),
      periodMs: 10_000,
      retryInitialMs: 500,
      clock,
      spread: { firstPeriodMs: 1_000, jitterMs: () => jitter, alignMs: 100 },
    });
  const start = clock.now().getTime();
  const a = loop('a', 13);
  const b = loop('b', 57);
  a.start();
  b.start();
  for (let i = 0; i < 40; i++) await clock.advance(1_000);
  await Promise.all([a.stop(), b.stop()]);
  for (const name of ['a', 'b'] as const) {
    assert.ok(runs[name]!.length >= 4);
    for (const t of runs[name]!.slice(1)) assert.equal(t % 100, 0, `${name} ran off the grid at +${t - start} ms`);
  }
  assert.deepEqual(runs['a']!.slice(1, 3), runs['b']!.slice(1, 3), 'jitters of 13 and 57 ms fall in the same 100 ms step');
});

it('a loop is one small object: its functions are on the prototype', async () => {
  const clock = new FakeClock();
  const options = { attempt: async () => true, periodMs: 10_000, retryInitialMs: 1000, clock };
  const bytes = await retainedBytesPer(20_000, () => createPeriodicLoop(options));
  // About 80 bytes; with a closure per function, about 420.
  assert.ok(bytes < 150, `${bytes.toFixed(1)} bytes per loop`);
});
