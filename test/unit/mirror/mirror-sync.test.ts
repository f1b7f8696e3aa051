// Mirror reconciliation as the kubelet does it inside SyncPod and housekeeping
// (pkg/kubelet/kubelet_test.go, kubelet_pods_test.go: TestCreateMirrorPod,
// TestDeleteOutdatedMirrorPod, TestDeleteOrphanedMirrorPods), run through the mirror sync with
// the in-memory fake mirror client, a real PodManager and a FakeClock: retries are driven by
// advancing fake time, never waited for.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PodManager } from '../../../src/pod/manager.js';
import { createMirrorSync, type MirrorSync, type MirrorSyncOptions } from '../../../src/mirror/mirror-sync.js';
import { FakeMirrorClient } from '../../../src/mirror/fake-mirror-client.js';
import type { MirrorClient } from '../../../src/pod/mirror-client.js';
import type { Pod } from '../../../src/pod/types.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';

const readyNode = { metadata: { name: '127.0.0.1', uid: 'node-uid' } };

function pod(uid: string, name: string, namespace: string, annotations: Record<string, string>, image = 'foo'): Pod {
  return {
    metadata: { uid, name, namespace, annotations },
    spec: { containers: [{ name: '1234', image }] },
  };
}

function newSync(overrides: Partial<MirrorSyncOptions> & { podManager: PodManager; mirrorClient: MirrorClient }): MirrorSync {
  return createMirrorSync({
    getNode: async () => readyNode,
    allSourcesReady: () => true,
    backoff: { initialMs: 100, maxMs: 1000 },
    clock: new FakeClock(),
    ...overrides,
  });
}

/** Whether `promise` has settled once pending jobs ran: idle() checked without a timeout race. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await settle();
  return done;
}

describe('mirror sync', () => {
  for (const desc of ['SyncPodCreate', 'SyncPodUpdate']) {
    it(`KS-1 TestCreateMirrorPod/${desc}`, async () => {
      const podManager = new PodManager();
      const mirrorClient = new FakeMirrorClient();
      podManager.setPods([pod('12345678', 'bar', 'foo', { 'kubernetes.io/config.source': 'file' })]);
      const sync = newSync({ podManager, mirrorClient });
      sync.enqueue('bar_foo');
      await sync.idle();
      assert.equal(mirrorClient.hasPod('bar_foo'), true);
      assert.equal(mirrorClient.numOfPods(), 1);
    });
  }

  it('KS-2 TestDeleteOutdatedMirrorPod', async () => {
    const podManager = new PodManager();
    const mirrorClient = new FakeMirrorClient();
    const staticPod = pod('12345678', 'foo', 'ns', { 'kubernetes.io/config.source': 'file' });
    const mirror = pod('11111111', 'foo', 'ns', {
      'kubernetes.io/config.source': 'api',
      'kubernetes.io/config.mirror': 'mirror',
    }, 'bar');
    podManager.setPods([staticPod, mirror]);
    const sync = newSync({ podManager, mirrorClient });
    sync.enqueue('foo_ns');
    await sync.idle();
    assert.deepEqual(mirrorClient.getCounts('foo_ns'), { creates: 1, deletes: 1 });
    // The outdated mirror is deleted with its UID as precondition, then the new one is created.
    assert.deepEqual(mirrorClient.calls, [
      { op: 'delete', podFullName: 'foo_ns', uid: '11111111' },
      { op: 'create', podFullName: 'foo_ns' },
    ]);
  });

  it('KS-3 TestDeleteOrphanedMirrorPods', async () => {
    const podManager = new PodManager();
    const mirrorClient = new FakeMirrorClient();
    const mirrorAnnotations = { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'mirror' };
    podManager.setPods([
      pod('12345678', 'pod1', 'ns', mirrorAnnotations),
      pod('12345679', 'pod2', 'ns', mirrorAnnotations),
      pod('12345670', 'pod3', 'ns', mirrorAnnotations),
    ]);
    for (const name of ['pod1_ns', 'pod2_ns', 'pod3_ns']) await mirrorClient.createMirrorPod(pod('x', name.split('_')[0]!, 'ns', {}));
    const sync = newSync({ podManager, mirrorClient, isTerminating: (name) => name === 'pod3_ns' });
    assert.equal(sync.housekeeping(), 3);
    await sync.idle();
    assert.deepEqual(mirrorClient.getCounts('pod1_ns'), { creates: 1, deletes: 1 });
    assert.deepEqual(mirrorClient.getCounts('pod2_ns'), { creates: 1, deletes: 1 });
    assert.deepEqual(mirrorClient.getCounts('pod3_ns'), { creates: 1, deletes: 0 });
    // Orphans are deleted without a UID precondition.
    assert.ok(mirrorClient.calls.filter((c) => c.op === 'delete').every((c) => c.uid === undefined));
  });

  it('keeps a mirror whose hash matches, even if its labels were edited', async () => {
    const podManager = new PodManager();
    const mirrorClient = new FakeMirrorClient();
    const staticPod = pod('u1', 'web', 'default', { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'u1' });
    const mirror: Pod = {
      ...pod('m1', 'web', 'default', { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'u1' }),
    };
    mirror.metadata!.labels = { edited: 'by-a-user' };
    podManager.setPods([staticPod, mirror]);
    const sync = newSync({ podManager, mirrorClient });
    sync.enqueue('web_default');
    await sync.idle();
    assert.deepEqual(mirrorClient.calls, []);
  });

  it('replaces a mirror that is being deleted by a user (deletionTimestamp set)', async () => {
    const podManager = new PodManager();
    const mirrorClient = new FakeMirrorClient();
    const staticPod = pod('u1', 'web', 'default', { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'u1' });
    const mirror = pod('m1', 'web', 'default', { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'u1' });
    mirror.metadata!.deletionTimestamp = new Date();
    podManager.setPods([staticPod, mirror]);
    const sync = newSync({ podManager, mirrorClient });
    sync.enqueue('web_default');
    await sync.idle();
    assert.deepEqual(mirrorClient.calls, [
      { op: 'delete', podFullName: 'web_default', uid: 'm1' },
      { op: 'create', podFullName: 'web_default' },
    ]);
  });

  it('creates no mirror while the Node is missing or being deleted, and creates it once the Node is there', async () => {
    const podManager = new PodManager();
    const mirrorClient = new FakeMirrorClient();
    podManager.setPods([pod('u1', 'web', 'default', { 'kubernetes.io/config.source': 'file' })]);
    let node: { metadata: { name: string; uid: string; deletionTimestamp?: Date } } | undefined;
    const sync = newSync({ podManager, mirrorClient, getNode: async () => node });
    sync.enqueue('web_default');
    await sync.idle();
    assert.equal(mirrorClient.numOfPods(), 0, 'no node: no mirror');

    node = { metadata: { name: 'n', uid: 'x', deletionTimestamp: new Date() } };
    sync.enqueueAll();
    await sync.idle();
    assert.equal(mirrorClient.numOfPods(), 0, 'node being deleted: no mirror');

    node = { metadata: { name: 'n', uid: 'x' } };
    sync.enqueueAll();
    await sync.idle();
    assert.equal(mirrorClient.hasPod('web_default'), true);
  });

  it('does not delete orphaned mirrors before all sources are ready', async () => {
    const podManager = new PodManager();
    const mirrorClient = new FakeMirrorClient();
    podManager.setPods([pod('m1', 'old', 'default', { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'h' })]);
    let ready = false;
    const sync = newSync({ podManager, mirrorClient, allSourcesReady: () => ready });
    assert.equal(sync.housekeeping(), 0);
    sync.enqueue('old_default');
    await sync.idle();
    assert.equal(mirrorClient.getCounts('old_default').deletes, 0);
    ready = true;
    assert.equal(sync.housekeeping(), 1);
    await sync.idle();
    assert.equal(mirrorClient.getCounts('old_default').deletes, 1);
  });

  it('leaves a mirror beside a non-static pod of the same name to housekeeping rules (not an orphan)', async () => {
    const podManager = new PodManager();
    const mirrorClient = new FakeMirrorClient();
    podManager.setPods([
      pod('a1', 'web', 'default', { 'kubernetes.io/config.source': 'api' }),
      pod('m1', 'web', 'default', { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'h' }),
    ]);
    const sync = newSync({ podManager, mirrorClient });
    assert.equal(sync.housekeeping(), 0);
    sync.enqueue('web_default');
    await sync.idle();
    assert.deepEqual(mirrorClient.calls, []);
  });

  it('retries a failed create with backoff until it succeeds', async () => {
    const clock = new FakeClock();
    const podManager = new PodManager();
    const inner = new FakeMirrorClient();
    let failures = 2;
    const flaky: MirrorClient = {
      createMirrorPod: async (p) => {
        if (failures-- > 0) throw new Error('apiserver unavailable');
        return inner.createMirrorPod(p);
      },
      deleteMirrorPod: (n, u) => inner.deleteMirrorPod(n, u),
    };
    const actions: string[] = [];
    podManager.setPods([pod('u1', 'web', 'default', { 'kubernetes.io/config.source': 'file' })]);
    const sync = newSync({ podManager, mirrorClient: flaky, clock, onAction: (a, r) => actions.push(`${a}:${r}@${clock.monotonic()}`) });
    sync.enqueue('web_default');
    await clock.advance(0);
    assert.deepEqual(actions, ['create:error@0']);
    await clock.advance(99);
    assert.deepEqual(actions, ['create:error@0'], 'no retry before the backoff');
    await clock.advance(1);
    await clock.advance(200); // the second failure doubles the wait
    assert.deepEqual(actions, ['create:error@0', 'create:error@100', 'create:success@300']);
    assert.equal(inner.hasPod('web_default'), true);
    assert.equal(await isSettled(sync.idle()), true);
  });

  it('an update arriving during a failed pass runs the next pass at once, not after the backoff', async () => {
    const clock = new FakeClock();
    const podManager = new PodManager();
    const inner = new FakeMirrorClient();
    const staticPod = pod('u2', 'web', 'default', { 'kubernetes.io/config.source': 'file' });
    const stale = pod('m1', 'web', 'default', { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'old-hash' });
    podManager.setPods([staticPod, stale]);
    const holder: { sync?: MirrorSync } = {};
    const client: MirrorClient = {
      createMirrorPod: (p) => inner.createMirrorPod(p),
      // The mirror we know was already replaced: the delete is refused, and meanwhile the
      // watch tells the pod manager it is gone.
      deleteMirrorPod: async () => {
        podManager.removePod(stale);
        holder.sync!.enqueue('web_default');
        return false;
      },
    };
    const sync = newSync({ podManager, mirrorClient: client, clock, backoff: { initialMs: 60_000, maxMs: 60_000 } });
    holder.sync = sync;
    sync.enqueue('web_default');
    assert.equal(await isSettled(sync.idle()), true, 'idle without any fake time passing');
    assert.equal(clock.monotonic(), 0);
    assert.equal(inner.hasPod('web_default'), true, 'created without waiting for the 60 s backoff');
  });

  it('a manifest edit (REMOVE then ADD in one turn) replaces the mirror, never deleting it as an orphan', async () => {
    const podManager = new PodManager();
    const mirrorClient = new FakeMirrorClient();
    const before = pod('u1', 'web', 'default', { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'u1' });
    const after = pod('u2', 'web', 'default', { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': 'u2' });
    const mirror = pod('m1', 'web', 'default', { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'u1' });
    podManager.setPods([before, mirror]);
    const sync = newSync({ podManager, mirrorClient });
    podManager.removePod(before);
    sync.enqueue('web_default');
    podManager.addPod(after);
    sync.enqueue('web_default');
    await sync.idle();
    assert.deepEqual(mirrorClient.calls, [
      { op: 'delete', podFullName: 'web_default', uid: 'm1' },
      { op: 'create', podFullName: 'web_default' },
    ]);
  });

  it('reports durations on the clock it was given', async () => {
    const clock = new FakeClock();
    const podManager = new PodManager();
    podManager.setPods([pod('u1', 'web', 'default', { 'kubernetes.io/config.source': 'file' })]);
    const slow: MirrorClient = {
      createMirrorPod: () => clock.sleep(250),
      deleteMirrorPod: async () => true,
    };
    const durations: number[] = [];
    const sync = newSync({ podManager, mirrorClient: slow, clock, onAction: (_a, _r, _n, seconds) => durations.push(seconds) });
    sync.enqueue('web_default');
    await clock.advance(250);
    assert.deepEqual(durations, [0.25]);
  });

  it('stop() cancels retries, ignores new requests and resolves once the pass in flight ends', async () => {
    const clock = new FakeClock();
    const podManager = new PodManager();
    podManager.setPods([
      pod('u1', 'failing', 'default', { 'kubernetes.io/config.source': 'file' }),
      pod('u2', 'slow', 'default', { 'kubernetes.io/config.source': 'file' }),
    ]);
    let release!: () => void;
    const creates: string[] = [];
    const client: MirrorClient = {
      createMirrorPod: async (p) => {
        creates.push(p.metadata!.name!);
        if (p.metadata!.name === 'failing') throw new Error('apiserver unavailable');
        await new Promise<void>((resolve) => (release = resolve));
      },
      deleteMirrorPod: async () => true,
    };
    const sync = newSync({ podManager, mirrorClient: client, clock });
    sync.enqueue('failing_default');
    sync.enqueue('slow_default');
    await clock.advance(0);
    assert.deepEqual(creates, ['failing', 'slow']);
    const stopped = sync.stop();
    sync.enqueue('failing_default');
    assert.equal(clock.pendingTimers, 0, 'the retry is cancelled');
    assert.equal(await isSettled(stopped), false, 'the slow create is still in flight');
    release();
    assert.equal(await isSettled(stopped), true);
    await clock.advance(60_000);
    assert.deepEqual(creates, ['failing', 'slow'], 'nothing ran after stop');
  });

  it('stopped before any work: idle and stop resolve, and later requests are ignored', async () => {
    const clock = new FakeClock();
    const podManager = new PodManager();
    podManager.setPods([pod('u1', 'web', 'default', { 'kubernetes.io/config.source': 'file' })]);
    const mirrorClient = new FakeMirrorClient();
    const sync = newSync({ podManager, mirrorClient, clock });
    assert.equal(await isSettled(sync.idle()), true, 'idle with nothing ever queued');
    assert.equal(await isSettled(sync.stop()), true);
    sync.enqueue('web_default');
    sync.enqueueAll();
    await clock.advance(60_000);
    assert.equal(mirrorClient.numOfPods(), 0, 'no mirror created after stop');
  });

  it('serialises work per full name and coalesces requests that arrive meanwhile', async () => {
    const podManager = new PodManager();
    let inFlight = 0;
    let maxInFlight = 0;
    let creates = 0;
    let release: (() => void) | undefined;
    const slow: MirrorClient = {
      createMirrorPod: async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        creates++;
        await new Promise<void>((resolve) => (release = resolve));
        inFlight--;
      },
      deleteMirrorPod: async () => true,
    };
    podManager.setPods([pod('u1', 'web', 'default', { 'kubernetes.io/config.source': 'file' })]);
    const sync = newSync({ podManager, mirrorClient: slow });
    sync.enqueue('web_default');
    await settle();
    assert.equal(creates, 1, 'the first pass is in flight');
    for (let i = 0; i < 10; i++) sync.enqueue('web_default');
    await settle();
    assert.equal(creates, 1, 'no second pass while the first is in flight');
    release!();
    await settle();
    assert.equal(creates, 2, 'one more pass right after the first');
    release!();
    assert.equal(await isSettled(sync.idle()), true);
    assert.equal(maxInFlight, 1, 'one call at a time for one full name');
    assert.equal(creates, 2, 'ten requests during one pass coalesce into one more pass');
  });

  it('deletes an orphan once: passes before the watch reports the deletion send no second DELETE', async () => {
    const podManager = new PodManager();
    const mirrorClient = new FakeMirrorClient();
    const clock = new FakeClock();
    const mirror = pod('m1', 'gone', 'ns', { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'h1' });
    podManager.setPods([mirror]);
    await mirrorClient.createMirrorPod(pod('x', 'gone', 'ns', {}));
    const sync = newSync({ podManager, mirrorClient, clock });
    assert.equal(sync.housekeepingDue(), false, 'nothing sent yet');
    sync.housekeeping();
    await sync.idle();
    assert.equal(sync.housekeepingDue(), true, 'a deletion the watch has not confirmed keeps housekeeping due');
    sync.enqueue('gone_ns'); // a dirty re-run, housekeeping 2 s later: the pod manager still has the mirror
    sync.housekeeping();
    await sync.idle();
    assert.deepEqual(mirrorClient.getCounts('gone_ns'), { creates: 1, deletes: 1 });
    // The same name with a new mirror (another UID) is an orphan of its own.
    podManager.setPods([{ ...mirror, metadata: { ...mirror.metadata, uid: 'm2' } }]);
    sync.housekeeping();
    await sync.idle();
    assert.deepEqual(mirrorClient.getCounts('gone_ns'), { creates: 1, deletes: 2 });
    // A deletion never reported is trusted for a bounded time, then tried again.
    await clock.advance(31_000);
    sync.housekeeping();
    await sync.idle();
    assert.deepEqual(mirrorClient.getCounts('gone_ns'), { creates: 1, deletes: 3 });
    // Once the watch reports the mirror gone, nothing is left to wait on.
    podManager.setPods([]);
    sync.housekeeping();
    assert.equal(sync.housekeepingDue(), false);
  });

  it("a static pod's mirror is created before queued orphan deletions", async () => {
    const podManager = new PodManager();
    const order: string[] = [];
    const client: MirrorClient = {
      createMirrorPod: async (p) => void order.push(`create ${p.metadata?.name}`),
      deleteMirrorPod: async (name) => (order.push(`delete ${name}`), true),
    };
    const mirrorAnnotations = { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'h' };
    podManager.setPods([
      ...Array.from({ length: 5 }, (_, i) => pod(`m${i}`, `old${i}`, 'ns', mirrorAnnotations)),
      pod('s1', 'new', 'ns', { 'kubernetes.io/config.source': 'file' }),
    ]);
    const sync = newSync({ podManager, mirrorClient: client, concurrency: 1 });
    sync.housekeeping();
    sync.enqueue('new_ns');
    await sync.idle();
    assert.equal(order[0], 'create new');
    assert.equal(order.length, 6);
  });

  it("a new static pod's mirror is created while orphan deletions are still in flight: they take a quarter of the slots", async () => {
    const podManager = new PodManager();
    let deletesInFlight = 0;
    let mostDeletesAtOnce = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const created: string[] = [];
    const client: MirrorClient = {
      createMirrorPod: async (p) => void created.push(p.metadata!.name!),
      deleteMirrorPod: async () => {
        deletesInFlight++;
        mostDeletesAtOnce = Math.max(mostDeletesAtOnce, deletesInFlight);
        await held;
        deletesInFlight--;
        return true;
      },
    };
    const mirrorAnnotations = { 'kubernetes.io/config.source': 'api', 'kubernetes.io/config.mirror': 'h' };
    podManager.setPods(Array.from({ length: 100 }, (_, i) => pod(`m${i}`, `old${i}`, 'ns', mirrorAnnotations)));
    const sync = newSync({ podManager, mirrorClient: client, concurrency: 32 });
    sync.housekeeping();
    await settle();
    assert.equal(deletesInFlight, 8, 'a quarter of 32 slots hold orphan deletions');
    podManager.addPod(pod('s1', 'new', 'ns', { 'kubernetes.io/config.source': 'file' }));
    sync.enqueue('new_ns');
    await settle();
    assert.deepEqual(created, ['new'], 'the create did not wait for a deletion to end');
    release();
    await sync.idle();
    assert.equal(mostDeletesAtOnce, 8);
  });
});
