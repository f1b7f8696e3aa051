// src/values/shared-values.ts: equal JSON values held once, frozen, and what is not plain JSON left alone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { createSharedValues } from '../../../src/values/shared-values.js';

const container = (): object => ({ name: 'main', image: 'nginx:1.27', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: {} });

describe('shared values', () => {
  test('equal trees from two decodes become one object, parts included, and it is frozen', () => {
    const values = createSharedValues();
    const a = values.share({ containers: [container()], tolerations: [{ key: 'k', operator: 'Exists' }] });
    const b = values.share({ containers: [container()], tolerations: [{ key: 'k', operator: 'Exists' }] });
    assert.equal(a, b);
    assert.ok(Object.isFrozen(a));
    assert.ok(Object.isFrozen(a.containers[0]));
    assert.throws(() => {
      (a.containers as unknown as unknown[]).push(1);
    }, TypeError);
  });

  test('trees that differ anywhere stay apart, and share the parts they have in common', () => {
    const values = createSharedValues();
    const a = values.share({ volumes: [{ name: 'kube-api-access-abcde', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] });
    const b = values.share({ volumes: [{ name: 'kube-api-access-fghij', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] });
    assert.notEqual(a, b);
    assert.notEqual(a.volumes[0], b.volumes[0]);
    assert.equal(a.volumes[0]!.projected, b.volumes[0]!.projected);
    assert.deepEqual(a.volumes[0]!.name, 'kube-api-access-abcde');
  });

  test('key order, types and array order count: {a:1,b:2} is not {b:2,a:1}, 1 is not "1", [1,2] is not [2,1]', () => {
    const values = createSharedValues();
    assert.notEqual(values.share({ a: 1, b: 2 }), values.share({ b: 2, a: 1 }));
    assert.notEqual(values.share({ a: 1 }), values.share({ a: '1' }));
    assert.notEqual(values.share([1, 2]), values.share([2, 1]));
    assert.notEqual(values.share({ a: null }), values.share({ a: false }));
  });

  test('what is not plain JSON (a Date, a class instance) is left alone, and so is what holds it', () => {
    const values = createSharedValues();
    const when = new Date(0);
    const a = values.share({ at: when, inner: { x: 1 } });
    const b = values.share({ at: when, inner: { x: 1 } });
    assert.notEqual(a, b);
    assert.equal(a.at, when);
    assert.ok(!Object.isFrozen(a));
    assert.ok(!Object.isFrozen(when));
    // Its plain parts are still shared.
    assert.equal(a.inner, b.inner);
  });

  test('a shared value is deep-equal to what was given, for any JSON', () => {
    const values = createSharedValues();
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (x, y) => {
        const expectX = structuredClone(x);
        const expectY = structuredClone(y);
        const sx = values.share(structuredClone(x));
        const sy = values.share(structuredClone(y));
        assert.deepEqual(sx, expectX);
        assert.deepEqual(sy, expectY);
        // Equal inputs give the very same object (when they are objects).
        if (typeof sx === 'object' && sx !== null && JSON.stringify(expectX) === JSON.stringify(expectY)) assert.equal(sx, sy);
      }),
      { numRuns: 300 },
    );
  });

  test('the table sweeps entries whose object is gone once it has doubled', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const values = createSharedValues();
    // Sweeps at 1,024, 2,048 and 4,096 entries find every object alive: the next is at 8,192.
    for (let i = 0; i < 5000; i++) values.share({ n: i });
    assert.equal(values.size, 5000);
    // A WeakRef keeps its object to the end of the job that made it.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    for (let i = 0; i < 3200; i++) values.share({ m: i });
    assert.ok(values.size <= 3200, `table of ${values.size} entries after the sweep`);
  });
});
