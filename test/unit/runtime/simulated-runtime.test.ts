// The simulated status provider: kubelet-pods' stand-in for the container runtime's view,
// shaped like the statuses pkg/kubelet/status/generate.go and kubelet_pods.go produce
// (generateAPIPodStatus, convertToAPIContainerStatuses) with the prober's started and ready.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodStatus } from '@kubernetes/client-node';
import { hasErrorCode } from '../../../src/errors.js';
import type { Pod } from '../../../src/pod/types.js';
import { parseCidr, parseIP } from '../../../src/values/ip.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

function staticPod(uid: string, extra: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: { name: `web-${uid}`, namespace: 'default', uid },
    spec: { nodeName: 'node-a', containers: [{ name: 'app', image: 'nginx:1.27' }, { name: 'side', image: 'busybox' }], ...extra },
  };
}

const conditionStatus = (status: V1PodStatus) => Object.fromEntries((status.conditions ?? []).map((c) => [c.type, c.status]));
const condition = (status: V1PodStatus, type: string) => status.conditions?.find((c) => c.type === type);

const inCidr = (cidr: string, ip: string): boolean => {
  const net = parseCidr(cidr)!;
  const addr = parseIP(ip)!;
  return addr.family === net.family && addr.value >= net.network && addr.value < net.network + net.size;
};

describe('createSimulatedStatusProvider', () => {
  it('is Pending when first seen, then Running after startDelayMs, with a notification', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00.700Z'));
    const provider = createSimulatedStatusProvider({ startDelayMs: 1000, clock, hostIP: '10.0.0.5', podCIDR: '10.244.0.0/24' });
    const changes: string[] = [];
    provider.onChange((uid) => changes.push(uid));
    const pod = staticPod('u1');

    const pending = provider.statusFor(pod, clock.now());
    assert.equal(pending.phase, 'Pending');
    assert.deepEqual(conditionStatus(pending), {
      PodReadyToStartContainers: 'False',
      Initialized: 'True',
      Ready: 'False',
      ContainersReady: 'False',
      PodScheduled: 'True',
    });
    for (const type of ['Ready', 'ContainersReady']) {
      assert.equal(condition(pending, type)?.reason, 'ContainersNotReady');
      assert.equal(condition(pending, type)?.message, 'containers with unready status: [app side]');
    }
    assert.deepEqual(
      pending.containerStatuses,
      ['app', 'side'].map((name, i) => ({
        name,
        image: ['nginx:1.27', 'busybox'][i],
        imageID: '',
        ready: false,
        restartCount: 0,
        started: false,
        state: { waiting: { reason: 'ContainerCreating' } },
      })),
      'waiting containers: no containerID, resources or mounts yet',
    );
    // Whole seconds, as the API server stores times.
    assert.equal(pending.startTime?.toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(pending.hostIP, '10.0.0.5');
    assert.deepEqual(pending.hostIPs, [{ ip: '10.0.0.5' }]);
    assert.equal(pending.podIP, undefined, 'no pod address before the sandbox is ready');

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
    assert.ok(running.conditions?.every((c) => c.reason === undefined && c.message === undefined));
    const startedAt = new Date('2026-01-01T00:00:01.000Z');
    assert.deepEqual(running.containerStatuses, [
      {
        name: 'app',
        image: 'nginx:1.27',
        imageID: 'nginx:1.27',
        containerID: 'kubelet-pods://u1/app',
        ready: true,
        restartCount: 0,
        started: true,
        state: { running: { startedAt } },
        resources: {},
      },
      {
        name: 'side',
        image: 'busybox',
        imageID: 'busybox',
        containerID: 'kubelet-pods://u1/side',
        ready: true,
        restartCount: 0,
        started: true,
        state: { running: { startedAt } },
        resources: {},
      },
    ]);
    assert.equal(running.startTime?.toISOString(), '2026-01-01T00:00:00.000Z');
    // Conditions that changed carry the time they changed; PodScheduled and Initialized were
    // True from the start.
    assert.equal(condition(running, 'Ready')?.lastTransitionTime?.toISOString(), startedAt.toISOString());
    assert.equal(condition(running, 'PodScheduled')?.lastTransitionTime?.toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(condition(running, 'Initialized')?.lastTransitionTime?.toISOString(), '2026-01-01T00:00:00.000Z');
    assert.ok(running.podIP !== undefined && inCidr('10.244.0.0/24', running.podIP), `pod IP ${running.podIP} from the pod CIDR`);
    assert.deepEqual(running.podIPs, [{ ip: running.podIP }]);
    assert.equal(running.hostIP, '10.0.0.5');
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

  it('gives host-network pods the node IP as pod IP from the start, and no address from the pod CIDR', () => {
    const clock = new FakeClock();
    // A /30 has room for one pod: a host-network pod must not take it.
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 0, hostIP: '10.0.0.5', podCIDR: '10.244.0.0/30' });
    const host = provider.statusFor(staticPod('h1', { hostNetwork: true }), clock.now());
    assert.equal(host.phase, 'Running');
    assert.equal(host.podIP, '10.0.0.5');
    assert.deepEqual(host.podIPs, [{ ip: '10.0.0.5' }]);
    assert.equal(host.hostIP, '10.0.0.5');
    const other = provider.statusFor(staticPod('p1'), clock.now());
    assert.equal(other.podIP, '10.244.0.2');

    const delayed = createSimulatedStatusProvider({ clock, startDelayMs: 1000, hostIP: '10.0.0.5' });
    const pending = delayed.statusFor(staticPod('h2', { hostNetwork: true }), clock.now());
    assert.equal(pending.phase, 'Pending');
    assert.equal(pending.podIP, '10.0.0.5', 'a host-network pod has its address before its sandbox is ready');
    delayed.stop();
  });

  it('reports no hostIP without one, and a pod IP all the same', () => {
    const clock = new FakeClock();
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 0 });
    const status = provider.statusFor(staticPod('n1'), clock.now());
    assert.equal(status.hostIP, undefined);
    assert.equal(status.hostIPs, undefined);
    assert.ok(status.podIP !== undefined && inCidr('10.88.0.0/16', status.podIP), 'the default pod CIDR is 10.88.0.0/16');
    assert.equal(provider.statusFor(staticPod('n2', { hostNetwork: true }), clock.now()).podIP, undefined);
  });

  it('gives each pod the address its UID hashes to, the same in another provider, and distinct addresses to distinct pods', () => {
    const clock = new FakeClock();
    const options = { clock, startDelayMs: 0, hostIP: '10.0.0.5', podCIDR: '10.244.0.0/16' };
    const a = createSimulatedStatusProvider(options);
    const b = createSimulatedStatusProvider(options);
    const uids = Array.from({ length: 200 }, (_, i) => `uid-${i}`);
    const fromA = uids.map((uid) => a.statusFor(staticPod(uid), clock.now()).podIP);
    // Asked in the opposite order, the other provider agrees (no collisions in 65,533 addresses
    // for these 200 UIDs, so the hash alone decides).
    const fromB = [...uids].reverse().map((uid) => b.statusFor(staticPod(uid), clock.now()).podIP).reverse();
    assert.deepEqual(fromB, fromA);
    assert.equal(new Set(fromA).size, uids.length);
    assert.deepEqual(a.statusFor(staticPod('uid-7'), clock.now()).podIP, fromA[7], 'asked again, same address');
  });

  it('keeps a pod Pending while the pod CIDR is full, and starts it once another pod is forgotten', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    // A /29: eight addresses, five for pods (not the network, gateway or last address).
    const full: string[] = [];
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 500, hostIP: '192.168.9.9', podCIDR: '10.1.0.0/29', onRangeFull: (r) => full.push(`${r.cidr} ${r.capacity}`) });
    const changes: string[] = [];
    provider.onChange((uid) => changes.push(uid));
    for (let i = 0; i < 6; i++) provider.statusFor(staticPod(`p${i}`), clock.now());
    provider.statusFor(staticPod('p6'), clock.now());
    assert.deepEqual(full, ['10.1.0.0/29 5'], 'told once, when the first pod began to wait');
    await clock.advance(500);
    assert.deepEqual(changes.sort(), ['p0', 'p1', 'p2', 'p3', 'p4']);
    const addresses = ['p0', 'p1', 'p2', 'p3', 'p4'].map((uid) => provider.statusFor(staticPod(uid), clock.now()).podIP);
    assert.deepEqual([...addresses].sort(), ['10.1.0.2', '10.1.0.3', '10.1.0.4', '10.1.0.5', '10.1.0.6']);

    const stuck = provider.statusFor(staticPod('p5'), clock.now());
    assert.equal(stuck.phase, 'Pending');
    assert.equal(condition(stuck, 'PodReadyToStartContainers')?.status, 'False');
    assert.equal(stuck.podIP, undefined);
    await clock.advance(10_000);
    assert.equal(provider.statusFor(staticPod('p5'), clock.now()).phase, 'Pending', 'still no room');

    changes.length = 0;
    provider.forget('p2');
    assert.equal(provider.statusFor(staticPod('p5'), clock.now()).phase, 'Pending', 'its start delay begins now');
    await clock.advance(500);
    assert.deepEqual(changes, ['p5']);
    const started = provider.statusFor(staticPod('p5'), clock.now());
    assert.equal(started.phase, 'Running');
    assert.equal(started.podIP, addresses[2], 'the freed address');
    provider.statusFor(staticPod('p7'), clock.now());
    assert.equal(full.length, 1, 'p6 still waits: the same spell');
    provider.forget('p6');
    provider.forget('p7');
    provider.statusFor(staticPod('p8'), clock.now());
    assert.equal(full.length, 2, 'a new spell of waiting is told again');
    provider.stop();
  });

  it('never hands out the node IP when it lies in the pod CIDR', () => {
    const clock = new FakeClock();
    // Room for one pod: 10.2.0.2, which is the node's.
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 0, hostIP: '10.2.0.2', podCIDR: '10.2.0.0/30' });
    assert.equal(provider.statusFor(staticPod('x'), clock.now()).phase, 'Pending');
    provider.stop();
  });

  it('hands out IPv6 addresses from an IPv6 pod CIDR', () => {
    const clock = new FakeClock();
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 0, hostIP: 'fd00::2', podCIDR: 'fd00:10:244::/64' });
    const status = provider.statusFor(staticPod('v6'), clock.now());
    assert.ok(status.podIP !== undefined && inCidr('fd00:10:244::/64', status.podIP), String(status.podIP));
    assert.equal(status.hostIP, 'fd00::2');
  });

  it('fills resources, allocatedResources and volumeMounts of started containers', () => {
    const clock = new FakeClock();
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 0 });
    const pod = staticPod('r1', {
      containers: [
        {
          name: 'app',
          image: 'nginx',
          resources: { requests: { cpu: '0.25' }, limits: { memory: '1024Mi' } },
          volumeMounts: [
            { name: 'certs', mountPath: '/etc/certs', readOnly: true },
            { name: 'data', mountPath: '/data' },
          ],
        },
      ],
    });
    const [app] = provider.statusFor(pod, clock.now()).containerStatuses ?? [];
    assert.deepEqual(app?.resources, { limits: { memory: '1Gi' }, requests: { cpu: '250m', memory: '1Gi' } });
    assert.deepEqual(app?.allocatedResources, { cpu: '250m', memory: '1Gi' });
    assert.deepEqual(app?.volumeMounts, [
      { name: 'certs', mountPath: '/etc/certs', readOnly: true, recursiveReadOnly: 'Disabled' },
      { name: 'data', mountPath: '/data' },
    ]);
  });

  it('lists mounts of waiting containers too, but no resources', () => {
    const clock = new FakeClock();
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 100 });
    const pod = staticPod('w1', {
      containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '1' } }, volumeMounts: [{ name: 'v', mountPath: '/v' }] }],
    });
    const [app] = provider.statusFor(pod, clock.now()).containerStatuses ?? [];
    assert.deepEqual(app?.volumeMounts, [{ name: 'v', mountPath: '/v' }]);
    assert.equal(app?.resources, undefined);
    assert.equal(app?.allocatedResources, undefined);
    provider.stop();
  });

  it('honours recursive read-only mounts when the simulated runtime supports them', () => {
    const clock = new FakeClock();
    const pod = staticPod('rro', {
      containers: [{ name: 'app', image: 'nginx', volumeMounts: [{ name: 'v', mountPath: '/v', readOnly: true, recursiveReadOnly: 'IfPossible' }] }],
    });
    const mode = (supports: boolean) =>
      createSimulatedStatusProvider({ clock, startDelayMs: 0, recursiveReadOnlyMounts: supports }).statusFor(pod, clock.now()).containerStatuses?.[0]
        ?.volumeMounts?.[0]?.recursiveReadOnly;
    assert.equal(mode(true), 'Enabled');
    assert.equal(mode(false), 'Disabled');
  });

  it('completes init containers and runs sidecars once Running; Initialized waits for them', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 2000 });
    const pod = staticPod('u4', {
      initContainers: [
        { name: 'init', image: 'busybox', volumeMounts: [{ name: 'w', mountPath: '/w' }] },
        { name: 'sidecar', image: 'envoy', restartPolicy: 'Always' },
      ],
    });
    const pending = provider.statusFor(pod, clock.now());
    assert.deepEqual(pending.initContainerStatuses?.map((c) => c.state?.waiting?.reason), ['PodInitializing', 'PodInitializing']);
    assert.deepEqual(pending.containerStatuses?.map((c) => c.state?.waiting?.reason), ['PodInitializing', 'PodInitializing']);
    assert.deepEqual(
      { status: condition(pending, 'Initialized')?.status, reason: condition(pending, 'Initialized')?.reason, message: condition(pending, 'Initialized')?.message },
      { status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [init sidecar]' },
    );
    assert.equal(condition(pending, 'ContainersReady')?.message, 'containers with unready status: [sidecar app side]', 'sidecars count for readiness');

    await clock.advance(2000);
    const running = provider.statusFor(pod, clock.now());
    const [init, sidecar] = running.initContainerStatuses ?? [];
    const at = new Date('2026-01-01T00:00:02Z');
    assert.deepEqual(init, {
      name: 'init',
      image: 'busybox',
      imageID: 'busybox',
      containerID: 'kubelet-pods://u4/init',
      ready: true,
      restartCount: 0,
      started: false,
      state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: at, finishedAt: at, containerID: 'kubelet-pods://u4/init' } },
      resources: {},
      volumeMounts: [{ name: 'w', mountPath: '/w' }],
    });
    assert.deepEqual({ ready: sidecar?.ready, started: sidecar?.started, running: sidecar?.state?.running?.startedAt }, { ready: true, started: true, running: at });
    assert.equal(condition(running, 'Initialized')?.status, 'True');
    assert.equal(condition(running, 'Initialized')?.lastTransitionTime?.toISOString(), at.toISOString());
  });

  it('keeps Ready False while a readiness gate is not met by the static pod\'s own conditions', () => {
    const clock = new FakeClock();
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 0 });
    const gated = (uid: string, conditions: Array<{ type: string; status: string }>): Pod => ({
      ...staticPod(uid, { readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }] }),
      status: { conditions },
    });
    const none = provider.statusFor(gated('g1', [{ type: 'example.com/dns', status: 'False' }]), clock.now());
    assert.equal(condition(none, 'ContainersReady')?.status, 'True');
    assert.deepEqual(
      { status: condition(none, 'Ready')?.status, reason: condition(none, 'Ready')?.reason, message: condition(none, 'Ready')?.message },
      {
        status: 'False',
        reason: 'ReadinessGatesNotReady',
        message: 'corresponding condition of pod readiness gate "example.com/lb" does not exist., the status of pod readiness gate "example.com/dns" is not "True", but False',
      },
    );
    const met = provider.statusFor(
      gated('g2', [
        { type: 'example.com/lb', status: 'True' },
        { type: 'example.com/dns', status: 'True' },
      ]),
      clock.now(),
    );
    assert.equal(condition(met, 'Ready')?.status, 'True');
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

  it('rejects a negative startDelayMs, a hostIP that is no IP and an unusable pod CIDR', () => {
    const invalid = (option: string) => (err: unknown) => hasErrorCode(err, 'KP_ERR_STATUS_OPTIONS') && (err as Error).message.includes(option);
    assert.throws(() => createSimulatedStatusProvider({ startDelayMs: -1 }), invalid('startDelayMs'));
    assert.throws(() => createSimulatedStatusProvider({ hostIP: 'node-a' }), invalid('hostIP'));
    assert.throws(() => createSimulatedStatusProvider({ podCIDR: '10.0.0.0' }), invalid('podCIDR'));
    assert.throws(() => createSimulatedStatusProvider({ podCIDR: '10.0.0.0/31' }), invalid('podCIDR'));
  });
});
