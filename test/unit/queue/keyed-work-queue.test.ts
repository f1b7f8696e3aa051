// The keyed work queue under the mirror sync (the role of client-go's workqueue with its
// rate-limited requeue), driven by the FakeClock: no test waits on real time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createKeyedWorkQueue, type KeyedWorkQueueOptions } from '../../../src/queue/keyed-work-queue.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

/** A promise the test resolves by hand. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Whether `promise` has settled after a flush of pending jobs. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await settle();
  return done;
}

/** A queue whose passes are recorded as `key@monotonicMs`; `outcome` decides each pass. */
function recordingQueue(
  clock: FakeClock,
  outcome: (key: string, pass: number) => boolean | Promise<boolean>,
  options: Partial<KeyedWorkQueueOptions<string>> = {},
) {
  const passes: string[] = [];
  const queue = createKeyedWorkQueue<string>({
    clock,
    backoff: { initialMs: 100, maxMs: 400 },
    process: async (key) => {
      passes.push(`${key}@${clock.monotonic()}`);
      return outcome(key, passes.filter((p) => p.startsWith(`${key}@`)).length);
    },
    ...options,
  });
  return { queue, passes };
}

describe('keyed work queue', () => {
  it('starts work on the next turn of the event loop, not inside enqueue', async () => {
    const clock = new FakeClock();
    const { queue, passes } = recordingQueue(clock, () => true);
    queue.enqueue('a');
    assert.deepEqual(passes, [], 'nothing runs before the enqueuing code has finished');
    await settle();
    assert.deepEqual(passes, ['a@0']);
  });

  it('starts low keys only when no high key is queued; a low key asked for again as high moves up', async () => {
    const clock = new FakeClock();
    const { queue, passes } = recordingQueue(clock, () => true);
    queue.enqueue('orphan-1', 'low');
    queue.enqueue('orphan-2', 'low');
    queue.enqueue('orphan-3', 'low');
    queue.enqueue('new-pod');
    queue.enqueue('orphan-3', 'high');
    queue.enqueue('orphan-1', 'low');
    await queue.idle();
    assert.deepEqual(
      passes.map((p) => p.split('@')[0]),
      ['new-pod', 'orphan-3', 'orphan-1', 'orphan-2'],
    );
  });

  it('keeps the slots above lowConcurrency for high keys: one queued behind many low keys starts at once', async () => {
    const clock = new FakeClock();
    const gate = deferred();
    const running = new Set<string>();
    let mostLowAtOnce = 0;
    const { queue, passes } = recordingQueue(
      clock,
      async (key) => {
        running.add(key);
        mostLowAtOnce = Math.max(mostLowAtOnce, [...running].filter((k) => k.startsWith('orphan')).length);
        if (key.startsWith('orphan')) await gate.promise;
        running.delete(key);
        return true;
      },
      { concurrency: 4, lowConcurrency: 2 },
    );
    for (let i = 0; i < 6; i++) queue.enqueue(`orphan-${i}`, 'low');
    await settle();
    assert.deepEqual([...running].sort(), ['orphan-0', 'orphan-1'], 'two low passes, two slots left free');
    queue.enqueue('new-pod', 'high');
    await settle();
    assert.ok(passes.some((p) => p.startsWith('new-pod@')), 'the high key ran while every low pass was still waiting');
    assert.equal(running.has('new-pod'), false, 'and finished');
    gate.resolve();
    await queue.idle();
    assert.equal(passes.length, 7, 'every low key ran in the end');
    assert.equal(mostLowAtOnce, 2, 'never more than lowConcurrency low passes at once');
  });

  it('with lowConcurrency equal to concurrency (the default), low keys may take every slot', async () => {
    const clock = new FakeClock();
    const gate = deferred();
    let atOnce = 0;
    let most = 0;
    const { queue } = recordingQueue(clock, async () => (atOnce++, (most = Math.max(most, atOnce)), await gate.promise, atOnce--, true), { concurrency: 3 });
    for (let i = 0; i < 5; i++) queue.enqueue(`orphan-${i}`, 'low');
    await settle();
    assert.equal(most, 3);
    gate.resolve();
    await queue.idle();
  });

  it('a high key queued while low keys run starts before the low keys still queued', async () => {
    const clock = new FakeClock();
    const gate = deferred();
    const { queue, passes } = recordingQueue(clock, async () => (await gate.promise, true), { concurrency: 1 });
    for (let i = 0; i < 3; i++) queue.enqueue(`orphan-${i}`, 'low');
    await settle();
    queue.enqueue('new-pod', 'high');
    gate.resolve();
    await queue.idle();
    assert.deepEqual(
      passes.map((p) => p.split('@')[0]),
      ['orphan-0', 'new-pod', 'orphan-1', 'orphan-2'],
    );
  });

  it('merges requests for a key that is already queued', async () => {
    const clock = new FakeClock();
    const { queue, passes } = recordingQueue(clock, () => true, { concurrency: 4 });
    for (let i = 0; i < 5; i++) queue.enqueue('a');
    queue.enqueue('b');
    queue.enqueue('a');
    await queue.idle();
    assert.deepEqual(passes, ['a@0', 'b@0']);
  });

  it('runs one pass per key at a time, and one more pass for requests made during a pass', async () => {
    const clock = new FakeClock();
    const gates: Array<() => void> = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const queue = createKeyedWorkQueue<string>({
      clock,
      concurrency: 8,
      process: async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const gate = deferred();
        gates.push(gate.resolve);
        await gate.promise;
        inFlight--;
        return true;
      },
    });
    queue.enqueue('a');
    await settle();
    assert.equal(gates.length, 1);
    for (let i = 0; i < 10; i++) queue.enqueue('a');
    await settle();
    assert.equal(gates.length, 1, 'no second pass while the first runs');
    gates[0]!();
    await settle();
    assert.equal(gates.length, 2, 'the ten requests became one more pass');
    gates[1]!();
    await queue.idle();
    assert.equal(gates.length, 2);
    assert.equal(maxInFlight, 1);
  });

  it('retries a failing key with a doubling backoff, capped', async () => {
    const clock = new FakeClock();
    const { queue, passes } = recordingQueue(clock, () => false);
    queue.enqueue('a');
    await clock.advance(1500);
    // 100, 200, 400, then the 400 ms cap.
    assert.deepEqual(passes, ['a@0', 'a@100', 'a@300', 'a@700', 'a@1100', 'a@1500']);
    await queue.stop();
  });

  it('a success forgets earlier failures', async () => {
    const clock = new FakeClock();
    const { queue, passes } = recordingQueue(clock, (_key, pass) => pass === 3);
    queue.enqueue('a');
    await clock.advance(300); // fails at 0 and 100, succeeds at 300
    assert.deepEqual(passes, ['a@0', 'a@100', 'a@300']);
    await queue.idle();
    queue.enqueue('a');
    await clock.advance(100);
    assert.deepEqual(passes.slice(3), ['a@300', 'a@400'], 'the first retry waits 100 ms again');
    await queue.stop();
  });

  it('a success forgets earlier failures also when the key runs again straight after it', async () => {
    const clock = new FakeClock();
    const passes: number[] = [];
    const queue = createKeyedWorkQueue<string>({
      clock,
      backoff: { initialMs: 100, maxMs: 1000 },
      process: async (key) => {
        passes.push(clock.monotonic());
        if (passes.length === 3) queue.enqueue(key); // a request during the successful pass
        return passes.length === 3;
      },
    });
    queue.enqueue('a');
    await clock.advance(300); // fails at 0 and 100, succeeds at 300 and runs again at once
    assert.deepEqual(passes, [0, 100, 300, 300]);
    await clock.advance(100);
    assert.deepEqual(passes, [0, 100, 300, 300, 400], 'the failure after the success waits 100 ms, not 400');
    await queue.stop();
  });

  it('a request during the backoff runs the key at once and cancels the retry timer', async () => {
    const clock = new FakeClock();
    const { queue, passes } = recordingQueue(clock, (_key, pass) => pass > 1, { backoff: { initialMs: 60_000, maxMs: 60_000 } });
    queue.enqueue('a');
    await clock.advance(10);
    assert.deepEqual(passes, ['a@0']);
    assert.equal(clock.pendingTimers, 1, 'the retry is waiting');
    queue.enqueue('a');
    await clock.advance(0);
    assert.deepEqual(passes, ['a@0', 'a@10']);
    assert.equal(clock.pendingTimers, 0, 'the retry timer is gone');
    assert.equal(await isSettled(queue.idle()), true);
  });

  it('a request during a failed pass runs the next pass at once instead of after the backoff', async () => {
    const clock = new FakeClock();
    const passes: number[] = [];
    const queue = createKeyedWorkQueue<string>({
      clock,
      backoff: { initialMs: 60_000, maxMs: 60_000 },
      process: async (key) => {
        passes.push(clock.monotonic());
        if (passes.length > 1) return true;
        queue.enqueue(key); // the news that explains the failure arrives during the pass
        return false;
      },
    });
    queue.enqueue('a');
    await settle();
    assert.deepEqual(passes, [0, 0]);
    assert.equal(clock.pendingTimers, 0);
    assert.equal(await isSettled(queue.idle()), true);
  });

  it('a rejected pass is reported and retried like a failed one', async () => {
    const clock = new FakeClock();
    const errors: string[] = [];
    let calls = 0;
    const queue = createKeyedWorkQueue<string>({
      clock,
      backoff: { initialMs: 100, maxMs: 100 },
      onError: (key, err) => errors.push(`${key}: ${(err as Error).message}`),
      process: async () => {
        if (++calls === 1) throw new Error('boom');
        return true;
      },
    });
    queue.enqueue('a');
    await clock.advance(99);
    assert.equal(calls, 1);
    await clock.advance(1);
    assert.equal(calls, 2);
    assert.deepEqual(errors, ['a: boom']);
    assert.equal(await isSettled(queue.idle()), true);
  });

  it('runs at most `concurrency` keys at once, and the rest as slots free up', async () => {
    const clock = new FakeClock();
    const gates = new Map<string, () => void>();
    const queue = createKeyedWorkQueue<string>({
      clock,
      concurrency: 2,
      process: async (key) => {
        const gate = deferred();
        gates.set(key, gate.resolve);
        await gate.promise;
        return true;
      },
    });
    for (const key of ['a', 'b', 'c', 'd', 'e']) queue.enqueue(key);
    await settle();
    assert.deepEqual([...gates.keys()], ['a', 'b'], 'two at once, in request order');
    gates.get('a')!();
    await settle();
    assert.deepEqual([...gates.keys()], ['a', 'b', 'c']);
    gates.get('b')!();
    gates.get('c')!();
    await settle();
    assert.deepEqual([...gates.keys()], ['a', 'b', 'c', 'd', 'e']);
    gates.get('d')!();
    gates.get('e')!();
    await queue.idle();
  });

  it('idle() resolves only when nothing is queued, running or waiting for a retry', async () => {
    const clock = new FakeClock();
    assert.equal(await isSettled(createKeyedWorkQueue<string>({ clock, process: async () => true }).idle()), true, 'an empty queue is idle');

    const gate = deferred<boolean>();
    let calls = 0;
    const queue = createKeyedWorkQueue<string>({
      clock,
      backoff: { initialMs: 1000, maxMs: 1000 },
      process: () => (++calls === 1 ? gate.promise : Promise.resolve(true)),
    });
    queue.enqueue('a');
    const idle = queue.idle();
    assert.equal(await isSettled(idle), false, 'running');
    gate.resolve(false);
    await settle();
    assert.equal(calls, 1);
    assert.equal(await isSettled(idle), false, 'waiting for the retry');
    await clock.advance(999);
    assert.equal(await isSettled(idle), false, 'still waiting for the retry');
    await clock.advance(1);
    assert.equal(calls, 2);
    assert.equal(await isSettled(idle), true);
  });

  it('idle() waits for work queued but not started yet', async () => {
    const clock = new FakeClock();
    let started: () => void = () => {};
    const { queue, passes } = recordingQueue(clock, () => true, { schedule: (start) => (started = start) });
    queue.enqueue('a');
    const idle = queue.idle();
    assert.equal(await isSettled(idle), false);
    started();
    assert.equal(await isSettled(idle), true);
    assert.deepEqual(passes, ['a@0']);
  });

  it('stop() drops queued keys and retries, ignores new requests, and waits for running passes', async () => {
    const clock = new FakeClock();
    const gate = deferred<boolean>();
    const seen: string[] = [];
    const queue = createKeyedWorkQueue<string>({
      clock,
      backoff: { initialMs: 100, maxMs: 100 },
      process: (key) => {
        seen.push(key);
        return key === 'slow' ? gate.promise : Promise.resolve(false);
      },
    });
    queue.enqueue('failing');
    await settle();
    assert.equal(clock.pendingTimers, 1, 'the failed key waits for its retry');
    queue.enqueue('slow');
    queue.enqueue('queued');
    await settle();
    assert.deepEqual(seen, ['failing', 'slow'], "'queued' waits for the only slot");

    const stopped = queue.stop();
    queue.enqueue('late');
    assert.equal(clock.pendingTimers, 0, 'the retry is cancelled');
    assert.equal(await isSettled(stopped), false, 'a pass is still running');
    gate.resolve(true);
    assert.equal(await isSettled(stopped), true);
    await clock.advance(10_000);
    assert.deepEqual(seen, ['failing', 'slow'], 'nothing queued, retried or requested later runs');
    assert.equal(await isSettled(queue.idle()), true);
  });

  it('a queue that has done its work is small: one object, its tables let go', async () => {
    // Every node of a fleet keeps one once it has had pods.
    const clock = new FakeClock();
    const bytes = await retainedBytesPer(20_000, () => {
      const queue = createKeyedWorkQueue<string>({ process: () => Promise.resolve(true), clock });
      queue.enqueue('done');
      return queue;
    });
    // About 200–550 bytes, the caller's `process` included (the heap's reading varies by about
    // 250 bytes a queue from run to run); with a closure per function, their context and two
    // maps made up front, about 1,700.
    assert.ok(bytes < 800, `${bytes.toFixed(1)} bytes per queue`);
    // And it works again after letting go.
    const seen: string[] = [];
    const queue = createKeyedWorkQueue<string>({ process: (key) => Promise.resolve(seen.push(key) > 0), clock });
    queue.enqueue('a');
    await queue.idle();
    queue.enqueue('b', 'low');
    queue.enqueue('c');
    await queue.idle();
    assert.deepEqual(seen, ['a', 'c', 'b']);
  });
});
