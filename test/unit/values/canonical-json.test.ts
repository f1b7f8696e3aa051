// The canonical JSON of src/values/canonical-json.ts: what the static pod UID hashes and what
// the merger compares. The UID values themselves are pinned in test/unit/sources/common.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { byteOrder, canonicalJSON, jsonEqual } from '../../../src/values/canonical-json.js';

describe('canonical JSON', () => {
  test('canonical JSON drops null, undefined, false, 0 and "" but keeps empty arrays and objects', () => {
    assert.equal(
      canonicalJSON({ b: [], a: {}, c: false, d: 0, e: '', f: null, g: undefined, h: [0, null] }, { dropZeroValues: true }),
      '{"a":{},"b":[],"h":[0,null]}',
    );
    assert.equal(canonicalJSON({ c: false, d: 0 }), '{"c":false,"d":0}');
  });
});

describe('canonical JSON byte order', () => {
  test('byteOrder equals the UTF-8 byte comparison for any strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        assert.equal(byteOrder(a, b), Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
        assert.equal(byteOrder(a, a), 0);
      }),
      { numRuns: 2000 },
    );
    assert.equal(byteOrder('\uffff', '\u{10000}'), -1, 'U+FFFF sorts before U+10000 in UTF-8 (not in UTF-16)');
  });
});

test('jsonEqual agrees with comparing canonical JSON texts (property)', () => {
  const scalar = fc.oneof(fc.constant(null), fc.constant(undefined), fc.boolean(), fc.integer({ min: -2, max: 2 }), fc.constantFrom('', 'a', 'b'));
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, scalar, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 3 }),
    object: fc.dictionary(fc.constantFrom('x', 'y', 'z'), tie('value'), { maxKeys: 3 }),
  }));
  fc.assert(
    fc.property(value, value, (a, b) => {
      assert.equal(jsonEqual(a, b), canonicalJSON(a) === canonicalJSON(b));
      assert.equal(jsonEqual(a, structuredClone(a)), true);
    }),
    { numRuns: 2000 },
  );
  // Dates compare with their ISO text, as in the canonical form.
  assert.equal(jsonEqual({ t: new Date('2024-01-01T00:00:00.000Z') }, { t: '2024-01-01T00:00:00.000Z' }), true);
  assert.equal(jsonEqual({ t: new Date('2024-01-01T00:00:00.000Z') }, { t: '2024-01-01T00:00:00Z' }), false);
});
