// The simulated runtime's scenario behaviours (src/runtime/scenario-plan.ts, image-pulls.ts,
// readiness-probes.ts), judged against the kubelet's wording and timings: the image back-off of
// pkg/kubelet/kubelet.go (10 s doubling to 300 s) and the messages of images/image_manager.go,
// kuberuntime/kuberuntime_container.go and prober/prober.go; the crash-loop back-off as for the
// exit annotation.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import type { Pod } from '../../../src/pod/types.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import { SIMULATION_ANNOTATIONS } from '../../../src/runtime/simulation-annotations.js';
import { parseScenarios } from '../../../src/scenario/parse-scenarios.js';
import type { ContainerEvent } from '../../../src/status/status-provider.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function pod(uid: string, options: { image?: string; labels?: Record<string, string>; annotations?: Record<string, string>; restartPolicy?: string } = {}): Pod {
  return {
    metadata: { name: `web-${uid}`, namespace: 'default', uid, labels: options.labels ?? { app: 'web' }, ...(options.annotations ? { annotations: options.annotations } : {}) },
    spec: {
      nodeName: 'node-a',
      ...(options.restartPolicy ? { restartPolicy: options.restartPolicy } : {}),
      containers: [{ name: 'app', image: options.image ?? 'app:1.0' }, { name: 'side', image: 'side:1.0' }],
    },
  };
}

/** A provider on a fake clock with the scenarios of `yaml` (as parsed from a file), its Events recorded. */
function runtimeWith(raw: unknown) {
  const problems: string[] = [];
  const scenarios = parseScenarios(raw, 'scenarios', problems);
  assert.deepEqual(problems, []);
  const clock = new FakeClock(T0);
  const provider = createSimulatedStatusProvider({ clock, startDelayMs: 1000, scenarios });
  const events: Array<{ at: number; reason: string; message: string; type: string; fieldPath: string | undefined }> = [];
  provider.onContainerEvent((e: ContainerEvent) => events.push({ at: (clock.now().getTime() - T0) / 1000, reason: e.reason, message: e.message, type: e.type, fieldPath: e.fieldPath }));
  return { clock, provider, events };
}

const app = (s: V1PodStatus): V1ContainerStatus => s.containerStatuses!.find((c) => c.name === 'app')!;
const side = (s: V1PodStatus): V1ContainerStatus => s.containerStatuses!.find((c) => c.name === 'side')!;
const cond = (s: V1PodStatus, type: string) => s.conditions!.find((c) => c.type === type)!;

describe('scenarios in the simulated runtime', () => {
  it('exit: the picked containers crash-loop with the kubelet\'s restart counts and back-off', async () => {
    const { clock, provider, events } = runtimeWith([{ match: { labels: { app: 'web' } }, exit: { code: 1, after: '5s', container: 'app' } }]);
    const p = pod('u1');
    provider.statusFor(p, clock.now());
    await clock.advance(6000); // started at 1 s, exits at 6 s, restarted at once
    let s = provider.statusFor(p, clock.now());
    assert.equal(app(s).restartCount, 1);
    assert.ok(app(s).state?.running);
    assert.deepEqual({ code: app(s).lastState?.terminated?.exitCode, reason: app(s).lastState?.terminated?.reason }, { code: 1, reason: 'Error' });
    assert.equal(side(s).restartCount, 0, 'the scenario names app only');
    await clock.advance(5000); // exits again at 11 s: 10 s of back-off
    s = provider.statusFor(p, clock.now());
    assert.deepEqual(app(s).state?.waiting, { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container=app pod=web-u1_default(u1)' });
    assert.equal(s.phase, 'Running');
    assert.equal(cond(s, 'Ready').status, 'False');
    assert.ok(events.some((e) => e.reason === 'BackOff' && e.at === 11 && e.message === 'Back-off restarting failed container app in pod web-u1_default(u1)'));
    await clock.advance(9999);
    assert.ok(provider.statusFor(p, clock.now()).containerStatuses![0]!.state?.waiting, 'still backing off at 20.999 s');
    await clock.advance(1);
    s = provider.statusFor(p, clock.now());
    assert.equal(app(s).restartCount, 2);
    assert.ok(app(s).state?.running);
    await clock.advance(5000); // exits at 26 s: 20 s now
    assert.match(app(provider.statusFor(p, clock.now())).state?.waiting?.message ?? '', /^back-off 20s /);
  });

  it('oomKill: the container ends with 137 and OOMKilled, and the restart policy follows (Never: the pod fails)', async () => {
    const { clock, provider } = runtimeWith([{ oomKill: { after: '3s', container: 'app' } }]);
    const always = pod('u1');
    const never = pod('u2', { restartPolicy: 'Never' });
    provider.statusFor(always, clock.now());
    provider.statusFor(never, clock.now());
    await clock.advance(4000);
    const restarted = provider.statusFor(always, clock.now());
    assert.equal(app(restarted).restartCount, 1);
    assert.deepEqual({ code: app(restarted).lastState?.terminated?.exitCode, reason: app(restarted).lastState?.terminated?.reason }, { code: 137, reason: 'OOMKilled' });
    const failed = provider.statusFor(never, clock.now());
    assert.deepEqual({ code: app(failed).state?.terminated?.exitCode, reason: app(failed).state?.terminated?.reason }, { code: 137, reason: 'OOMKilled' });
    assert.equal(provider.containerLogs('u1', 'app')?.some((l) => l.text === 'container "app" exited with code 137 (OOMKilled)'), true);
  });

  it('imagePullFailure: ErrImagePull, then ImagePullBackOff between pulls at 0, 10, 30, 70, 150, 310 s, with the kubelet\'s Events', async () => {
    const { clock, provider, events } = runtimeWith([{ match: { image: '*:broken' }, imagePullFailure: {} }]);
    const p = pod('u1', { image: 'app:broken' });
    provider.statusFor(p, clock.now());
    await clock.advance(1000);
    let s = provider.statusFor(p, clock.now());
    const error = 'rpc error: code = NotFound desc = failed to pull and unpack image "app:broken": not found';
    assert.deepEqual(app(s).state, { waiting: { reason: 'ErrImagePull', message: error } });
    assert.equal(app(s).containerID, undefined, 'no container was created');
    assert.equal(app(s).started, false);
    assert.ok(side(s).state?.running, 'the other container starts');
    assert.equal(s.phase, 'Pending');
    assert.equal(cond(s, 'PodReadyToStartContainers').status, 'True');
    assert.equal(cond(s, 'Ready').message, 'containers with unready status: [app]');
    const appEvents = events.filter((e) => e.fieldPath === 'spec.containers{app}');
    assert.deepEqual(appEvents.map((e) => [e.type, e.reason, e.message]), [
      ['Normal', 'Pulling', 'Pulling image "app:broken"'],
      ['Warning', 'Failed', `Failed to pull image "app:broken": ${error}`],
      ['Warning', 'Failed', 'Error: ErrImagePull'],
    ]);
    await clock.advance(20_000); // 21 s: the second pull (11 s) armed 20 s
    s = provider.statusFor(p, clock.now());
    assert.deepEqual(app(s).state, { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "app:broken": ErrImagePull: ${error}` } });
    assert.deepEqual(
      events.filter((e) => e.at === 21 && e.fieldPath === 'spec.containers{app}').map((e) => [e.type, e.reason, e.message]),
      [
        ['Normal', 'BackOff', 'Back-off pulling image "app:broken"'],
        ['Warning', 'Failed', 'Error: ImagePullBackOff'],
      ],
    );
    await clock.advance(700_000);
    const pulls = events.filter((e) => e.reason === 'Pulling' && e.fieldPath === 'spec.containers{app}').map((e) => e.at - 1);
    assert.deepEqual(pulls, [0, 10, 30, 70, 150, 310, 610]);
    assert.equal(provider.containerLogs('u1', 'app'), undefined, 'a container never created writes nothing');
  });

  it('startDelay: the pod stays Pending that much longer', async () => {
    const { clock, provider } = runtimeWith([{ match: { namespace: 'default' }, startDelay: '30s' }]);
    const p = pod('u1');
    provider.statusFor(p, clock.now());
    await clock.advance(30_999);
    const s = provider.statusFor(p, clock.now());
    assert.equal(s.phase, 'Pending');
    assert.equal(app(s).state?.waiting?.reason, 'ContainerCreating');
    await clock.advance(1);
    assert.equal(provider.statusFor(p, clock.now()).phase, 'Running');
  });

  it('readiness: failing from the start keeps the container started but not ready, with Unhealthy', async () => {
    const { clock, provider, events } = runtimeWith([{ readiness: { container: 'app' } }]);
    const p = pod('u1');
    provider.statusFor(p, clock.now());
    await clock.advance(1000);
    const s = provider.statusFor(p, clock.now());
    assert.equal(s.phase, 'Running');
    assert.deepEqual({ started: app(s).started, ready: app(s).ready, running: app(s).state?.running !== undefined }, { started: true, ready: false, running: true });
    assert.equal(side(s).ready, true);
    assert.deepEqual({ status: cond(s, 'Ready').status, reason: cond(s, 'Ready').reason, message: cond(s, 'Ready').message }, { status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [app]' });
    assert.deepEqual(events.filter((e) => e.reason === 'Unhealthy').map((e) => [e.type, e.message, e.fieldPath]), [['Warning', 'Readiness probe failed: HTTP probe failed with statuscode: 503', 'spec.containers{app}']]);
  });

  it('readiness with a flapPeriod: ready, unready, ready, each for the period, the Ready condition moving with it', async () => {
    const { clock, provider } = runtimeWith([{ readiness: { flapPeriod: '10s', message: 'timeout' } }]);
    const changes: string[] = [];
    provider.onChange((uid) => changes.push(uid));
    const p = pod('u1');
    provider.statusFor(p, clock.now());
    await clock.advance(1000);
    assert.equal(cond(provider.statusFor(p, clock.now()), 'Ready').status, 'True');
    await clock.advance(10_000);
    const unready = provider.statusFor(p, clock.now());
    assert.equal(cond(unready, 'Ready').status, 'False');
    assert.equal(cond(unready, 'Ready').message, 'containers with unready status: [app side]');
    assert.equal(cond(unready, 'Ready').lastTransitionTime?.toISOString(), '2026-01-01T00:00:11.000Z');
    await clock.advance(10_000);
    assert.equal(cond(provider.statusFor(p, clock.now()), 'Ready').status, 'True');
    assert.ok(changes.length >= 3, 'each turn is told to the listeners');
  });

  it('slowStop: a stop takes the whole grace period and ends in a kill (137); the stop-seconds annotation wins', async () => {
    const { clock, provider } = runtimeWith([{ slowStop: true }]);
    const slow = pod('u1');
    const annotated = pod('u2', { annotations: { [SIMULATION_ANNOTATIONS.stopSeconds]: '2' } });
    provider.statusFor(slow, clock.now());
    provider.statusFor(annotated, clock.now());
    await clock.advance(1000);
    let slowDone = false;
    let annotatedDone = false;
    void provider.terminate(slow, 30).then(() => (slowDone = true));
    void provider.terminate(annotated, 30).then(() => (annotatedDone = true));
    await clock.advance(2000);
    assert.equal(annotatedDone, true);
    assert.equal(app(provider.statusFor(annotated, clock.now())).state?.terminated?.exitCode, 0);
    await clock.advance(27_999);
    assert.equal(slowDone, false);
    await clock.advance(1);
    assert.equal(slowDone, true);
    assert.deepEqual({ code: app(provider.statusFor(slow, clock.now())).state?.terminated?.exitCode, reason: app(provider.statusFor(slow, clock.now())).state?.terminated?.reason }, { code: 137, reason: 'Error' });
  });

  it('the exit annotation wins over a scenario for its container; the scenario still plans the others', async () => {
    const { clock, provider } = runtimeWith([{ exit: { code: 1, after: '5s' } }]);
    const p = pod('u1', { annotations: { [SIMULATION_ANNOTATIONS.exit]: 'app=3@2' } });
    provider.statusFor(p, clock.now());
    await clock.advance(3000); // app exits at 3 s by its annotation
    const s = provider.statusFor(p, clock.now());
    assert.equal(app(s).lastState?.terminated?.exitCode, 3);
    assert.equal(side(s).restartCount, 0);
    await clock.advance(3000); // side exits at 6 s by the scenario
    assert.equal(side(provider.statusFor(p, clock.now())).lastState?.terminated?.exitCode, 1);
  });

  it('for each kind the first scenario that picks a pod wins', async () => {
    const { clock, provider } = runtimeWith([
      { name: 'first', match: { labels: { app: 'web' } }, exit: { code: 2, after: '2s' } },
      { name: 'second', exit: { code: 9, after: '1s' } },
    ]);
    const web = pod('u1');
    const other = pod('u2', { labels: { app: 'db' } });
    provider.statusFor(web, clock.now());
    provider.statusFor(other, clock.now());
    await clock.advance(3500); // web's app exits at 3 s, the other's at 2 s and 3 s
    assert.equal(app(provider.statusFor(web, clock.now())).lastState?.terminated?.exitCode, 2);
    assert.equal(app(provider.statusFor(other, clock.now())).lastState?.terminated?.exitCode, 9);
  });
});
