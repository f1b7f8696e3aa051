// Go's time.ParseDuration / Duration.String behaviour (src/time/format.go, time_test.go's
// parseDurationTests), which KubeletConfiguration durations follow.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, parseDuration, parseDurationNanos } from '../../../src/values/go-duration.js';
import { hasErrorCode } from '../../../src/errors.js';

describe('parseDuration', () => {
  const valid: { desc: string; input: string; ms: number }[] = [
    { desc: 'seconds', input: '20s', ms: 20_000 },
    { desc: 'minutes and zero seconds', input: '1m0s', ms: 60_000 },
    { desc: 'hours, minutes, seconds', input: '4h0m0s', ms: 14_400_000 },
    { desc: 'milliseconds', input: '100ms', ms: 100 },
    { desc: 'fractional seconds in a compound', input: '1h2m3.5s', ms: 3_723_500 },
    { desc: 'bare zero', input: '0', ms: 0 },
    { desc: 'zero with a unit', input: '0s', ms: 0 },
    { desc: 'negative', input: '-1.5h', ms: -5_400_000 },
    { desc: 'leading plus', input: '+5s', ms: 5000 },
    { desc: 'fraction without whole part', input: '.5s', ms: 500 },
    { desc: 'whole with trailing dot', input: '1.s', ms: 1000 },
    { desc: 'microseconds (us)', input: '1500us', ms: 1.5 },
    { desc: 'microseconds (micro sign)', input: '2µs', ms: 0.002 },
    { desc: 'microseconds (Greek mu)', input: '2μs', ms: 0.002 },
    { desc: 'nanoseconds', input: '1ns', ms: 0.000001 },
    { desc: 'units in any order', input: '3s2m', ms: 123_000 },
    { desc: 'the kubelet example values', input: '2m0s', ms: 120_000 },
  ];
  for (const c of valid) {
    it(`accepts ${c.desc} (${c.input})`, () => {
      assert.equal(parseDuration(c.input), c.ms);
    });
  }

  it('computes in integer nanoseconds (no float drift)', () => {
    assert.equal(parseDurationNanos('1h2m3.5s'), 3_723_500_000_000n);
    assert.equal(parseDurationNanos('0.1s'), 100_000_000n);
    assert.equal(parseDurationNanos('1.000000001s'), 1_000_000_001n);
    // Digits below a nanosecond are dropped, as Go does.
    assert.equal(parseDurationNanos('1.0000000019s'), 1_000_000_001n);
  });

  const invalid = ['', '1', '-', 's', '.s', '1d', '1 s', '10', '1h 2m', 'abc', '3000000h', '1.2.3s', ' 1s'];
  for (const input of invalid) {
    it(`rejects ${JSON.stringify(input)} with KP_ERR_CONFIG_DURATION`, () => {
      assert.throws(
        () => parseDuration(input),
        (err: unknown) => hasErrorCode(err, 'KP_ERR_CONFIG_DURATION') && err.message.includes(JSON.stringify(input)),
      );
    });
  }
});

describe('formatDuration', () => {
  const cases: { ms: number; text: string }[] = [
    { ms: 0, text: '0s' },
    { ms: 20_000, text: '20s' },
    { ms: 60_000, text: '1m0s' },
    { ms: 14_400_000, text: '4h0m0s' },
    { ms: 100, text: '100ms' },
    { ms: 3_723_500, text: '1h2m3.5s' },
    { ms: 1.5, text: '1.5ms' },
    { ms: 0.002, text: '2µs' },
    { ms: -1500, text: '-1.5s' },
  ];
  for (const c of cases) {
    it(`prints ${c.ms} ms as ${c.text} and parses it back`, () => {
      assert.equal(formatDuration(c.ms), c.text);
      assert.equal(parseDuration(c.text), c.ms);
    });
  }
});
