// The busy young generation's policy (src/fleet/young-generation.ts) over fake probes: when the
// young generation may grow, when it is held again and given back, and what it leaves alone.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { YOUNG_GENERATION_LIMITS, YoungGenerationPolicy } from '../../../src/fleet/young-generation.js';

const MiB = 2 ** 20;

/** A young generation whose size the test sets, and the settings the policy made, in order. */
function fakeProcess() {
  const p = { young: 2 * MiB, growth: false, forSize: false, calls: [] as string[] };
  const policy = new YoungGenerationPolicy({
    youngBytes: () => p.young,
    allowGrowth: (allowed) => {
      p.growth = allowed;
      p.calls.push(allowed ? 'grow' : 'hold');
    },
    optimizeForSize: (on) => {
      p.forSize = on;
      p.calls.push(on ? 'size on' : 'size off');
    },
  });
  return { p, policy };
}

/** A busy window that grows the young generation to 32 MiB, then the quiet windows that hold it and ask it back. */
function grownThenQuiet({ p, policy }: ReturnType<typeof fakeProcess>): void {
  policy.window(true, true);
  p.young = 32 * MiB;
  for (let i = 0; i < YOUNG_GENERATION_LIMITS.quietWindows; i++) policy.window(false, true);
}

describe('YoungGenerationPolicy', () => {
  it('grows while busy; two quiet windows later held and given back, and V8 back to speed once it is small', () => {
    const { p, policy } = fakeProcess();
    assert.equal(YOUNG_GENERATION_LIMITS.quietWindows, 2);
    assert.equal(policy.window(false, true), undefined, 'quiet from the start: nothing to do');
    assert.equal(policy.settled, true);
    assert.deepEqual(policy.window(true, true), { change: 'may grow', youngBytes: 2 * MiB });
    assert.equal(policy.settled, false, 'growing');
    p.young = 32 * MiB;
    assert.equal(policy.window(true, true), undefined, 'still busy: set once');
    assert.equal(policy.window(false, true), undefined, 'one quiet window');
    assert.deepEqual(p.calls, ['grow']);
    assert.equal(policy.window(false, true), undefined, 'two: held, and asked back');
    assert.deepEqual(p.calls, ['grow', 'hold', 'size on']);
    assert.equal(policy.window(false, true), undefined, 'not given back yet');
    assert.equal(policy.settled, false, 'giving back');
    p.young = 4 * MiB;
    assert.deepEqual(policy.window(false, true), { change: 'given back', fromBytes: 32 * MiB, toBytes: 4 * MiB });
    assert.deepEqual(p.calls, ['grow', 'hold', 'size on', 'size off']);
    assert.equal(policy.settled, true);
    for (let i = 0; i < 10; i++) assert.equal(policy.window(false, true), undefined);
    assert.equal(p.calls.length, 4, 'quiet: nothing more');
  });

  it('a young generation still small when the fleet goes quiet is only held', () => {
    const { p, policy } = fakeProcess();
    policy.window(true, true);
    p.young = 3 * MiB;
    policy.window(false, true);
    policy.window(false, true);
    assert.deepEqual(p.calls, ['grow', 'hold']);
    assert.equal(p.forSize, false);
  });

  it('lets V8 be after giveBackWindows windows without the young generation given back', () => {
    const f = fakeProcess();
    const { p, policy } = f;
    grownThenQuiet(f);
    assert.equal(p.forSize, true);
    const changes = Array.from({ length: YOUNG_GENERATION_LIMITS.giveBackWindows }, () => policy.window(false, true));
    assert.deepEqual(changes.at(-1), { change: 'not given back', fromBytes: 32 * MiB, toBytes: 32 * MiB });
    assert.equal(policy.settled, true, 'nothing more to wait for');
    assert.ok(changes.slice(0, -1).every((c) => c === undefined));
    assert.equal(p.forSize, false);
    // The next wave aims for the size first held, not for the size kept.
    policy.window(true, true);
    policy.window(false, true);
    policy.window(false, true);
    assert.equal(p.forSize, true, '32 MiB is still more than twice the 2 MiB first held');
  });

  it('busy again while giving back: V8 back to speed, free to grow', () => {
    const f = fakeProcess();
    const { p, policy } = f;
    grownThenQuiet(f);
    assert.deepEqual(policy.window(true, true), { change: 'may grow', youngBytes: 32 * MiB });
    assert.deepEqual(p.calls, ['grow', 'hold', 'size on', 'size off', 'grow']);
    assert.equal(p.growth, true);
  });

  it('stands aside while the heap is large, undoing only its own size setting', () => {
    const { p, policy } = fakeProcess();
    policy.window(true, true);
    p.young = 32 * MiB;
    assert.equal(policy.window(true, false), undefined);
    assert.deepEqual(p.calls, ['grow'], 'the growth is the large heap watch’s to keep or undo');
    for (let i = 0; i < 5; i++) policy.window(false, false);
    assert.deepEqual(p.calls, ['grow']);
    const giving = fakeProcess();
    grownThenQuiet(giving);
    giving.policy.window(false, false);
    assert.deepEqual(giving.p.calls, ['grow', 'hold', 'size on', 'size off']);
  });

  it('release undoes what is set: growth held, V8 back to speed', () => {
    const growing = fakeProcess();
    growing.policy.window(true, true);
    growing.policy.release();
    assert.deepEqual(growing.p.calls, ['grow', 'hold']);
    const giving = fakeProcess();
    grownThenQuiet(giving);
    giving.policy.release();
    assert.deepEqual(giving.p.calls, ['grow', 'hold', 'size on', 'size off']);
    const held = fakeProcess();
    held.policy.release();
    assert.deepEqual(held.p.calls, []);
  });
});
