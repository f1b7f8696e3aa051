// Init containers in the simulated runtime, as the kubelet runs them
// (kuberuntime_container.go computeInitContainerActions, kubelet_pods.go getPhase,
// status/generate.go GeneratePodInitializedCondition, prober_manager.go UpdatePodStatus, v1.34):
// one at a time in order, each exiting 0 before the next; a failed one restarted with the
// crash-loop backoff, or failing the pod under restartPolicy Never; sidecars kept running.
// All on the FakeClock.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Container, V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import type { Pod } from '../../../src/pod/types.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import { SIMULATION_ANNOTATIONS } from '../../../src/runtime/simulation-annotations.js';
import { kubeletPodPhase } from '../../../src/status/pod-phase.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

function pod(uid: string, initContainers: V1Container[], o: { restartPolicy?: string; exit?: string; static?: boolean } = {}): Pod {
  const annotations: Record<string, string> = {};
  if (o.static !== false) annotations['kubernetes.io/config.source'] = 'file';
  if (o.exit !== undefined) annotations[SIMULATION_ANNOTATIONS.exit] = o.exit;
  return {
    metadata: { name: `p-${uid}`, namespace: 'default', uid, annotations },
    spec: { nodeName: 'n', initContainers, containers: [{ name: 'main', image: 'pause' }], ...(o.restartPolicy ? { restartPolicy: o.restartPolicy } : {}) },
  };
}
const init = (name: string): V1Container => ({ name, image: `img-${name}` });
const sidecar = (name: string): V1Container => ({ name, image: `img-${name}`, restartPolicy: 'Always' });

const stateOf = (c: V1ContainerStatus | undefined): string =>
  c?.state?.running ? 'running' : c?.state?.terminated ? `terminated(${c.state.terminated.exitCode})` : `waiting(${c?.state?.waiting?.reason})`;
const inits = (s: V1PodStatus): string[] => (s.initContainerStatuses ?? []).map((c) => `${c.name}:${stateOf(c)}`);
const mainOf = (s: V1PodStatus): string => stateOf(s.containerStatuses?.[0]);
const condition = (s: V1PodStatus, type: string) => s.conditions?.find((c) => c.type === type);

function setup() {
  const clock = new FakeClock();
  const runtime = createSimulatedStatusProvider({ clock, startDelayMs: 0, hostIP: '10.0.0.5' });
  const changes: string[] = [];
  runtime.onChange((uid) => changes.push(uid));
  return { clock, runtime, changes, status: (p: Pod) => runtime.statusFor(p, clock.now()) };
}

describe('init containers in the simulated runtime', () => {
  it('run one at a time: the next starts only when the one before exited 0; the containers after the last', async () => {
    const { clock, runtime, status } = setup();
    const p = pod('seq', [init('a'), init('b')], { exit: 'a=0@3,b=0@2' });
    let s = status(p);
    assert.deepEqual(inits(s), ['a:running', 'b:waiting(PodInitializing)']);
    assert.equal(mainOf(s), 'waiting(PodInitializing)');
    assert.equal(s.phase, 'Pending');
    assert.equal(condition(s, 'PodReadyToStartContainers')?.status, 'True', 'the sandbox is up');
    assert.deepEqual([condition(s, 'Initialized')?.status, condition(s, 'Initialized')?.message], ['False', 'containers with incomplete status: [a b]']);
    assert.equal(s.initContainerStatuses?.[0]?.started, true);
    assert.equal(s.initContainerStatuses?.[0]?.ready, false, 'a running init container is not ready');
    await clock.advance(3000);
    s = status(p);
    assert.deepEqual(inits(s), ['a:terminated(0)', 'b:running']);
    assert.equal(s.initContainerStatuses?.[0]?.ready, true, 'completed with 0: ready');
    assert.equal(condition(s, 'Initialized')?.message, 'containers with incomplete status: [b]');
    await clock.advance(2000);
    s = status(p);
    assert.deepEqual(inits(s), ['a:terminated(0)', 'b:terminated(0)']);
    assert.equal(mainOf(s), 'running');
    assert.equal(s.phase, 'Running');
    assert.equal(condition(s, 'Initialized')?.status, 'True');
    assert.equal(condition(s, 'Initialized')?.lastTransitionTime?.getTime(), Date.parse('2026-01-01T00:00:05Z'), 'Initialized when the last one completed');
    assert.equal(condition(s, 'Ready')?.status, 'True');
    assert.deepEqual(
      runtime.containerLogs('seq', 'b')?.map((l) => l.text),
      ['started container "b" (image img-b)', 'container "b" exited with code 0 (Completed)'],
    );
  });

  it('a failing init container under Always is restarted with the crash-loop backoff: Init:CrashLoopBackOff, the pod Pending', async () => {
    const { clock, status, changes } = setup();
    const p = pod('crash', [init('setup')], { exit: 'setup=1@2' });
    status(p);
    await clock.advance(2000); // first exit: restarted at once
    let s = status(p);
    assert.deepEqual(inits(s), ['setup:running']);
    assert.equal(s.initContainerStatuses?.[0]?.restartCount, 1);
    assert.equal(s.initContainerStatuses?.[0]?.lastState?.terminated?.exitCode, 1);
    await clock.advance(2000); // second exit: back-off 10 s
    s = status(p);
    const setupStatus = s.initContainerStatuses![0]!;
    assert.equal(stateOf(setupStatus), 'waiting(CrashLoopBackOff)');
    assert.equal(setupStatus.state?.waiting?.message, 'back-off 10s restarting failed container=setup pod=p-crash_default(crash)', "the kubelet's doBackOff message");
    assert.equal(setupStatus.lastState?.terminated?.exitCode, 1);
    assert.deepEqual([setupStatus.ready, setupStatus.started, setupStatus.restartCount], [false, false, 1]);
    assert.equal(s.phase, 'Pending', 'the kubelet keeps a pod whose init container crash-loops Pending');
    assert.equal(mainOf(s), 'waiting(PodInitializing)');
    assert.equal(condition(s, 'Initialized')?.reason, 'ContainersNotInitialized');
    assert.equal(condition(s, 'ContainersReady')?.message, 'containers with unready status: [main]');
    await clock.advance(9999);
    assert.equal(stateOf(status(p).initContainerStatuses![0]), 'waiting(CrashLoopBackOff)');
    await clock.advance(1);
    s = status(p);
    assert.equal(stateOf(s.initContainerStatuses![0]), 'running');
    assert.equal(s.initContainerStatuses![0]!.restartCount, 2);
    await clock.advance(2000 + 19_999); // third exit waits 20 s
    assert.equal(stateOf(status(p).initContainerStatuses![0]), 'waiting(CrashLoopBackOff)');
    assert.match(status(p).initContainerStatuses![0]!.state?.waiting?.message ?? '', /^back-off 20s restarting/);
    await clock.advance(1);
    assert.equal(status(p).initContainerStatuses![0]!.restartCount, 3);
    assert.equal(mainOf(status(p)), 'waiting(PodInitializing)', 'the containers never start');
    assert.ok(changes.length >= 6, 'every step was reported');
  });

  it('OnFailure restarts a failed init container too; once it exits 0 the containers start', async () => {
    const { clock, runtime, status } = setup();
    const p = pod('onfail', [init('setup')], { restartPolicy: 'OnFailure', exit: 'setup=1@2' });
    status(p);
    await clock.advance(2000);
    assert.equal(status(p).initContainerStatuses![0]!.restartCount, 1);
    // The restarted instance now succeeds: the pod initializes.
    assert.equal(runtime.exitContainer('onfail', 'setup', 0, 500), true);
    await clock.advance(500);
    const s = status(p);
    assert.deepEqual(inits(s), ['setup:terminated(0)']);
    assert.equal(mainOf(s), 'running');
    assert.equal(s.phase, 'Running');
  });

  it('Never: a failed init container fails the pod at once, the containers never start, sidecars stop', async () => {
    const { clock, runtime, status } = setup();
    const p = pod('never', [sidecar('proxy'), init('setup')], { restartPolicy: 'Never', exit: 'setup=3@2' });
    status(p);
    await clock.advance(2000);
    const s = status(p);
    assert.equal(s.phase, 'Failed');
    assert.deepEqual(inits(s), ['proxy:terminated(0)', 'setup:terminated(3)']);
    assert.equal(s.initContainerStatuses?.[1]?.state?.terminated?.reason, 'Error');
    assert.equal(mainOf(s), 'waiting(PodInitializing)');
    assert.deepEqual([condition(s, 'Ready')?.reason, condition(s, 'ContainersReady')?.reason], ['PodFailed', 'PodFailed']);
    assert.equal(condition(s, 'Initialized')?.status, 'False');
    assert.equal(condition(s, 'PodReadyToStartContainers')?.status, 'False', 'the kubelet killed the pod: no sandbox');
    await clock.advance(60_000);
    assert.deepEqual(inits(status(p)), ['proxy:terminated(0)', 'setup:terminated(3)'], 'never restarted');
    // Terminating it afterwards has nothing left to stop.
    const stopped = runtime.terminate(p, 30);
    await clock.advance(0);
    await stopped;
    assert.equal(status(p).phase, 'Failed');
  });

  it('a sidecar keeps running beside the containers and is restarted whatever the pod policy', async () => {
    const { clock, status } = setup();
    const p = pod('side', [sidecar('proxy'), init('setup')], { restartPolicy: 'Never', exit: 'proxy=1@5' });
    let s = status(p);
    assert.deepEqual(inits(s), ['proxy:running', 'setup:terminated(0)']);
    assert.deepEqual([s.initContainerStatuses![0]!.started, s.initContainerStatuses![0]!.ready], [true, true]);
    assert.equal(mainOf(s), 'running');
    assert.equal(s.phase, 'Running');
    await clock.advance(5000); // restarted at once
    assert.equal(status(p).initContainerStatuses![0]!.restartCount, 1);
    await clock.advance(5000); // back-off: the pod stays Running and initialized, not ready
    s = status(p);
    assert.equal(stateOf(s.initContainerStatuses![0]), 'waiting(CrashLoopBackOff)');
    assert.equal(s.phase, 'Running');
    assert.equal(condition(s, 'Initialized')?.status, 'True');
    assert.equal(condition(s, 'ContainersReady')?.message, 'containers with unready status: [proxy]');
  });

  it('terminated while an init container runs: it is stopped with the pod; a static pod stays Pending, an ordinary one is Failed', async () => {
    for (const [isStatic, phase] of [
      [true, 'Pending'],
      [false, 'Failed'],
    ] as const) {
      const { clock, runtime, status } = setup();
      const p = pod(`stop-${isStatic}`, [init('slow')], { exit: 'slow=0@60', static: isStatic });
      status(p);
      await clock.advance(1000);
      const done = runtime.terminate(p, 5);
      await clock.advance(0);
      await done;
      const s = status(p);
      assert.deepEqual(inits(s), ['slow:terminated(0)']);
      assert.equal(mainOf(s), 'waiting(PodInitializing)');
      assert.equal(s.phase, phase, isStatic ? 'static' : 'ordinary');
      await clock.advance(120_000);
      assert.equal(mainOf(status(p)), 'waiting(PodInitializing)', 'nothing starts after the stop');
    }
  });
});

describe('kubeletPodPhase (getPhase)', () => {
  const spec = (initContainers: V1Container[], restartPolicy = 'Always'): Pod => ({ spec: { initContainers, containers: [{ name: 'main', image: 'i' }], restartPolicy } });
  const st = (name: string, state: V1ContainerStatus['state'], extra: Partial<V1ContainerStatus> = {}): V1ContainerStatus => ({ name, image: 'i', imageID: '', ready: false, restartCount: 0, state, ...extra });
  const waitingMain = st('main', { waiting: { reason: 'PodInitializing' } });
  const cases: Array<[string, Pod, V1ContainerStatus[], V1ContainerStatus[], boolean, string]> = [
    ['a failed init container under Never', spec([init('a')], 'Never'), [st('a', { terminated: { exitCode: 1 } })], [waitingMain], false, 'Failed'],
    ['a failed init container in back-off under Always', spec([init('a')]), [st('a', { waiting: { reason: 'CrashLoopBackOff' } }, { lastState: { terminated: { exitCode: 1 } } })], [waitingMain], false, 'Pending'],
    ['a running init container', spec([init('a')]), [st('a', { running: {} })], [waitingMain], false, 'Pending'],
    ['a sidecar not started yet, not initialized', spec([sidecar('s')]), [st('s', { running: {} }, { started: false })], [st('main', { running: {} })], false, 'Pending'],
    ['a sidecar restarting after initialization', spec([sidecar('s')]), [st('s', { waiting: { reason: 'CrashLoopBackOff' } }, { lastState: { terminated: { exitCode: 1 } } })], [st('main', { running: {} })], true, 'Running'],
  ];
  for (const [desc, p, initStatuses, statuses, initialized, want] of cases) {
    it(desc, () => assert.equal(kubeletPodPhase(p, initStatuses, statuses, false, initialized, true), want));
  }
});
