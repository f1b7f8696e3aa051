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
