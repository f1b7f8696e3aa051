// Mirrors client-go tools/record/events_cache_test.go (TestEventCorrelator, TestEventAggregatorByReasonFunc,
// TestSpamFilter): what happens to an event before it is written, driven by the FakeClock.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Event } from '@kubernetes/client-node';
import { COMBINED_MESSAGE_PREFIX, createEventCorrelator, eventName, type CorrelateResult } from '../../../src/events/event-correlator.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

function draft(clock: FakeClock, opts: { name?: string; reason?: string; message?: string; type?: string } = {}): CoreV1Event {
  const name = opts.name ?? 'node-1';
  const at = clock.now();
  return {
    metadata: { name: eventName(name, at), namespace: 'default' },
    involvedObject: { kind: 'Node', name, uid: name },
    reason: opts.reason ?? 'FailedCreateMirrorPod',
    message: opts.message ?? 'refused',
    type: opts.type ?? 'Warning',
    count: 1,
    firstTimestamp: at,
    lastTimestamp: at,
    source: { component: 'kubelet', host: 'node-1' },
  };
}

function written(r: CorrelateResult): CoreV1Event {
  assert.notEqual(r.action, 'skip', 'the event was spam-filtered');
  return (r as { event: CoreV1Event }).event;
}

describe('TestEventCorrelator', () => {
  it('a new event is created; the same event again patches it: same name, count + 1, first timestamp kept', async () => {
    const clock = new FakeClock();
    const c = createEventCorrelator({ clock });
    const first = c.correlate(draft(clock));
    assert.equal(first.action, 'create');
    const created = written(first);
    await clock.advance(5_000);
    const again = c.correlate(draft(clock));
    assert.equal(again.action, 'patch');
    const patched = written(again);
    assert.equal(patched.metadata.name, created.metadata.name);
    assert.equal(patched.count, 2);
    assert.deepEqual(patched.firstTimestamp, created.firstTimestamp);
    assert.equal(patched.lastTimestamp!.getTime() - created.lastTimestamp!.getTime(), 5_000);
    assert.equal(written(c.correlate(draft(clock))).count, 3);
  });

  it('another reason, type or object is another event', () => {
    const clock = new FakeClock();
    const c = createEventCorrelator({ clock });
    assert.equal(c.correlate(draft(clock)).action, 'create');
    assert.equal(c.correlate(draft(clock, { reason: 'MirrorPodConflict' })).action, 'create');
    assert.equal(c.correlate(draft(clock, { type: 'Normal' })).action, 'create');
    assert.equal(c.correlate(draft(clock, { name: 'node-2' })).action, 'create');
  });

  it('the tenth different message of one reason within the window is combined into one counted event', () => {
    const clock = new FakeClock();
    const c = createEventCorrelator({ clock });
    for (let i = 1; i <= 9; i++) assert.equal(c.correlate(draft(clock, { message: `m${i}` })).action, 'create', `message ${i}`);
    const tenth = c.correlate(draft(clock, { message: 'm10' }));
    assert.equal(tenth.action, 'create');
    assert.equal(written(tenth).message, `${COMBINED_MESSAGE_PREFIX}m10`);
    const eleventh = c.correlate(draft(clock, { message: 'm11' }));
    assert.equal(eleventh.action, 'patch', 'later messages count on the combined event');
    assert.equal(written(eleventh).metadata.name, written(tenth).metadata.name);
    assert.equal(written(eleventh).count, 2);
    assert.equal(written(eleventh).message, `${COMBINED_MESSAGE_PREFIX}m11`);
    // A message seen before the group filled up still has its own event.
    assert.equal(c.correlate(draft(clock, { message: 'm3' })).action, 'patch');
  });

  it('a group is forgotten once the window passed without an event of it', async () => {
    const clock = new FakeClock();
    const c = createEventCorrelator({ clock });
    for (let i = 1; i <= 9; i++) c.correlate(draft(clock, { message: `m${i}` }));
    await clock.advance(600_001);
    const next = c.correlate(draft(clock, { message: 'm10' }));
    assert.equal(next.action, 'create');
    assert.equal(written(next).message, 'm10', 'not combined: the window started again');
  });

  it('the caches hold at most cacheSize keys: the least recently used is forgotten', () => {
    const clock = new FakeClock();
    const c = createEventCorrelator({ clock, cacheSize: 2 });
    c.correlate(draft(clock, { name: 'a' }));
    c.correlate(draft(clock, { name: 'b' }));
    c.correlate(draft(clock, { name: 'a' })); // a is now the most recent
    c.correlate(draft(clock, { name: 'c' })); // evicts b
    assert.equal(c.correlate(draft(clock, { name: 'a' })).action, 'patch');
    assert.equal(c.correlate(draft(clock, { name: 'b' })).action, 'create', 'b was forgotten');
  });
});

describe('TestSpamFilter', () => {
  it('25 events per source and object, then one every 5 minutes; other objects are not affected', async () => {
    const clock = new FakeClock();
    const c = createEventCorrelator({ clock });
    for (let i = 0; i < 25; i++) assert.notEqual(c.correlate(draft(clock)).action, 'skip', `event ${i + 1}`);
    assert.equal(c.correlate(draft(clock)).action, 'skip', 'the 26th is dropped');
    assert.equal(c.correlate(draft(clock, { reason: 'DuplicateStaticPod' })).action, 'skip', 'whatever its reason');
    assert.notEqual(c.correlate(draft(clock, { name: 'node-2' })).action, 'skip', 'another object has its own allowance');
    await clock.advance(299_000);
    assert.equal(c.correlate(draft(clock)).action, 'skip', 'not before 5 minutes');
    await clock.advance(1_000);
    assert.notEqual(c.correlate(draft(clock)).action, 'skip', 'one more after 5 minutes');
    assert.equal(c.correlate(draft(clock)).action, 'skip');
  });

  it('follows the options: a burst of 2 refilled at 1 per second', async () => {
    const clock = new FakeClock();
    const c = createEventCorrelator({ clock, spamBurst: 2, spamQPS: 1 });
    assert.notEqual(c.correlate(draft(clock)).action, 'skip');
    assert.notEqual(c.correlate(draft(clock)).action, 'skip');
    assert.equal(c.correlate(draft(clock)).action, 'skip');
    await clock.advance(1_000);
    assert.notEqual(c.correlate(draft(clock)).action, 'skip');
  });
});

it('event names are the object name and a hex timestamp, unique within a millisecond', () => {
  const at = new Date('2026-01-01T00:00:00Z');
  const a = eventName('node-1', at);
  const b = eventName('node-1', at);
  assert.match(a, /^node-1\.[0-9a-f]+$/);
  assert.notEqual(a, b);
  assert.match(eventName('x'.repeat(250), at), /^[0-9a-f-]{36}$/, 'too long for a name: a UUID');
});
