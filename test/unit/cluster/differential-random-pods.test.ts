// The differential suite's random pod generator (test/differential/random-pods.ts) on its own:
// reproducible, varied, and within what a node may mirror and the kubelet admits. Whether the
// pods are valid is judged by the real kubelet and API server in the suite itself; this pins
// the properties the generator promises. Also normaliseStaticPod from compare.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { parse } from 'yaml';

import { normaliseStaticPod } from '../../differential/compare.js';
import { randomManifests, seededRandom } from '../../differential/random-pods.js';

type Obj = Record<string, unknown>;
const options = { seed: 7, count: 60, namespace: 'ns' };

function containersOf(pod: Obj): Obj[] {
  const spec = pod['spec'] as Obj;
  return [...((spec['initContainers'] as Obj[] | undefined) ?? []), ...(spec['containers'] as Obj[])];
}

describe('random pods', () => {
  it('the same seed gives the same files; another seed others', () => {
    assert.deepEqual(randomManifests(options), randomManifests(options));
    assert.notDeepEqual(
      randomManifests(options).map((m) => m.text),
      randomManifests({ ...options, seed: 8 }).map((m) => m.text),
    );
    const r = seededRandom(1);
    const xs = Array.from({ length: 1000 }, r);
    assert.ok(xs.every((x) => x >= 0 && x < 1));
    assert.ok(new Set(xs).size > 990, 'no short cycle');
  });

  it('each file reads back as the pod it was written from, in YAML or JSON', () => {
    const manifests = randomManifests(options);
    for (const m of manifests) assert.deepEqual(parse(m.text, { version: '1.1' }), m.pod, m.file);
    const kinds = new Set(manifests.map((m) => m.file.split('.').pop()));
    assert.deepEqual([...kinds].sort(), ['json', 'yaml']);
  });

  it('names, container names, volume names and host ports never collide', () => {
    const manifests = randomManifests(options);
    assert.equal(new Set(manifests.map((m) => `${m.namespace}/${m.name}`)).size, manifests.length);
    const ports: number[] = [];
    for (const m of manifests) {
      const containers = containersOf(m.pod);
      assert.equal(new Set(containers.map((c) => c['name'])).size, containers.length, m.file);
      const volumes = ((m.pod['spec'] as Obj)['volumes'] as Obj[] | undefined) ?? [];
      const names = new Set(volumes.map((v) => v['name']));
      assert.equal(names.size, volumes.length, m.file);
      for (const c of containers) {
        for (const mount of (c['volumeMounts'] as Obj[] | undefined) ?? []) assert.ok(names.has(mount['name']), `${m.file}: mount of an existing volume`);
        for (const p of (c['ports'] as Obj[] | undefined) ?? []) ports.push(p['containerPort'] as number);
      }
    }
    assert.equal(new Set(ports).size, ports.length, 'every container port is unique across all pods');
  });

  it('nothing references another API object, and init containers that are not sidecars have no probes', () => {
    for (const m of randomManifests(options)) {
      const text = JSON.stringify(m.pod);
      for (const ref of ['secret', 'configMap', 'serviceAccountName', 'persistentVolumeClaim', 'resourceClaims', 'runtimeClassName', 'imagePullSecrets']) {
        assert.ok(!text.includes(`"${ref}`), `${m.file} references ${ref}`);
      }
      const init = ((m.pod['spec'] as Obj)['initContainers'] as Obj[] | undefined) ?? [];
      for (const c of init.filter((x) => x['restartPolicy'] !== 'Always')) {
        for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle']) assert.equal(c[probe], undefined, `${m.file} ${String(c['name'])}`);
      }
    }
  });

  it('covers what static pods use', () => {
    const text = randomManifests(options)
      .map((m) => JSON.stringify(m.pod))
      .join('\n');
    const features = [
      '"hostPath"',
      '"emptyDir"',
      '"downwardAPI"',
      '"projected"',
      '"hostNetwork":true',
      '"restartPolicy":"Always"',
      '"livenessProbe"',
      '"readinessProbe"',
      '"startupProbe"',
      '"grpc"',
      '"lifecycle"',
      '"tolerations"',
      '"priorityClassName"',
      '"securityContext"',
      '"limits"',
      '"uid"',
      '"dnsConfig"',
    ];
    for (const feature of features) {
      assert.ok(text.includes(feature), feature);
    }
    assert.ok(randomManifests(options).some((m) => m.namespace === 'default'), 'some pods have no namespace');
  });
});

describe('normaliseStaticPod', () => {
  it('keeps UID and hash, replaces config.seen, drops the status', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a-n', uid: 'u', annotations: { 'kubernetes.io/config.hash': 'u', 'kubernetes.io/config.seen': '2026-01-01T00:00:00.1Z' } },
      spec: { containers: [] },
      status: { phase: 'Running' },
    };
    assert.deepEqual(normaliseStaticPod(pod), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a-n', uid: 'u', annotations: { 'kubernetes.io/config.hash': 'u', 'kubernetes.io/config.seen': '<timestamp>' } },
      spec: { containers: [] },
    });
  });
});
