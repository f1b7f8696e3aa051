// Admission by the node's pods allocatable (maxPods): who is admitted, who is rejected and
// for how long, and the status a rejected pod reports.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodStatus } from '@kubernetes/client-node';
import { admitPod, createPodAdmission, NODE_AFFINITY_REJECTION, withAdmission } from '../../../src/admission/pod-admission.js';
import type { Pod } from '../../../src/pod/types.js';
import type { StatusProvider } from '../../../src/status/status-provider.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

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

  it('the pods count is reported first when both fail', () => {
    const full = { ...labelled, status: { allocatable: { pods: '1' } } };
    const result = admitPod(withSpec({ nodeSelector: { zone: 'z2' } }), [staticPod('a')], full);
    assert.equal(result.admit, false);
    assert.notEqual(!result.admit && result.reason, 'NodeAffinity');
  });
});
