// src/values/shared-values.ts: equal JSON values held once, frozen, and what is not plain JSON left alone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { createSharedValues, type SharedValues } from '../../../src/values/shared-values.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

const container = (): object => ({ name: 'main', image: 'nginx:1.27', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: {} });

/** A value enters the table the second time it is seen: share it that often, return the next one. */
function sharedThird<T>(values: SharedValues, make: () => T): [first: T, third: T, second: T] {
  const first = values.share(make());
  const second = values.share(make());
  return [first, values.share(make()), second];
}

describe('shared values', () => {
  test('equal trees from several decodes become one object, parts included, and every one is frozen', () => {
    const values = createSharedValues();
    const [first, b, a] = sharedThird(values, () => ({ containers: [container()], tolerations: [{ key: 'k', operator: 'Exists' }] }));
    // The first of its kind is not in the table yet: the second one is, and the third is it.
    assert.notEqual(first, a);
    assert.equal(a, b);
    assert.ok(Object.isFrozen(first));
    assert.ok(Object.isFrozen(a));
    assert.ok(Object.isFrozen(a.containers[0]));
    assert.throws(() => {
      (a.containers as unknown as unknown[]).push(1);
    }, TypeError);
  });

  test('trees that differ anywhere stay apart, and share the parts they have in common', () => {
    const values = createSharedValues();
    const volume = (name: string): { volumes: Array<{ name: string; projected: object }> } => ({ volumes: [{ name, projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] });
    values.share(volume('kube-api-access-00000'));
    const a = values.share(volume('kube-api-access-abcde'));
    const b = values.share(volume('kube-api-access-fghij'));
    assert.notEqual(a, b);
    assert.notEqual(a.volumes[0], b.volumes[0]);
    assert.equal(a.volumes[0]!.projected, b.volumes[0]!.projected);
    assert.deepEqual(a.volumes[0]!.name, 'kube-api-access-abcde');
  });

  test('key order, types and array order count: {a:1,b:2} is not {b:2,a:1}, 1 is not "1", [1,2] is not [2,1]', () => {
    const values = createSharedValues();
    const pairs: Array<[() => unknown, () => unknown]> = [
      [() => ({ a: 1, b: 2 }), () => ({ b: 2, a: 1 })],
      [() => ({ a: 1 }), () => ({ a: '1' })],
      [() => [1, 2], () => [2, 1]],
      [() => ({ a: null }), () => ({ a: false })],
    ];
    for (const [x, y] of pairs) {
      // Both kinds in the table first, so that a wrong match would be found.
      const [, sx] = sharedThird(values, x);
      const [, sy] = sharedThird(values, y);
      assert.notEqual(sx, sy);
      assert.deepEqual([sx, sy], [x(), y()]);
    }
  });

  test('what is not plain JSON (a Date, a class instance) is left alone, and so is what holds it', () => {
    const values = createSharedValues();
    const when = new Date(0);
    const [, a, b] = sharedThird(values, () => ({ at: when, inner: { x: 1 } }));
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
        values.share(structuredClone(x));
        values.share(structuredClone(y));
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

  test('a value one owner has, version after version, stays out of the table until another owner has it too', () => {
    const values = createSharedValues();
    const status = (): object => ({ podIP: '10.88.0.7', containerID: 'kubelet-pods://uid-a/main' });
    const a1 = values.share(status(), 'uid-a');
    const a2 = values.share(status(), 'uid-a');
    const a3 = values.share(status(), 'uid-a');
    assert.equal(values.size, 0, 'the same owner again: still seen once');
    assert.notEqual(a2, a3);
    // Another owner with the equal value: now it is shared, and the next one gets it.
    const b1 = values.share(status(), 'uid-b');
    const b2 = values.share(status(), 'uid-c');
    assert.equal(values.size, 1);
    assert.equal(b1, b2);
    assert.notEqual(a1, b1);
    // Without an owner every second sight counts, as before.
    const loose = createSharedValues();
    loose.share(status());
    const x = loose.share(status());
    assert.equal(loose.share(status()), x);
  });

  test("equal strings in objects that stay each owner's own are held once", async () => {
    // A container that names its pod's own token volume is no other pod's container, but its
    // paths and policies are every pod's: parsed from the wire, each is a string of its own.
    const container = (i: number): object =>
      JSON.parse(
        JSON.stringify({
          name: 'main',
          terminationMessagePath: '/dev/termination-log',
          imagePullPolicy: 'IfNotPresent',
          volumeMounts: [{ name: `kube-api-access-${String(i).padStart(5, '0')}`, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
        }),
      ) as object;
    const values = createSharedValues();
    const shared = await retainedBytesPer(20_000, (i) => values.share(container(i), `uid-${i}`));
    const own = await retainedBytesPer(20_000, (i) => createSharedValues().share(container(i), `uid-${i}`));
    // The path alone is 64 bytes a copy.
    assert.ok(own - shared >= 60, `${shared.toFixed(0)} bytes a container with one table, ${own.toFixed(0)} with one each`);
    const again = values.share(container(7), 'uid-7') as { volumeMounts: Array<{ name: string; mountPath: string }> };
    assert.deepEqual(again, JSON.parse(JSON.stringify(container(7))), 'the values are unchanged');
    assert.equal(again.volumeMounts[0]!.name, 'kube-api-access-00007');
  });

  test('the table sweeps entries whose object is gone once it has doubled', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const values = createSharedValues();
    // The sweep at 1,024 entries finds every object alive: the next is at 2,048.
    for (let i = 0; i < 1500; i++) values.share({ n: i });
    assert.equal(values.size, 0, 'seen once: not in the table');
    for (let i = 0; i < 1500; i++) values.share({ n: i });
    assert.equal(values.size, 1500);
    // A WeakRef keeps its object to the end of the job that made it.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    for (let i = 0; i < 1500; i++) values.share({ m: i });
    for (let i = 0; i < 1500; i++) values.share({ m: i });
    // 3,000 without the sweep; the 1,500 gone ones are swept at 2,048.
    assert.ok(values.size <= 1500, `table of ${values.size} entries after the sweep`);
  });
});
