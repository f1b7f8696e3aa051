// How a pod is named in logs and messages, and its UID (src/values/pod-format.ts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatPod, podUID } from '../../../src/values/pod-format.js';

describe('pod format', () => {
  it("writes the kubelet's format.Pod: name_namespace(uid)", () => {
    assert.equal(formatPod({ metadata: { name: 'web', namespace: 'default', uid: 'u-1' } }), 'web_default(u-1)');
    assert.equal(formatPod({}), '_()');
  });

  it("reads a pod's UID, '' when it has none", () => {
    assert.equal(podUID({ metadata: { uid: 'u-1' } }), 'u-1');
    assert.equal(podUID({ metadata: {} }), '');
    assert.equal(podUID({}), '');
  });
});
