// The relist (src/agent/relist.ts): the kubelet's PLEG and pod cache on the FakeClock. Runtime
// changes are handed out at the first relist after them; a wait for a status newer than a time
// runs at the first relist after it, at once if one came since; no timer while nothing waits.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRelist } from '../../../src/agent/relist.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

function setup(phaseMs = 0) {
  const clock = new FakeClock();
  const relist = createRelist({ clock, periodMs: 1000, phaseMs });
  const seen: Array<[number, string[]]> = [];
  relist.onChanges((uids) => seen.push([clock.monotonic(), [...uids]]));
  return { clock, relist, seen };
}

describe('relist', () => {
  it('hands out a runtime change at the next relist, not before, once per relist', async () => {
    const { clock, relist, seen } = setup();
    await clock.advance(300);
    relist.runtimeChanged('a');
    relist.runtimeChanged('b');
    relist.runtimeChanged('a');
    await clock.advance(699);
    assert.deepEqual(seen, [], 'nothing before the relist');
    await clock.advance(1);
    assert.deepEqual(seen, [[1000, ['a', 'b']]]);
    relist.runtimeChanged('a');
    await clock.advance(999);
    assert.equal(seen.length, 1);
    await clock.advance(1);
    assert.deepEqual(seen[1], [2000, ['a']]);
    relist.stop();
  });

  it('a change at the very instant of a relist waits for the next one', async () => {
    const { clock, relist, seen } = setup();
    await clock.advance(1000);
    relist.runtimeChanged('a');
    await clock.advance(999);
    assert.deepEqual(seen, []);
    await clock.advance(1);
    assert.deepEqual(seen, [[2000, ['a']]]);
  });

  it('whenNewerThan: at once when a relist came after `since`, else at the next relist', async () => {
    const { clock, relist } = setup();
    const ran: Array<[string, number]> = [];
    await clock.advance(1500);
    relist.whenNewerThan(900, () => ran.push(['old', clock.monotonic()]));
    assert.deepEqual(ran, [['old', 1500]], 'the relist at 1000 is newer than 900: synchronous');
    relist.whenNewerThan(1000, () => ran.push(['at-relist', clock.monotonic()]));
    relist.whenNewerThan(1500, () => ran.push(['now', clock.monotonic()]));
    assert.equal(ran.length, 1, 'a relist at exactly `since` is not newer');
    await clock.advance(499);
    assert.equal(ran.length, 1);
    await clock.advance(1);
    assert.deepEqual(ran.slice(1), [
      ['at-relist', 2000],
      ['now', 2000],
    ]);
  });

  it('hands out the changes before it runs the waits for it, and a wait set by a listener is for the next relist', async () => {
    const { clock, relist } = setup();
    const order: string[] = [];
    relist.onChanges(() => {
      order.push('changes');
      relist.whenNewerThan(clock.monotonic(), () => order.push(`listener's wait at ${clock.monotonic()}`));
    });
    await clock.advance(100);
    relist.whenNewerThan(100, () => order.push(`wait at ${clock.monotonic()}`));
    relist.runtimeChanged('a');
    await clock.advance(2000);
    assert.deepEqual(order, ['changes', 'wait at 1000', "listener's wait at 2000"]);
  });

  it('sets no timer while nothing waits, and stop() clears the one it set and drops what waits', async () => {
    const { clock, relist, seen } = setup();
    await clock.advance(5000);
    assert.equal(clock.pendingTimers, 0);
    relist.runtimeChanged('a');
    assert.equal(clock.pendingTimers, 1);
    await clock.advance(1000);
    assert.equal(seen.length, 1);
    assert.equal(clock.pendingTimers, 0, 'none once the change was handed out');
    let ran = false;
    relist.whenNewerThan(clock.monotonic(), () => (ran = true));
    relist.runtimeChanged('b');
    relist.stop();
    assert.equal(clock.pendingTimers, 0);
    await clock.advance(5000);
    assert.equal(ran, false);
    assert.equal(seen.length, 1);
  });

  it('relists at its phase of the period', async () => {
    const { clock, relist, seen } = setup(400);
    assert.equal(relist.latest(), -600);
    relist.runtimeChanged('a');
    await clock.advance(399);
    assert.deepEqual(seen, []);
    await clock.advance(1);
    assert.deepEqual(seen, [[400, ['a']]]);
    assert.equal(relist.latest(), 400);
    await clock.advance(1000);
    assert.equal(relist.latest(), 1400, 'relists nobody waited for count too');
  });

  it('an idle relist is small: one object, its listener set and waiter list made at the first', async () => {
    const clock = new FakeClock();
    const bytes = await retainedBytesPer(20_000, () => createRelist({ clock, periodMs: 1000, phaseMs: 300 }));
    // About 130 bytes; with a closure per function and the set and list made up front, about 850.
    assert.ok(bytes < 250, `${bytes.toFixed(1)} bytes per relist`);
    const relist = createRelist({ clock, periodMs: 1000, phaseMs: 300 });
    const seen: string[][] = [];
    relist.onChanges((uids) => seen.push([...uids]));
    let ran = 0;
    relist.whenNewerThan(clock.monotonic(), () => ran++);
    relist.runtimeChanged('a');
    await clock.advance(1000);
    assert.deepEqual(seen, [['a']], 'the listener set made at the first listener is the one told');
    assert.equal(ran, 1, 'the waiter list made at the first waiter is the one run');
  });
});
