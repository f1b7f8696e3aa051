// The settle GC's policy (src/fleet/settle-gc.ts) over fake probes: when it collects, and when
// it leaves the heap to V8.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SETTLE_GC_LIMITS, SettleGcPolicy } from '../../../src/fleet/settle-gc.js';

const MiB = 2 ** 20;

/**
 * A heap whose use the test sets, an event loop whose busy share it sets, a GC that drops to
 * `liveAfterGc`. The heap keeps committed what it has used at most since the last collection,
 * or `committed` when the test sets more.
 */
function fakeProcess() {
  const p = { busy: 0, used: 0, liveAfterGc: 0, collections: 0, committed: 0 };
  const policy = new SettleGcPolicy({
    utilization: () => p.busy,
    heapUsed: () => p.used,
    heapCommitted: () => (p.committed = Math.max(p.committed, p.used)),
    collect: () => {
      p.collections++;
      p.used = p.liveAfterGc;
      p.committed = p.liveAfterGc;
    },
  });
  const windows = (n: number, busy: number) => {
    p.busy = busy;
    for (let i = 0; i < n; i++) policy.window();
  };
  return { p, policy, windows };
}

describe('SettleGcPolicy', () => {
  it('collects once after busy work, two quiet windows later, and not again while quiet', () => {
    const { p, policy, windows } = fakeProcess();
    p.used = 80 * MiB;
    p.liveAfterGc = 70 * MiB;
    windows(5, 0.9);
    assert.equal(p.collections, 0, 'busy');
    p.busy = 0.1;
    assert.equal(policy.window(), undefined, 'one quiet window');
    assert.deepEqual(policy.window(), { beforeBytes: 80 * MiB, afterBytes: 70 * MiB });
    windows(20, 0.1);
    assert.equal(p.collections, 1, 'quiet, and the heap has not grown');
    windows(1, 0.5);
    windows(2, 0.1);
    assert.equal(p.collections, 2, 'after the next busy window');
  });

  it("after busy work even when V8's last full GC counted the burst's objects as live", () => {
    const { p, policy, windows } = fakeProcess();
    p.busy = 0.9;
    p.used = 75 * MiB;
    policy.majorGcDone();
    p.liveAfterGc = 40 * MiB;
    windows(1, 0.9);
    windows(2, 0.05);
    assert.equal(p.collections, 1);
    assert.equal(p.used, 40 * MiB);
  });

  it('while quiet, collects again once the heap has grown by half the live heap and by 16 MiB', () => {
    const { p, windows } = fakeProcess();
    p.used = 80 * MiB;
    p.liveAfterGc = 40 * MiB;
    windows(1, 0.9);
    windows(2, 0.05);
    assert.equal(p.collections, 1);
    p.used = 59 * MiB;
    windows(5, 0.05);
    assert.equal(p.collections, 1, '19 MiB over a live heap of 40: under half of it');
    p.used = 61 * MiB;
    windows(1, 0.05);
    assert.equal(p.collections, 2);
  });

  it('a small heap: 16 MiB of growth at least, and nothing under 16 MiB in use', () => {
    const { p, policy, windows } = fakeProcess();
    p.used = 12 * MiB;
    p.liveAfterGc = 5 * MiB;
    windows(1, 0.9);
    windows(3, 0.05);
    assert.equal(p.collections, 0, '12 MiB in use');
    p.used = 10 * MiB;
    policy.majorGcDone();
    p.used = 25 * MiB;
    windows(3, 0.05);
    assert.equal(p.collections, 1, 'after busy work, 25 MiB in use');
    p.used = 20 * MiB;
    windows(3, 0.05);
    assert.equal(p.collections, 1, '15 MiB over the live heap, though three times it');
    p.used = 22 * MiB;
    windows(1, 0.05);
    assert.equal(p.collections, 2);
  });

  it('a large live heap: once after busy work, after six quiet windows, never for growth while quiet', () => {
    const { p, policy, windows } = fakeProcess();
    const live = SETTLE_GC_LIMITS.largeLiveBytes + MiB;
    p.used = live;
    policy.majorGcDone();
    p.used = live * 3;
    windows(5, 0);
    assert.equal(p.collections, 0, 'grown threefold while quiet: its pause would hold Lease renewals back');
    p.liveAfterGc = live;
    windows(1, 0.9);
    windows(5, 0);
    assert.equal(p.collections, 0, 'five quiet windows after busy work');
    windows(1, 0);
    assert.equal(p.collections, 1, 'the sixth');
    p.used = live * 3;
    windows(30, 0);
    assert.equal(p.collections, 1, 'quiet again, however much it grows');
    windows(1, 0.9);
    windows(6, 0);
    assert.equal(p.collections, 2, 'the next wave');
  });

  it('a large live heap: not after busy work that left few pages committed beyond it', () => {
    const { p, policy, windows } = fakeProcess();
    const live = SETTLE_GC_LIMITS.largeLiveBytes + MiB;
    p.used = live;
    policy.majorGcDone();
    // As in an idle fleet with a busy window now and then: nothing to give back.
    p.committed = live * 1.15;
    p.used = live * 1.05;
    p.liveAfterGc = live;
    windows(1, 0.9);
    windows(30, 0);
    assert.equal(p.collections, 0, 'committed 15 % over the live heap');
    p.committed = live * 1.6;
    windows(30, 0);
    assert.equal(p.collections, 0, 'that busy window owes nothing once the heap grows while quiet');
    windows(1, 0.9);
    windows(6, 0);
    assert.equal(p.collections, 1, 'committed 60 % over it, after busy work');
  });

  it('after busy work, collects at most once in 12 windows (a wave with lulls)', () => {
    const { p, windows } = fakeProcess();
    p.used = 80 * MiB;
    p.liveAfterGc = 70 * MiB;
    windows(1, 0.9);
    windows(2, 0.1);
    assert.equal(p.collections, 1);
    for (let i = 0; i < 3; i++) {
      windows(1, 0.9);
      windows(2, 0.1);
    }
    assert.equal(p.collections, 1, 'three lulls within 9 windows');
    windows(3, 0.1);
    assert.equal(p.collections, 2, 'the busy work still owed a collection, 12 windows on');
  });

  it('a busy window starts the count of quiet ones again', () => {
    const { p, windows } = fakeProcess();
    p.used = 80 * MiB;
    p.liveAfterGc = 40 * MiB;
    for (const busy of [0.5, 0.1, 0.5, 0.1, 0.5, 0.1]) windows(1, busy);
    assert.equal(p.collections, 0);
    windows(1, 0.1);
    assert.equal(p.collections, 1);
  });
});
