// The differential suite's comparer (test/differential/compare.ts) on its own: what the
// normaliser hides, what it keeps, and how found differences are matched against the list in
// docs/kubelet-differences.md. (No kubelet counterpart: test infrastructure.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import {
  compareArea,
  diffJson,
  normaliseMirrorPod,
  parseListedDifferences,
  reconcile,
  type Difference,
} from '../../differential/compare.js';

const side = { nodeName: 'real-a', nodeUID: 'node-uid-1' };

function mirror(overrides: { hash?: string; seen?: string } = {}): object {
  const hash = overrides.hash ?? '0123456789abcdef0123456789abcdef';
  return {
    metadata: {
      name: 'web-real-a',
      namespace: 'ns',
      uid: 'mirror-uid',
      resourceVersion: '42',
      creationTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [
        { manager: 'kubelet', operation: 'Update', time: '2026-01-01T00:00:00Z', fieldsV1: { 'f:metadata': {} } },
        { manager: 'kubelet', operation: 'Update', subresource: 'status', time: '2026-01-01T00:00:01Z', fieldsV1: { 'f:status': {} } },
        { manager: 'kube-controller-manager', operation: 'Update', time: '2026-01-01T00:00:02Z', fieldsV1: {} },
      ],
      annotations: {
        'kubernetes.io/config.hash': hash,
        'kubernetes.io/config.mirror': hash,
        'kubernetes.io/config.seen': overrides.seen ?? '2026-01-01T00:00:00.123456789Z',
        'kubernetes.io/config.source': 'file',
      },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'real-a', uid: 'node-uid-1', controller: true }],
    },
    spec: { nodeName: 'real-a', containers: [{ name: 'main', image: 'pause' }] },
    status: { phase: 'Running' },
  };
}

describe('differential comparer', () => {
  it('normalises node identity, UIDs, hashes, timestamps and server fields, keeps who wrote it, and drops status', () => {
    assert.deepEqual(normaliseMirrorPod(mirror(), side), {
      metadata: {
        name: 'web-<node>',
        namespace: 'ns',
        // Each writer and how it wrote, once: the manager is the writer's User-Agent up to its first '/'.
        managedFields: ['kube-controller-manager Update', 'kubelet Update'],
        annotations: {
          'kubernetes.io/config.hash': '<hash>',
          'kubernetes.io/config.mirror': '<hash>',
          'kubernetes.io/config.seen': '<timestamp>',
          'kubernetes.io/config.source': 'file',
        },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: '<node>', uid: '<node-uid>', controller: true }],
      },
      spec: { nodeName: '<node>', containers: [{ name: 'main', image: 'pause' }] },
    });
  });

  it('keeps an explicit UID used as the hash, and a config.seen that is not a time', () => {
    const n = normaliseMirrorPod(mirror({ hash: '5a0c4bb0-3f1e-4d9a-9a55-7f3e0e0b1c11', seen: 'yesterday' }), side) as {
      metadata: { annotations: Record<string, string> };
    };
    assert.equal(n.metadata.annotations['kubernetes.io/config.hash'], '5a0c4bb0-3f1e-4d9a-9a55-7f3e0e0b1c11');
    assert.equal(n.metadata.annotations['kubernetes.io/config.seen'], 'yesterday');
  });

  it('diffs leaves, reports a field missing on one side at that field, and quotes odd keys', () => {
    assert.deepEqual(diffJson({ a: { b: 1, c: [1, 2] }, 'x/y': 'v' }, { a: { b: 2, c: [1] } }), [
      { path: 'a.b', real: 1, ours: 2 },
      { path: 'a.c[1]', real: 2, ours: undefined },
      { path: '["x/y"]', real: 'v', ours: undefined },
    ]);
    assert.deepEqual(compareArea('mirror', [{ subject: 'a.yaml', real: { x: 1 }, ours: undefined }]), [
      { area: 'mirror', subject: 'a.yaml', path: '(object)', real: 'present', ours: undefined },
    ]);
  });

  it('matches differences against the listed ones both ways, with * for any subject', () => {
    const listed = parseListedDifferences(
      [
        '| id | where | what | why |',
        '|---|---|---|---|',
        '| KD-1 | `mirror:* metadata.labels.x` | a label | reason |',
        '| KD-2 | `mirror:b.yaml spec.priority` | fixed since | reason |',
        '| KD-3 | `node:* status.images` | a later area | reason |',
        '| KD-5? | `mirror:* spec.restartCount` | not in every run | reason |',
        'not a row: | KD-4 | `mirror:* y` |',
      ].join('\n'),
    );
    assert.deepEqual(listed.map((l) => l.id), ['KD-1', 'KD-2', 'KD-3', 'KD-5']);
    assert.deepEqual(listed.map((l) => l.sometimes), [false, false, false, true]);
    const found: Difference[] = [
      { area: 'mirror', subject: 'a.yaml', path: 'metadata.labels.x', real: '1', ours: undefined },
      { area: 'mirror', subject: 'c.json', path: 'metadata.labels.x', real: '1', ours: undefined },
      { area: 'mirror', subject: 'a.yaml', path: 'spec.hostNetwork', real: true, ours: undefined },
    ];
    const r = reconcile(found, listed, ['mirror']);
    assert.deepEqual(r.unlisted.map((d) => d.path), ['spec.hostNetwork']);
    assert.deepEqual(r.stale, ['KD-2'], 'KD-3 belongs to an area this run did not compare; KD-5 may be absent');
  });
});
