// A pod UID that runs again (a static pod with a fixed metadata.uid put back, a manifest
// written again): the simulated runtime keeps the exited containers of a forgotten pod until
// the container GC pass (every minute) after the node stops knowing the UID, as the kubelet's
// runtime does (kuberuntime startContainer: restartCount = newest + 1; kuberuntime_gc.go with
// the pod workers' ShouldPodContentBeRemoved). All on the FakeClock.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Container, V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import type { Pod } from '../../../src/pod/types.js';
import { createExitedContainers } from '../../../src/runtime/exited-containers.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

function pod(uid: string, o: { restartPolicy?: string; initContainers?: V1Container[] } = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid, annotations: { 'kubernetes.io/config.source': 'file' } },
    spec: {
      nodeName: 'n',
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
      ...(o.initContainers ? { initContainers: o.initContainers } : {}),
      ...(o.restartPolicy ? { restartPolicy: o.restartPolicy } : {}),
    },
  };
}

const main = (s: V1PodStatus): V1ContainerStatus => s.containerStatuses![0]!;

function setup(known: Set<string> = new Set()) {
  const clock = new FakeClock();
  const runtime = createSimulatedStatusProvider({ clock, startDelayMs: 1000, hostIP: '10.0.0.5', shouldPodContentBeRemoved: (uid) => !known.has(uid) });
  return { clock, runtime, status: (p: Pod) => runtime.statusFor(p, clock.now()) };
}

/** Runs the pod, stops it (grace 30 s, at once) and lets it go, as the pod workers do. */
async function runStopForget(clock: FakeClock, runtime: ReturnType<typeof createSimulatedStatusProvider>, p: Pod): Promise<void> {
  runtime.statusFor(p, clock.now());
  await clock.advance(1000);
  const stopped = runtime.terminate(p, 30);
  await clock.advance(0);
  await stopped;
  runtime.forget(p.metadata!.uid!);
}

describe('simulated runtime: a pod UID that runs again', () => {
  it('continues each container at the newest attempt + 1, the stopped instance as lastState', async () => {
    const { clock, runtime, status } = setup();
    const p = pod('fixed');
    await runStopForget(clock, runtime, p);
    // Back at once: the new sandbox starts, the containers wait with the old count.
    let s = status(p);
    assert.equal(main(s).state?.waiting?.reason, 'ContainerCreating');
    assert.equal(main(s).restartCount, 0);
    assert.equal(main(s).lastState?.terminated?.reason, 'Completed');
    // The kubelet's getPhase: waiting after a termination, restartPolicy Always: restarting.
    assert.equal(s.phase, 'Running');
    await clock.advance(1000);
    s = status(p);
    assert.ok(main(s).state?.running);
    assert.equal(main(s).restartCount, 1);
    assert.equal(main(s).lastState?.terminated?.exitCode, 0);
    assert.equal(s.phase, 'Running');
    // And again: 2.
    await runStopForget(clock, runtime, p);
    status(p);
    await clock.advance(1000);
    assert.equal(main(status(p)).restartCount, 2);
  });

  it('init containers and sidecars continue too; a completed init container shows no lastState', async () => {
    const { clock, runtime, status } = setup();
    const p = pod('inits', {
      initContainers: [
        { name: 'prep', image: 'busybox:1.36' },
        { name: 'side', image: 'busybox:1.36', restartPolicy: 'Always' },
      ],
    });
    await runStopForget(clock, runtime, p);
    status(p);
    await clock.advance(1000);
    const [prep, side] = status(p).initContainerStatuses!;
    assert.equal(prep!.restartCount, 1);
    assert.equal(prep!.state?.terminated?.reason, 'Completed');
    assert.equal(prep!.lastState, undefined);
    assert.equal(side!.restartCount, 1);
    assert.ok(side!.state?.running);
    assert.equal(side!.lastState?.terminated?.exitCode, 0);
  });

  it('the container GC removes a forgotten UID at its next pass (every minute since start): counts start again at 0', async () => {
    const { clock, runtime, status } = setup();
    const p = pod('gone');
    await clock.advance(30_000);
    await runStopForget(clock, runtime, p); // forgotten at 31 s
    await clock.advance(28_999); // 59.999 s: no pass yet
    status(p);
    await clock.advance(1000);
    assert.equal(main(status(p)).restartCount, 1);
    // Forgotten again at 61 s: the pass at 120 s removes it.
    await runStopForget(clock, runtime, p);
    await clock.advance(59_000);
    status(p);
    await clock.advance(1000);
    const s = status(p);
    assert.equal(main(s).restartCount, 0);
    assert.equal(main(s).lastState, undefined);
  });

  it('the GC keeps the containers of a UID the node still knows (the pod workers say so)', async () => {
    const known = new Set(['kept']);
    const { clock, runtime, status } = setup(known);
    const p = pod('kept');
    await runStopForget(clock, runtime, p);
    await clock.advance(180_000); // three passes
    status(p);
    await clock.advance(1000);
    assert.equal(main(status(p)).restartCount, 1);
  });

  it('exited containers alone: kept per UID, taken once, collected only when removable', async () => {
    const clock = new FakeClock();
    const removable = new Set<string>();
    const store = createExitedContainers({ clock, periodMs: 60_000, shouldPodContentBeRemoved: (uid) => removable.has(uid) });
    store.keep('a', new Map([['main', { restartCount: 3, terminated: undefined }]]));
    store.keep('b', new Map([['main', { restartCount: 0, terminated: undefined }]]));
    store.keep('empty', new Map());
    assert.equal(store.size, 2);
    removable.add('b');
    await clock.advance(60_000);
    assert.equal(store.size, 1);
    assert.equal(store.take('b'), undefined);
    assert.equal(store.take('a')?.get('main')?.restartCount, 3);
    assert.equal(store.take('a'), undefined);
    store.stop();
  });
});
