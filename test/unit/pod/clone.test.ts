import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clonePod } from '../../../src/pod/clone.js';
import type { Pod } from '../../../src/pod/types.js';

test('clonePod copies deeply: no shared objects, Dates copied, undefined fields left out', () => {
  const created = new Date('2024-01-02T03:04:05Z');
  const pod = {
    metadata: { name: 'a', labels: { x: 'y' }, creationTimestamp: created, annotations: undefined },
    spec: { containers: [{ name: 'c', image: 'i', args: ['--a', null] }] },
  } as unknown as Pod;
  const copy = clonePod(pod);
  assert.deepEqual(JSON.parse(JSON.stringify(copy)), JSON.parse(JSON.stringify(pod)));
  assert.notEqual(copy.metadata, pod.metadata);
  assert.notEqual(copy.spec?.containers[0], pod.spec?.containers[0]);
  assert.ok(copy.metadata?.creationTimestamp instanceof Date);
  assert.notEqual(copy.metadata?.creationTimestamp, created);
  assert.equal(copy.metadata?.creationTimestamp?.getTime(), created.getTime());
  assert.equal('annotations' in copy.metadata!, false);
  copy.spec!.containers[0]!.image = 'changed';
  assert.equal(pod.spec?.containers[0]?.image, 'i');
});

test('a "__proto__" field parsed from JSON stays a plain field of the copy', () => {
  const pod = JSON.parse('{"metadata":{"name":"a"},"spec":{"__proto__":{"hostNetwork":true},"containers":[]}}') as Pod;
  const copy = clonePod(pod);
  assert.equal(Object.getPrototypeOf(copy.spec), Object.prototype);
  assert.equal((copy.spec as { hostNetwork?: boolean }).hostNetwork, undefined);
  assert.deepEqual(Object.keys(copy.spec!), ['__proto__', 'containers']);
});
