// The simulated runtime's container lifecycle: start, exit, restart with the kubelet's
// crash-loop backoff (pkg/kubelet/kubelet.go crashLoopBackOff, client-go flowcontrol.Backoff),
// stop within the grace period with the runtime's 2 s floor
// (pkg/kubelet/kuberuntime/kuberuntime_container.go minimumGracePeriodInSeconds), and the
// phases of Never/OnFailure pods (kubelet_pods.go getPhase). All on the FakeClock.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import type { Pod } from '../../../src/pod/types.js';
import { crashLoopRestart, podJitterFraction, shouldRestart, stopOutcome } from '../../../src/runtime/container-lifecycle.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import { SIMULATION_ANNOTATIONS } from '../../../src/runtime/simulation-annotations.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

function pod(uid: string, o: { restartPolicy?: string; annotations?: Record<string, string>; static?: boolean } = {}): Pod {
  const annotations: Record<string, string> = { ...o.annotations };
  if (o.static !== false) annotations['kubernetes.io/config.source'] = 'file';
  return {
    metadata: { name: `p-${uid}`, namespace: 'default', uid, annotations },
    spec: { nodeName: 'n', containers: [{ name: 'main', image: 'pause' }], ...(o.restartPolicy ? { restartPolicy: o.restartPolicy } : {}) },
  };
}

const main = (s: V1PodStatus): V1ContainerStatus => s.containerStatuses![0]!;
const stateOf = (c: V1ContainerStatus): string =>
  c.state?.running ? 'running' : c.state?.terminated ? `terminated(${c.state.terminated.exitCode} ${c.state.terminated.reason})` : `waiting(${c.state?.waiting?.reason})`;

function setup(options: { stopMs?: number; startDelayMs?: number } = {}) {
  const clock = new FakeClock();
  const runtime = createSimulatedStatusProvider({ clock, startDelayMs: options.startDelayMs ?? 0, stopMs: options.stopMs, hostIP: '10.0.0.5' });
  const changes: string[] = [];
  runtime.onChange((uid) => changes.push(uid));
  return { clock, runtime, changes, status: (p: Pod) => runtime.statusFor(p, clock.now()) };
}

describe('container lifecycle rules', () => {
  it('restartPolicy: Always restarts any exit, OnFailure only a failure, Never none', () => {
    assert.deepEqual(
      [undefined, 'Always', 'OnFailure', 'Never'].map((p) => [shouldRestart(p, 0), shouldRestart(p, 1)]),
      [
        [true, true],
        [true, true],
        [false, true],
        [false, false],
      ],
    );
  });

  it('crash-loop backoff: first restart at once, then 10 s doubling to 5 min, reset after 10 min running', () => {
    let entry = undefined as ReturnType<typeof crashLoopRestart>['next'] | undefined;
    let t = 0;
    const waits: number[] = [];
    for (let i = 0; i < 9; i++) {
      const r = crashLoopRestart(entry, t);
      waits.push((r.restartAt - t) / 1000);
      entry = r.next;
      t = r.restartAt + 1000; // runs 1 s, then exits again
    }
    assert.deepEqual(waits, [0, 10, 20, 40, 80, 160, 300, 300, 300]);
    // Ran more than 10 min since the last restart: at once again, and the next wait is 10 s.
    const reset = crashLoopRestart(entry, entry!.armedAt + 600_001);
    assert.equal(reset.restartAt, entry!.armedAt + 600_001);
    assert.equal(reset.next.delayMs, 10_000);
    // Exactly 10 min is not more than 10 min.
    assert.equal(crashLoopRestart(entry, entry!.armedAt + 600_000).restartAt, entry!.armedAt + 600_000 + 300_000);
  });

  it('stop: within max(grace, 2 s) the container exits by itself (0), beyond it is killed (137)', () => {
    assert.deepEqual(stopOutcome(0, 30), { afterMs: 0, exitCode: 0, reason: 'Completed' });
    assert.deepEqual(stopOutcome(1500, 1), { afterMs: 1500, exitCode: 0, reason: 'Completed' });
    // Grace 1 s still gives the container 2 s after SIGTERM.
    assert.deepEqual(stopOutcome(10_000, 1), { afterMs: 2000, exitCode: 137, reason: 'Error' });
    assert.deepEqual(stopOutcome(10_000, 5), { afterMs: 5000, exitCode: 137, reason: 'Error' });
  });

  it('stop with a preStop sleep hook: the hook first (cut at the grace period), its whole seconds off the budget, at least 2 s left', () => {
    // Default grace 30 s, a hook of 40 s: cut at 30 s, then SIGTERM with the 2 s floor.
    assert.deepEqual(stopOutcome(0, 30, 40), { afterMs: 30_000, exitCode: 0, reason: 'Completed' });
    assert.deepEqual(stopOutcome(10_000, 30, 40), { afterMs: 32_000, exitCode: 137, reason: 'Error' });
    // A 5 s hook in 10 s: 5 s left for the container.
    assert.deepEqual(stopOutcome(4000, 10, 5), { afterMs: 9000, exitCode: 0, reason: 'Completed' });
    assert.deepEqual(stopOutcome(6000, 10, 5), { afterMs: 10_000, exitCode: 137, reason: 'Error' });
    // Fractions of a second of hook do not shorten the budget (the kubelet counts whole seconds).
    assert.deepEqual(stopOutcome(60_000, 10, 1.5), { afterMs: 1500 + 9000, exitCode: 137, reason: 'Error' });
  });

  it('per-pod jitter is a fixed fraction of the UID', () => {
    const a = podJitterFraction('uid-a');
    assert.equal(podJitterFraction('uid-a'), a);
    assert.ok(a >= 0 && a < 1);
    assert.notEqual(podJitterFraction('uid-b'), a);
  });
});

describe('simulated runtime: container lifecycles', () => {
  it('starts after the start delay plus the pod jitter', async () => {
    const clock = new FakeClock();
    const runtime = createSimulatedStatusProvider({ clock, startDelayMs: 1000, startJitterMs: 1000 });
    const p = pod('jittered');
    const jitter = Math.floor(1000 * podJitterFraction('jittered'));
    assert.equal(runtime.statusFor(p, clock.now()).phase, 'Pending');
    await clock.advance(1000 + jitter - 1);
    assert.equal(runtime.statusFor(p, clock.now()).phase, 'Pending');
    await clock.advance(1);
    assert.equal(runtime.statusFor(p, clock.now()).phase, 'Running');
  });

  it('Always: an exit configured by annotation restarts at once, then after 10 s in CrashLoopBackOff', async () => {
    const { clock, status } = setup();
    const p = pod('crash', { annotations: { [SIMULATION_ANNOTATIONS.exit]: 'main=1@5' } });
    assert.equal(stateOf(main(status(p))), 'running');
    await clock.advance(5000);
    let s = status(p);
    assert.equal(stateOf(main(s)), 'running');
    assert.equal(main(s).restartCount, 1);
    assert.equal(main(s).lastState?.terminated?.exitCode, 1);
    await clock.advance(5000); // second exit: back-off 10 s
    s = status(p);
    assert.equal(stateOf(main(s)), 'waiting(CrashLoopBackOff)');
    assert.equal(s.phase, 'Running');
    assert.equal(main(s).ready, false);
    assert.equal(s.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    await clock.advance(9999);
    assert.equal(stateOf(main(status(p))), 'waiting(CrashLoopBackOff)');
    await clock.advance(1);
    s = status(p);
    assert.equal(stateOf(main(s)), 'running');
    assert.equal(main(s).restartCount, 2);
    assert.equal(s.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    await clock.advance(5000 + 19_999); // third exit, waits 20 s
    assert.equal(stateOf(main(status(p))), 'waiting(CrashLoopBackOff)');
    await clock.advance(1);
    assert.equal(main(status(p)).restartCount, 3);
  });

  it('Never: an exit by provider call ends the pod Failed (code ≠ 0) or Succeeded (0)', async () => {
    const { clock, runtime, status, changes } = setup();
    const failing = pod('never-1', { restartPolicy: 'Never' });
    const ok = pod('never-0', { restartPolicy: 'Never' });
    status(failing);
    status(ok);
    assert.equal(runtime.exitContainer('never-1', 'main', 3, 2000), true);
    assert.equal(runtime.exitContainer('never-0', 'main', 0), true);
    assert.equal(runtime.exitContainer('never-0', 'nope', 0), false);
    await clock.advance(2000);
    assert.equal(status(failing).phase, 'Failed');
    assert.equal(stateOf(main(status(failing))), 'terminated(3 Error)');
    assert.equal(status(ok).phase, 'Succeeded');
    assert.equal(stateOf(main(status(ok))), 'terminated(0 Completed)');
    assert.equal(status(ok).conditions?.find((c) => c.type === 'Ready')?.reason, 'PodCompleted');
    assert.deepEqual(changes.sort(), ['never-0', 'never-1']);
  });

  it('OnFailure: a failure restarts, a success ends the pod Succeeded', async () => {
    const { clock, runtime, status } = setup();
    const p = pod('onfail', { restartPolicy: 'OnFailure' });
    status(p);
    runtime.exitContainer('onfail', 'main', 2);
    await clock.advance(0);
    assert.equal(stateOf(main(status(p))), 'running');
    assert.equal(main(status(p)).restartCount, 1);
    runtime.exitContainer('onfail', 'main', 0);
    await clock.advance(0);
    assert.equal(status(p).phase, 'Succeeded');
  });

  it('terminate: resolves when the containers stop; the stop time honours the grace period and the 2 s floor', async () => {
    for (const { grace, stopMs, stoppedAfter, exit } of [
      { grace: 30, stopMs: 0, stoppedAfter: 0, exit: 'terminated(0 Completed)' },
      { grace: 5, stopMs: 3000, stoppedAfter: 3000, exit: 'terminated(0 Completed)' },
      { grace: 5, stopMs: 60_000, stoppedAfter: 5000, exit: 'terminated(137 Error)' },
      { grace: 1, stopMs: 60_000, stoppedAfter: 2000, exit: 'terminated(137 Error)' },
    ]) {
      const { clock, runtime, status, changes } = setup({ stopMs });
      const p = pod(`stop-${grace}-${stopMs}`);
      status(p);
      let stopped = false;
      void runtime.terminate(p, grace).then(() => (stopped = true));
      if (stoppedAfter > 0) {
        await clock.advance(stoppedAfter - 1);
        assert.equal(stopped, false, `grace ${grace}, stop ${stopMs}: still stopping`);
        assert.equal(stateOf(main(status(p))), 'running', 'the stopping pod reports its running containers');
      }
      await clock.advance(stoppedAfter === 0 ? 0 : 1);
      assert.equal(stopped, true, `grace ${grace}, stop ${stopMs}: stopped after ${stoppedAfter} ms`);
      const s = status(p);
      assert.equal(stateOf(main(s)), exit);
      // A static pod's phase follows its restart policy (Always: Running), not "terminal".
      assert.equal(s.phase, 'Running');
      assert.equal(s.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status, 'False');
      assert.ok(changes.length >= 1, 'listeners heard of the stop');
      // Asked again once stopped: at once.
      await runtime.terminate(p, grace);
    }
  });

  it('terminate: the stop-seconds annotation sets the stop time; a shorter grace period shortens the stop', async () => {
    const { clock, runtime, status } = setup();
    const p = pod('shrink', { annotations: { [SIMULATION_ANNOTATIONS.stopSeconds]: '100' } });
    status(p);
    let stopped = 0;
    void runtime.terminate(p, 30).then(() => stopped++);
    await clock.advance(5000);
    void runtime.terminate(p, 3).then(() => stopped++); // killed 3 s from now instead of 25 s
    void runtime.terminate(p, 10).then(() => stopped++); // longer: changes nothing
    await clock.advance(2999);
    assert.equal(stopped, 0);
    await clock.advance(1);
    assert.equal(stopped, 3);
    assert.equal(stateOf(main(status(p))), 'terminated(137 Error)');
  });

  it("terminate: a preStop sleep hook delays the stop, up to the pod's grace period", async () => {
    const { clock, runtime, status } = setup();
    const p = pod('hook');
    p.spec!.containers[0]!.lifecycle = { preStop: { sleep: { seconds: 40 } } };
    status(p);
    let done = false;
    void runtime.terminate(p, 30).then(() => (done = true));
    await clock.advance(29_999);
    assert.equal(done, false);
    await clock.advance(1);
    assert.equal(done, true);
    assert.equal(stateOf(main(status(p))), 'terminated(0 Completed)');
  });

  it('terminate: an ordinary pod stopped by the kubelet is terminal (Succeeded or Failed)', async () => {
    const { clock, runtime, status } = setup({ stopMs: 60_000 });
    const p = pod('api-pod', { static: false });
    status(p);
    void runtime.terminate(p, 1);
    await clock.advance(2000);
    assert.equal(status(p).phase, 'Failed');
  });

  it('terminate after every container exited for good: stopped at once, the exit codes kept', async () => {
    const { clock, runtime, status } = setup({ stopMs: 60_000 });
    const p = pod('completed', { restartPolicy: 'Never', annotations: { [SIMULATION_ANNOTATIONS.exit]: 'main=0@1' } });
    status(p);
    await clock.advance(1000);
    assert.equal(status(p).phase, 'Succeeded');
    const stopped = runtime.terminate(p, 30);
    await clock.advance(0);
    await stopped;
    assert.equal(stateOf(main(status(p))), 'terminated(0 Completed)');
    assert.equal(status(p).phase, 'Succeeded');
  });

  it('terminate before the start: the start is cancelled and the pod stays Pending', async () => {
    const { clock, runtime, status } = setup({ startDelayMs: 1000 });
    const p = pod('early');
    status(p);
    const stopped = runtime.terminate(p, 30);
    await clock.advance(0);
    await stopped;
    await clock.advance(5000);
    assert.equal(status(p).phase, 'Pending');
  });
});

describe('simulated runtime: container logs follow the lifecycle', () => {
  const at = (iso: string): number => Date.parse(`2026-01-02T03:04:${iso}Z`);
  function logOf(runtime: ReturnType<typeof createSimulatedStatusProvider>, uid: string, container: string): string[] {
    return (runtime.containerLogs(uid, container) ?? []).map((l) => `${l.time.toISOString().slice(17, 19)} ${l.text}`);
  }
  function richPod(uid: string, annotations: Record<string, string> = {}): Pod {
    return {
      metadata: { name: `p-${uid}`, namespace: 'default', uid, annotations: { 'kubernetes.io/config.source': 'file', ...annotations } },
      spec: {
        nodeName: 'n',
        initContainers: [{ name: 'init', image: 'busybox' }, { name: 'side', image: 'envoy', restartPolicy: 'Always' }],
        containers: [{ name: 'main', image: 'app:1' }, { name: 'other', image: 'app:2' }],
      },
    };
  }

  it('a line as each container starts, exits with its code, restarts, is signalled and killed past its budget', async () => {
    const clock = new FakeClock(at('05.000'));
    const runtime = createSimulatedStatusProvider({ clock, startDelayMs: 1000, stopMs: 10_000 });
    const p = richPod('logs', { [SIMULATION_ANNOTATIONS.exit]: 'main=3@5' });
    runtime.statusFor(p, clock.now());
    assert.equal(runtime.containerLogs('logs', 'main'), undefined, 'nothing before the start');
    await clock.advance(1000); // started at :06
    await clock.advance(5000); // main exits (3) at :11, restarted at once
    await clock.advance(5000); // exits again at :16: back-off, not running
    const stopped = runtime.terminate(p, 5); // stop time 10 s > budget 5 s: killed at :21
    await clock.advance(5000);
    await stopped;
    assert.deepEqual(logOf(runtime, 'logs', 'init'), ['06 started container "init" (image busybox)', '06 container "init" exited with code 0 (Completed)']);
    assert.deepEqual(logOf(runtime, 'logs', 'main'), [
      '06 started container "main" (image app:1)',
      '11 container "main" exited with code 3 (Error)',
      '11 restarted container "main" (image app:1), restart 1',
      '16 container "main" exited with code 3 (Error)',
    ]);
    for (const [name, image] of [
      ['other', 'app:2'],
      ['side', 'envoy'],
    ] as const) {
      assert.deepEqual(logOf(runtime, 'logs', name), [
        `06 started container "${name}" (image ${image})`,
        `16 stopping container "${name}" (grace period 5s)`,
        `21 container "${name}" killed with code 137 (Error)`,
      ]);
    }
    runtime.forget('logs');
    assert.equal(runtime.containerLogs('logs', 'main'), undefined, 'forgotten with the pod');
  });

  it('a container that stops within its budget is logged stopped with code 0; a pod stopped before its start logs nothing', async () => {
    const clock = new FakeClock(at('05.000'));
    const runtime = createSimulatedStatusProvider({ clock, startDelayMs: 1000, stopMs: 2000 });
    const p = richPod('calm');
    runtime.statusFor(p, clock.now());
    await clock.advance(1000);
    const stopped = runtime.terminate(p, 30);
    await clock.advance(2000);
    await stopped;
    assert.deepEqual(logOf(runtime, 'calm', 'main'), [
      '06 started container "main" (image app:1)',
      '06 stopping container "main" (grace period 30s)',
      '08 container "main" stopped with code 0 (Completed)',
    ]);
    const early = richPod('early');
    runtime.statusFor(early, clock.now());
    const cancelled = runtime.terminate(early, 30);
    await clock.advance(0);
    await cancelled;
    await clock.advance(5000);
    assert.equal(runtime.containerLogs('early', 'main'), undefined);
  });

  it('stays bounded through any number of restarts, the oldest lines dropped first', async () => {
    const clock = new FakeClock(at('05.000'));
    const runtime = createSimulatedStatusProvider({ clock, startDelayMs: 0, maxLogBytesPerContainer: 200 });
    const p = pod('loop', { annotations: { [SIMULATION_ANNOTATIONS.exit]: 'main=1@1' } });
    runtime.statusFor(p, clock.now());
    for (let i = 0; i < 40; i++) await clock.advance(60_000);
    const lines = runtime.containerLogs('loop', 'main') ?? [];
    const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l.text) + 1, 0);
    assert.ok(bytes <= 200, `${bytes} bytes kept`);
    assert.ok(lines.length >= 2);
    assert.match(lines.at(-1)!.text, /^(restarted container "main" \(image pause\), restart \d+|container "main" exited with code 1 \(Error\))$/);
    assert.doesNotMatch(lines[0]!.text, /^started container/, 'the start line went first');
    assert.ok(main(runtime.statusFor(p, clock.now())).restartCount >= 10, 'it restarted many times');
  });
});
