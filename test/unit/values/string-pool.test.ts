// Equal strings held once: the pool's copy for every string of the same text, and the pool
// bounded.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createStringPool } from '../../../src/values/string-pool.js';

// Two equal strings that are different objects, as two parses of the wire give.
const fresh = (s: string): string => JSON.parse(JSON.stringify(s)) as string;

it('gives the first copy of a text for every later string of that text, and holds each text once', () => {
  const pool = createStringPool();
  const first = pool.string(fresh('/var/run/secrets/kubernetes.io/serviceaccount'));
  for (let i = 0; i < 10; i++) {
    assert.equal(pool.string(fresh('/var/run/secrets/kubernetes.io/serviceaccount')), first);
    pool.string(fresh(`n${i % 2}`));
  }
  assert.equal(pool.size(), 3);
});

it('starts over once it holds its limit, still sharing what comes next', () => {
  const pool = createStringPool(2);
  pool.string(fresh('one'));
  pool.string(fresh('two'));
  assert.equal(pool.size(), 2);
  const three = pool.string(fresh('three'));
  assert.equal(pool.size(), 1, 'forgot the two before, holds the new one');
  assert.equal(pool.string(fresh('three')), three);
  assert.equal(pool.size(), 1);
});
