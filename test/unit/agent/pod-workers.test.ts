// Pod workers: pkg/kubelet/pod_workers.go (calculateEffectiveGracePeriod, allowStaticPodStart,
// cleanupUnstartedPod, IsPodForMirrorPodTerminatingByFullName) and the restart of a UID that
// came back while stopping (SyncKnownPods / removeTerminatedWorker). On the FakeClock.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPodWorkers, effectiveGracePeriod, type PodWorkerState } from '../../../src/agent/pod-workers.js';
import type { Pod } from '../../../src/pod/types.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { createRelist } from '../../../src/agent/relist.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

function staticPod(uid: string, o: { grace?: number; name?: string; stopSeconds?: number; deletionGrace?: number } = {}): Pod {
  const annotations: Record<string, string> = { 'kubernetes.io/config.source': 'file' };
  if (o.stopSeconds !== undefined) annotations['simulation.kubelet-pods.io/stop-seconds'] = String(o.stopSeconds);
  return {
    metadata: {
      name: o.name ?? 'web-node',
      namespace: 'default',
      uid,
      annotations,
      ...(o.deletionGrace !== undefined ? { deletionGracePeriodSeconds: o.deletionGrace } : {}),
    },
    spec: { nodeName: 'node', containers: [{ name: 'main', image: 'pause' }], ...(o.grace !== undefined ? { terminationGracePeriodSeconds: o.grace } : {}) },
  };
}

function setup(random = 0) {
  const clock = new FakeClock();
  const runtime = createSimulatedStatusProvider({ clock, startDelayMs: 0 });
  const events: string[] = [];
  const terminations: Array<[string, number]> = [];
  const workers = createPodWorkers({
    clock,
    random: () => random,
    terminate: (pod, grace) => {
      terminations.push([pod.metadata!.uid!, grace]);
      return runtime.terminate(pod, grace);
    },
    onStateChange: (pod, state: PodWorkerState) => events.push(`${pod.metadata!.uid} ${state}`),
  });
  return { clock, runtime, workers, events, terminations };
}

describe('effective grace period', () => {
  const cases: Array<{ desc: string; current: number; pod: Pod; override?: number; want: number; changed: boolean }> = [
    { desc: 'starts from terminationGracePeriodSeconds', current: 0, pod: staticPod('a', { grace: 30 }), want: 30, changed: false },
    { desc: 'at least 1 s', current: 0, pod: staticPod('a', { grace: 0 }), want: 1, changed: false },
    { desc: 'no spec value: 1 s', current: 0, pod: staticPod('a'), want: 1, changed: false },
    { desc: 'deletionGracePeriodSeconds wins when smaller', current: 30, pod: staticPod('a', { grace: 30, deletionGrace: 5 }), want: 5, changed: true },
    { desc: 'an override wins when smaller', current: 30, pod: staticPod('a', { grace: 30 }), override: 2, want: 2, changed: true },
    { desc: 'only shrinks: a longer deletion grace changes nothing', current: 5, pod: staticPod('a', { grace: 30, deletionGrace: 20 }), want: 5, changed: false },
    { desc: 'only shrinks: a new spec value changes nothing', current: 5, pod: staticPod('a', { grace: 60 }), want: 5, changed: false },
    { desc: 'a deletion grace of 0 is clamped to 1', current: 30, pod: staticPod('a', { grace: 30, deletionGrace: 0 }), want: 1, changed: true },
  ];
  for (const c of cases) {
    it(`calculateEffectiveGracePeriod/${c.desc}`, () => {
      assert.deepEqual(effectiveGracePeriod(c.current, c.pod, c.override), { gracePeriod: c.want, changed: c.changed });
    });
  }
});

describe('pod workers', () => {
  it('a static pod starts at once; a kill terminates it with its grace period, then it finishes', async () => {
    const { clock, workers, events, terminations } = setup();
    const pod = staticPod('u1', { grace: 5, stopSeconds: 60 });
    workers.updatePod(pod, 'create');
    assert.equal(workers.state('u1'), 'syncing');
    workers.updatePod(pod, 'kill');
    assert.equal(workers.state('u1'), 'terminating');
    assert.equal(workers.isPodTerminatingByFullName('web-node_default'), true);
    assert.deepEqual(terminations, [['u1', 5]]);
    await clock.advance(4999);
    assert.equal(workers.state('u1'), 'terminating');
    await clock.advance(1);
    assert.equal(workers.state('u1'), 'finished');
    assert.equal(workers.isPodTerminatingByFullName('web-node_default'), false);
    assert.deepEqual(events, ['u1 syncing', 'u1 terminating', 'u1 terminated', 'u1 finished']);
  });

  it('a shorter grace period restarts the termination; a longer one is ignored', async () => {
    const { clock, workers, terminations } = setup();
    const pod = staticPod('u1', { grace: 30, stopSeconds: 600 });
    workers.updatePod(pod, 'create');
    workers.updatePod(pod, 'kill');
    await clock.advance(1000);
    workers.updatePod(pod, 'kill', { gracePeriodOverride: 60 });
    workers.updatePod(staticPod('u1', { grace: 30, stopSeconds: 600, deletionGrace: 3 }), 'kill');
    assert.deepEqual(terminations, [
      ['u1', 30],
      ['u1', 3],
    ]);
    await clock.advance(2999);
    assert.equal(workers.state('u1'), 'terminating');
    await clock.advance(1);
    assert.equal(workers.state('u1'), 'finished', 'stopped 3 s after the shorter grace period arrived');
  });

  it('one running static pod per full name: a new UID waits, retried every 10–15 s until the old one finished', async () => {
    // The old pod takes 12 s to stop. With no jitter the retries come at 10 s (refused) and
    // 20 s (started); with the most jitter the first retry, at 15 s, already finds it finished.
    for (const [random, startedAt] of [
      [0, 20_000],
      [0.999999, 10_000 * (1 + 0.5 * 0.999999)],
    ] as const) {
      const { clock, workers } = setup(random);
      const old = staticPod('old', { grace: 20, stopSeconds: 12 });
      workers.updatePod(old, 'create');
      // An edit: REMOVE old, ADD new, in one batch.
      workers.updatePod(old, 'kill');
      workers.updatePod(staticPod('new', { grace: 20 }), 'create');
      assert.equal(workers.state('new'), 'waiting');
      assert.equal(workers.isWaitingToStart('new'), true);
      await clock.advance(12_000);
      assert.equal(workers.state('old'), 'finished');
      assert.equal(workers.state('new'), 'waiting', 'not before its retry');
      await clock.advance(startedAt - 12_000 - 1);
      assert.equal(workers.state('new'), 'waiting');
      await clock.advance(1);
      assert.equal(workers.state('new'), 'syncing', `started ${startedAt / 1000} s after the edit`);
    }
  });

  it('waiting pods start in arrival order; one killed before it started finishes at once', async () => {
    const { clock, workers } = setup();
    const a = staticPod('a', { stopSeconds: 1, grace: 30 });
    workers.updatePod(a, 'create');
    workers.updatePod(a, 'kill');
    workers.updatePod(staticPod('b'), 'create');
    workers.updatePod(staticPod('c'), 'create');
    workers.updatePod(staticPod('b'), 'kill');
    assert.equal(workers.state('b'), 'finished');
    await clock.advance(10_000);
    assert.equal(workers.state('c'), 'syncing');
    assert.deepEqual(workers.startedPods().map((p) => p.metadata?.uid), ['c']);
  });

  it('a UID created again while stopping restarts once finished (restartRequested)', async () => {
    const { clock, workers, runtime } = setup();
    const pod = staticPod('same', { grace: 2, stopSeconds: 1 });
    workers.updatePod(pod, 'create');
    workers.updatePod(pod, 'kill');
    workers.updatePod(pod, 'create'); // the identical manifest is back
    assert.equal(workers.state('same'), 'terminating');
    await clock.advance(1000);
    assert.equal(workers.state('same'), 'finished');
    // Housekeeping: the finished worker goes and the desired pod starts again.
    const { restarted } = workers.syncKnownPods(new Map([['same', pod]]));
    assert.deepEqual(restarted.map((p) => p.metadata?.uid), ['same']);
    assert.equal(workers.state('same'), 'syncing');
    runtime.forget('same');
    const again = runtime.statusFor(pod, clock.now()).containerStatuses?.[0];
    assert.equal(again?.state?.running !== undefined, true);
    // The runtime kept the stopped container of that UID: the count goes on, as the kubelet's.
    assert.equal(again?.restartCount, 1);
  });

  it('a pod that finished while still desired (it completed) keeps its worker and is not started again', async () => {
    const { clock, workers } = setup();
    const pod = staticPod('done', { grace: 1 });
    workers.updatePod(pod, 'create');
    workers.updatePod(pod, 'kill'); // what the agent does once the pod's phase is Succeeded or Failed
    await clock.advance(0);
    assert.equal(workers.state('done'), 'finished');
    workers.syncKnownPods(new Map([['done', pod]]));
    assert.equal(workers.state('done'), 'finished');
    assert.equal(workers.isSyncing('done'), false, 'no SyncPod, so no mirror is created or replaced for it');
    workers.syncKnownPods(new Map());
    assert.equal(workers.state('done'), undefined, 'removed once no longer desired');
  });

  it('housekeeping kills a running pod that is no longer desired (a removal seen while sources were not ready)', async () => {
    const { clock, workers } = setup();
    workers.updatePod(staticPod('gone', { grace: 1 }), 'create');
    workers.syncKnownPods(new Map());
    assert.equal(workers.state('gone'), 'terminating');
    await clock.advance(0);
    assert.equal(workers.state('gone'), 'finished');
    workers.syncKnownPods(new Map());
    assert.equal(workers.state('gone'), undefined, 'the finished worker is removed');
  });

  it('a finished pod no longer desired is forgotten (onForgotten), so the same UID written again later starts afresh', async () => {
    const clock = new FakeClock();
    const forgotten: string[] = [];
    const workers = createPodWorkers({ clock, random: () => 0, terminate: () => Promise.resolve(), onForgotten: (pod) => forgotten.push(pod.metadata!.uid!) });
    const pod = staticPod('again', { grace: 1 });
    workers.updatePod(pod, 'create');
    workers.updatePod(pod, 'kill');
    await clock.advance(0);
    workers.syncKnownPods(new Map([['again', pod]]));
    assert.deepEqual(forgotten, [], 'not while still desired');
    workers.syncKnownPods(new Map());
    assert.deepEqual(forgotten, ['again']);
    workers.updatePod(pod, 'create'); // the identical manifest, after its mirror went
    assert.equal(workers.state('again'), 'syncing', 'a fresh start, not a restart');
  });

  it('shouldPodContentBeRemoved: kept while a worker knows the UID, unless deleted and stopped; removed once unknown', async () => {
    const { clock, workers } = setup();
    const removed = staticPod('removed', { grace: 1 });
    workers.updatePod(removed, 'create');
    assert.equal(workers.shouldPodContentBeRemoved('removed'), false);
    workers.updatePod(removed, 'kill'); // its manifest went: killed, not deleted
    await clock.advance(0);
    assert.equal(workers.state('removed'), 'finished');
    assert.equal(workers.shouldPodContentBeRemoved('removed'), false, 'a finished worker still knows it');
    workers.syncKnownPods(new Map());
    assert.equal(workers.shouldPodContentBeRemoved('removed'), true, 'no worker: gone');
    // An API pod deleted by a user: removable once stopped, while its worker remains.
    const deleted: Pod = { ...staticPod('deleted', { grace: 1 }), metadata: { ...staticPod('deleted').metadata, annotations: {}, deletionTimestamp: new Date() } };
    workers.updatePod({ ...deleted, metadata: { ...deleted.metadata, deletionTimestamp: undefined } }, 'create');
    workers.updatePod(deleted, 'kill');
    assert.equal(workers.shouldPodContentBeRemoved('deleted'), false, 'not while stopping');
    await clock.advance(0);
    assert.equal(workers.shouldPodContentBeRemoved('deleted'), true);
    // An orphan housekeeping kills counts as deleted.
    workers.updatePod(staticPod('orphan', { grace: 1 }), 'create');
    workers.syncKnownPods(new Map([['deleted', deleted]]));
    await clock.advance(0);
    assert.equal(workers.state('orphan'), 'finished');
    assert.equal(workers.shouldPodContentBeRemoved('orphan'), true);
  });

  it('counts working pods by lifecycle, config and static', async () => {
    const { workers } = setup();
    const a = staticPod('a', { name: 'a', stopSeconds: 5, grace: 30 });
    workers.updatePod(a, 'create');
    workers.updatePod(staticPod('b', { name: 'b' }), 'create');
    workers.updatePod(a, 'kill');
    const { working } = workers.counts(new Map([['b', staticPod('b', { name: 'b' })]]));
    assert.deepEqual(Object.fromEntries(working), { 'terminating|orphan|true': 1, 'sync|desired|true': 1 });
  });
});

describe('pod workers with a relist (the kubelet lifecycle)', () => {
  function withRelist() {
    const clock = new FakeClock();
    const relist = createRelist({ clock, periodMs: 1000 });
    const log: string[] = [];
    const at = (what: string): void => void log.push(`${clock.monotonic()} ${what}`);
    const workers = createPodWorkers({
      clock,
      random: () => 0,
      relist,
      terminate: (pod, grace) => (at(`terminate ${pod.metadata!.uid} ${grace}`), Promise.resolve()),
      onSync: (pod, reasons) => at(`sync ${pod.metadata!.uid} ${[...reasons].join('+')}`),
      onStateChange: (pod, state) => at(`${pod.metadata!.uid} ${state}`),
    });
    return { clock, relist, workers, log };
  }

  it('a sync waits for a relist newer than the worker\'s last step: the first sync is held until the first relist', async () => {
    const { clock, workers, log } = withRelist();
    await clock.advance(200);
    workers.updatePod(staticPod('u1'), 'create');
    // The new mirror comes back through the watch while the first sync runs.
    await clock.advance(100);
    workers.sync('u1', 'update');
    await clock.advance(1699);
    assert.deepEqual(log, ['200 u1 syncing'], 'not at the first relist (1000), which ends the first sync');
    await clock.advance(1);
    assert.deepEqual(log.slice(1), ['2000 sync u1 update']);
    // Idle for a whole relist period: the next sync runs at once.
    await clock.advance(1500);
    workers.sync('u1', 'runtime');
    assert.deepEqual(log.slice(2), ['3500 sync u1 runtime']);
    // One right after it waits for the relist after it (4000); what comes while one waits, for
    // the relist after that one ran, together.
    workers.sync('u1', 'update');
    await clock.advance(400);
    assert.equal(log.length, 3);
    await clock.advance(100);
    workers.sync('u1', 'runtime');
    workers.sync('u1', 'update');
    workers.sync('u1', 'runtime');
    await clock.advance(2000);
    assert.deepEqual(log.slice(3), ['4000 sync u1 update', '5000 sync u1 runtime', '6000 sync u1 update+runtime']);
  });

  it('a kill: the termination at the relist after the last sync, then the clean-up at the relist after it ends', async () => {
    const { clock, workers, log } = withRelist();
    const pod = staticPod('u1', { grace: 5 });
    workers.updatePod(pod, 'create');
    await clock.advance(2500);
    workers.sync('u1', 'runtime');
    // Killed just after that sync (a kubectl delete as the pod turns Running).
    await clock.advance(100);
    workers.updatePod(pod, 'kill');
    assert.equal(workers.state('u1'), 'terminating');
    await clock.advance(399);
    assert.deepEqual(log, ['0 u1 syncing', '2500 sync u1 runtime', '2600 u1 terminating']);
    await clock.advance(1);
    assert.deepEqual(log.slice(3), ['3000 terminate u1 5', '3000 u1 terminated']);
    assert.equal(workers.isPodTerminatingByFullName('web-node_default'), false, 'terminated: its orphaned mirror may go');
    await clock.advance(999);
    assert.equal(workers.state('u1'), 'terminated');
    await clock.advance(1);
    assert.deepEqual(log.slice(5), ['4000 u1 finished']);
  });

  it('a kill while a sync waits cancels that sync, and the termination waits for the relist after it', async () => {
    const { clock, workers, log } = withRelist();
    const pod = staticPod('u1', { grace: 5 });
    workers.updatePod(pod, 'create');
    await clock.advance(1200);
    workers.sync('u1', 'runtime');
    workers.sync('u1', 'update'); // waits for 2000
    workers.updatePod(pod, 'kill');
    await clock.advance(800);
    assert.deepEqual(log, ['0 u1 syncing', '1200 u1 terminating'], 'the waiting sync did not run');
    await clock.advance(1000);
    assert.deepEqual(log.slice(2), ['3000 terminate u1 5', '3000 u1 terminated']);
  });

  it('a shorter grace period before the termination began is the one it uses', async () => {
    const { clock, workers, log } = withRelist();
    workers.updatePod(staticPod('u1', { grace: 30 }), 'create');
    workers.updatePod(staticPod('u1', { grace: 30 }), 'kill');
    workers.updatePod(staticPod('u1', { grace: 30, deletionGrace: 3 }), 'kill');
    await clock.advance(3000);
    assert.ok(log.includes('2000 terminate u1 3'), log.join(', '));
  });
});

describe('pod workers memory', () => {
  it('a node without pods holds no table of workers (a fleet node without pods makes none)', async () => {
    const clock = new FakeClock();
    const terminate = async (): Promise<void> => {};
    // First in this suite: the test below leaves 60,000 pods that may be freed only while a
    // later measurement runs, which would take them off its figure.
    const bytes = await retainedBytesPer(20_000, () => createPodWorkers({ clock, terminate }));
    // About 130 bytes; with a closure per method, about 1,670, and the map made up front too, about 1,860.
    assert.ok(bytes < 300, `${bytes.toFixed(1)} bytes per set of workers`);
    const workers = createPodWorkers({ clock, terminate });
    assert.equal(workers.state('uid-0'), undefined);
    workers.updatePod({ metadata: { name: 'p', namespace: 'default', uid: 'uid-0' }, spec: { containers: [] } }, 'create');
    assert.equal(workers.state('uid-0'), 'syncing', 'the table is made at the first pod');
  });

  it('a running ordinary pod\'s worker keeps no full name and one field for its yes/no facts', async () => {
    const clock = new FakeClock();
    const workers = createPodWorkers({ clock, terminate: async () => {} });
    const pods: Pod[] = Array.from({ length: 60_000 }, (_, i) => ({
      metadata: { name: `pod-${i}`, namespace: 'default', uid: `uid-${i}`, annotations: { 'kubernetes.io/config.source': 'api' } },
      spec: { nodeName: 'node', containers: [{ name: 'main', image: 'pause' }] },
    }));
    const bytes = await retainedBytesPer(pods.length, (i) => workers.updatePod(pods[i]!, 'create'));
    assert.equal(workers.state('uid-0'), 'syncing');
    // About 137 bytes, the map's entry included; with the full name and a field per flag, about 234.
    assert.ok(bytes < 185, `${bytes.toFixed(1)} bytes per worker`);
  });
});
