// The Events the simulated runtime reports about containers, with the kubelet's reasons,
// types, messages and field paths (as recorded from the real kubelet by the differential
// suite): Pulling/Pulled, Created, Started on each start, SandboxChanged when a UID runs again,
// BackOff in a crash loop, Killing on stop. All on the FakeClock.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../../src/pod/types.js';
import { pullPolicyOf } from '../../../src/runtime/container-events.js';
import type { ContainerEvent } from '../../../src/status/status-provider.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import { SIMULATION_ANNOTATIONS } from '../../../src/runtime/simulation-annotations.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

function pod(uid: string, annotations: Record<string, string> = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'ns', uid, annotations: { 'kubernetes.io/config.source': 'file', ...annotations } },
    spec: {
      nodeName: 'n',
      initContainers: [{ name: 'prep', image: 'busybox:1.36' }],
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
    },
  };
}

function setup() {
  const clock = new FakeClock();
  // Cluster DNS configured: MissingClusterDNS has a test of its own.
  const runtime = createSimulatedStatusProvider({ clock, startDelayMs: 1000, clusterDNS: ['10.96.0.10'] });
  const events: ContainerEvent[] = [];
  runtime.onContainerEvent((e) => events.push(e));
  const shown = (): string[] => events.splice(0).map((e) => `${e.type} ${e.reason} ${e.fieldPath ?? '-'}: ${e.message}`);
  return { clock, runtime, shown };
}

describe('simulated runtime: container events', () => {
  it('a start: the image pulled the first time, present later; Created and Started per container, init containers first', async () => {
    const { clock, runtime, shown } = setup();
    runtime.statusFor(pod('a'), clock.now());
    assert.deepEqual(shown(), [], 'nothing before the containers start');
    await clock.advance(1000);
    assert.deepEqual(shown(), [
      'Normal Pulling spec.initContainers{prep}: Pulling image "busybox:1.36"',
      'Normal Pulled spec.initContainers{prep}: Successfully pulled image "busybox:1.36" in 0s (0s including waiting). Image size: 0 bytes.',
      'Normal Created spec.initContainers{prep}: Created container: prep',
      'Normal Started spec.initContainers{prep}: Started container prep',
      'Normal Pulling spec.containers{main}: Pulling image "registry.k8s.io/pause:3.10"',
      'Normal Pulled spec.containers{main}: Successfully pulled image "registry.k8s.io/pause:3.10" in 0s (0s including waiting). Image size: 0 bytes.',
      'Normal Created spec.containers{main}: Created container: main',
      'Normal Started spec.containers{main}: Started container main',
    ]);
    runtime.statusFor(pod('b'), clock.now());
    await clock.advance(1000);
    assert.deepEqual(shown().filter((e) => e.includes('Pulled') || e.includes('Pulling')), [
      'Normal Pulled spec.initContainers{prep}: Container image "busybox:1.36" already present on machine',
      'Normal Pulled spec.containers{main}: Container image "registry.k8s.io/pause:3.10" already present on machine',
    ]);
  });

  it('stop: Killing for each running container; the same UID again: SandboxChanged, then the starts', async () => {
    const { clock, runtime, shown } = setup();
    const p = pod('c');
    runtime.statusFor(p, clock.now());
    await clock.advance(1000);
    shown();
    const stopped = runtime.terminate(p, 30);
    await clock.advance(0);
    await stopped;
    assert.deepEqual(shown(), ['Normal Killing spec.containers{main}: Stopping container main']);
    runtime.forget('c');
    runtime.statusFor(p, clock.now());
    await clock.advance(1000);
    const again = shown();
    assert.equal(again[0], 'Normal SandboxChanged -: Pod sandbox changed, it will be killed and re-created.');
    assert.ok(again.includes('Normal Started spec.containers{main}: Started container main'));
  });

  it('a crash loop: the first restart starts again at once, a back-off wait reports BackOff', async () => {
    const { clock, runtime, shown } = setup();
    const p = pod('d', { [SIMULATION_ANNOTATIONS.exit]: 'main=1@5' });
    runtime.statusFor(p, clock.now());
    await clock.advance(1000);
    shown();
    await clock.advance(5000);
    assert.deepEqual(shown(), [
      'Normal Pulled spec.containers{main}: Container image "registry.k8s.io/pause:3.10" already present on machine',
      'Normal Created spec.containers{main}: Created container: main',
      'Normal Started spec.containers{main}: Started container main',
    ]);
    await clock.advance(5000);
    assert.deepEqual(shown(), ['Warning BackOff spec.containers{main}: Back-off restarting failed container main in pod web_ns(d)']);
  });

  it('MissingClusterDNS at each sandbox of a pod that asks for cluster DNS, unless clusterDNS is configured', async () => {
    const clock = new FakeClock();
    const events: ContainerEvent[] = [];
    const missing = createSimulatedStatusProvider({ clock, startDelayMs: 0 });
    missing.onContainerEvent((e) => events.push(e));
    const hostNet = (uid: string, dnsPolicy?: string): Pod => ({ ...pod(uid), spec: { ...pod(uid).spec!, hostNetwork: true, ...(dnsPolicy ? { dnsPolicy } : {}) } });
    for (const p of [pod('e'), hostNet('f'), hostNet('g', 'ClusterFirstWithHostNet'), { ...pod('h'), spec: { ...pod('h').spec!, dnsPolicy: 'Default' } }]) {
      missing.statusFor(p, clock.now());
    }
    const dns = events.filter((e) => e.reason === 'MissingClusterDNS');
    assert.deepEqual(dns.map((e) => e.pod.metadata?.uid), ['e', 'g'], 'ClusterFirst off the host network, and ClusterFirstWithHostNet');
    assert.equal(dns[0]!.type, 'Warning');
    assert.equal(dns[0]!.fieldPath, undefined);
    assert.equal(
      dns[0]!.message,
      'pod: "web_ns(e)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
    );
    assert.match(dns[0]!.nodeMessage ?? '', /^kubelet does not have ClusterDNS IP configured/);
    const configured = createSimulatedStatusProvider({ clock, startDelayMs: 0, clusterDNS: ['10.96.0.10'] });
    const none: ContainerEvent[] = [];
    configured.onContainerEvent((e) => none.push(e));
    configured.statusFor(pod('i'), clock.now());
    assert.deepEqual(none.filter((e) => e.reason === 'MissingClusterDNS'), []);
  });

  it('the pull policy the API server would default', () => {
    assert.equal(pullPolicyOf({ name: 'x', image: 'nginx' }), 'Always');
    assert.equal(pullPolicyOf({ name: 'x', image: 'nginx:latest' }), 'Always');
    assert.equal(pullPolicyOf({ name: 'x', image: 'localhost:5000/nginx' }), 'Always');
    assert.equal(pullPolicyOf({ name: 'x', image: 'nginx:1.27' }), 'IfNotPresent');
    assert.equal(pullPolicyOf({ name: 'x', image: 'nginx@sha256:abc' }), 'IfNotPresent');
    assert.equal(pullPolicyOf({ name: 'x', image: 'nginx:1.27', imagePullPolicy: 'Never' }), 'Never');
  });
});
