// kubeAPIQPS / kubeAPIBurst: the token bucket in front of every API request.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createTokenBucket, unlimited } from '../../../src/kube/rate-limiter.js';

/** A clock whose time moves only when the test says; due timers run on advance(). */
function fakeClock() {
  let now = 0;
  let timers: Array<{ at: number; fn: () => void }> = [];
  return {
    now: () => now,
    setTimeout: (fn: () => void, ms: number) => timers.push({ at: now + ms, fn }),
    async advance(ms: number) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fn();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

it('lets a burst through at once, then exactly qps per second', async () => {
  const clock = fakeClock();
  const limiter = createTokenBucket(10, 3, clock);
  let granted = 0;
  for (let i = 0; i < 8; i++) void limiter.acquire().then(() => granted++);
  await clock.advance(0);
  assert.equal(granted, 3, 'the burst');
  await clock.advance(100); // one token at 10 qps
  assert.equal(granted, 4);
  await clock.advance(99);
  assert.equal(granted, 4, 'not before the next token is due');
  await clock.advance(1);
  assert.equal(granted, 5);
  for (let i = 0; i < 3; i++) await clock.advance(100);
  assert.equal(granted, 8);
});

it('refills up to the burst while idle, never beyond it', async () => {
  const clock = fakeClock();
  const limiter = createTokenBucket(10, 2, clock);
  await limiter.acquire();
  await limiter.acquire();
  await clock.advance(60_000);
  let granted = 0;
  for (let i = 0; i < 5; i++) void limiter.acquire().then(() => granted++);
  await clock.advance(0);
  assert.equal(granted, 2);
});

it('a non-positive qps means no limit', async () => {
  assert.equal(createTokenBucket(0, 10), unlimited);
  assert.equal(createTokenBucket(-1, 10), unlimited);
  let granted = 0;
  await Promise.all(Array.from({ length: 1000 }, () => unlimited.acquire().then(() => granted++)));
  assert.equal(granted, 1000);
});
