// kubeAPIQPS / kubeAPIBurst: the token bucket in front of every API request, driven by the
// FakeClock (refill from its monotonic time, waits on its timers).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createTokenBucket, unlimited } from '../../../src/kube/rate-limiter.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

it('lets a burst through at once, then exactly qps per second', async () => {
  const clock = new FakeClock();
  const limiter = createTokenBucket({ qps: 10, burst: 3, clock });
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
  assert.equal(clock.pendingTimers, 0, 'no timer left once every waiter is served');
});

it('refills up to the burst while idle, never beyond it', async () => {
  const clock = new FakeClock();
  const limiter = createTokenBucket({ qps: 10, burst: 2, clock });
  await limiter.acquire();
  await limiter.acquire();
  await clock.advance(60_000);
  let granted = 0;
  for (let i = 0; i < 5; i++) void limiter.acquire().then(() => granted++);
  await clock.advance(0);
  assert.equal(granted, 2);
});

it('follows monotonic time, not the wall clock', async () => {
  const clock = new FakeClock();
  const limiter = createTokenBucket({ qps: 1, burst: 1, clock });
  await limiter.acquire();
  clock.setWallTime(new Date(clock.now().getTime() + 3_600_000)); // a clock step forward
  let granted = 0;
  void limiter.acquire().then(() => granted++);
  await clock.advance(0);
  assert.equal(granted, 0, 'a wall clock step grants no tokens');
  await clock.advance(1000);
  assert.equal(granted, 1);
});

it('a non-positive qps means no limit', async () => {
  assert.equal(createTokenBucket({ qps: 0, burst: 10 }), unlimited);
  assert.equal(createTokenBucket({ qps: -1, burst: 10 }), unlimited);
  let granted = 0;
  await Promise.all(Array.from({ length: 1000 }, () => unlimited.acquire().then(() => granted++)));
  assert.equal(granted, 1000);
});

it('serves high waiters before low ones, whatever the arrival order', async () => {
  const clock = new FakeClock();
  const limiter = createTokenBucket({ qps: 10, burst: 1, clock });
  await limiter.acquire();
  const order: string[] = [];
  void limiter.acquire('low').then(() => order.push('low1'));
  void limiter.acquire('high').then(() => order.push('high1'));
  void limiter.acquire('low').then(() => order.push('low2'));
  void limiter.acquire('high').then(() => order.push('high2'));
  await clock.advance(200);
  assert.deepEqual(order, ['high1', 'high2']);
  await clock.advance(250); // the quiet time after the last high grant
  await clock.advance(200);
  assert.deepEqual(order, ['high1', 'high2', 'low1', 'low2']);
});

it('holds a low request back while high ones come in short gaps, not the tokens it could take', async () => {
  const clock = new FakeClock();
  const limiter = createTokenBucket({ qps: 10, burst: 100, clock, lowQuietMs: 250 });
  let lowGranted = false;
  await limiter.acquire('high');
  void limiter.acquire('low').then(() => (lowGranted = true));
  for (let i = 0; i < 5; i++) {
    await clock.advance(100);
    await limiter.acquire('high');
    assert.equal(lowGranted, false, `a high request ${i} came within the quiet time`);
  }
  await clock.advance(249);
  assert.equal(lowGranted, false);
  await clock.advance(1);
  assert.equal(lowGranted, true, 'granted once no high request came for the quiet time');
});

it('a low request with no high one around takes its token at once', async () => {
  const clock = new FakeClock();
  const limiter = createTokenBucket({ qps: 10, burst: 2, clock });
  let granted = 0;
  void limiter.acquire('low').then(() => granted++);
  await clock.advance(0);
  assert.equal(granted, 1);
});

it('a starved low waiter gets one token in starvedShare while high ones keep waiting', async () => {
  const clock = new FakeClock();
  const limiter = createTokenBucket({ qps: 10, burst: 1, clock, lowMaxWaitMs: 1000, starvedShare: 4 });
  await limiter.acquire();
  const order: string[] = [];
  void limiter.acquire('low').then(() => order.push('low'));
  for (let i = 0; i < 40; i++) void limiter.acquire('high').then(() => order.push('high'));
  await clock.advance(900);
  assert.equal(order.includes('low'), false, 'not starved yet: high waiters go first');
  await clock.advance(1000);
  const at = order.indexOf('low');
  assert.ok(at >= 9 && at <= 13, `the starved low request was served among the high ones (position ${at})`);
  assert.equal(order.length, 19);
});
