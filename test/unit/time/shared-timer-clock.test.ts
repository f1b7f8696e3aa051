// The fleet's nodes wait on one timer: their timeouts and intervals must fire as the clock's
// own would, in due order, at the same times, and clearing must work wherever a timer sits.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { createSharedTimerClock } from '../../../src/time/shared-timer-clock.js';

it('fires timeouts at their due times, in due order, over one timer of the clock under it', async () => {
  const base = new FakeClock();
  const clock = createSharedTimerClock(base);
  const fired: string[] = [];
  const at = (name: string) => () => fired.push(`${name}@${base.monotonic()}`);
  clock.setTimeout(at('c'), 300);
  clock.setTimeout(at('a'), 100);
  clock.setTimeout(at('b'), 200);
  clock.setTimeout(at('a2'), 100);
  assert.equal(base.pendingTimers, 1, 'one timer of the base clock for all of them');
  await base.advance(250);
  assert.deepEqual(fired, ['a@100', 'a2@100', 'b@200']);
  await base.advance(100);
  assert.deepEqual(fired, ['a@100', 'a2@100', 'b@200', 'c@300']);
  assert.equal(base.pendingTimers, 0, 'nothing left waiting once every timer fired');
});

it('runs intervals at a fixed rate until cleared, beside timeouts', async () => {
  const base = new FakeClock();
  const clock = createSharedTimerClock(base);
  const ticks: number[] = [];
  const interval = clock.setInterval(() => ticks.push(base.monotonic()), 1_000);
  let once = 0;
  clock.setTimeout(() => once++, 2_500);
  await base.advance(3_000);
  assert.deepEqual(ticks, [1_000, 2_000, 3_000]);
  assert.equal(once, 1);
  clock.clearInterval(interval);
  await base.advance(5_000);
  assert.deepEqual(ticks, [1_000, 2_000, 3_000]);
  assert.equal(base.pendingTimers, 0);
});

it('clears a timer anywhere in the heap and keeps the others in order', async () => {
  const base = new FakeClock();
  const clock = createSharedTimerClock(base);
  const fired: number[] = [];
  const timers = [50, 10, 40, 20, 30, 60, 70].map((ms) => clock.setTimeout(() => fired.push(ms), ms));
  clock.clearTimeout(timers[2]); // 40
  clock.clearTimeout(timers[1]); // 10, the earliest
  clock.clearTimeout(timers[1]); // twice: ignored
  clock.clearTimeout({}); // not one of its timers: ignored
  await base.advance(100);
  assert.deepEqual(fired, [20, 30, 50, 60, 70]);
});

it('a timer set by a firing timer waits its own delay, and one due earlier than the armed time moves it', async () => {
  const base = new FakeClock();
  const clock = createSharedTimerClock(base);
  const fired: string[] = [];
  clock.setTimeout(() => {
    fired.push(`first@${base.monotonic()}`);
    clock.setTimeout(() => fired.push(`chained@${base.monotonic()}`), 0);
  }, 1_000);
  clock.setTimeout(() => fired.push(`early@${base.monotonic()}`), 10);
  await base.advance(2_000);
  assert.deepEqual(fired, ['early@10', 'first@1000', 'chained@1001']);
});

it('sleep resolves after its delay and rejects when aborted', async () => {
  const base = new FakeClock();
  const clock = createSharedTimerClock(base);
  let slept = false;
  const sleeping = clock.sleep(500).then(() => (slept = true));
  await base.advance(499);
  assert.equal(slept, false);
  await base.advance(1);
  await sleeping;
  assert.equal(slept, true);
  const controller = new AbortController();
  const aborted = clock.sleep(500, controller.signal);
  controller.abort(new Error('stop'));
  await assert.rejects(aborted, /stop/);
  await base.advance(1_000);
  assert.equal(base.pendingTimers, 0);
});

it('tells the time of the clock under it', () => {
  const base = new FakeClock(Date.parse('2026-03-01T00:00:00Z'));
  const clock = createSharedTimerClock(base);
  assert.equal(clock.now().toISOString(), '2026-03-01T00:00:00.000Z');
  assert.equal(clock.monotonic(), base.monotonic());
});

it('with a slot, fires the timers due in it together at its end, and keeps their periods exact', async () => {
  const base = new FakeClock();
  // Counts the timers the shared clock sets on the clock under it: its wake-ups.
  let wakeups = 0;
  const setBaseTimeout = base.setTimeout.bind(base);
  base.setTimeout = (fn, ms) => (wakeups++, setBaseTimeout(fn, ms));
  const clock = createSharedTimerClock(base, { slotMs: 10 });
  const fired: string[] = [];
  const at = (name: string) => () => fired.push(`${name}@${base.monotonic()}`);
  clock.setTimeout(at('a'), 101);
  clock.setTimeout(at('b'), 105);
  clock.setTimeout(at('c'), 110);
  clock.setTimeout(at('d'), 111);
  await base.advance(115);
  assert.deepEqual(fired, ['a@110', 'b@110', 'c@110'], 'due in (100, 110]: together, at 110');
  assert.equal(wakeups, 2, 'one timer for the slot ending at 110, then one for the next');
  await base.advance(10);
  assert.deepEqual(fired.slice(3), ['d@120']);

  // An interval of 1,003 ms (set at 125) is due at 1,128, 2,131, 3,134, 4,137 and fires at the
  // end of each one's slot: the period counts from the due times, so the lateness never adds up.
  const ticks: number[] = [];
  assert.equal(base.monotonic(), 125);
  const interval = clock.setInterval(() => ticks.push(base.monotonic()), 1_003);
  await base.advance(4_100);
  clock.clearInterval(interval);
  assert.deepEqual(ticks, [1_130, 2_140, 3_140, 4_140]);
});

it('without a slot, each timer wakes the clock under it at its own due time', async () => {
  const base = new FakeClock();
  const clock = createSharedTimerClock(base);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push(`a@${base.monotonic()}`), 101);
  clock.setTimeout(() => fired.push(`b@${base.monotonic()}`), 105);
  await base.advance(120);
  assert.deepEqual(fired, ['a@101', 'b@105']);
});
