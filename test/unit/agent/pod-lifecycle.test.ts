// The kubelet's sync-loop handler (src/agent/pod-lifecycle.ts) on its own: real pod workers and
// pod manager, the FakeClock, the FakeMirrorClient for the final delete, and small recording
// fakes for admission, the runtime, mirror sync, the status writer and the metrics.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PodStatus } from '@kubernetes/client-node';
import { PodOperation } from '../../../src/constants.js';
import { createPodLifecycle, publishedPods, type PodLifecycle } from '../../../src/agent/pod-lifecycle.js';
import { createPodWorkers, type PodWorkers } from '../../../src/agent/pod-workers.js';
import { FakeMirrorClient } from '../../../src/mirror/fake-mirror-client.js';
import { getPodFullName } from '../../../src/pod/classify.js';
import { PodManager } from '../../../src/pod/manager.js';
import type { Pod } from '../../../src/pod/types.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';
import { newPod, ns } from '../pod/pod-fixtures.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

interface Options {
  /** false: `--simulated-lifecycle=instant`, no pod workers. */
  workers?: boolean;
  /** false: standalone, no mirror sync, status writer or API deletes. */
  connected?: boolean;
  /** Whether the next final DELETE goes through (asked once per DELETE; yes when unset). */
  deleteGoesThrough?: () => boolean;
  /** Holds each final DELETE's answer until the test lets it go (`answerDelete`). */
  holdDeletes?: boolean;
}

function setup(o: Options = {}) {
  const clock = new FakeClock();
  const podManager = new PodManager();
  const rejected = new Set<string>();
  const admitted: string[] = [];
  const forgotten: string[] = [];
  const admission = {
    admitNew: (pods: readonly Pod[]) => void admitted.push(...pods.map((p) => p.metadata!.uid!)),
    forget: (pods: readonly Pod[]) => void forgotten.push(...pods.map((p) => p.metadata!.uid!)),
    rejection: (uid: string) => (rejected.has(uid) ? { reason: 'OutOfpods', message: 'no room', at: new Date(0) } : undefined),
  };
  let ready = false;
  const sourcesReady = { allReady: () => ready };
  // The runtime: a phase per UID (Running unless told), terminations that end when released.
  const phases = new Map<string, string>();
  const stopping = new Map<string, () => void>();
  const runtimeForgotten: string[] = [];
  const runtime = {
    statusFor: (pod: Pod): V1PodStatus => ({ phase: phases.get(pod.metadata!.uid!) ?? 'Running' }),
    forget: (uid: string) => void runtimeForgotten.push(uid),
    terminate: (pod: Pod) => new Promise<void>((resolve) => stopping.set(pod.metadata!.uid!, resolve)),
  };
  const enqueued: string[] = [];
  let housekeepingDue = false;
  let mirrorHousekeepings = 0;
  const mirrorSync = {
    enqueue: (name: string) => void enqueued.push(name),
    housekeeping: () => (mirrorHousekeepings++, 0),
    housekeepingDue: () => housekeepingDue,
  };
  const syncRequests: Array<readonly Pod[] | undefined> = [];
  const invalidated: string[] = [];
  let syncBatch = async (): Promise<void> => {};
  const statusWriter = {
    requestSync: (pods?: readonly Pod[]) => void syncRequests.push(pods),
    invalidate: (uid: string) => void invalidated.push(uid),
    syncBatch: () => syncBatch(),
  };
  const mirrorClient = new FakeMirrorClient();
  const heldDeletes: Array<() => void> = [];
  const gauges: Record<string, unknown> = {};
  let gaugeWrites = 0;
  const gauge = (name: string) => (value: unknown) => {
    gaugeWrites++;
    gauges[name] = value instanceof Map ? Object.fromEntries(value) : value;
  };
  const restarts: boolean[] = [];
  const metrics = {
    setWorkingPods: gauge('working'),
    setDesiredPods: gauge('desired'),
    setActivePods: gauge('active'),
    setMirrorPods: gauge('mirrors'),
    recordRestartedPod: (isStatic: boolean) => void restarts.push(isStatic),
  };
  const connected = o.connected ?? true;
  let workers: PodWorkers | undefined;
  const lifecycle: PodLifecycle = createPodLifecycle({
    podManager,
    admission,
    sourcesReady,
    workers: o.workers === false ? undefined : () => workers!,
    runtime,
    mirrorSync: connected ? mirrorSync : undefined,
    statusWriter: connected ? statusWriter : undefined,
    deletePod: connected
      ? async (name, uid) => {
          const deleted = await mirrorClient.deleteMirrorPod(name, uid);
          if (o.holdDeletes) await new Promise<void>((answer) => heldDeletes.push(answer));
          return deleted && (o.deleteGoesThrough?.() ?? true);
        }
      : undefined,
    metrics,
    clock,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  if (o.workers !== false) workers = createPodWorkers({ terminate: runtime.terminate, ...lifecycle.workerHooks, clock, random: () => 0 });
  /** What the dispatcher does: the pod manager first, then the lifecycle. */
  const apply = (op: PodOperation, ...pods: Pod[]): void => {
    for (const pod of pods) {
      if (op === PodOperation.REMOVE) podManager.removePod(pod);
      else podManager.updatePod(pod);
    }
    lifecycle.onPodsChanged(pods, op);
  };
  /** Lets a termination end, then the workers' steps after it. */
  const stop = async (uid: string): Promise<void> => {
    const release = stopping.get(uid);
    assert.ok(release, `${uid} is being terminated`);
    release();
    await settle();
  };
  return {
    clock, podManager, lifecycle, apply, stop, rejected, admitted, forgotten, phases, runtimeForgotten,
    enqueued, syncRequests, invalidated, mirrorClient, gauges, restarts,
    workers: () => workers!,
    setReady: (v: boolean) => void (ready = v),
    setSyncBatch: (f: () => Promise<void>) => void (syncBatch = f),
    setHousekeepingDue: (v: boolean) => void (housekeepingDue = v),
    gaugeWrites: () => gaugeWrites,
    /** Answers the oldest final DELETE held, then lets what follows run. */
    answerDelete: async (): Promise<void> => {
      const answer = heldDeletes.shift();
      assert.ok(answer, 'a DELETE is held');
      answer();
      await settle();
    },
    mirrorHousekeepings: () => mirrorHousekeepings,
    /** Time passes, then one housekeeping pass and what it started. */
    housekeepAfter: async (ms: number): Promise<void> => {
      await clock.advance(ms);
      lifecycle.housekeeping();
      await settle();
    },
  };
}

const staticPod = (uid: string, name = 'web'): Pod => newPod(uid, name, ns, 'static');
const apiPod = (uid: string, name = 'api', o: { phase?: string; deleting?: boolean } = {}): Pod => {
  const pod = newPod(uid, name, ns, 'extra', o.phase !== undefined ? { phase: o.phase } : {});
  if (o.deleting) pod.metadata!.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
  return pod;
};

describe('pod additions', () => {
  it('a static pod is admitted, run, its mirror enqueued and its status requested', () => {
    const t = setup();
    const pod = staticPod('s1');
    t.apply(PodOperation.ADD, pod);
    assert.deepEqual(t.admitted, ['s1']);
    assert.equal(t.workers().state('s1'), 'syncing');
    assert.deepEqual(t.enqueued, [getPodFullName(pod)], 'once, when it started: its first sync');
    assert.deepEqual(t.syncRequests, [[pod]]);
    assert.deepEqual(t.invalidated, ['s1'], 'its status is sent again once it started');
  });

  it('a rejected static pod is not run (its Failed status is published as is); a mirror pod never runs', () => {
    const t = setup();
    t.rejected.add('s1');
    const mirror = newPod('m1', 'other', ns, 'mirror');
    t.apply(PodOperation.ADD, staticPod('s1'), mirror);
    assert.equal(t.workers().state('s1'), undefined);
    assert.equal(t.workers().state('m1'), undefined);
    assert.deepEqual(t.enqueued, [getPodFullName(staticPod('s1')), getPodFullName(mirror)], 'both still get mirror work');
  });

  it('an ordinary pod is run; one already Succeeded or Failed is not', () => {
    const t = setup();
    t.apply(PodOperation.ADD, apiPod('a1'), apiPod('a2', 'done', { phase: 'Succeeded' }), apiPod('a3', 'failed', { phase: 'Failed' }));
    assert.equal(t.workers().state('a1'), 'syncing');
    assert.equal(t.workers().state('a2'), undefined);
    assert.equal(t.workers().state('a3'), undefined);
  });

  it('a second static pod of the same full name waits for the first', () => {
    const t = setup();
    t.apply(PodOperation.ADD, staticPod('s1'), staticPod('s2'));
    assert.equal(t.workers().state('s1'), 'syncing');
    assert.equal(t.workers().state('s2'), 'waiting');
  });

  it('without pod workers (instant), pods are still admitted, their mirrors enqueued and statuses requested', () => {
    const t = setup({ workers: false });
    const pod = staticPod('s1');
    t.apply(PodOperation.ADD, pod);
    assert.deepEqual(t.admitted, ['s1']);
    assert.deepEqual(t.enqueued, [getPodFullName(pod)]);
    assert.equal(t.syncRequests.length, 1);
  });
});

describe('pod updates', () => {
  it('an update reaches the worker; a status-only change (RECONCILE) needs no mirror work but a status request', () => {
    const t = setup();
    t.apply(PodOperation.ADD, staticPod('s1'));
    const changed = staticPod('s1');
    changed.metadata!.labels = { v: '2' };
    t.enqueued.length = 0;
    t.apply(PodOperation.UPDATE, changed);
    assert.equal(t.workers().podOf('s1'), changed);
    assert.equal(t.enqueued.length, 1);
    t.apply(PodOperation.RECONCILE, staticPod('s1'));
    assert.equal(t.enqueued.length, 1, 'RECONCILE enqueued nothing');
    assert.equal(t.syncRequests.length, 3);
  });

  it('an ordinary pod with a deletionTimestamp is killed', () => {
    const t = setup();
    t.apply(PodOperation.ADD, apiPod('a1'));
    t.apply(PodOperation.UPDATE, apiPod('a1', 'api', { deleting: true }));
    assert.equal(t.workers().state('a1'), 'terminating');
  });
});

describe('pod removals', () => {
  for (const kind of ['static', 'ordinary'] as const) {
    it(`a removed ${kind} pod is killed once sources are ready, not before (housekeeping does it then)`, () => {
      const t = setup();
      const pod = kind === 'static' ? staticPod('p1') : apiPod('p1');
      t.apply(PodOperation.ADD, pod);
      t.apply(PodOperation.REMOVE, pod);
      assert.deepEqual(t.forgotten, ['p1'], 'admission forgets it at once');
      assert.equal(t.workers().state('p1'), 'syncing', 'not killed while sources are not ready');

      const again = setup();
      again.setReady(true);
      again.apply(PodOperation.ADD, pod);
      again.apply(PodOperation.REMOVE, pod);
      assert.equal(again.workers().state('p1'), 'terminating');
    });
  }
});

describe('the final delete of a deleted ordinary pod', () => {
  const deletesOf = (t: ReturnType<typeof setup>): number => t.mirrorClient.calls.filter((c) => c.op === 'delete').length;

  it('once it terminated and the API server holds its terminal status: DELETE with its UID', async () => {
    const t = setup();
    const pod = apiPod('a1');
    t.apply(PodOperation.ADD, pod);
    t.apply(PodOperation.UPDATE, apiPod('a1', 'api', { deleting: true }));
    assert.deepEqual(t.mirrorClient.calls, [], 'nothing deleted while it stops');
    // The final status's echo comes back through the watch before the worker finishes.
    t.apply(PodOperation.RECONCILE, apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' }));
    assert.deepEqual(t.mirrorClient.calls, [], 'nor while it still stops, terminal status or not');
    await t.stop('a1');
    assert.deepEqual(t.mirrorClient.calls, [{ op: 'delete', podFullName: getPodFullName(pod), uid: 'a1' }]);
    assert.equal(t.workers().state('a1'), 'finished');
    assert.equal(t.clock.pendingTimers, 0, 'the final status was written in time: its bound is cleared');
  });

  it('waits while the API server still shows it running (its final status not written): sent when the status comes back, or found by housekeeping', async () => {
    const t = setup();
    t.apply(PodOperation.ADD, apiPod('a1'));
    t.apply(PodOperation.UPDATE, apiPod('a1', 'api', { deleting: true, phase: 'Running' }));
    await t.stop('a1');
    assert.equal(t.workers().state('a1'), 'finished');
    assert.equal(deletesOf(t), 0, 'not while the API shows Running');
    await t.housekeepAfter(10_000);
    assert.equal(deletesOf(t), 0, 'nor at the next look');
    t.apply(PodOperation.RECONCILE, apiPod('a1', 'api', { deleting: true, phase: 'Failed' }));
    assert.equal(deletesOf(t), 1, 'at once when the terminal status comes back');

    // The status that came back without an update the lifecycle saw: housekeeping finds it.
    const quiet = setup();
    quiet.apply(PodOperation.ADD, apiPod('b1'));
    quiet.apply(PodOperation.UPDATE, apiPod('b1', 'api', { deleting: true }));
    await quiet.stop('b1');
    quiet.podManager.updatePod(apiPod('b1', 'api', { deleting: true, phase: 'Succeeded' }));
    await quiet.housekeepAfter(9_000);
    assert.equal(deletesOf(quiet), 0, 'not before 10 s');
    await quiet.housekeepAfter(1_000);
    assert.equal(deletesOf(quiet), 1);
  });

  it('a pod that completed and was deleted afterwards is deleted for good once its terminal status is there', async () => {
    const t = setup();
    t.apply(PodOperation.ADD, apiPod('a1'));
    t.phases.set('a1', 'Succeeded');
    t.lifecycle.checkTerminal('a1');
    await t.stop('a1');
    assert.equal(t.workers().state('a1'), 'finished');
    assert.equal(deletesOf(t), 0, 'a completed pod that was not deleted stays');
    t.apply(PodOperation.UPDATE, apiPod('a1', 'api', { deleting: true, phase: 'Running' }));
    assert.equal(deletesOf(t), 0, 'deleted while the API still shows it Running (its status write failed)');
    t.apply(PodOperation.RECONCILE, apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' }));
    assert.equal(deletesOf(t), 1);
    assert.equal(t.workers().state('a1'), 'finished', 'nothing is stopped again');
  });

  it('a pod already terminal and deleted when first seen (the agent stopped before its final DELETE) is deleted at once', () => {
    const t = setup();
    const pod = apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' });
    t.apply(PodOperation.ADD, pod, apiPod('a2', 'kept', { phase: 'Failed' }));
    assert.deepEqual(t.mirrorClient.calls, [{ op: 'delete', podFullName: getPodFullName(pod), uid: 'a1' }], 'not the one that was not deleted');
    assert.equal(t.workers().state('a1'), undefined, 'nothing runs for it');
  });

  it('one final DELETE in flight at a time; one whose pod went while it waited is not sent; stop drops those waiting', async () => {
    const t = setup({ holdDeletes: true });
    const uids = ['a1', 'a2', 'a3', 'a4'];
    for (const uid of uids) {
      t.apply(PodOperation.ADD, apiPod(uid, uid));
      t.apply(PodOperation.UPDATE, apiPod(uid, uid, { deleting: true, phase: 'Succeeded' }));
    }
    for (const uid of uids) await t.stop(uid);
    const sent = (): string[] => t.mirrorClient.calls.filter((c) => c.op === 'delete').map((c) => c.uid!);
    assert.deepEqual(sent(), ['a1'], 'the others wait for its answer');
    t.podManager.removePod(apiPod('a2', 'a2'));
    await t.answerDelete();
    assert.deepEqual(sent(), ['a1', 'a3'], 'a2 left the pod manager while it waited');
    t.lifecycle.stop();
    await t.answerDelete();
    assert.deepEqual(sent(), ['a1', 'a3'], 'a4 is dropped at stop; the one in flight was answered');
  });

  it('a lifecycle stopped before its first final DELETE sends none afterwards', () => {
    const t = setup();
    t.lifecycle.stop();
    t.apply(PodOperation.ADD, apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' }));
    assert.equal(deletesOf(t), 0);
  });

  it('a lifecycle that has deleted nothing holds no queue of final DELETEs (a fleet node without pods makes none)', async () => {
    const podManager = new PodManager();
    const noop = (): void => {};
    const options = {
      podManager,
      admission: { admitNew: noop, forget: noop, rejection: () => undefined },
      sourcesReady: { allReady: () => true },
      workers: undefined,
      runtime: { statusFor: (): V1PodStatus => ({ phase: 'Running' }) },
      mirrorSync: undefined,
      statusWriter: undefined,
      deletePod: async () => true,
      metrics: { setWorkingPods: noop, setDesiredPods: noop, setActivePods: noop, setMirrorPods: noop, recordRestartedPod: noop },
      clock: new FakeClock(),
      logger: { debug: noop, info: noop, warn: noop, error: noop },
    };
    // The agent keeps the hooks too (its pod workers' options hold them).
    const bytes = await retainedBytesPer(20_000, () => {
      const lifecycle = createPodLifecycle(options);
      return [lifecycle, lifecycle.workerHooks];
    });
    // About 655 bytes; with a closure per function, about 1,850 (1,790 without the hooks), and the queue and the retries made up front too, about 3,420.
    assert.ok(bytes < 1_000, `${bytes.toFixed(1)} bytes per lifecycle`);
  });

  it('a DELETE that did not go through is sent again every 10 s until one does, and not for a pod gone meanwhile', async () => {
    const answers = [false, false, true];
    const t = setup({ deleteGoesThrough: () => answers.shift()! });
    const pod = apiPod('a1');
    t.apply(PodOperation.ADD, pod);
    t.apply(PodOperation.UPDATE, apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' }));
    await t.stop('a1');
    const deletes = (): number => deletesOf(t);
    assert.equal(deletes(), 1, 'the first DELETE (refused)');
    await t.housekeepAfter(2_000);
    assert.equal(deletes(), 1, 'not again before 10 s');
    await t.housekeepAfter(8_000);
    assert.equal(deletes(), 2, 'again at 10 s (refused too)');
    await t.housekeepAfter(10_000);
    assert.equal(deletes(), 3, 'again at 20 s: this one goes through');
    await t.housekeepAfter(10_000);
    assert.equal(deletes(), 3, 'nothing after one went through');
    assert.deepEqual(t.mirrorClient.calls.at(-1), { op: 'delete', podFullName: getPodFullName(pod), uid: 'a1' });

    // Refused, then the pod leaves the pod manager (the watch saw it go): no retry.
    const gone = setup({ deleteGoesThrough: () => false });
    gone.apply(PodOperation.ADD, apiPod('b1'));
    gone.apply(PodOperation.UPDATE, apiPod('b1', 'api', { deleting: true, phase: 'Succeeded' }));
    await gone.stop('b1');
    gone.podManager.removePod(apiPod('b1', 'api', { deleting: true }));
    await gone.housekeepAfter(10_000);
    assert.equal(deletesOf(gone), 1);
  });

  it('once a DELETE went through, a later update of the pod (the server\'s grace-0 update, a late echo) sends none until the watch shows it gone', async () => {
    const t = setup();
    t.apply(PodOperation.ADD, apiPod('a1'));
    t.apply(PodOperation.UPDATE, apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' }));
    await t.stop('a1');
    assert.equal(deletesOf(t), 1);
    t.apply(PodOperation.UPDATE, apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' }));
    t.apply(PodOperation.RECONCILE, apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' }));
    await settle();
    await t.housekeepAfter(10_000);
    assert.equal(deletesOf(t), 1, 'no second DELETE');
    t.apply(PodOperation.REMOVE, apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' }));
    await t.housekeepAfter(10_000);
    assert.equal(deletesOf(t), 1);
    // The pod comes back under its UID (an agent's relist from an older copy): its DELETE is due again.
    t.apply(PodOperation.ADD, apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' }));
    await settle();
    assert.equal(deletesOf(t), 2, 'the bookkeeping went with the pod');
  });

  it('not for a static pod, nor a pod that was not deleted, nor when standalone', async () => {
    const t = setup();
    t.setReady(true);
    t.apply(PodOperation.ADD, staticPod('s1'), apiPod('a1'));
    t.apply(PodOperation.REMOVE, staticPod('s1'), apiPod('a1'));
    await t.stop('s1');
    await t.stop('a1');
    assert.equal(t.workers().state('s1'), 'finished');
    assert.deepEqual(t.mirrorClient.calls, [], 'the API pod is gone from the pod manager, the static one is not the API\'s');

    // Terminal (killed by the runtime's phase) but still in the pod manager: deleted only with a
    // deletionTimestamp, and a static pod never (its mirror is mirror sync's business).
    const terminal = setup();
    const deletedStatic = staticPod('s9', 'marked');
    deletedStatic.metadata!.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
    terminal.apply(PodOperation.ADD, apiPod('a9'), deletedStatic);
    terminal.phases.set('a9', 'Succeeded');
    terminal.phases.set('s9', 'Succeeded');
    terminal.lifecycle.checkTerminal('a9');
    terminal.lifecycle.checkTerminal('s9');
    await terminal.stop('a9');
    await terminal.stop('s9');
    assert.equal(terminal.workers().state('a9'), 'finished');
    assert.equal(terminal.workers().state('s9'), 'finished');
    assert.deepEqual(terminal.mirrorClient.calls, []);

    const standalone = setup({ connected: false });
    standalone.apply(PodOperation.ADD, apiPod('a1'));
    standalone.apply(PodOperation.UPDATE, apiPod('a1', 'api', { deleting: true, phase: 'Succeeded' }));
    await standalone.stop('a1');
    assert.equal(standalone.workers().state('a1'), 'finished');
    assert.deepEqual(standalone.mirrorClient.calls, []);
  });
});

describe('the end of a termination', () => {
  it('the final status goes out before the pod counts as terminated, for at most 10 s', async () => {
    const t = setup();
    t.setReady(true);
    let batches = 0;
    let finishBatch: (() => void) | undefined;
    t.setSyncBatch(() => (batches++, new Promise<void>((resolve) => (finishBatch = resolve))));
    t.apply(PodOperation.ADD, staticPod('s1'));
    t.apply(PodOperation.REMOVE, staticPod('s1'));
    t.invalidated.length = 0;
    await t.stop('s1');
    assert.deepEqual(t.invalidated, ['s1'], 'its cached status is sent again');
    assert.equal(batches, 1);
    assert.equal(t.workers().state('s1'), 'terminating', 'while the write is under way');
    await t.clock.advance(9_999);
    assert.equal(t.workers().state('s1'), 'terminating');
    await t.clock.advance(1);
    assert.equal(t.workers().state('s1'), 'finished', 'an API server that does not answer holds it 10 s at most');
    finishBatch?.();
    assert.equal(t.clock.pendingTimers, 0, 'the bound is cleared');
  });
});

describe('terminal pods', () => {
  for (const phase of ['Succeeded', 'Failed']) {
    it(`a running pod the runtime reports ${phase} is killed`, () => {
      const t = setup();
      t.apply(PodOperation.ADD, staticPod('s1'), staticPod('s2', 'other'));
      t.phases.set('s1', phase);
      t.lifecycle.checkTerminal('s1');
      t.lifecycle.checkTerminal('s2');
      assert.equal(t.workers().state('s1'), 'terminating');
      assert.equal(t.workers().state('s2'), 'syncing', 'a Running pod is left alone');
    });
  }

  it('a pod that is not running (waiting, unknown) is not touched, and without workers nothing is', () => {
    const t = setup();
    t.apply(PodOperation.ADD, staticPod('s1'), staticPod('s2'));
    t.phases.set('s2', 'Failed');
    t.lifecycle.checkTerminal('s2');
    t.lifecycle.checkTerminal('nobody');
    assert.equal(t.workers().state('s2'), 'waiting');
    const instant = setup({ workers: false });
    instant.phases.set('s1', 'Failed');
    assert.doesNotThrow(() => instant.lifecycle.checkTerminal('s1'));
  });
});

describe('housekeeping', () => {
  it('kills the pods removed while sources were not ready, once they are', () => {
    const t = setup();
    const pod = staticPod('s1');
    t.apply(PodOperation.ADD, pod, staticPod('s2', 'kept'));
    t.apply(PodOperation.REMOVE, pod);
    t.lifecycle.housekeeping();
    assert.equal(t.workers().state('s1'), 'syncing', 'not while sources are not ready');
    t.setReady(true);
    t.lifecycle.housekeeping();
    assert.equal(t.workers().state('s1'), 'terminating');
    assert.equal(t.workers().state('s2'), 'syncing', 'the pod still desired keeps running');
  });

  it('sets the gauges: desired, active, working and mirror pods', () => {
    const t = setup();
    t.setReady(true);
    t.rejected.add('s3');
    t.apply(PodOperation.ADD, staticPod('s1'), staticPod('s2', 'second'), staticPod('s3', 'rejected'), apiPod('a1'), newPod('m1', 'web', ns, 'mirror'));
    t.lifecycle.housekeeping();
    assert.deepEqual(t.gauges['desired'], { static: 3, nonStatic: 1 });
    assert.deepEqual(t.gauges['active'], { static: 2, nonStatic: 1 });
    assert.deepEqual(t.gauges['mirrors'], 1);
    assert.deepEqual(t.gauges['working'], { 'sync|desired|true': 2, 'sync|desired|': 1 });
    assert.equal(t.mirrorHousekeepings(), 1);
  });

  it('is skipped while the pods, the workers and the sources\' readiness are unchanged, unless a mirror deletion is due', async () => {
    const t = setup();
    t.setReady(true);
    t.apply(PodOperation.ADD, staticPod('s1'));
    t.lifecycle.housekeeping();
    const writes = t.gaugeWrites();
    t.lifecycle.housekeeping();
    t.lifecycle.housekeeping();
    assert.equal(t.gaugeWrites(), writes, 'two passes over the same inputs did nothing');
    assert.equal(t.mirrorHousekeepings(), 1);

    t.setHousekeepingDue(true);
    t.lifecycle.housekeeping();
    assert.equal(t.mirrorHousekeepings(), 2, 'a mirror deletion awaiting the watch brings a pass');
    t.setHousekeepingDue(false);

    t.apply(PodOperation.ADD, apiPod('a1'));
    t.lifecycle.housekeeping();
    assert.deepEqual(t.gauges['desired'], { static: 1, nonStatic: 1 }, 'a pod manager change brings a pass');

    const before = t.gaugeWrites();
    t.workers().updatePod(staticPod('s1'), 'kill');
    t.lifecycle.housekeeping();
    assert.ok(t.gaugeWrites() > before, 'a worker state change brings a pass');

    const afterKill = t.gaugeWrites();
    t.setReady(false);
    t.lifecycle.housekeeping();
    assert.ok(t.gaugeWrites() > afterKill, 'a readiness change brings a pass');
  });

  it('a pod whose UID came back while it stopped is started again, and the runtime forgets its old run', async () => {
    const t = setup();
    t.setReady(true);
    const pod = staticPod('s1');
    t.apply(PodOperation.ADD, pod);
    t.apply(PodOperation.REMOVE, pod);
    t.apply(PodOperation.ADD, pod);
    await t.stop('s1');
    assert.equal(t.workers().state('s1'), 'finished');
    t.lifecycle.housekeeping();
    assert.equal(t.workers().state('s1'), 'syncing');
    assert.deepEqual(t.restarts, [true]);
    assert.deepEqual(t.runtimeForgotten, ['s1']);
  });
});

describe('published pods', () => {
  it('the pod manager\'s pods but those waiting or finished, rejected ones, and removed pods still stopping', () => {
    const t = setup();
    t.setReady(true);
    t.rejected.add('r1');
    t.rejected.add('r2');
    t.apply(PodOperation.ADD, staticPod('s1'), staticPod('s2'), staticPod('r1', 'rejected'), apiPod('r2', 'rejected-api'), staticPod('gone', 'gone'), apiPod('done', 'done', { phase: 'Succeeded' }));
    t.apply(PodOperation.REMOVE, staticPod('gone', 'gone'));
    const published = publishedPods(t.podManager, t.workers, (uid) => t.rejected.has(uid));
    assert.deepEqual(published.list().map((p) => p.metadata!.uid).sort(), ['gone', 'r1', 'r2', 's1']);
    assert.equal(published.byUID('s2'), undefined, 'waiting');
    assert.equal(published.byUID('gone')?.metadata?.uid, 'gone', 'stopping, from the workers');
    assert.equal(published.byUID('done'), undefined, 'an ordinary pod terminal on arrival');
  });

  it('an ordinary pod that finished while the pod manager holds it, not a static one, nor one gone', async () => {
    const t = setup();
    t.setReady(true);
    t.apply(PodOperation.ADD, apiPod('a1'), apiPod('a2', 'leaving'), staticPod('s1'));
    for (const uid of ['a1', 'a2', 's1']) {
      t.phases.set(uid, 'Succeeded');
      t.lifecycle.checkTerminal(uid);
      await t.stop(uid);
      assert.equal(t.workers().state(uid), 'finished');
    }
    t.podManager.removePod(apiPod('a2', 'leaving'));
    const published = publishedPods(t.podManager, t.workers, () => false);
    assert.deepEqual(published.list().map((p) => p.metadata!.uid), ['a1']);
    assert.equal(published.byUID('a1')?.metadata?.uid, 'a1', 'its terminal status is kept until written');
    assert.equal(published.byUID('a2'), undefined, 'gone from the pod manager');
    assert.equal(published.byUID('s1'), undefined, 'a static pod that finished');
  });
});
