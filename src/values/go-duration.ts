import { kpError } from '../errors.js';

/**
 * Go `time.Duration` strings, as they appear in a KubeletConfiguration (`20s`, `1m0s`,
 * `4h0m0s`, `1h2m3.5s`, `100ms`, `-1.5h`, `0`). Parsing is exact: the value is computed in
 * integer nanoseconds (as Go does) and only then converted to milliseconds.
 */

const NANOS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5 micro sign
  'μs': 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const MAX_NANOS = 2n ** 63n - 1n;
const COMPONENT = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;

/** Parses a Go duration to nanoseconds; throws `KP_ERR_CONFIG_DURATION` for anything Go rejects. */
export function parseDurationNanos(input: string): bigint {
  const bad = () => kpError('KP_ERR_CONFIG_DURATION', [input]);
  let rest = input;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  // Go accepts a bare zero (with optional sign) and nothing else without a unit.
  if (rest === '0') return 0n;
  if (rest === '') throw bad();
  let total = 0n;
  while (rest !== '') {
    const m = COMPONENT.exec(rest);
    if (!m) throw bad();
    const whole = m[1] ?? '';
    const frac = m[2];
    const unitName = m[3] ?? '';
    if (whole === '' && (frac === undefined || frac === '')) throw bad();
    const unit = NANOS_PER_UNIT[unitName];
    if (unit === undefined) throw bad();
    let value = BigInt(whole === '' ? '0' : whole) * unit;
    if (frac !== undefined && frac !== '') {
      // Fractions finer than a nanosecond are dropped, as Go does.
      value += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    }
    total += value;
    if (total > MAX_NANOS) throw bad();
    rest = rest.slice(m[0].length);
  }
  return negative ? -total : total;
}

/** Parses a Go duration to milliseconds (fractional below one millisecond). */
export function parseDuration(input: string): number {
  const nanos = parseDurationNanos(input);
  const wholeMs = nanos / 1_000_000n;
  return Number(wholeMs) + Number(nanos - wholeMs * 1_000_000n) / 1e6;
}

/**
 * Formats milliseconds the way Go prints a Duration (`1m0s`, `4h0m0s`, `100ms`, `1.5s`), for
 * log lines and docs that should read like the kubelet's.
 */
export function formatDuration(ms: number): string {
  const nanos = BigInt(Math.round(ms * 1e6));
  if (nanos === 0n) return '0s';
  const negative = nanos < 0n;
  const abs = negative ? -nanos : nanos;
  const sign = negative ? '-' : '';
  if (abs < 1_000_000_000n) {
    const [unit, size] = abs < 1_000n ? ['ns', 1n] : abs < 1_000_000n ? ['µs', 1_000n] : ['ms', 1_000_000n];
    return `${sign}${fraction(abs, size as bigint)}${unit as string}`;
  }
  const hours = abs / 3_600_000_000_000n;
  const minutes = (abs / 60_000_000_000n) % 60n;
  const secondsNanos = abs % 60_000_000_000n;
  let out = `${fraction(secondsNanos, 1_000_000_000n)}s`;
  if (hours > 0n || minutes > 0n) out = `${minutes}m${out}`;
  if (hours > 0n) out = `${hours}h${out}`;
  return sign + out;
}

function fraction(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const rem = value % unit;
  if (rem === 0n) return whole.toString();
  const digits = unit.toString().length - 1;
  return `${whole}.${rem.toString().padStart(digits, '0').replace(/0+$/, '')}`;
}
