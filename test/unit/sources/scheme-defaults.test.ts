// The v1 Pod defaults of the kubelet's decoder, case by case (the Go decoder itself is the
// judge in test/integration/pod-defaults-oracle.test.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { Pod } from '../../../src/pod/types.js';
import { applySchemeDefaults } from '../../../src/sources/scheme-defaults.js';

function defaulted(spec: object, extra: object = {}): Record<string, any> {
  const pod = { metadata: { name: 'p' }, spec, ...extra } as Pod;
  applySchemeDefaults(pod);
  return pod as Record<string, any>;
}

describe('applySchemeDefaults', () => {
  test('probes: thresholds, period and timeout when absent or 0, httpGet path and scheme, gRPC service', () => {
    const { spec } = defaulted({
      containers: [
        {
          name: 'c',
          image: 'x:1',
          livenessProbe: { httpGet: { port: 80 }, periodSeconds: 0 },
          readinessProbe: { grpc: { port: 9 }, failureThreshold: 7 },
          startupProbe: { httpGet: { port: 80, path: '/up', scheme: 'HTTPS' } },
        },
      ],
    });
    const c = spec.containers[0];
    assert.deepEqual(c.livenessProbe, { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 });
    assert.deepEqual(c.readinessProbe, { grpc: { port: 9, service: '' }, failureThreshold: 7, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1 });
    assert.deepEqual(c.startupProbe.httpGet, { port: 80, path: '/up', scheme: 'HTTPS' });
  });

  test('lifecycle hooks get the httpGet defaults', () => {
    const { spec } = defaulted({ containers: [{ name: 'c', image: 'x:1', lifecycle: { preStop: { httpGet: { port: 80 } }, postStart: { exec: { command: ['a'] } } } }] });
    assert.deepEqual(spec.containers[0].lifecycle, { preStop: { httpGet: { port: 80, path: '/', scheme: 'HTTP' } }, postStart: { exec: { command: ['a'] } } });
  });

  test('host network: every container and init container port without a hostPort gets its containerPort', () => {
    const { spec } = defaulted({
      hostNetwork: true,
      initContainers: [{ name: 'i', image: 'x:1', ports: [{ containerPort: 70 }] }],
      containers: [{ name: 'c', image: 'x:1', ports: [{ containerPort: 80 }, { containerPort: 81, hostPort: 81 }] }],
    });
    assert.deepEqual(spec.initContainers[0].ports, [{ containerPort: 70, hostPort: 70, protocol: 'TCP' }]);
    assert.deepEqual(spec.containers[0].ports.map((p: { hostPort: number }) => p.hostPort), [80, 81]);
    const plain = defaulted({ containers: [{ name: 'c', image: 'x:1', ports: [{ containerPort: 80 }] }] }).spec;
    assert.equal(plain.containers[0].ports[0].hostPort, undefined, 'no hostPort without host networking');
  });

  test('environment: fieldRef apiVersion, fileKeyRef optional', () => {
    const { spec } = defaulted({
      containers: [
        {
          name: 'c',
          image: 'x:1',
          env: [
            { name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
            { name: 'B', valueFrom: { fileKeyRef: { path: 'f', key: 'k', volumeName: 'v' } } },
            { name: 'C', value: '' },
          ],
        },
      ],
    });
    assert.deepEqual(spec.containers[0].env, [
      { name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName', apiVersion: 'v1' } } },
      { name: 'B', valueFrom: { fileKeyRef: { path: 'f', key: 'k', volumeName: 'v', optional: false } } },
      { name: 'C', value: '' },
    ]);
  });

  test('volumes: emptyDir for a bare volume, hostPath type, modes, projections, legacy plugins, claim templates', () => {
    const { spec } = defaulted({
      containers: [{ name: 'c', image: 'x:1' }],
      volumes: [
        { name: 'bare' },
        { name: 'h', hostPath: { path: '/x' } },
        { name: 's', secret: { secretName: 's' } },
        { name: 'm', configMap: { name: 'm', defaultMode: 256 } },
        { name: 'd', downwardAPI: { items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels' } }] } },
        { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 't' } }, { downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } }] } },
        { name: 'i', iscsi: { targetPortal: 'a', iqn: 'b', lun: 0 } },
        { name: 'r', rbd: { monitors: ['m'], image: 'i' } },
        { name: 'a', azureDisk: { diskName: 'd', diskURI: 'u' } },
        { name: 'o', scaleIO: { gateway: 'g', system: 's', secretRef: { name: 's' } } },
        { name: 'e', ephemeral: { volumeClaimTemplate: { spec: { resources: { requests: { storage: '0.5Gi' } } } } } },
      ],
    });
    const v = Object.fromEntries(spec.volumes.map((x: { name: string }) => [x.name, x]));
    assert.deepEqual(v.bare, { name: 'bare', emptyDir: {} });
    assert.deepEqual(v.h.hostPath, { path: '/x', type: '' });
    assert.equal(v.s.secret.defaultMode, 420);
    assert.equal(v.m.configMap.defaultMode, 256);
    assert.deepEqual(v.d.downwardAPI, { items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels', apiVersion: 'v1' } }], defaultMode: 420 });
    assert.equal(v.p.projected.defaultMode, 420);
    assert.equal(v.p.projected.sources[0].serviceAccountToken.expirationSeconds, 3600);
    assert.equal(v.p.projected.sources[1].downwardAPI.items[0].fieldRef.apiVersion, 'v1');
    assert.equal(v.i.iscsi.iscsiInterface, 'default');
    assert.deepEqual([v.r.rbd.pool, v.r.rbd.user, v.r.rbd.keyring], ['rbd', 'admin', '/etc/ceph/keyring']);
    assert.deepEqual([v.a.azureDisk.cachingMode, v.a.azureDisk.fsType, v.a.azureDisk.readOnly, v.a.azureDisk.kind], ['ReadWrite', 'ext4', false, 'Shared']);
    assert.deepEqual([v.o.scaleIO.storageMode, v.o.scaleIO.fsType], ['ThinProvisioned', 'xfs']);
    assert.deepEqual(v.e.ephemeral.volumeClaimTemplate.spec, { resources: { requests: { storage: '512Mi' } }, volumeMode: 'Filesystem' });
  });

  test('resources: limits fill missing requests; quantities rounded up to 1m and written as the API stores them', () => {
    const { spec } = defaulted({
      overhead: { cpu: '0.25' },
      containers: [
        { name: 'a', image: 'x:1', resources: { limits: { cpu: 0.5, memory: '1024Mi' }, requests: { memory: '100Mi' } } },
        { name: 'b', image: 'x:1', resources: { requests: { cpu: '100u', memory: '1000' } } },
      ],
    });
    assert.deepEqual(spec.containers[0].resources, { limits: { cpu: '500m', memory: '1Gi' }, requests: { memory: '100Mi', cpu: '500m' } });
    assert.deepEqual(spec.containers[1].resources, { requests: { cpu: '1m', memory: '1k' } });
    assert.deepEqual(spec.overhead, { cpu: '250m' });
  });

  test('pod-level resources: requests from the containers’ effective requests and the pod limits, hugepage limits from the containers', () => {
    const { spec } = defaulted({
      resources: { limits: { cpu: '2', memory: '1Gi' } },
      initContainers: [
        { name: 'side', image: 'x:1', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } },
        { name: 'init', image: 'x:1', resources: { requests: { cpu: '1' }, limits: { 'hugepages-2Mi': '4Mi' } } },
      ],
      containers: [{ name: 'a', image: 'x:1', resources: { requests: { cpu: '250m' }, limits: { 'hugepages-2Mi': '2Mi' } } }],
    });
    // cpu: max(250m + 100m, 1 + 100m) = 1100m; memory from the pod's limit; hugepages: max(2Mi, 4Mi).
    assert.deepEqual(spec.resources.requests, { cpu: '1100m', memory: '1Gi', 'hugepages-2Mi': '4Mi' });
    assert.deepEqual(spec.resources.limits, { cpu: '2', memory: '1Gi', 'hugepages-2Mi': '4Mi' });
    const untouched = defaulted({ resources: {}, containers: [{ name: 'a', image: 'x:1', resources: { requests: { cpu: '1' } } }] }).spec;
    assert.deepEqual(untouched.resources, {}, 'nothing is defaulted while the pod sets no resources of its own');
  });

  test('a spec of the wrong shape is left for validation', () => {
    const pod = defaulted('nope' as unknown as object);
    assert.equal(pod.spec, 'nope');
    assert.doesNotThrow(() => defaulted({ containers: 'x', volumes: [null, 3], initContainers: [{ resources: 'x', livenessProbe: 4 }] }));
  });
});
