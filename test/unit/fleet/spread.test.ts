// Spread timers of a fleet (src/fleet/spread.ts, LoopSpread in src/node/periodic-loop.ts): the
// Leases of many nodes renew in their own slots of the period, after a start and after an
// outage alike, instead of in lockstep.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPeriodicLoop } from '../../../src/node/periodic-loop.js';
import { nodeLoopSpread } from '../../../src/fleet/spread.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';

const PERIOD = 10_000;

describe('spread of periodic loops', () => {
  it('gives each node a fixed phase from its name and small jitter', () => {
    const a = nodeLoopSpread('sim-1', PERIOD);
    assert.equal(a.firstPeriodMs, nodeLoopSpread('sim-1', PERIOD).firstPeriodMs);
    assert.notEqual(a.firstPeriodMs, nodeLoopSpread('sim-2', PERIOD).firstPeriodMs);
    for (let i = 0; i < 100; i++) {
      const j = a.jitterMs();
      assert.ok(j >= 0 && j <= 0.04 * PERIOD, `jitter ${j}`);
    }
  });

  it('1,000 loops started together, and again after a common outage, renew spread over the period', async () => {
    const clock = new FakeClock(0);
    let failing = false;
    const times: number[][] = [];
    const loops = Array.from({ length: 1000 }, (_, i) => {
      const mine: number[] = [];
      times.push(mine);
      return createPeriodicLoop({
        attempt: async () => {
          mine.push(clock.monotonic());
          return !failing;
        },
        periodMs: PERIOD,
        retryInitialMs: 500,
        clock,
        spread: nodeLoopSpread(`sim-${i}`, PERIOD),
      });
    });
    loops.forEach((l) => l.start());
    await clock.advance(0);
    await settle();
    const busiestSecond = (from: number, to: number): number => {
      const perSecond = new Map<number, number>();
      for (const t of times.flat()) if (t >= from && t < to) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
      return Math.max(...perSecond.values());
    };
    for (let s = 0; s < 30; s++) await clock.advance(1000);
    // All at t=0 (the first attempt, as the kubelet), then about 100 per second.
    assert.ok(busiestSecond(1000, 30_000) < 200, `busiest second after the start: ${busiestSecond(1000, 30_000)}`);
    failing = true;
    for (let s = 0; s < 40; s++) await clock.advance(1000);
    failing = false;
    const recovered = clock.monotonic();
    for (let s = 0; s < 40; s++) await clock.advance(1000);
    assert.ok(busiestSecond(recovered + 11_000, recovered + 40_000) < 200, `busiest second after the outage: ${busiestSecond(recovered + 11_000, recovered + 40_000)}`);
    await Promise.all(loops.map((l) => l.stop()));
  });
});
