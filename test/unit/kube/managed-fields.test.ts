// What the agent keeps of API objects: everything but metadata.managedFields, and the rest shared.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { withoutManagedFields, withoutManagedFieldsText } from '../../../src/kube/managed-fields.js';
import type { Pod } from '../../../src/pod/types.js';

const managedFields = [{ manager: 'kubelet', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:renewTime': {} } } }];
const mirror = (name: string): Pod => ({
  metadata: { name, namespace: 'ns', uid: `u-${name}`, annotations: { 'kubernetes.io/config.mirror': 'h' }, managedFields },
  spec: { containers: [{ name: 'c', image: 'i' }] },
});

describe('withoutManagedFields', () => {
  it('drops managedFields and keeps every other field, sharing what it did not change', () => {
    const pod = mirror('a');
    const trimmed = withoutManagedFields(pod);
    assert.equal(trimmed.metadata?.managedFields, undefined);
    assert.equal('managedFields' in (trimmed.metadata ?? {}), false, 'the key is gone, not set to undefined');
    assert.deepEqual({ ...trimmed.metadata }, { name: 'a', namespace: 'ns', uid: 'u-a', annotations: { 'kubernetes.io/config.mirror': 'h' } });
    assert.equal(trimmed.spec, pod.spec, 'the spec is shared, not copied');
    assert.deepEqual(pod.metadata?.managedFields, managedFields, 'the object given is left as it was');
  });

  it('returns an object without managedFields (or without metadata) as it is', () => {
    const plain: Pod = { metadata: { name: 'x' } };
    assert.equal(withoutManagedFields(plain), plain);
    const bare: Pod = {};
    assert.equal(withoutManagedFields(bare), bare);
  });
});

describe('withoutManagedFieldsText', () => {
  // As the API server writes a watch event: managedFields last in the metadata, the spec next.
  const event = (metadata: Record<string, unknown>, rest: Record<string, unknown> = { spec: { nodeName: 'n1' }, status: { phase: 'Running' } }): string =>
    JSON.stringify({ type: 'MODIFIED', object: { kind: 'Pod', apiVersion: 'v1', metadata, ...rest } });
  const tricky = {
    name: 'p',
    namespace: 'ns',
    // Values that spell both patterns, which JSON writes with escaped quotes.
    annotations: { note: ',"managedFields":[1]},"spec":{}', other: ']},"spec":' },
    managedFields: [
      { manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, 'f:note': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {} } } } } },
      { manager: 'kubelet', operation: 'Update', subresource: 'status', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:podIPs': { 'k:{"ip":"10.0.0.1"}': {} } } } },
    ],
  };

  it('cuts the array out of the text: the rest parses to the object withoutManagedFields keeps', () => {
    const text = event(tricky);
    const cut = withoutManagedFieldsText(text);
    assert.ok(cut.length < text.length && !cut.includes('fieldsV1'), cut);
    const parsed = JSON.parse(cut) as { object: Pod };
    assert.deepEqual(parsed.object, withoutManagedFields((JSON.parse(text) as { object: Pod }).object));
    assert.deepEqual(parsed.object.metadata?.annotations, tricky.annotations, 'the annotations that spell the patterns are whole');
  });

  it('returns the text itself when either pattern is missing: no managedFields, no spec after it, a bookmark, a Status', () => {
    const { managedFields: _gone, ...plain } = tricky;
    for (const text of [
      event(plain),
      event(tricky, { status: { phase: 'Running' } }),
      '{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"9"}}}',
      '{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}',
    ]) {
      assert.equal(withoutManagedFieldsText(text), text);
    }
  });
});
