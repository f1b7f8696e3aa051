// The API source's SETs: watch events that arrive in one turn of the event loop are sent as one
// SET (a burst would otherwise cost O(pods²) in the merge) with the delta from the previous
// SET, and nothing is lost. Then its list-watch loop on a fake clock (the recovery paths that
// test/integration/apiserver-source.test.ts drives against the real API server).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiException, type V1PodList } from '@kubernetes/client-node';
import { hasErrorCode } from '../../../src/errors.js';
import type { Pod } from '../../../src/pod/types.js';
import { createApiserverSource, type ApiserverSource, type ApiserverSourceOptions } from '../../../src/sources/apiserver-source.js';
import type { PodListWatch, WatchEventType } from '../../../src/sources/pod-list-watch.js';
import type { PodUpdate } from '../../../src/sources/types.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { Recorder, waitFor } from '../../helpers/wait.js';

/** A list/watch that lists `items` and lets the test push watch events once it is watching. */
type Push = (type: WatchEventType, object: unknown) => void;

function fakeListWatch(items: Pod[]): { listWatch: PodListWatch; push: () => Push | undefined } {
  let onEvent: Push | undefined;
  return {
    listWatch: {
      list: async () => ({ items, metadata: { resourceVersion: '1' } }),
      watch: async (_rv, handler) => {
        onEvent = handler;
        return { abort: () => {} };
      },
    },
    push: () => onEvent,
  };
}

async function startWatching(items: Pod[]): Promise<{ source: ApiserverSource; rec: Recorder<PodUpdate>; first: PodUpdate; push: Push }> {
  const fake = fakeListWatch(items);
  const rec = new Recorder<PodUpdate>();
  const source = createApiserverSource({ listWatch: fake.listWatch, nodeName: 'n', onUpdate: rec.push });
  source.start();
  const first = await rec.next('the SET after the list');
  await waitFor(() => fake.push() !== undefined, 'the watch');
  return { source, rec, first, push: fake.push()! };
}

test('a burst of watch events in one turn is one SET with every pod; later events give later SETs', async () => {
  const { source, rec, first, push } = await startWatching([]);
  try {
    assert.equal(first.pods.length, 0);
    const pod = (i: number): unknown => ({ metadata: { name: `p-${i}`, namespace: 'ns', resourceVersion: String(i + 2) } });
    for (let i = 0; i < 500; i++) push('ADDED', pod(i));
    const set = await rec.next('the SET after the burst');
    assert.equal(set.pods.length, 500);
    assert.equal(rec.pending, 0);
    push('DELETED', pod(0));
    assert.equal((await rec.next('the SET after the delete')).pods.length, 499);
    assert.equal(rec.items.length, 3, 'one SET for the list, one for the burst, one for the delete');
  } finally {
    await source.stop();
  }
});

test('SETs after watch events carry the delta from the previous SET; the SET of a list does not', async () => {
  const listed = { metadata: { name: 'listed', namespace: 'ns', uid: 'u-listed', resourceVersion: '1' } };
  const { source, rec, first, push } = await startWatching([listed]);
  try {
    assert.equal(first.delta, undefined, 'a list replaces everything: no delta');
    const pod = (name: string, uid: string, rv: string): { metadata: Record<string, string> } => ({ metadata: { name, namespace: 'ns', uid, resourceVersion: rv } });

    const a = pod('a', 'u-a', '2');
    const transient = pod('t', 'u-t', '3');
    push('ADDED', a);
    push('ADDED', transient);
    push('DELETED', transient); // came and went within the tick: not in the delta
    const second = await rec.next('the SET after the adds');
    assert.equal(second.delta?.base, first.pods, 'the base is the very array of the previous SET');
    assert.deepEqual(second.delta?.changed, [a]);
    assert.deepEqual(second.delta?.removed, []);

    const a2 = pod('a', 'u-a', '4'); // modified: same UID
    const listed2 = pod('listed', 'u-listed-2', '5'); // deleted and created again: a new UID
    push('MODIFIED', a2);
    push('DELETED', listed);
    push('ADDED', listed2);
    const third = await rec.next('the SET after the changes');
    assert.equal(third.delta?.base, second.pods);
    assert.deepEqual(third.delta?.changed, [a2, listed2]);
    assert.deepEqual(third.delta?.removed, [listed]);
    assert.deepEqual(third.pods.map((p) => p.metadata?.uid).sort(), ['u-a', 'u-listed-2']);
  } finally {
    await source.stop();
  }
});

// --- The list-watch loop on a fake clock: watchdog, 410 relist, backoff ---

interface FakeWatch {
  readonly resourceVersion: string;
  readonly onEvent: Push;
  readonly done: (err: unknown) => void;
  aborted: boolean;
}

/** A list/watch whose every call the test controls, recording when (on the fake clock) each came. */
class ScriptedListWatch implements PodListWatch {
  readonly listTimes: number[] = [];
  readonly watches: FakeWatch[] = [];
  /** The answer to the next list calls; a thrown error makes them fail. */
  nextList: () => V1PodList = () => ({ items: [], metadata: { resourceVersion: '1' } });

  constructor(private readonly clock: FakeClock) {}

  async list(): Promise<V1PodList> {
    this.listTimes.push(this.clock.monotonic());
    return this.nextList();
  }

  /** When set, watch requests fail before they connect (a refused connection). */
  refuseWatches = false;

  async watch(resourceVersion: string, onEvent: Push, done: (err: unknown) => void): Promise<{ abort(): void }> {
    const w: FakeWatch = { resourceVersion, onEvent, done, aborted: false };
    this.watches.push(w);
    if (this.refuseWatches) throw new Error('connect ECONNREFUSED');
    return { abort: () => (w.aborted = true) };
  }

  get lastWatch(): FakeWatch {
    return this.watches.at(-1)!;
  }
}

const apiPod = (name: string, uid: string, rv: string): Pod => ({ metadata: { name, namespace: 'ns', uid, resourceVersion: rv } });

function startOnFakeClock(extra: Partial<ApiserverSourceOptions> = {}) {
  const clock = new FakeClock();
  const lw = new ScriptedListWatch(clock);
  const rec = new Recorder<PodUpdate>();
  const infos: string[] = [];
  const logger = { debug: () => {}, info: (_: object, msg?: string) => infos.push(msg ?? ''), warn: () => {}, error: () => {} };
  const source = createApiserverSource({ listWatch: lw, nodeName: 'n', onUpdate: rec.push, clock, logger, ...extra });
  return { clock, lw, rec, infos, source };
}

describe('api source on a fake clock', () => {
  test('the watchdog restarts a watch that stays silent for watchdogMs, from the same resourceVersion, without a relist', async () => {
    const { clock, lw, rec, source } = startOnFakeClock({ watchdogMs: 1_000 });
    source.start();
    await clock.advance(0);
    assert.equal(rec.items.length, 1, 'the SET of the list');
    assert.equal(lw.watches.length, 1);
    await clock.advance(500);
    lw.lastWatch.onEvent('BOOKMARK', { metadata: { resourceVersion: '7' } });
    await clock.advance(999);
    assert.equal(lw.watches.length, 1, 'a bookmark 999 ms ago keeps the watch');
    assert.equal(source.stats().watchdogRestarts, 0);
    await clock.advance(1);
    assert.equal(source.stats().watchdogRestarts, 1);
    assert.equal(lw.watches[0]!.aborted, true, 'the silent request is aborted');
    assert.equal(lw.watches.length, 2);
    assert.equal(lw.lastWatch.resourceVersion, '7', 'the new watch resumes from the bookmark');
    assert.deepEqual(lw.listTimes, [0], 'no relist');
    await source.stop();
    assert.equal(lw.lastWatch.aborted, true, 'stop() aborts the watch');
  });

  for (const [how, end] of [
    ['an HTTP 410 answer', (w: FakeWatch) => w.done(new ApiException(410, 'Gone', undefined, {}))],
    ['an ERROR event with code 410', (w: FakeWatch) => w.onEvent('ERROR', { kind: 'Status', code: 410, reason: 'Expired' })],
  ] as const) {
    test(`410 Gone (${how}) relists at once; the relist's SET names only the pods that changed`, async () => {
      const { clock, lw, rec, infos, source } = startOnFakeClock({ backoffInitialMs: 60_000 });
      const a = apiPod('a', 'ua', '1');
      const b = apiPod('b', 'ub', '1');
      lw.nextList = () => ({ items: [a, b], metadata: { resourceVersion: '1' } });
      source.start();
      await clock.advance(0);
      const first = rec.items[0]!;
      assert.deepEqual(first.pods, [a, b]);

      // The relist returns new objects: a at the same version, b at a new one, c new.
      const b2 = apiPod('b', 'ub', '5');
      const c = apiPod('c', 'uc', '6');
      lw.nextList = () => ({ items: [structuredClone(a), b2, c], metadata: { resourceVersion: '6' } });
      end(lw.lastWatch);
      await clock.advance(0);
      assert.deepEqual(lw.listTimes, [0, 0], 'relisted without waiting');
      assert.ok(infos.includes('watch resourceVersion expired, relisting'));
      const relisted = rec.items[1]!;
      assert.equal(relisted.pods[0], a, 'an unchanged version keeps the object already sent');
      assert.equal(relisted.delta?.base, first.pods);
      assert.deepEqual(relisted.delta?.changed, [b2, c]);
      assert.deepEqual(relisted.delta?.removed, []);
      assert.equal(lw.lastWatch.resourceVersion, '6', 'the watch resumes from the list');
      await source.stop();
    });
  }

  test('retries back off exponentially up to the cap, and a success resets the backoff', async () => {
    const { clock, lw, source } = startOnFakeClock({ backoffInitialMs: 100, backoffMaxMs: 400 });
    lw.nextList = () => {
      throw new ApiException(503, 'unavailable', undefined, {});
    };
    source.start();
    await clock.advance(1_500);
    assert.deepEqual(lw.listTimes, [0, 100, 300, 700, 1_100, 1_500], 'waits of 100, 200, 400, then 400 (the cap)');
    assert.equal(source.stats().errors, 6);

    lw.nextList = () => ({ items: [], metadata: { resourceVersion: '3' } });
    await clock.advance(400);
    assert.equal(lw.listTimes.length, 7);
    assert.equal(lw.watches.length, 1, 'watching after the successful list');

    // After a success the pauses start again from the first one, and double again while
    // the watch cannot even connect.
    lw.refuseWatches = true;
    lw.lastWatch.done(new Error('connection reset'));
    await clock.advance(99);
    assert.equal(lw.watches.length, 1, 'no new watch before 100 ms');
    await clock.advance(1);
    assert.equal(lw.watches.length, 2, 'the first retry after 100 ms, not 800');
    await clock.advance(199);
    assert.equal(lw.watches.length, 2, 'the second consecutive failure waits 200 ms');
    await clock.advance(1);
    assert.equal(lw.watches.length, 3);
    await clock.advance(400);
    assert.equal(lw.watches.length, 4, 'then 400 ms');
    assert.equal(source.stats().lists, 7, 'watch errors do not relist');
    await source.stop();
  });

  test('a failure is logged as a registry error naming the node, without the response body', async () => {
    const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (fields: object, msg?: string) => warnings.push({ fields: fields as Record<string, unknown>, msg: msg ?? '' }) };
    const { clock, lw, source } = startOnFakeClock({ logger, backoffInitialMs: 10 });
    lw.nextList = () => {
      throw new ApiException(403, 'Forbidden', JSON.stringify({ kind: 'Status', reason: 'Forbidden', message: 'pods is forbidden', details: { secret: 'body-only' } }), {});
    };
    source.start();
    await clock.advance(0);
    assert.equal(warnings[0]?.msg, 'failed to list pods');
    const err = warnings[0]?.fields.err;
    assert.ok(hasErrorCode(err, 'KP_ERR_SOURCE_API_LIST'));
    assert.equal(err.message, 'cannot list the pods bound to node "n": HTTP 403: pods is forbidden');
    assert.equal(warnings[0]?.fields.httpStatus, 403);
    await source.stop();
  });

  test('stop() then start() lists and watches again', async () => {
    const { clock, lw, rec, source } = startOnFakeClock();
    source.start();
    await clock.advance(0);
    await source.stop();
    assert.equal(lw.lastWatch.aborted, true);
    source.start();
    await clock.advance(0);
    assert.equal(lw.watches.length, 2, 'a new watch after the restart');
    lw.lastWatch.onEvent('ADDED', apiPod('late', 'ul', '9'));
    await clock.advance(0);
    assert.deepEqual(rec.items.at(-1)?.pods.map((p) => p.metadata?.name), ['late']);
    await source.stop();
  });
});
