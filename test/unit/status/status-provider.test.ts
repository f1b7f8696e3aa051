// The simulated status provider: kubelet-pods' stand-in for the container runtime's view,
// shaped like the statuses pkg/kubelet/status/generate.go and kubelet_pods.go produce.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasErrorCode } from '../../../src/errors.js';
import type { Pod } from '../../../src/pod/types.js';
import { createSimulatedStatusProvider } from '../../../src/status/status-provider.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

function staticPod(uid: string, extra: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: { name: `web-${uid}`, namespace: 'default', uid },
    spec: { nodeName: 'node-a', containers: [{ name: 'app', image: 'nginx:1.27' }, { name: 'side', image: 'busybox' }], ...extra },
  };
}

const conditionStatus = (status: { conditions?: { type: string; status: string }[] }) =>
  Object.fromEntries((status.conditions ?? []).map((c) => [c.type, c.status]));

describe('createSimulatedStatusProvider', () => {
  it('is Pending when first seen, then Running after startDelayMs, with a notification', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00.700Z'));
    const provider = createSimulatedStatusProvider({ startDelayMs: 1000, clock, hostIP: '10.0.0.5', podIP: '10.244.0.9' });
    const changes: string[] = [];
    provider.onChange((uid) => changes.push(uid));
    const pod = staticPod('u1');

    const pending = provider.statusFor(pod, clock.now());
    assert.equal(pending.phase, 'Pending');
    assert.deepEqual(conditionStatus(pending), {
      PodReadyToStartContainers: 'True',
      Initialized: 'True',
      Ready: 'False',
      ContainersReady: 'False',
      PodScheduled: 'True',
    });
    assert.equal(pending.conditions?.find((c) => c.type === 'Ready')?.reason, 'ContainersNotReady');
    assert.deepEqual(pending.containerStatuses?.map((c) => c.state?.waiting?.reason), ['ContainerCreating', 'ContainerCreating']);
    // Whole seconds, as the API server stores times.
    assert.equal(pending.startTime?.toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(pending.hostIP, '10.0.0.5');
    assert.equal(pending.podIP, '10.244.0.9');

    await clock.advance(999);
    assert.deepEqual(changes, []);
    assert.equal(provider.statusFor(pod, clock.now()).phase, 'Pending');

    await clock.advance(1);
    assert.deepEqual(changes, ['u1']);
    const running = provider.statusFor(pod, clock.now());
    assert.equal(running.phase, 'Running');
    assert.deepEqual(conditionStatus(running), {
      PodReadyToStartContainers: 'True',
      Initialized: 'True',
      Ready: 'True',
      ContainersReady: 'True',
      PodScheduled: 'True',
    });
    assert.deepEqual(
      running.containerStatuses?.map((c) => ({ ...c, state: Object.keys(c.state ?? {}) })),
      [
        { name: 'app', image: 'nginx:1.27', imageID: '', containerID: 'kubelet-pods://u1/app', restartCount: 0, ready: true, started: true, state: ['running'] },
        { name: 'side', image: 'busybox', imageID: '', containerID: 'kubelet-pods://u1/side', restartCount: 0, ready: true, started: true, state: ['running'] },
      ],
    );
    assert.equal(running.startTime?.toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(running.containerStatuses?.[0]?.state?.running?.startedAt?.toISOString(), '2026-01-01T00:00:01.000Z');
    assert.equal(clock.pendingTimers, 0);
  });

  it('answers the same status for the same state and time (nothing to re-send)', () => {
    const clock = new FakeClock();
    const provider = createSimulatedStatusProvider({ clock });
    const pod = staticPod('u2');
    const a = provider.statusFor(pod, clock.now());
    const b = provider.statusFor(pod, clock.now());
    assert.deepEqual(a, b);
    provider.stop();
  });

  it('reports the host IP as pod IP for host-network pods', () => {
    const clock = new FakeClock();
    const provider = createSimulatedStatusProvider({ clock, hostIP: '10.0.0.5', podIP: '10.244.0.9' });
    const status = provider.statusFor(staticPod('u3', { hostNetwork: true }), clock.now());
    assert.equal(status.podIP, '10.0.0.5');
    assert.deepEqual(status.podIPs, [{ ip: '10.0.0.5' }]);
    provider.stop();
  });

  it('completes init containers and runs sidecars once Running', async () => {
    const clock = new FakeClock();
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 10 });
    const pod = staticPod('u4', {
      initContainers: [
        { name: 'init', image: 'busybox' },
        { name: 'sidecar', image: 'envoy', restartPolicy: 'Always' },
      ],
    });
    assert.deepEqual(provider.statusFor(pod, clock.now()).initContainerStatuses?.map((c) => c.state?.waiting?.reason), ['PodInitializing', 'PodInitializing']);
    await clock.advance(10);
    const inits = provider.statusFor(pod, clock.now()).initContainerStatuses ?? [];
    assert.equal(inits[0]?.state?.terminated?.reason, 'Completed');
    assert.equal(inits[0]?.state?.terminated?.exitCode, 0);
    assert.ok(inits[1]?.state?.running);
  });

  it('clears its timers on stop and on forget, and notifies nobody afterwards', async () => {
    const clock = new FakeClock();
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 100 });
    const changes: string[] = [];
    provider.onChange((uid) => changes.push(uid));
    provider.statusFor(staticPod('a'), clock.now());
    provider.statusFor(staticPod('b'), clock.now());
    assert.equal(clock.pendingTimers, 2);
    provider.forget('a');
    assert.equal(clock.pendingTimers, 1);
    provider.stop();
    assert.equal(clock.pendingTimers, 0);
    await clock.advance(1000);
    assert.deepEqual(changes, []);
  });

  it('is Running at once with startDelayMs 0', () => {
    const clock = new FakeClock();
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 0 });
    assert.equal(provider.statusFor(staticPod('z'), clock.now()).phase, 'Running');
    assert.equal(clock.pendingTimers, 0);
  });

  it('rejects a negative startDelayMs', () => {
    assert.throws(() => createSimulatedStatusProvider({ startDelayMs: -1 }), (err: unknown) => hasErrorCode(err, 'KP_ERR_STATUS_OPTIONS'));
  });
});
