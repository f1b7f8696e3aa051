// The container status fields the kubelet v1.34 derives from the spec alone
// (convertToAPIContainerStatuses in pkg/kubelet/kubelet_pods.go): volumeMounts with
// readOnly and recursiveReadOnly (resolveRecursiveReadOnly), and the allocated resources with
// the v1 defaulting of requests from limits (SetDefaults_Pod).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Container } from '@kubernetes/client-node';
import { allocatedResources, containerResourceStatus, volumeMountStatuses } from '../../../src/runtime/container-status.js';

describe('volumeMountStatuses', () => {
  const container = (volumeMounts: V1Container['volumeMounts']): V1Container => ({ name: 'c', volumeMounts });
  const cases: Array<{ desc: string; mount: NonNullable<V1Container['volumeMounts']>[number]; supported: boolean; expected: object }> = [
    { desc: 'read-write', mount: { name: 'v', mountPath: '/v' }, supported: true, expected: { name: 'v', mountPath: '/v' } },
    { desc: 'readOnly false is left out', mount: { name: 'v', mountPath: '/v', readOnly: false }, supported: false, expected: { name: 'v', mountPath: '/v' } },
    { desc: 'read-only', mount: { name: 'v', mountPath: '/v', readOnly: true }, supported: true, expected: { name: 'v', mountPath: '/v', readOnly: true, recursiveReadOnly: 'Disabled' } },
    {
      desc: 'IfPossible, supported',
      mount: { name: 'v', mountPath: '/v', readOnly: true, recursiveReadOnly: 'IfPossible' },
      supported: true,
      expected: { name: 'v', mountPath: '/v', readOnly: true, recursiveReadOnly: 'Enabled' },
    },
    {
      desc: 'IfPossible, not supported',
      mount: { name: 'v', mountPath: '/v', readOnly: true, recursiveReadOnly: 'IfPossible' },
      supported: false,
      expected: { name: 'v', mountPath: '/v', readOnly: true, recursiveReadOnly: 'Disabled' },
    },
    {
      desc: 'Enabled, not supported',
      mount: { name: 'v', mountPath: '/v', readOnly: true, recursiveReadOnly: 'Enabled' },
      supported: false,
      expected: { name: 'v', mountPath: '/v', readOnly: true, recursiveReadOnly: 'Disabled' },
    },
    {
      desc: 'Enabled with mount propagation',
      mount: { name: 'v', mountPath: '/v', readOnly: true, recursiveReadOnly: 'Enabled', mountPropagation: 'HostToContainer' },
      supported: true,
      expected: { name: 'v', mountPath: '/v', readOnly: true, recursiveReadOnly: 'Disabled' },
    },
    {
      desc: 'subPath and propagation None do not show',
      mount: { name: 'v', mountPath: '/v', subPath: 'x', mountPropagation: 'None' },
      supported: true,
      expected: { name: 'v', mountPath: '/v' },
    },
  ];
  for (const { desc, mount, supported, expected } of cases) {
    it(desc, () => assert.deepEqual(volumeMountStatuses(container([mount]), supported), [expected]));
  }

  it('keeps the spec order, one entry per mount, and is undefined without mounts', () => {
    const mounts = [
      { name: 'b', mountPath: '/b' },
      { name: 'a', mountPath: '/a' },
      { name: 'a', mountPath: '/a2', readOnly: true },
    ];
    assert.deepEqual(volumeMountStatuses(container(mounts), false)?.map((m) => m.mountPath), ['/b', '/a', '/a2']);
    assert.equal(volumeMountStatuses(container(undefined), false), undefined);
    assert.equal(volumeMountStatuses(container([]), false), undefined);
  });
});

describe('allocatedResources and containerResourceStatus', () => {
  it('defaults requests from limits and writes quantities as the server stores them', () => {
    const c: V1Container = { name: 'c', resources: { limits: { cpu: '1000m', memory: '0.5Gi' }, requests: { cpu: 0.1 as unknown as string } } };
    assert.deepEqual(allocatedResources(c), { limits: { cpu: '1', memory: '512Mi' }, requests: { cpu: '100m', memory: '512Mi' } });
    assert.deepEqual(containerResourceStatus(c), {
      resources: { limits: { cpu: '1', memory: '512Mi' }, requests: { cpu: '100m', memory: '512Mi' } },
      allocatedResources: { cpu: '100m', memory: '512Mi' },
    });
  });

  it('is an empty resources object and no allocatedResources for a container without resources', () => {
    assert.deepEqual(containerResourceStatus({ name: 'c' }), { resources: {} });
    assert.deepEqual(containerResourceStatus({ name: 'c', resources: {} }), { resources: {} });
  });

  it('keeps requests alone, and claims', () => {
    const c: V1Container = { name: 'c', resources: { requests: { cpu: '250m' }, claims: [{ name: 'gpu' }] } };
    assert.deepEqual(containerResourceStatus(c), { resources: { requests: { cpu: '250m' }, claims: [{ name: 'gpu' }] }, allocatedResources: { cpu: '250m' } });
  });

  it('does not change the container', () => {
    const c: V1Container = { name: 'c', resources: { limits: { memory: '1Gi' } } };
    allocatedResources(c);
    assert.deepEqual(c, { name: 'c', resources: { limits: { memory: '1Gi' } } });
  });
});
