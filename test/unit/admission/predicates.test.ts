// The admission checks beyond resources and node affinity: the OS label and field, node name,
// host ports and NoExecute taints, with the kubelet's reasons, messages and order
// (pkg/kubelet/lifecycle/predicate.go, scheduler AdmissionCheck, v1.34).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Container } from '@kubernetes/client-node';
import {
  admitPod,
  createPodAdmission,
  NODE_NAME_REJECTION,
  NODE_PORTS_REJECTION,
  OS_FIELD_REJECTION,
  OS_LABEL_REJECTION,
  TAINT_REJECTION,
} from '../../../src/admission/pod-admission.js';
import { hostPortsConflict, hostPortsOf } from '../../../src/admission/node-ports.js';
import { toleratesTaint, untoleratedNoExecuteTaint } from '../../../src/admission/taints.js';
import type { Pod } from '../../../src/pod/types.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

const pod = (name: string, source: 'file' | 'api', spec: Partial<NonNullable<Pod['spec']>> = {}, labels?: Record<string, string>): Pod => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations: { 'kubernetes.io/config.source': source }, ...(labels ? { labels } : {}) },
  spec: { containers: [{ name: 'c', image: 'img' }], ...spec },
});
const withPorts = (ports: V1Container['ports'], extra: Partial<V1Container> = {}): V1Container[] => [{ name: 'c', image: 'img', ports, ...extra }];
const node = {
  metadata: { name: 'node-a', labels: { 'kubernetes.io/os': 'linux' } },
  spec: { taints: [{ key: 'maintenance', value: 'yes', effect: 'NoExecute' }, { key: 'gpu', effect: 'NoSchedule' }] },
  status: { allocatable: { pods: '10' } },
};

describe('OS checks (before any predicate, for every pod)', () => {
  it("a pod labelled kubernetes.io/os with another OS: PodOSSelectorNodeLabelDoesNotMatch, the kubelet's message", () => {
    const result = admitPod(pod('w', 'file', {}, { 'kubernetes.io/os': 'windows' }), [], node);
    assert.deepEqual(result, { admit: false, ...OS_LABEL_REJECTION });
    assert.equal(OS_LABEL_REJECTION.message, "Pod was rejected: Failed to admit pod as the `kubernetes.io/os` label doesn't match node label");
    assert.deepEqual(admitPod(pod('l', 'file', {}, { 'kubernetes.io/os': 'linux' }), [], node), { admit: true });
  });

  it('the label is compared with the OS the node runs, not the label the Node object carries', () => {
    const relabelled = { ...node, metadata: { name: 'node-a', labels: { 'kubernetes.io/os': 'windows' } } };
    assert.equal(admitPod(pod('w', 'file', {}, { 'kubernetes.io/os': 'windows' }), [], relabelled).admit, false);
  });

  it('spec.os.name other than linux: PodOSNotSupported, checked after the label', () => {
    assert.deepEqual(admitPod(pod('w', 'api', { os: { name: 'windows' } }), [], node), { admit: false, ...OS_FIELD_REJECTION });
    assert.equal(OS_FIELD_REJECTION.message, "Pod was rejected: Failed to admit pod as the OS field doesn't match node OS");
    assert.deepEqual(admitPod(pod('w', 'api', { os: { name: 'windows' } }, { 'kubernetes.io/os': 'windows' }), [], node), { admit: false, ...OS_LABEL_REJECTION });
    assert.equal(admitPod(pod('l', 'api', { os: { name: 'linux' }, tolerations: [{ operator: 'Exists' }] }), [], node).admit, true);
  });

  it('an OS mismatch is reported before a full node, even for a critical pod (no eviction could help)', () => {
    const full = { ...node, status: { allocatable: { pods: '0' } } };
    assert.equal((admitPod(pod('w', 'file', { os: { name: 'windows' } }), [], full) as { reason: string }).reason, 'PodOSNotSupported');
  });
});

describe('NoExecute taints (pods from the API server only)', () => {
  it("an API pod not tolerating a NoExecute taint: TaintToleration, the scheduler's reason", () => {
    assert.deepEqual(admitPod(pod('a', 'api'), [], node), { admit: false, ...TAINT_REJECTION });
    assert.equal(TAINT_REJECTION.message, "Pod was rejected: Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate");
  });

  it('a static pod is admitted whatever the taints', () => {
    assert.deepEqual(admitPod(pod('s', 'file'), [], node), { admit: true });
  });

  it('a NoSchedule taint is not checked; a toleration of the NoExecute one admits', () => {
    assert.deepEqual(admitPod(pod('a', 'api', { tolerations: [{ key: 'maintenance', operator: 'Equal', value: 'yes', effect: 'NoExecute' }] }), [], node), { admit: true });
  });

  const taint = { key: 'k', value: 'v', effect: 'NoExecute' };
  const cases: Array<[string, Parameters<typeof toleratesTaint>[0], boolean]> = [
    ['Exists with no key tolerates everything', { operator: 'Exists' }, true],
    ['Exists on the key', { key: 'k', operator: 'Exists' }, true],
    ['Equal on key and value', { key: 'k', operator: 'Equal', value: 'v' }, true],
    ['no operator means Equal', { key: 'k', value: 'v' }, true],
    ['Equal with another value', { key: 'k', operator: 'Equal', value: 'w' }, false],
    ['another key', { key: 'j', operator: 'Exists' }, false],
    ['another effect', { key: 'k', operator: 'Exists', effect: 'NoSchedule' }, false],
    ['an unknown operator', { key: 'k', operator: 'Gt', value: 'v' }, false],
  ];
  for (const [desc, toleration, want] of cases) it(`toleratesTaint: ${desc}`, () => assert.equal(toleratesTaint(toleration, taint), want));

  it('untoleratedNoExecuteTaint names the first NoExecute taint left untolerated', () => {
    const taints = [{ key: 'a', effect: 'NoSchedule' }, { key: 'b', effect: 'NoExecute' }, { key: 'c', effect: 'NoExecute' }];
    assert.equal(untoleratedNoExecuteTaint(taints, [{ key: 'b', operator: 'Exists' }])?.key, 'c');
    assert.equal(untoleratedNoExecuteTaint(taints, [])?.key, 'b');
    assert.equal(untoleratedNoExecuteTaint(taints, [{ operator: 'Exists', effect: 'NoExecute' }]), undefined);
  });
});

describe('host ports (NodePorts)', () => {
  it('hostPortsOf: host ports of containers and sidecars, defaults filled in, container ports on the host network', () => {
    const p = pod('p', 'file', {
      initContainers: [
        { name: 'init', image: 'i', ports: [{ containerPort: 1, hostPort: 1001 }] },
        { name: 'side', image: 's', restartPolicy: 'Always', ports: [{ containerPort: 2, hostPort: 1002, protocol: 'UDP' }] },
      ],
      containers: withPorts([{ containerPort: 80 }, { containerPort: 443, hostPort: 8443, hostIP: '10.0.0.1' }]),
    });
    assert.deepEqual(hostPortsOf(p), [
      { ip: '0.0.0.0', protocol: 'UDP', port: 1002 },
      { ip: '10.0.0.1', protocol: 'TCP', port: 8443 },
    ]);
    const hostNet = pod('h', 'file', { hostNetwork: true, containers: withPorts([{ containerPort: 6443 }]) });
    assert.deepEqual(hostPortsOf(hostNet), [{ ip: '0.0.0.0', protocol: 'TCP', port: 6443 }]);
  });

  const used = [{ ip: '10.0.0.1', protocol: 'TCP', port: 80 }];
  const conflictCases: Array<[string, { ip: string; protocol: string; port: number }, boolean]> = [
    ['the same address, protocol and port', { ip: '10.0.0.1', protocol: 'TCP', port: 80 }, true],
    ['every address against one', { ip: '0.0.0.0', protocol: 'TCP', port: 80 }, true],
    ['another address', { ip: '10.0.0.2', protocol: 'TCP', port: 80 }, false],
    ['another protocol', { ip: '10.0.0.1', protocol: 'UDP', port: 80 }, false],
    ['another port', { ip: '10.0.0.1', protocol: 'TCP', port: 81 }, false],
  ];
  for (const [desc, wanted, want] of conflictCases) it(`hostPortsConflict: ${desc}`, () => assert.equal(hostPortsConflict([wanted], used), want));
  it('hostPortsConflict: one address against every address', () => {
    assert.equal(hostPortsConflict([{ ip: '10.0.0.9', protocol: 'TCP', port: 80 }], [{ ip: '0.0.0.0', protocol: 'TCP', port: 80 }]), true);
  });

  it("a second static pod wanting a held host port is rejected with NodePorts (not an eviction: the port is not a resource)", () => {
    const admission = createPodAdmission(() => node, new FakeClock(0));
    const a = pod('a', 'file', { hostNetwork: true, containers: withPorts([{ containerPort: 2379 }]) });
    const b = pod('b', 'file', { containers: withPorts([{ containerPort: 1, hostPort: 2379 }]) });
    const c = pod('c', 'file', { containers: withPorts([{ containerPort: 1, hostPort: 2379, protocol: 'UDP' }]) });
    admission.admitNew([a, b, c]);
    assert.equal(admission.rejection('uid-a'), undefined);
    assert.deepEqual({ ...admission.rejection('uid-b'), at: undefined }, { ...NODE_PORTS_REJECTION, at: undefined });
    assert.equal(admission.rejection('uid-c'), undefined, 'UDP is another port');
    // The holder removed: a new pod may take the port.
    admission.forget([a]);
    const d = pod('d', 'file', { containers: withPorts([{ containerPort: 1, hostPort: 2379 }]) });
    admission.admitNew([d]);
    assert.equal(admission.rejection('uid-d'), undefined);
  });

  it('an ordinary pod short of pods gets OutOfpods before NodePorts; a critical one gets NodePorts', () => {
    const full = { ...node, status: { allocatable: { pods: '1' } } };
    const holder = { length: 1, hostPorts: [{ ip: '0.0.0.0', protocol: 'TCP', port: 80 }] };
    const wants = (source: 'file' | 'api') => pod('x', source, { containers: withPorts([{ containerPort: 80, hostPort: 80 }]), tolerations: [{ operator: 'Exists' }] });
    assert.equal((admitPod(wants('api'), holder, full) as { reason: string }).reason, 'OutOfpods');
    assert.deepEqual(admitPod(wants('file'), holder, full), { admit: false, ...NODE_PORTS_REJECTION });
  });
});

describe('node name (NodeName)', () => {
  it('a pod bound to another node is rejected; one without a node name or with this one is not', () => {
    assert.deepEqual(admitPod(pod('a', 'file', { nodeName: 'node-b' }), [], node), { admit: false, ...NODE_NAME_REJECTION });
    assert.equal(NODE_NAME_REJECTION.message, "Pod was rejected: Predicate NodeName failed: node(s) didn't match the requested node name");
    assert.deepEqual(admitPod(pod('a', 'file', { nodeName: 'node-a' }), [], node), { admit: true });
  });
});
