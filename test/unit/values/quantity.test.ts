// Quantities in the form the API server stores them, so that a status carrying the manifest's
// resources reads back equal to what was written. The expected values are what apimachinery
// v0.34.4 prints (resource.ParseQuantity, then MarshalJSON) for each input, produced by a small
// Go program against that module; see pkg/api/resource/quantity_test.go for its own cases.
// quantityValue, the same parser read as a number, is checked at the end.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalQuantity, canonicalResourceList, quantityValue } from '../../../src/values/quantity.js';

describe('canonicalQuantity', () => {
  const cases: Array<[string, string | undefined]> = [
    ['0', '0'],
    ['0.5', '500m'],
    ['1', '1'],
    ['1000', '1k'],
    ['1024', '1024'],
    ['1e3', '1e3'],
    ['1E3', '1E3'],
    ['1e-3', '1e-3'],
    ['5e-7', '500e-9'],
    ['1536Mi', '1536Mi'],
    ['0.1n', '1n'],
    ['1000E', '1'],
    ['100m', '100m'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['0.25', '250m'],
    ['250m', '250m'],
    ['64Mi', '64Mi'],
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Gi', '512Mi'],
    ['1.5Ki', '1536'],
    ['0.5Ki', '512'],
    ['1.0001Ki', '1024102400u'],
    ['1023', '1023'],
    ['1Ki', '1Ki'],
    ['8Ki', '8Ki'],
    ['2048', '2048'],
    ['1k', '1k'],
    ['1000k', '1M'],
    ['1M', '1M'],
    ['12345678', '12345678'],
    ['0.000001', '1u'],
    ['0.0000001', '100n'],
    ['0.0000000001', '1n'],
    ['-1', '-1'],
    ['-0.5', '-500m'],
    ['-1.5Gi', '-1536Mi'],
    ['+1', '+1'],
    ['.5', '500m'],
    ['1.', '1.'],
    ['00100', '00100'],
    ['0.0', '0'],
    ['0m', '0'],
    ['129e6', '129e6'],
    ['1.5e3', '1500'],
    ['100Mi', '100Mi'],
    ['128974848', '128974848'],
    ['123456789012345678', '123456789012345678'],
    ['7Ei', '7Ei'],
    ['8Ei', '9223372036854775807'],
    ['1500', '1500'],
    ['3000', '3k'],
    ['0.100', '100m'],
    ['10e2', '1e3'],
    ['2.5', '2500m'],
    ['99999m', '99999m'],
    ['1e0', '1e0'],
    ['1E+3', '1E+3'],
    ['1e-9', '1e-9'],
    ['1e-10', '1e-9'],
    ['1023Ki', '1023Ki'],
    ['3Ki', '3Ki'],
    ['1024Ki', '1Mi'],
    ['0.5Mi', '512Ki'],
    ['1e+21', '1e+21'],
    ['1e21', '1e21'],
    ['1.5e-3', '1500e-6'],
    ['2e-10', '1e-9'],
    ['-1E3', '-1E3'],
    ['000', '0'],
    ['0.000', '0'],
    ['1.G', '1.G'],
    ['1.5', '1500m'],
    ['1.50', '1500m'],
    ['100000000000000000000', '100E'],
    ['12Ei', '9223372036854775807'],
    ['999n', '999n'],
    ['1000n', '1u'],
    ['1000000n', '1m'],
    ['1500000000n', '1500m'],
    ['5', '5'],
    ['50', '50'],
    ['500', '500'],
    ['5000', '5k'],
    ['+1000', '1k'],
    ['-0.001', '-1m'],
    ['0.0005', '500u'],
    ['e3', '0'],
    ['Gi', '0'],
    ['.', '0'],
    ['-', '0'],
    ['+.e3', '0'],
  ];
  for (const [input, expected] of cases) {
    it(`${input} is stored as ${expected}`, () => {
      assert.equal(canonicalQuantity(input), expected);
    });
  }

  it('reads numbers as the JSON text the server would parse', () => {
    assert.equal(canonicalQuantity(1), '1');
    assert.equal(canonicalQuantity(0.5), '500m');
    assert.equal(canonicalQuantity(1000), '1k');
    assert.equal(canonicalQuantity(1.5), '1500m');
    assert.equal(canonicalQuantity(0), '0');
    assert.equal(canonicalQuantity(Number.NaN), undefined);
  });

  it('answers undefined for what is not a quantity', () => {
    for (const text of ['', 'abc', '1Xi', '1 Gi', '--1', '1e', '1.5.5']) assert.equal(canonicalQuantity(text), undefined, text);
  });
});

describe('canonicalResourceList', () => {
  it('rewrites every quantity and keeps what is not one', () => {
    assert.deepEqual(canonicalResourceList({ cpu: '0.5', memory: 1073741824, 'example.com/gpu': 2, odd: 'n/a' }), {
      cpu: '500m',
      memory: '1073741824',
      'example.com/gpu': '2',
      odd: 'n/a',
    });
  });
});

describe('quantityValue', () => {
  it('reads a quantity as a number', () => {
    assert.equal(quantityValue('1.5k'), 1500);
    assert.equal(quantityValue('100m'), 0.1);
    assert.equal(quantityValue('2Ki'), 2048);
    assert.ok(Number.isNaN(quantityValue('two')));
  });
});
