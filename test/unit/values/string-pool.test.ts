// Equal strings of JSON values held once: each string field and item is replaced by the pool's
// copy, the values themselves unchanged, frozen parts left alone, and the pool bounded.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createStringPool } from '../../../src/values/string-pool.js';

// Two equal strings that are different objects, as two parses of the wire give.
const fresh = (s: string): string => JSON.parse(JSON.stringify(s)) as string;

it('shares equal strings across objects and arrays, leaving the values equal', () => {
  const pool = createStringPool();
  const a = JSON.parse('{"status":{"conditions":[{"type":"Ready","message":"kubelet is posting ready status"}],"addresses":["10.0.0.1"]}}');
  const b = JSON.parse('{"status":{"conditions":[{"type":"Ready","message":"kubelet is posting ready status"}],"addresses":["10.0.0.1"]}}');
  const before = structuredClone(b);
  assert.equal(pool.share(a), a);
  assert.equal(pool.share(b), b, 'the same object comes back, changed in place');
  assert.deepEqual(b, before);
  assert.equal(a.status.conditions[0].message, b.status.conditions[0].message);
});

it('holds each distinct string once, however many objects carry it', () => {
  const pool = createStringPool();
  for (let i = 0; i < 10; i++) pool.share({ m: fresh('x'.repeat(40)), list: [fresh('x'.repeat(40)), fresh(`n${i % 2}`), 3, null, true] });
  assert.equal(pool.size(), 3);
  const value = { list: [fresh('y'), 3, null, true] };
  pool.share(value);
  assert.deepEqual(value.list, ['y', 3, null, true]);
});

it('leaves frozen parts and non-objects as they are', () => {
  const pool = createStringPool();
  const frozen = Object.freeze({ m: 'kept' });
  const value = { frozen, n: 1, s: 'a' };
  assert.doesNotThrow(() => pool.share(value));
  assert.equal(pool.size(), 1, 'only the unfrozen string');
  assert.equal(value.frozen, frozen);
  assert.equal(pool.share('plain'), 'plain');
  assert.equal(pool.share(undefined), undefined);
  assert.equal(pool.share(null), null);
});

it('starts over once it holds its limit, still sharing what comes next', () => {
  const pool = createStringPool(2);
  pool.share({ a: fresh('one'), b: fresh('two') });
  assert.equal(pool.size(), 2);
  const later = { a: fresh('three'), b: fresh('three') };
  pool.share(later);
  assert.equal(pool.size(), 1, 'forgot the two before, holds the new one once');
  assert.deepEqual(later, { a: 'three', b: 'three' });
});

it('gives the pool copy of a single string, which counts like a shared one', () => {
  const pool = createStringPool();
  const first = pool.string(fresh('/var/run/secrets/kubernetes.io/serviceaccount'));
  assert.equal(pool.string(fresh('/var/run/secrets/kubernetes.io/serviceaccount')), first);
  assert.equal(pool.size(), 1);
  const value = { path: fresh('/var/run/secrets/kubernetes.io/serviceaccount') };
  pool.share(value);
  assert.equal(pool.size(), 1, 'share() finds the copy string() put there');
  assert.equal(value.path, first);
});
