// The body of a mirror pod's status write (pkg/util/pod/pod_test.go: TestPatchPodStatus), as
// the writer sends it: a strategic merge patch with the mirror's UID as precondition, only the
// kubelet's conditions, null for the condition fields we leave out, and podIPs/hostIPs marked
// to replace the server's lists. What the server makes of it is checked against a real
// kube-apiserver in test/integration/status.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodStatus } from '@kubernetes/client-node';
import { buildStatusPatch, STATUS_PATCH_CONTENT_TYPE } from '../../../src/status/status-patch.js';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const status = (): V1PodStatus => ({
  phase: 'Running',
  message: 'Message',
  startTime: new Date('2026-01-01T00:00:00Z'),
  conditions: [
    { type: 'Ready', status: 'True', lastTransitionTime: new Date('2026-01-01T00:00:01Z') },
    { type: 'example.com/Gate', status: 'True' },
    { type: 'PodScheduled', status: 'True', reason: 'Scheduled', message: 'on node-a', observedGeneration: 2 },
  ],
  containerStatuses: [{ name: 'app', image: 'nginx', imageID: '', ready: true, restartCount: 0 }],
  resourceClaimStatuses: [{ name: 'claim' }],
  podIP: '10.0.0.9',
  podIPs: [{ ip: '10.0.0.9' }, { ip: 'fd00::9' }],
  hostIP: '10.0.0.5',
  hostIPs: [{ ip: '10.0.0.5' }],
});

describe('buildStatusPatch', () => {
  it('is a strategic merge patch', () => {
    assert.equal(STATUS_PATCH_CONTENT_TYPE, 'application/strategic-merge-patch+json');
  });

  it("carries the mirror's UID as precondition and the status fields as they are", () => {
    const ours = status();
    const patch = buildStatusPatch('mirror-1', ours);
    assert.deepEqual(patch.metadata, { uid: 'mirror-1' });
    assert.equal(patch.status.phase, 'Running');
    assert.equal(patch.status.message, 'Message');
    assert.equal(patch.status.startTime, ours.startTime, 'times are sent as given; the client serialises them');
    assert.deepEqual(patch.status.containerStatuses, ours.containerStatuses, 'container statuses are replaced whole by the server');
    assert.equal(patch.status.podIP, '10.0.0.9');
  });

  it("sends only the kubelet's conditions, in order, with the fields left out as null", () => {
    const patch = buildStatusPatch('mirror-1', status());
    assert.deepEqual(patch.status.conditions, [
      {
        type: 'Ready',
        status: 'True',
        lastTransitionTime: new Date('2026-01-01T00:00:01Z'),
        lastProbeTime: null,
        message: null,
        observedGeneration: null,
        reason: null,
      },
      {
        type: 'PodScheduled',
        status: 'True',
        reason: 'Scheduled',
        message: 'on node-a',
        observedGeneration: 2,
        lastProbeTime: null,
        lastTransitionTime: null,
      },
    ]);
  });

  it('leaves conditions out when none of ours is the kubelet\'s, rather than send an empty list', () => {
    const patch = buildStatusPatch('mirror-1', { phase: 'Pending', conditions: [{ type: 'example.com/Gate', status: 'False' }] });
    assert.ok(!('conditions' in patch.status));
    assert.ok(!('conditions' in buildStatusPatch('mirror-1', { phase: 'Pending' }).status));
  });

  it('marks podIPs and hostIPs to replace the server\'s lists, and adds neither when absent', () => {
    const patch = buildStatusPatch('mirror-1', status());
    assert.deepEqual(patch.status.podIPs, [{ ip: '10.0.0.9' }, { ip: 'fd00::9' }, { $patch: 'replace' }]);
    assert.deepEqual(patch.status.hostIPs, [{ ip: '10.0.0.5' }, { $patch: 'replace' }]);
    const bare = buildStatusPatch('mirror-1', { phase: 'Pending' });
    assert.ok(!('podIPs' in bare.status) && !('hostIPs' in bare.status));
    assert.deepEqual(buildStatusPatch('mirror-1', { podIPs: [] }).status.podIPs, [{ $patch: 'replace' }], 'an empty list clears the server\'s');
  });

  it('never sends resourceClaimStatuses, which are not the kubelet\'s to write', () => {
    assert.ok(!('resourceClaimStatuses' in buildStatusPatch('mirror-1', status()).status));
  });

  it('does not change the status it is given', () => {
    const ours = deepFreeze(status());
    const before = structuredClone(ours);
    buildStatusPatch('mirror-1', ours);
    assert.deepEqual(ours, before);
  });
});
