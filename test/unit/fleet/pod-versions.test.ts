// src/fleet/pod-versions.ts: a pod's new version from the watch takes the parts of the version
// held before that it has unchanged, so that holders of either version share them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../../src/pod/types.js';
import { reuseUnchangedParts } from '../../../src/fleet/pod-versions.js';

const version = (rv: string, phase: string, uid = 'u1'): Pod => ({
  metadata: { name: 'web-0', namespace: 'default', uid, resourceVersion: rv, creationTimestamp: '2026-01-01T00:00:00Z' as unknown as Date /* the watch's JSON */, labels: { app: 'web' } },
  spec: { nodeName: 'n1', containers: [{ name: 'main', image: 'nginx:1.27' }] },
  status: { phase },
});

describe('pod versions', () => {
  test('an equal spec, labels and lasting metadata strings are the held ones; a changed status stays the new one', () => {
    const held = version('7', 'Pending');
    const next = version('8', 'Running');
    reuseUnchangedParts(held, next);
    assert.equal(next.spec, held.spec);
    assert.equal(next.metadata?.labels, held.metadata?.labels);
    assert.notEqual(next.status, held.status);
    assert.equal(next.status?.phase, 'Running');
    assert.equal(next.metadata?.resourceVersion, '8');
    assert.notEqual(next.metadata, held.metadata, 'the new version keeps its own metadata object');
    const same = version('9', 'Running');
    reuseUnchangedParts(next, same);
    assert.equal(same.status, next.status);
  });

  test('another pod under the same name (another UID) takes nothing', () => {
    const held = version('7', 'Pending');
    const next = version('8', 'Pending', 'u2');
    reuseUnchangedParts(held, next);
    assert.notEqual(next.spec, held.spec);
    assert.notEqual(next.status, held.status);
  });

  test('a changed spec stays the new one', () => {
    const held = version('7', 'Pending');
    const next = version('8', 'Pending');
    next.spec!.containers[0]!.image = 'nginx:1.28';
    reuseUnchangedParts(held, next);
    assert.notEqual(next.spec, held.spec);
    assert.equal(next.spec?.containers[0]?.image, 'nginx:1.28');
  });
});
