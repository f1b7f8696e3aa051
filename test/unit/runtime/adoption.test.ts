// An agent restart: a real node's containers outlive the kubelet, so the simulated runtime of
// the new process takes a pod over from the status it last published (StatusProvider.adopt)
// instead of starting it again, and the pod never goes back to Pending. All on the FakeClock;
// each "process" is a new provider, its predecessor stopped.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import { CONFIG_HASH_ANNOTATION_KEY, CONFIG_MIRROR_ANNOTATION_KEY, CONFIG_SOURCE_ANNOTATION_KEY } from '../../../src/constants.js';
import { PodManager } from '../../../src/pod/manager.js';
import type { Pod } from '../../../src/pod/types.js';
import { createSimulatedStatusProvider, type SimulatedRuntime } from '../../../src/runtime/simulated-runtime.js';
import { withAdoption } from '../../../src/status/adoption.js';
import { createMirrorStatusWriter, type PodStatusApi } from '../../../src/status/mirror-status-writer.js';
import { sameStatus } from '../../../src/status/status-equality.js';
import type { ContainerEvent } from '../../../src/status/status-provider.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

function staticPod(uid: string, o: { restartPolicy?: string; exit?: string; hostNetwork?: boolean } = {}): Pod {
  return {
    metadata: {
      name: 'web',
      namespace: 'default',
      uid,
      annotations: {
        [CONFIG_SOURCE_ANNOTATION_KEY]: 'file',
        [CONFIG_HASH_ANNOTATION_KEY]: uid,
        ...(o.exit !== undefined ? { 'simulation.kubelet-pods.io/exit': o.exit } : {}),
      },
    },
    spec: {
      nodeName: 'node-a',
      containers: [
        { name: 'main', image: 'nginx:1.27' },
        { name: 'side', image: 'busybox:1.36' },
      ],
      ...(o.restartPolicy !== undefined ? { restartPolicy: o.restartPolicy } : {}),
      ...(o.hostNetwork === true ? { hostNetwork: true } : {}),
    },
  };
}

function mirrorOf(pod: Pod, status: V1PodStatus, hash = pod.metadata!.uid!): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: `mirror-${hash}`, annotations: { [CONFIG_SOURCE_ANNOTATION_KEY]: 'api', [CONFIG_MIRROR_ANNOTATION_KEY]: hash } },
    spec: pod.spec!,
    status,
  };
}

function runtime(clock: FakeClock): SimulatedRuntime {
  return createSimulatedStatusProvider({ clock, startDelayMs: 1000, hostIP: '10.0.0.5' });
}

/** The status as it comes back through a watch: JSON, times as strings. */
const overTheWire = (s: V1PodStatus): V1PodStatus => JSON.parse(JSON.stringify(s)) as V1PodStatus;
const container = (s: V1PodStatus, name: string): V1ContainerStatus => s.containerStatuses!.find((c) => c.name === name)!;
const ready = (s: V1PodStatus) => s.conditions?.find((c) => c.type === 'Ready')?.status;

describe('simulated runtime: taking a pod over after an agent restart', () => {
  it('keeps running containers with their IDs, start times, restart counts and the pod address', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00.400Z'));
    const first = runtime(clock);
    const pod = staticPod('u1');
    first.statusFor(pod, clock.now());
    await clock.advance(1000);
    // One crash and restart of `main`, then a while of steady running.
    assert.ok(first.exitContainer('u1', 'main', 1));
    await clock.advance(0);
    await clock.advance(30_000);
    const before = first.statusFor(pod, clock.now());
    assert.equal(container(before, 'main').restartCount, 1);
    first.stop();

    await clock.advance(5_000); // the agent is down
    const second = runtime(clock);
    const changes: string[] = [];
    const events: ContainerEvent[] = [];
    second.onChange((uid) => changes.push(uid));
    second.onContainerEvent((e) => events.push(e));
    second.adopt(pod, overTheWire(before));
    const after = second.statusFor(pod, clock.now());
    assert.ok(sameStatus(after, before), 'the status read back is the one published');
    assert.equal(after.phase, 'Running');
    assert.equal(ready(after), 'True');
    assert.equal(after.podIP, before.podIP);
    assert.deepEqual(after.startTime, before.startTime);
    for (const name of ['main', 'side']) {
      const [a, b] = [container(after, name), container(before, name)];
      assert.equal(a.containerID, b.containerID);
      assert.deepEqual(a.state?.running?.startedAt, b.state?.running?.startedAt);
      assert.equal(a.restartCount, b.restartCount);
      assert.equal(a.ready, true);
    }
    assert.equal(container(after, 'main').lastState?.terminated?.exitCode, 1);
    // Nothing was started: no container Events, and it stays as it is.
    await clock.advance(60_000);
    assert.deepEqual(events, []);
    assert.ok(sameStatus(second.statusFor(pod, clock.now()), before));
    assert.deepEqual(changes, ['u1'], 'one look for the listeners, no change');
    second.stop();
  });

  it('a pod whose status says its containers terminated (restartPolicy Never) is not run again', async () => {
    const clock = new FakeClock();
    const first = runtime(clock);
    const pod = staticPod('done', { restartPolicy: 'Never', exit: 'main=0@5,side=0@5' });
    first.statusFor(pod, clock.now());
    await clock.advance(1000);
    await clock.advance(5000);
    const before = first.statusFor(pod, clock.now());
    assert.equal(before.phase, 'Succeeded');
    first.stop();

    const second = runtime(clock);
    const events: ContainerEvent[] = [];
    second.onContainerEvent((e) => events.push(e));
    second.adopt(pod, overTheWire(before));
    await clock.advance(60_000);
    const after = second.statusFor(pod, clock.now());
    assert.ok(sameStatus(after, before));
    assert.equal(after.phase, 'Succeeded');
    assert.equal(container(after, 'main').state?.terminated?.exitCode, 0);
    assert.equal(container(after, 'main').restartCount, 0);
    assert.deepEqual(events, [], 'no container started');
    // Stopping it signals nothing and finishes at once.
    const stopped = second.terminate(pod, 30);
    await clock.advance(0);
    await stopped;
    assert.deepEqual(events, []);
    second.stop();
  });

  it('a container that was backing off is restarted at once (the back-off went with the old process)', async () => {
    const clock = new FakeClock();
    const first = runtime(clock);
    const pod = staticPod('loop');
    first.statusFor(pod, clock.now());
    await clock.advance(1000);
    first.exitContainer('loop', 'main', 1);
    await clock.advance(0); // restarted at once
    first.exitContainer('loop', 'main', 1);
    await clock.advance(0); // now backing off 10 s
    const before = first.statusFor(pod, clock.now());
    assert.equal(container(before, 'main').state?.waiting?.reason, 'CrashLoopBackOff');
    first.stop();

    const second = runtime(clock);
    second.adopt(pod, overTheWire(before));
    const after = second.statusFor(pod, clock.now());
    const main = container(after, 'main');
    assert.ok(main.state?.running);
    assert.equal(main.restartCount, container(before, 'main').restartCount + 1);
    assert.equal(main.lastState?.terminated?.exitCode, 1);
    assert.equal(after.phase, 'Running');
    assert.equal(container(after, 'side').containerID, container(before, 'side').containerID);
    second.stop();
  });

  it('a planned exit keeps its time from the container start', async () => {
    const clock = new FakeClock();
    const first = runtime(clock);
    const pod = staticPod('plan', { exit: 'main=3@20' });
    first.statusFor(pod, clock.now());
    await clock.advance(1000 + 15_000);
    const before = first.statusFor(pod, clock.now());
    first.stop();

    const second = runtime(clock);
    second.adopt(pod, overTheWire(before));
    await clock.advance(4_000);
    assert.ok(container(second.statusFor(pod, clock.now()), 'main').state?.running, 'not yet: 19 s after its start');
    await clock.advance(1_000);
    const after = second.statusFor(pod, clock.now());
    assert.equal(container(after, 'main').restartCount, 1, 'exited with 3 at 20 s and restarted');
    assert.equal(container(after, 'main').lastState?.terminated?.exitCode, 3);
    second.stop();
  });

  it('keeps an address from the range that the hash would not give; a host-network pod has the node address', () => {
    const clock = new FakeClock();
    const second = runtime(clock);
    const pod = staticPod('addr');
    const published = runningStatus(clock, '10.88.7.7');
    second.adopt(pod, published);
    assert.equal(second.statusFor(pod, clock.now()).podIP, '10.88.7.7');
    const host = staticPod('host', { hostNetwork: true });
    second.adopt(host, runningStatus(clock, '10.0.0.5'));
    assert.equal(second.statusFor(host, clock.now()).podIP, '10.0.0.5');
    second.stop();
  });

  it('is ignored for a pod the runtime already runs, and a status showing nothing started is not adopted', async () => {
    const clock = new FakeClock();
    const rt = runtime(clock);
    const pod = staticPod('own');
    rt.statusFor(pod, clock.now());
    rt.adopt(pod, runningStatus(clock, '10.88.7.7'));
    assert.equal(rt.statusFor(pod, clock.now()).phase, 'Pending', 'its own run goes on');
    const fresh = staticPod('fresh');
    rt.adopt(fresh, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] });
    assert.equal(rt.statusFor(fresh, clock.now()).phase, 'Pending');
    rt.stop();
  });

  it('a pod waiting for a new sandbox after a restart of its UID stays Running and goes on counting', async () => {
    const clock = new FakeClock();
    const rt = runtime(clock);
    const pod = staticPod('again');
    const waiting = (name: string): V1ContainerStatus => ({
      name,
      image: 'x',
      imageID: '',
      ready: false,
      restartCount: 2,
      state: { waiting: { reason: 'ContainerCreating' } },
      lastState: { terminated: { exitCode: 137, reason: 'Error', startedAt: new Date(0), finishedAt: new Date(1000) } },
    });
    rt.adopt(pod, { phase: 'Running', containerStatuses: [waiting('main'), waiting('side')] });
    assert.equal(rt.statusFor(pod, clock.now()).phase, 'Running', 'never back to Pending');
    await clock.advance(1000);
    assert.equal(container(rt.statusFor(pod, clock.now()), 'main').restartCount, 3);
    rt.stop();
  });
});

/** A Running status as another process of the runtime published it, with pod IP `ip`. */
function runningStatus(clock: FakeClock, ip: string): V1PodStatus {
  const at = new Date(clock.now().getTime() - 60_000);
  const running = (name: string): V1ContainerStatus => ({
    name,
    image: 'x',
    imageID: 'x',
    containerID: `kubelet-pods://x/${name}`,
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt: at } },
  });
  return {
    phase: 'Running',
    startTime: at,
    podIP: ip,
    podIPs: [{ ip }],
    conditions: [{ type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: at }],
    containerStatuses: [running('main'), running('side')],
  };
}

describe('withAdoption: the status the agent hands over', () => {
  it('has the optional methods its inner provider has, adopt and forget always; one small object a node', async () => {
    const bare = { statusFor: (): V1PodStatus => ({ phase: 'Pending' }), adopt: () => {} };
    const provider = withAdoption(new PodManager(), bare);
    assert.equal(typeof provider.adopt, 'function');
    assert.equal(typeof provider.forget, 'function');
    for (const name of ['onChange', 'terminate', 'stop', 'containerLogs', 'onContainerEvent'] as const) assert.equal(provider[name], undefined, name);
    assert.doesNotThrow(() => provider.forget!('uid'));
    const clock = new FakeClock();
    const rt = runtime(clock);
    const full = withAdoption(new PodManager(), rt);
    for (const name of ['onChange', 'terminate', 'stop', 'containerLogs', 'onContainerEvent'] as const) assert.equal(typeof full[name], 'function', name);
    // A fleet makes one per node: about 90 bytes; as closures, about 670.
    const podManager = new PodManager();
    const bytes = await retainedBytesPer(20_000, () => withAdoption(podManager, rt));
    assert.ok(bytes < 200, `${bytes.toFixed(1)} bytes per provider`);
    rt.stop();
  });

  const patches: unknown[] = [];
  const noWrites: PodStatusApi = {
    patchNamespacedPodStatus: (param) => {
      patches.push(param);
      throw new Error('no status write expected');
    },
    readNamespacedPod: () => Promise.reject(new Error('no read expected')),
  };

  it("a static pod is taken over from its mirror's status, only when the mirror has the pod's hash", async () => {
    const clock = new FakeClock();
    const before = runningStatus(clock, '10.88.7.7');
    for (const [hash, adopted] of [
      ['same', true],
      ['older-manifest', false],
    ] as const) {
      const pod = staticPod('same');
      const podManager = new PodManager();
      podManager.setPods([pod, mirrorOf(pod, before, hash)]);
      const rt = runtime(clock);
      const status = withAdoption(podManager, rt).statusFor(pod, clock.now());
      assert.equal(status.phase, adopted ? 'Running' : 'Pending', hash);
      assert.equal(container(status, 'main').containerID, adopted ? 'kubelet-pods://x/main' : undefined);
      rt.stop();
    }
  });

  it('an ordinary pod is taken over from its own status, also when it is stopped before it was asked about', async () => {
    const clock = new FakeClock();
    const published = runningStatus(clock, '10.88.7.8');
    const pod: Pod = { ...staticPod('api-pod'), metadata: { name: 'api', namespace: 'default', uid: 'api-pod' }, status: published };
    const rt = runtime(clock);
    const provider = withAdoption(new PodManager(), rt);
    const stopped = provider.terminate!(pod, 1);
    await clock.advance(2000);
    await stopped;
    const final = provider.statusFor(pod, clock.now());
    // Stopped from Running: the kubelet's terminal phase, the containers killed, never Pending.
    assert.equal(final.phase, 'Succeeded');
    assert.equal(container(final, 'main').state?.terminated?.containerID, 'kubelet-pods://x/main');
    rt.stop();
  });

  it('a restarted agent writes nothing: the writer waits for the mirror before it first asks', async () => {
    const clock = new FakeClock();
    // The first process's published status.
    const first = runtime(clock);
    const pod = staticPod('s1');
    first.statusFor(pod, clock.now());
    await clock.advance(1000);
    await clock.advance(20_000);
    const before = overTheWire(first.statusFor(pod, clock.now()));
    first.stop();

    // The new process: the manifest is read before the API source has listed the mirror.
    const podManager = new PodManager();
    podManager.setPods([pod]);
    const rt = runtime(clock);
    let listed = false;
    const results: string[] = [];
    const writer = createMirrorStatusWriter({
      podManager,
      statusProvider: withAdoption(podManager, rt),
      api: noWrites,
      clock,
      previousStatusKnown: () => listed,
      onWrite: (r) => results.push(r),
    });
    writer.start();
    await clock.advance(0);
    await writer.syncBatch(true);
    assert.equal(writer.getPodStatus('s1'), undefined, 'not asked about before the list');
    podManager.addPod(mirrorOf(pod, before));
    listed = true;
    writer.requestSync([podManager.getMirrorPodByPod(pod)!]);
    await clock.advance(0);
    await settle();
    await writer.syncBatch(true);
    assert.equal(writer.getPodStatus('s1')?.phase, 'Running');
    await clock.advance(30_000);
    await writer.syncBatch(true);
    assert.deepEqual(patches, []);
    assert.deepEqual(results, ['unchanged'], 'found already on the mirror');
    await writer.stop();
    rt.stop();
  });
});
