// The typed reflector (src/kube/reflector.ts) on a fake clock, over a scripted list/watch of
// Nodes: what its consumer is handed, the 410 relist, the watchdog, the backoff, the watch
// timeout. The API source's own tests (test/unit/sources/) drive the same loop through a pod store.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiException, type V1Node } from '@kubernetes/client-node';
import type { ListWatch, ObjectList, WatchEventType } from '../../../src/kube/list-watch.js';
import { createReflector, type ObjectEventType, type ReflectorOptions } from '../../../src/kube/reflector.js';
import { randomWatchTimeoutSeconds } from '../../../src/kube/watch-timeout.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

interface FakeWatch {
  readonly resourceVersion: string;
  readonly onEvent: (type: WatchEventType, object: unknown) => void;
  readonly done: (err: unknown) => void;
  aborted: boolean;
}

/** A list/watch of Nodes whose every call the test answers, recording when each came. */
class ScriptedNodes implements ListWatch<V1Node> {
  readonly listTimes: number[] = [];
  readonly watches: FakeWatch[] = [];
  nextList: () => ObjectList<V1Node> | Promise<ObjectList<V1Node>> = () => ({ items: [], metadata: { resourceVersion: '1' } });

  constructor(private readonly clock: FakeClock) {}

  async list(): Promise<ObjectList<V1Node>> {
    this.listTimes.push(this.clock.monotonic());
    return this.nextList();
  }

  async watch(resourceVersion: string, onEvent: FakeWatch['onEvent'], done: FakeWatch['done']): Promise<{ abort(): void }> {
    const w: FakeWatch = { resourceVersion, onEvent, done, aborted: false };
    this.watches.push(w);
    return { abort: () => (w.aborted = true) };
  }

  get lastWatch(): FakeWatch {
    return this.watches.at(-1)!;
  }
}

const node = (name: string, rv: string): V1Node => ({ metadata: { name, uid: `u-${name}`, resourceVersion: rv } });

function start(extra: Partial<ReflectorOptions<V1Node>> = {}) {
  const clock = new FakeClock();
  const lw = new ScriptedNodes(clock);
  const lists: { names: string[]; resourceVersion: string }[] = [];
  const events: [ObjectEventType, string][] = [];
  const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
  const logger = { debug() {}, info() {}, error() {}, warn: (fields: object, msg?: string) => warnings.push({ fields: fields as Record<string, unknown>, msg: msg ?? '' }) };
  const reflector = createReflector<V1Node>({
    listWatch: lw,
    // The consumer is handed V1Nodes: reading status needs no cast.
    onList: (items, resourceVersion) => {
      lists.push({ names: items.map((n) => n.metadata?.name ?? ''), resourceVersion });
    },
    onEvent: (type, n) => events.push([type, `${n.metadata?.name}@${n.metadata?.resourceVersion}`]),
    wording: {
      logFields: { what: 'nodes' },
      listFailed: 'list failed',
      listError: (reason) => new Error(`list: ${reason}`),
      watchFailed: 'watch failed',
      watchError: (reason) => new Error(`watch: ${reason}`),
    },
    clock,
    logger,
    ...extra,
  });
  return { clock, lw, lists, events, warnings, reflector };
}

describe('reflector', () => {
  test('lists, hands the list over, then watches from its resourceVersion and hands over each change', async () => {
    const { clock, lw, lists, events, reflector } = start();
    lw.nextList = () => ({ items: [node('a', '3'), node('b', '4')], metadata: { resourceVersion: '5' } });
    reflector.start();
    await clock.advance(0);
    assert.deepEqual(lists, [{ names: ['a', 'b'], resourceVersion: '5' }]);
    assert.equal(lw.lastWatch.resourceVersion, '5');

    lw.lastWatch.onEvent('ADDED', node('c', '6'));
    lw.lastWatch.onEvent('MODIFIED', node('a', '7'));
    lw.lastWatch.onEvent('BOOKMARK', { metadata: { resourceVersion: '8' } });
    lw.lastWatch.onEvent('DELETED', node('b', '9'));
    assert.deepEqual(events, [['ADDED', 'c@6'], ['MODIFIED', 'a@7'], ['DELETED', 'b@9']], 'bookmarks are not handed over');

    // The server closes the stream (its timeout): the next watch resumes where the last event left off.
    await clock.advance(2_000);
    lw.lastWatch.done(null);
    await clock.advance(0);
    assert.equal(lw.watches.length, 2);
    assert.equal(lw.lastWatch.resourceVersion, '9');
    assert.deepEqual(lw.listTimes, [0], 'no relist');
    assert.deepEqual(reflector.stats(), { lists: 1, watches: 2, watchdogRestarts: 0, errors: 0 });
    await reflector.stop();
    assert.equal(lw.lastWatch.aborted, true, 'stop() aborts the watch');
  });

  for (const [how, end] of [
    ['an HTTP 410 answer', (w: FakeWatch) => w.done(new ApiException(410, 'Gone', undefined, {}))],
    ['an ERROR event with code 410', (w: FakeWatch) => w.onEvent('ERROR', { kind: 'Status', code: 410, reason: 'Expired' })],
  ] as const) {
    test(`410 Gone (${how}) relists at once and hands the new list over`, async () => {
      const { clock, lw, lists, reflector } = start({ backoffInitialMs: 60_000 });
      reflector.start();
      await clock.advance(0);
      lw.nextList = () => ({ items: [node('a', '20')], metadata: { resourceVersion: '21' } });
      end(lw.lastWatch);
      await clock.advance(0);
      assert.deepEqual(lw.listTimes, [0, 0], 'relisted without waiting');
      assert.deepEqual(lists.at(-1), { names: ['a'], resourceVersion: '21' });
      assert.equal(lw.lastWatch.resourceVersion, '21');
      await reflector.stop();
    });
  }

  test('a watch error other than 410 is logged in its consumer\'s words and retried from the same resourceVersion after a pause', async () => {
    const { clock, lw, warnings, reflector } = start({ backoffInitialMs: 100 });
    reflector.start();
    await clock.advance(0);
    lw.lastWatch.onEvent('ERROR', { kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' });
    await clock.advance(0);
    assert.equal(lw.watches[0]!.aborted, true);
    assert.deepEqual(warnings.map((w) => [w.msg, w.fields.what, (w.fields.err as Error).message]), [['watch failed', 'nodes', 'watch: ERROR event: 500 InternalError boom']]);
    await clock.advance(99);
    assert.equal(lw.watches.length, 1);
    await clock.advance(1);
    assert.equal(lw.watches.length, 2);
    assert.equal(lw.lastWatch.resourceVersion, '1');
    assert.deepEqual(lw.listTimes, [0], 'no relist');
    await reflector.stop();
  });

  test('the watchdog restarts a silent watch without a relist, and abandons a list that does not answer', async () => {
    const { clock, lw, reflector } = start({ watchdogMs: 1_000 });
    reflector.start();
    await clock.advance(0);
    await clock.advance(600);
    lw.lastWatch.onEvent('BOOKMARK', { metadata: { resourceVersion: '4' } });
    await clock.advance(999);
    assert.equal(lw.watches.length, 1, 'a bookmark 999 ms ago keeps the watch');
    await clock.advance(1);
    assert.equal(reflector.stats().watchdogRestarts, 1);
    assert.equal(lw.watches[0]!.aborted, true);
    assert.equal(lw.lastWatch.resourceVersion, '4');
    assert.deepEqual(lw.listTimes, [0]);

    // A 410 relist whose list hangs: given up after the watchdog period, then retried.
    lw.nextList = () => new Promise(() => {});
    lw.lastWatch.done(new ApiException(410, 'Gone', undefined, {}));
    await clock.advance(0);
    assert.equal(lw.listTimes.length, 2);
    await clock.advance(999);
    assert.equal(reflector.stats().errors, 0);
    await clock.advance(1);
    assert.equal(reflector.stats().errors, 1, 'the hanging list counts as a failure');
    lw.nextList = () => ({ items: [], metadata: { resourceVersion: '5' } });
    await clock.advance(500);
    assert.equal(lw.listTimes.length, 3, 'and is retried after the first pause');
    assert.equal(lw.lastWatch.resourceVersion, '5');
    await reflector.stop();
  });

  test('list failures back off exponentially up to the cap; a success resets the backoff', async () => {
    const { clock, lw, warnings, reflector } = start({ backoffInitialMs: 100, backoffMaxMs: 400 });
    lw.nextList = () => {
      throw new ApiException(503, 'unavailable', undefined, {});
    };
    reflector.start();
    await clock.advance(1_500);
    assert.deepEqual(lw.listTimes, [0, 100, 300, 700, 1_100, 1_500], 'waits of 100, 200, 400, then 400 (the cap)');
    assert.equal(warnings[0]?.msg, 'list failed');
    assert.equal(warnings[0]?.fields.httpStatus, 503);
    assert.equal((warnings[0]?.fields.err as Error).message, 'list: HTTP 503');

    lw.nextList = () => ({ items: [], metadata: { resourceVersion: '3' } });
    await clock.advance(400);
    assert.equal(lw.watches.length, 1, 'watching after the successful list');
    lw.lastWatch.done(new Error('connection reset'));
    await clock.advance(99);
    assert.equal(lw.watches.length, 1);
    await clock.advance(1);
    assert.equal(lw.watches.length, 2, 'the next failure waits the first pause again');
    await reflector.stop();
  });

  test('the watch timeout is random in [300, 600) s, and the default watchdog is that timeout plus 60 s', async () => {
    assert.equal(randomWatchTimeoutSeconds(() => 0), 300);
    assert.equal(randomWatchTimeoutSeconds(() => 0.999999), 599);
    for (let i = 0; i < 1_000; i++) {
      const s = randomWatchTimeoutSeconds();
      assert.ok(Number.isInteger(s) && s >= 300 && s < 600, `${s} s`);
    }

    const given = start({ watchTimeoutSeconds: 100 });
    given.reflector.start();
    await given.clock.advance(159_999);
    assert.equal(given.lw.watches.length, 1);
    await given.clock.advance(1);
    assert.equal(given.lw.watches.length, 2, 'restarted after 100 s + 60 s of silence');
    await given.reflector.stop();

    const drawn = start();
    drawn.reflector.start();
    await drawn.clock.advance(359_999);
    assert.equal(drawn.lw.watches.length, 1, 'never before 300 s + 60 s');
    await drawn.clock.advance(300_000);
    assert.equal(drawn.lw.watches.length, 2, 'always by 599 s + 60 s');
    await drawn.reflector.stop();
  });

  test('stop() then start() watches again from the resourceVersion it had reached', async () => {
    const { clock, lw, lists, reflector } = start();
    reflector.start();
    await clock.advance(0);
    lw.lastWatch.onEvent('ADDED', node('a', '2'));
    await reflector.stop();
    reflector.start();
    await clock.advance(0);
    assert.equal(lists.length, 1, 'no second list');
    assert.equal(lw.watches.length, 2);
    assert.equal(lw.lastWatch.resourceVersion, '2');
    await reflector.stop();
  });

  test('stop() during a pause after a failure ends it at once, with no timer left and no call after', async () => {
    const { clock, lw, reflector } = start({ backoffInitialMs: 10_000 });
    lw.nextList = () => {
      throw new ApiException(503, 'unavailable', undefined, {});
    };
    reflector.start();
    await clock.advance(0);
    assert.equal(lw.listTimes.length, 1);
    assert.equal(clock.pendingTimers, 1, 'pausing before the retry');
    await reflector.stop();
    assert.equal(clock.pendingTimers, 0);
    await clock.advance(60_000);
    assert.equal(lw.listTimes.length, 1, 'no retry after stop()');
    // And it starts again.
    lw.nextList = () => ({ items: [], metadata: { resourceVersion: '4' } });
    reflector.start();
    await clock.advance(0);
    assert.equal(lw.watches.length, 1);
    await reflector.stop();
  });

  test('a reflector holds no AbortSignal: every node of a fleet has one', async () => {
    const clock = new FakeClock();
    const lw = new ScriptedNodes(clock);
    const options: ReflectorOptions<V1Node> = {
      listWatch: lw,
      onList: () => {},
      onEvent: () => {},
      wording: { logFields: {}, listFailed: '', listError: (reason) => new Error(reason), watchFailed: '', watchError: (reason) => new Error(reason) },
      clock,
    };
    // Started, each waits for a list that never comes.
    lw.nextList = () => new Promise(() => {});
    const bytes = await retainedBytesPer(20_000, () => {
      const reflector = createReflector(options);
      reflector.start();
      return reflector;
    });
    // About 3,200 bytes with its list in flight (the promises, the fake clock's watchdog
    // timer); an AbortController with its signal added about 770.
    assert.ok(bytes < 3_600, `${bytes.toFixed(1)} bytes per started reflector`);
  });
});
