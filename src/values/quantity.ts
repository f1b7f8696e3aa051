/**
 * Resource quantities (`500m`, `1Gi`, `1e3`), read by one parser for two uses.
 *
 * `canonicalQuantity`: the form the API server stores. A status we write carries quantities
 * copied from the static pod's manifest (`cpu: 0.5`, `memory: 1024Mi`, `cpu: 1` as a YAML
 * number); the server re-encodes every quantity it decodes, so unless ours are written the
 * same way, the stored status never equals ours and the writer would send it again on every
 * resync. The rules are apimachinery's `resource.Quantity` (v0.34): parse exactly, round a value
 * finer than 1n up (away from zero) to 1n, then print the largest suffix that keeps the number
 * an integer in the format the input used (decimal SI, binary SI or a decimal exponent), binary
 * values below 1024 or with a fraction falling back to decimal SI.
 *
 * `quantityValue`: a quantity as a JavaScript number, close enough to compare capacities and
 * to count requests at admission.
 */

export type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const BINARY_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([suffix, exp]) => [exp, suffix]));

const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/;
const EXPONENT_SUFFIX = /^[eE]([+-]?\d+)$/;

/** The nano scale: no quantity keeps more than nine decimal places. */
const NANO_DIGITS = 9;
/** The largest decimal exponent read (`1e1000`); see parse. */
const MAX_EXPONENT = 1000;

interface Parsed {
  negative: boolean;
  /** The integer digits without leading zeros ("0" when there are none), and the fraction's. */
  num: string;
  denom: string;
  format: Format;
  /** The suffix's power: of ten for the decimal formats, of two for binary SI. */
  exponent: number;
}

/** The text's parts as written: the lexing both readers share. */
interface Lexed {
  sign: string;
  whole: string;
  /** Whether there is a `.`; `fraction` is the digits after it. */
  dot: boolean;
  fraction: string;
  suffix: string;
}

function lex(text: string): Lexed | undefined {
  const m = QUANTITY.exec(text);
  if (m === null) return undefined;
  const [, sign = '', whole = '', fraction, suffix = ''] = m;
  return { sign, whole, dot: fraction !== undefined, fraction: fraction ?? '', suffix };
}

/** The suffix's format and power (unchecked for an exponent); undefined when it is none. */
function suffixOf(suffix: string): { format: Format; exponent: number } | undefined {
  // Own keys only: `constructor` or `__proto__` is no suffix.
  if (Object.hasOwn(DECIMAL_SUFFIXES, suffix)) return { format: 'DecimalSI', exponent: DECIMAL_SUFFIXES[suffix]! };
  if (Object.hasOwn(BINARY_SUFFIXES, suffix)) return { format: 'BinarySI', exponent: BINARY_SUFFIXES[suffix]! };
  const e = EXPONENT_SUFFIX.exec(suffix);
  return e === null ? undefined : { format: 'DecimalExponent', exponent: Number(e[1]) };
}

function parse(text: string): Parsed | undefined {
  const lexed = lex(text);
  if (lexed === undefined) return undefined;
  // Go reads missing digits as zero: `.`, `-` or `Gi` alone are the quantity 0.
  const suffix = suffixOf(lexed.suffix);
  if (suffix === undefined) return undefined;
  // A manifest's `1e999999999` would make a number of a billion digits: far past anything a
  // resource holds, it is refused as no quantity rather than computed.
  if (suffix.format === 'DecimalExponent' && !(Math.abs(suffix.exponent) <= MAX_EXPONENT)) return undefined;
  return { negative: lexed.sign === '-', num: lexed.whole.replace(/^0+/, '') || '0', denom: lexed.fraction, ...suffix };
}

const MAX_INT64 = 2n ** 63n - 1n;
/** Digits an int64 always holds. */
const INT64_DIGITS = 18;

/**
 * apimachinery keeps the text as written, instead of printing its own form, when the value has
 * few enough digits to be held exactly in an int64 and the text already looks canonical to it:
 * that is why `1E3`, `+1`, `1.` or `1e0` come back unchanged while `1000` becomes `1k`.
 */
function keptAsWritten(p: Parsed): boolean {
  const shifted = p.num + p.denom;
  if (p.format === 'BinarySI') {
    if (p.denom !== '') return false;
    const precision = 15 - p.num.length - Math.trunc((p.exponent * 3) / 10) - 1;
    if (precision < 0) return false;
    const value = BigInt(shifted);
    return value << BigInt(p.exponent) <= MAX_INT64 && (value & 7n) !== 0n;
  }
  if (INT64_DIGITS - shifted.length < 0) return false;
  const scale = p.exponent - p.denom.length;
  return scale >= -NANO_DIGITS && scale % 3 === 0 && !shifted.endsWith('000') && !shifted.startsWith('0');
}

const TEN = 10n;

function pow10(n: number): bigint {
  return TEN ** BigInt(n);
}

/** A quantity's exact value, `magnitude` × 10^-`scale`, and the format it prints in. */
export interface Quantity {
  readonly negative: boolean;
  readonly magnitude: bigint;
  readonly scale: number;
  readonly format: Format;
}

/** A string or YAML/JSON number read as apimachinery reads a quantity; undefined if it is none. */
export function parseQuantity(value: unknown): Quantity | undefined {
  const text = typeof value === 'number' ? numberText(value) : typeof value === 'string' ? value : undefined;
  if (text === undefined || text === '') return undefined;
  const parsed = parse(text);
  return parsed === undefined ? undefined : exact(parsed);
}

function exact(parsed: Parsed): Quantity {
  let magnitude = BigInt(parsed.num + parsed.denom);
  let scale = parsed.denom.length;
  if (parsed.format === 'BinarySI') magnitude <<= BigInt(parsed.exponent);
  else scale -= parsed.exponent;
  if (scale > NANO_DIGITS) {
    const divisor = pow10(scale - NANO_DIGITS);
    magnitude = (magnitude + divisor - 1n) / divisor;
    scale = NANO_DIGITS;
  }
  // apimachinery caps binary quantities at the largest int64.
  if (parsed.format === 'BinarySI' && magnitude > MAX_INT64 * pow10(Math.max(scale, 0))) {
    magnitude = MAX_INT64;
    scale = 0;
  }
  return { negative: parsed.negative && magnitude !== 0n, magnitude, scale, format: parsed.format };
}

/**
 * The stored form of a quantity given as a string or a number; undefined when `value` is not a
 * quantity (the API server would refuse it, so there is nothing to match).
 */
export function canonicalQuantity(value: string | number): string | undefined {
  const text = typeof value === 'number' ? numberText(value) : value;
  if (text === undefined || text === '') return undefined;
  const parsed = parse(text);
  if (parsed === undefined) return undefined;
  return keptAsWritten(parsed) ? text : formatQuantity(exact(parsed));
}

/** How apimachinery prints a quantity it computed (or whose text it did not keep). */
export function formatQuantity(q: Quantity): string {
  let { magnitude, scale, format } = q;
  if (magnitude === 0n) return '0';
  const sign = q.negative ? '-' : '';

  if (format === 'BinarySI') {
    // Below 1024, or not a whole number: shown in decimal so nothing is rounded away.
    const whole = scale <= 0 ? magnitude * pow10(-scale) : magnitude % pow10(scale) === 0n ? magnitude / pow10(scale) : undefined;
    if (whole === undefined || whole < 1024n) {
      format = 'DecimalSI';
    } else {
      let amount = whole;
      let power = 0;
      while (amount % 1024n === 0n && power < BINARY_BY_POWER.length - 1) {
        amount /= 1024n;
        power++;
      }
      return `${sign}${amount}${BINARY_BY_POWER[power]}`;
    }
  }

  let amount = magnitude;
  let exponent = -scale;
  while (amount % TEN === 0n) {
    amount /= TEN;
    exponent++;
  }
  // Down to a multiple of three, so that an SI suffix (or e3, e6, …) fits.
  const excess = ((exponent % 3) + 3) % 3;
  amount *= pow10(excess);
  exponent -= excess;
  if (format === 'DecimalExponent') return `${sign}${amount}${exponent === 0 ? '' : `e${exponent}`}`;
  // apimachinery prints no suffix beyond E (1e21 and up); the server stores exactly that.
  return `${sign}${amount}${DECIMAL_BY_EXPONENT.get(exponent) ?? ''}`;
}

/**
 * `q` rounded away from zero to at most `digits` decimal places; `q` itself when it has no
 * finer digits (apimachinery then keeps the text as written).
 */
export function roundUpQuantity(q: Quantity, digits: number): Quantity {
  if (q.scale <= digits) return q;
  const divisor = pow10(q.scale - digits);
  return { ...q, magnitude: (q.magnitude + divisor - 1n) / divisor, scale: digits };
}

function signed(q: Quantity, scale: number): bigint {
  const v = q.magnitude * pow10(scale - q.scale);
  return q.negative ? -v : v;
}

/** a + b, in a's format (b's when a is zero), as apimachinery adds. */
export function addQuantity(a: Quantity, b: Quantity): Quantity {
  const scale = Math.max(a.scale, b.scale);
  const sum = signed(a, scale) + signed(b, scale);
  const format = a.magnitude === 0n ? b.format : a.format;
  return { negative: sum < 0n, magnitude: sum < 0n ? -sum : sum, scale, format };
}

/** Negative, zero or positive as a is less than, equal to or greater than b. */
export function compareQuantity(a: Quantity, b: Quantity): number {
  const scale = Math.max(a.scale, b.scale);
  const d = signed(a, scale) - signed(b, scale);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

// A YAML or JSON number as the API server reads it.
function numberText(n: number): string | undefined {
  // JSON carries a number as JavaScript prints it (1e+21, 1e-7 included), and the server
  // parses that text.
  return Number.isFinite(n) ? String(n) : undefined;
}

/**
 * A resource list (`requests`, `limits`) with every quantity in its stored form; values that are
 * not quantities are kept as they are.
 */
export function canonicalResourceList(list: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(list)) {
    const canonical = typeof value === 'string' || typeof value === 'number' ? canonicalQuantity(value) : undefined;
    out[name] = canonical ?? (value as string);
  }
  return out;
}

/**
 * A quantity's value as a number (precise enough to tell two capacities apart), NaN if
 * unreadable. Surrounding blanks are ignored; unlike Go, a quantity without any digit is NaN.
 */
export function quantityValue(text: string): number {
  const trimmed = text.trim();
  const lexed = lex(trimmed);
  if (lexed === undefined || (lexed.whole === '' && !lexed.dot)) return Number.NaN;
  const suffix = suffixOf(lexed.suffix);
  if (suffix === undefined) return Number.NaN;
  const digits = trimmed.slice(0, trimmed.length - lexed.suffix.length);
  // An exponent is read with the digits, as one decimal number; a suffix is a factor.
  if (suffix.format === 'DecimalExponent') return Number(trimmed);
  const factor = suffix.format === 'BinarySI' ? 2 ** suffix.exponent : Number(`1e${suffix.exponent}`);
  return Number(digits) * factor;
}
