// Quantities as values: exact parsing, rounding up, sums and comparisons, printed as
// apimachinery prints a quantity it computed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { addQuantity, compareQuantity, formatQuantity, parseQuantity, roundUpQuantity, type Quantity } from '../../../src/values/quantity.js';

const q = (text: string | number): Quantity => {
  const parsed = parseQuantity(text);
  assert.ok(parsed, `${text} is a quantity`);
  return parsed;
};

describe('quantity arithmetic', () => {
  test('parseQuantity reads strings and numbers exactly and refuses what is no quantity', () => {
    assert.deepEqual(q('1.5Ki'), { negative: false, magnitude: 15360n, scale: 1, format: 'BinarySI' });
    assert.deepEqual(q(0.25), { negative: false, magnitude: 25n, scale: 2, format: 'DecimalSI' });
    assert.deepEqual(q('2e3'), { negative: false, magnitude: 2n, scale: -3, format: 'DecimalExponent' });
    for (const bad of ['', 'x', '1Q', '1constructor', '1__proto__', '1e99999999', true, null, {}]) assert.equal(parseQuantity(bad), undefined, String(bad));
  });

  test('formatQuantity prints computed values canonically in their format', () => {
    assert.equal(formatQuantity(q('1000')), '1k');
    assert.equal(formatQuantity(q('1.5Ki')), '1536');
    assert.equal(formatQuantity(q('2048Ki')), '2Mi');
    assert.equal(formatQuantity(q('1E3')), '1e3');
    assert.equal(formatQuantity(q('0')), '0');
  });

  test('roundUpQuantity rounds finer digits away from zero and returns the same quantity otherwise', () => {
    const fine = q('100u');
    assert.equal(formatQuantity(roundUpQuantity(fine, 3)), '1m');
    assert.equal(formatQuantity(roundUpQuantity(q('1.0001'), 3)), '1001m');
    const coarse = q('250m');
    assert.equal(roundUpQuantity(coarse, 3), coarse);
  });

  test('addQuantity keeps the first operand’s format unless it is zero; compareQuantity orders values', () => {
    assert.equal(formatQuantity(addQuantity(q('1Gi'), q('512Mi'))), '1536Mi');
    assert.equal(formatQuantity(addQuantity(q('250m'), q('1'))), '1250m');
    assert.equal(formatQuantity(addQuantity(q('0'), q('1Ki'))), '1Ki');
    assert.equal(compareQuantity(q('1Gi'), q('1000Mi')), 1);
    assert.equal(compareQuantity(q('1'), q('1000m')), 0);
    assert.equal(compareQuantity(q('100m'), q('0.2')), -1);
  });
});
