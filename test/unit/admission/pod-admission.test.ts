// Admission by the node's pods allocatable (maxPods): who is admitted, who is rejected and
// for how long, and the status a rejected pod reports.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodStatus } from '@kubernetes/client-node';
import { admitPod, createPodAdmission, heldRequests, NODE_AFFINITY_REJECTION, podRequests, withAdmission } from '../../../src/admission/pod-admission.js';
import type { Pod } from '../../../src/pod/types.js';
import type { StatusProvider } from '../../../src/status/status-provider.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

const staticPod = (name: string): Pod => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations: { 'kubernetes.io/config.source': 'file' } },
  spec: { containers: [{ name: 'c', image: `img-${name}` }] },
});
const apiPod = (name: string): Pod => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations: { 'kubernetes.io/config.source': 'api' } },
  spec: { containers: [{ name: 'c', image: 'img' }] },
});
const mirrorOf = (name: string): Pod => ({
  metadata: { name, namespace: 'default', uid: `mirror-${name}`, annotations: { 'kubernetes.io/config.mirror': 'x', 'kubernetes.io/config.source': 'api' } },
  spec: { containers: [{ name: 'c', image: 'img' }] },
});
const node = (pods: number) => ({ status: { allocatable: { pods: String(pods) } } });

describe('admitPod', () => {
  it('admits while fewer pods than the pods allocatable are active', () => {
    assert.deepEqual(admitPod(staticPod('a'), [], node(1)), { admit: true });
    assert.deepEqual(admitPod(staticPod('b'), [staticPod('a')], node(2)), { admit: true });
  });

  it('rejects a static (critical) pod with UnexpectedAdmissionError, another pod with OutOfpods', () => {
    const full = [staticPod('a'), staticPod('b')];
    const critical = admitPod(staticPod('c'), full, node(2));
    assert.equal(critical.admit, false);
    assert.equal(!critical.admit && critical.reason, 'UnexpectedAdmissionError');
    assert.match(!critical.admit ? critical.message : '', /^Pod was rejected: /);
    const regular = admitPod(apiPod('d'), full, node(2));
    assert.equal(!regular.admit && regular.reason, 'OutOfpods');
  });

  it('admits everything when the node says nothing about pods', () => {
    assert.deepEqual(admitPod(staticPod('a'), [staticPod('b')], {}), { admit: true });
  });
});

describe('createPodAdmission', () => {
  it('decides new pods in order, keeps decisions, skips mirrors and frees slots on removal', () => {
    const clock = new FakeClock(Date.parse('2026-05-01T12:00:00.700Z'));
    const admission = createPodAdmission(() => node(2), clock);
    const [a, b, c] = [staticPod('a'), staticPod('b'), staticPod('c')];
    admission.admitNew([a, mirrorOf('a'), b, c]);
    assert.equal(admission.rejection('uid-a'), undefined);
    assert.equal(admission.rejection('uid-b'), undefined);
    assert.equal(admission.rejection('uid-c')?.reason, 'UnexpectedAdmissionError');
    assert.equal(admission.rejection('uid-c')?.at.toISOString(), '2026-05-01T12:00:00.000Z');
    // Seen again (a resync): no new decision, the rejection stays although nothing changed.
    admission.admitNew([c]);
    assert.ok(admission.rejection('uid-c'));
    // A removal frees a slot for a pod added later, not for the rejected one.
    admission.forget([a]);
    admission.admitNew([c, staticPod('d')]);
    assert.ok(admission.rejection('uid-c'), 'a rejected pod is not admitted later');
    assert.equal(admission.rejection('uid-d'), undefined);
    admission.admitNew([staticPod('e')]);
    assert.ok(admission.rejection('uid-e'));
    admission.forget([c]);
    assert.equal(admission.rejection('uid-c'), undefined, 'forgotten');
  });
});

describe('admitted pods\' requests', () => {
  it('equal requests are one frozen object, for every node', () => {
    const a = heldRequests({ milliCPU: 250, memory: 128 * 2 ** 20 });
    assert.equal(heldRequests({ milliCPU: 250, memory: 128 * 2 ** 20 }), a);
    assert.ok(Object.isFrozen(a));
    assert.deepEqual(a, { milliCPU: 250, memory: 128 * 2 ** 20 });
    assert.notEqual(heldRequests({ milliCPU: 250, memory: 0 }), a);
  });

  it('an admitted pod costs its map entry, not an object of its own', async () => {
    const admission = createPodAdmission(() => node(100_000), new FakeClock());
    const pods = Array.from({ length: 60_000 }, (_, i) => ({
      ...apiPod(`p${i}`),
      spec: { containers: [{ name: 'c', image: 'img', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
    }));
    const bytes = await retainedBytesPer(pods.length, (i) => admission.admitNew([pods[i]!]));
    assert.equal(admission.rejection('uid-p59999'), undefined);
    // The entry, about 31 bytes at 60,000 (the table nearly full); its own requests, 40 more.
    assert.ok(bytes < 50, `${bytes.toFixed(1)} bytes per admitted pod`);
  });
});

describe('withAdmission', () => {
  it('answers Failed for a rejected pod and asks the inner provider about the others', () => {
    const asked: string[] = [];
    let forgotten = '';
    const inner: StatusProvider = {
      statusFor: (pod) => (asked.push(pod.metadata?.name ?? ''), { phase: 'Running' }),
      forget: (uid) => (forgotten = uid),
    };
    const admission = createPodAdmission(() => node(1), new FakeClock(Date.parse('2026-05-01T12:00:00Z')));
    const [a, b] = [staticPod('a'), staticPod('b')];
    admission.admitNew([a, b]);
    const provider = withAdmission(inner, admission, { hostIP: '10.0.0.7' });
    assert.equal(provider.onChange, undefined, 'no onChange when the inner provider has none');
    assert.equal(provider.statusFor(a, new Date()).phase, 'Running');
    const status: V1PodStatus = provider.statusFor(b, new Date());
    assert.deepEqual(asked, ['a']);
    assert.equal(status.phase, 'Failed');
    assert.equal(status.reason, 'UnexpectedAdmissionError');
    assert.equal(status.hostIP, '10.0.0.7', 'bound to the node: its address');
    assert.deepEqual(status.hostIPs, [{ ip: '10.0.0.7' }]);
    assert.equal(status.podIP, undefined, 'never got a sandbox');
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [
        ['PodReadyToStartContainers', 'False', undefined],
        ['Initialized', 'True', undefined],
        ['Ready', 'False', 'PodFailed'],
        ['ContainersReady', 'False', 'PodFailed'],
        ['PodScheduled', 'True', undefined],
      ],
    );
    assert.equal(status.containerStatuses?.[0]?.state?.terminated?.reason, 'ContainerStatusUnknown');
    assert.equal(status.containerStatuses?.[0]?.state?.terminated?.exitCode, 137);
    assert.equal(status.containerStatuses?.[0]?.image, 'img-b');
    assert.deepEqual(provider.statusFor(b, new Date()), status, 'the same answer every time');
    provider.forget?.('uid-a');
    assert.equal(forgotten, 'uid-a');
  });
});

describe('node selector and required node affinity (GeneralPredicates NodeAffinity)', () => {
  const labelled = { metadata: { name: 'node-a', labels: { 'kubernetes.io/os': 'linux', zone: 'z1', gen: '5' } }, status: { allocatable: { pods: '10' } } };
  const withSpec = (spec: Record<string, unknown>): Pod => ({ ...staticPod('x'), spec: { ...staticPod('x').spec!, ...spec } });
  const term = (matchExpressions: unknown[], matchFields: unknown[] = []) => ({
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions, matchFields }] } } },
  });
  const cases: Array<{ desc: string; spec: Record<string, unknown>; admit: boolean }> = [
    { desc: 'nodeSelector matches', spec: { nodeSelector: { zone: 'z1' } }, admit: true },
    { desc: 'nodeSelector does not match', spec: { nodeSelector: { zone: 'z2' } }, admit: false },
    { desc: 'In', spec: term([{ key: 'zone', operator: 'In', values: ['z0', 'z1'] }]), admit: true },
    { desc: 'NotIn', spec: term([{ key: 'zone', operator: 'NotIn', values: ['z1'] }]), admit: false },
    { desc: 'Exists', spec: term([{ key: 'gen', operator: 'Exists' }]), admit: true },
    { desc: 'DoesNotExist', spec: term([{ key: 'gpu', operator: 'DoesNotExist' }]), admit: true },
    { desc: 'Gt', spec: term([{ key: 'gen', operator: 'Gt', values: ['4'] }]), admit: true },
    { desc: 'Lt', spec: term([{ key: 'gen', operator: 'Lt', values: ['4'] }]), admit: false },
    { desc: 'matchFields on metadata.name', spec: term([], [{ key: 'metadata.name', operator: 'In', values: ['node-b'] }]), admit: false },
    { desc: 'an empty term matches nothing', spec: term([]), admit: false },
  ];
  for (const c of cases) {
    it(c.desc, () => {
      const result = admitPod(withSpec(c.spec), [], labelled);
      if (c.admit) assert.deepEqual(result, { admit: true });
      else assert.deepEqual(result, { admit: false, ...NODE_AFFINITY_REJECTION });
    });
  }

  it('an ordinary pod gets the pods count first when both fail, a critical one node affinity', () => {
    // The kubelet evicts for a critical pod only when resources are all it lacks.
    const full = { ...labelled, status: { allocatable: { pods: '1' } } };
    const critical = admitPod(withSpec({ nodeSelector: { zone: 'z2' } }), [staticPod('a')], full);
    assert.equal(!critical.admit && critical.reason, 'NodeAffinity');
    const ordinary = admitPod({ ...apiPod('o'), spec: { ...apiPod('o').spec!, nodeSelector: { zone: 'z2' } } }, [staticPod('a')], full);
    assert.equal(!ordinary.admit && ordinary.reason, 'OutOfpods');
  });
});

describe('resource fit (GeneralPredicates: CPU and memory requests against allocatable)', () => {
  type Res = { cpu?: string; memory?: string };
  const container = (name: string, requests: Res = {}, restartPolicy?: string) => ({
    name,
    image: 'img',
    resources: { requests },
    ...(restartPolicy !== undefined ? { restartPolicy } : {}),
  });
  const podWith = (spec: Record<string, unknown>, source: 'file' | 'api' = 'api'): Pod => ({
    metadata: { name: 'p', namespace: 'default', uid: 'uid-p', annotations: { 'kubernetes.io/config.source': source } },
    spec: { containers: [container('c')], ...spec } as Pod['spec'],
  });
  const sized = (cpu: string, memory: string, pods = '110') => ({ status: { allocatable: { cpu, memory, pods } } });

  const requestCases: Array<{ desc: string; spec: Record<string, unknown>; want: { milliCPU: number; memory: number } }> = [
    { desc: 'no requests', spec: {}, want: { milliCPU: 0, memory: 0 } },
    { desc: 'containers summed', spec: { containers: [container('a', { cpu: '100m', memory: '64Mi' }), container('b', { cpu: '0.5', memory: '1G' })] }, want: { milliCPU: 600, memory: 64 * 2 ** 20 + 1e9 } },
    { desc: 'millicores rounded up', spec: { containers: [container('a', { cpu: '0.0001' })] }, want: { milliCPU: 1, memory: 0 } },
    { desc: 'an init container larger than the containers', spec: { containers: [container('a', { cpu: '100m' })], initContainers: [container('i', { cpu: '2', memory: '1Ki' })] }, want: { milliCPU: 2000, memory: 1024 } },
    {
      desc: 'sidecars added to the containers and to later init containers',
      spec: {
        containers: [container('a', { cpu: '100m' })],
        initContainers: [container('s', { cpu: '200m' }, 'Always'), container('i', { cpu: '250m' })],
      },
      want: { milliCPU: 450, memory: 0 },
    },
    { desc: 'pod-level requests replace the containers\'', spec: { containers: [container('a', { cpu: '1', memory: '1Gi' })], resources: { requests: { cpu: '3' } } }, want: { milliCPU: 3000, memory: 2 ** 30 } },
    { desc: 'overhead added', spec: { containers: [container('a', { cpu: '1' })], overhead: { cpu: '250m', memory: '120Mi' } }, want: { milliCPU: 1250, memory: 120 * 2 ** 20 } },
  ];
  for (const c of requestCases) {
    it(`podRequests: ${c.desc}`, () => assert.deepEqual(podRequests(podWith(c.spec)), c.want));
  }

  const fitCases: Array<{
    desc: string;
    requests: Res;
    used?: { milliCPU?: number; memory?: number };
    node?: ReturnType<typeof sized> | object;
    source?: 'file' | 'api';
    want: { admit: true } | { reason: string; message: string | RegExp };
  }> = [
    { desc: 'fits', requests: { cpu: '1', memory: '1Gi' }, node: sized('2', '2Gi'), want: { admit: true } },
    { desc: 'exactly fills what is left', requests: { cpu: '1500m' }, used: { milliCPU: 500 }, node: sized('2', '2Gi'), want: { admit: true } },
    { desc: 'no requests fits a full node', requests: {}, used: { milliCPU: 2000, memory: 2 ** 31 }, node: sized('2', '2Gi'), want: { admit: true } },
    {
      desc: 'CPU short',
      requests: { cpu: '1' },
      used: { milliCPU: 1500 },
      node: sized('2', '2Gi'),
      want: { reason: 'OutOfcpu', message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000" },
    },
    {
      desc: 'memory short',
      requests: { memory: '1Gi' },
      used: { memory: 2 ** 30 + 1 },
      node: sized('2', '2Gi'),
      want: { reason: 'OutOfmemory', message: `Pod was rejected: Node didn't have enough resource: memory, requested: ${2 ** 30}, used: ${2 ** 30 + 1}, capacity: ${2 ** 31}` },
    },
    { desc: 'CPU reported before memory', requests: { cpu: '3', memory: '3Gi' }, node: sized('2', '2Gi'), want: { reason: 'OutOfcpu', message: /resource: cpu, requested: 3000, used: 0, capacity: 2000$/ } },
    { desc: 'the pods count before CPU', requests: { cpu: '3' }, node: sized('2', '2Gi', '0'), want: { reason: 'OutOfpods', message: /resource: pods, requested: 1, used: 0, capacity: 0$/ } },
    { desc: 'a resource the node does not report is not checked', requests: { cpu: '64', memory: '1Ti' }, node: { status: { allocatable: { pods: '10' } } }, want: { admit: true } },
    {
      desc: 'a static (critical) pod: UnexpectedAdmissionError',
      requests: { memory: '3Gi' },
      node: sized('2', '2Gi'),
      source: 'file',
      want: { reason: 'UnexpectedAdmissionError', message: `Pod was rejected: no pod could be evicted to make room for this critical pod (memory allocatable ${2 ** 31}, in use 0, requested ${3 * 2 ** 30})` },
    },
  ];
  for (const c of fitCases) {
    it(`admitPod: ${c.desc}`, () => {
      const result = admitPod(podWith({ containers: [container('c', c.requests)] }, c.source), { length: 0, ...c.used }, c.node ?? sized('2', '2Gi'));
      if ('admit' in c.want) return assert.deepEqual(result, { admit: true });
      assert.equal(result.admit, false);
      assert.equal(!result.admit && result.reason, c.want.reason);
      const message = !result.admit ? result.message : '';
      if (typeof c.want.message === 'string') assert.equal(message, c.want.message);
      else assert.match(message, c.want.message);
    });
  }

  it('createPodAdmission sums the admitted pods\' requests and frees them on removal', () => {
    const admission = createPodAdmission(() => sized('2', '4Gi'), new FakeClock(0));
    const pod = (name: string, cpu: string): Pod => ({ ...apiPod(name), spec: { containers: [container('c', { cpu })] } as Pod['spec'] });
    const [a, b, c] = [pod('a', '1'), pod('b', '800m'), pod('c', '500m')];
    admission.admitNew([a, b, c]);
    assert.equal(admission.rejection('uid-a'), undefined);
    assert.equal(admission.rejection('uid-b'), undefined);
    assert.equal(admission.rejection('uid-c')?.reason, 'OutOfcpu');
    assert.match(admission.rejection('uid-c')!.message, /requested: 500, used: 1800, capacity: 2000$/);
    admission.forget([a]);
    const d = pod('d', '1200m');
    admission.admitNew([d]);
    assert.equal(admission.rejection('uid-d'), undefined);
  });
});
