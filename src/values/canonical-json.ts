/**
 * A deterministic JSON text for a plain value: the static pod UID hashes it (so its output must
 * not change by a byte), the merger and the Node status writer compare with it.
 *
 * - object keys are sorted byte-wise on their UTF-8 encoding (like Go's sort.Strings);
 * - keys whose value is `undefined` or `null` are dropped (a missing field and an explicit
 *   null decode to the same Go value);
 * - with `dropZeroValues`, `false`, `0` and `""` fields are dropped too, mimicking how Go's
 *   struct printer cannot tell an omitted scalar from its zero value. Empty arrays and
 *   objects are kept: Go does tell a nil slice/map from an empty one;
 * - numbers use JavaScript's shortest round-trip form, Dates their ISO-8601 text;
 * - array elements are never dropped (a `null` element is written as `null`).
 */
export function canonicalJSON(value: unknown, options: { dropZeroValues?: boolean } = {}): string {
  return write(value, options.dropZeroValues === true) ?? 'null';
}

function isDropped(value: unknown, dropZero: boolean): boolean {
  if (value === undefined || value === null) return true;
  if (!dropZero) return false;
  return value === false || value === 0 || value === '';
}

// Below U+D800, UTF-16 code unit order is UTF-8 byte order; only strings with surrogates or
// U+E000–U+FFFF need the (allocating) byte comparison.
const NEEDS_BYTE_COMPARE = /[\uD800-\uFFFF]/;

/** Byte-wise order of the UTF-8 encodings of `a` and `b` (Go's string order). */
export function byteOrder(a: string, b: string): number {
  if (NEEDS_BYTE_COMPARE.test(a) || NEEDS_BYTE_COMPARE.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorts `strings` in place in byte order; plain code-unit order when that is the same. */
export function sortByteOrder(strings: string[]): string[] {
  return strings.some((s) => NEEDS_BYTE_COMPARE.test(s)) ? strings.sort(byteOrder) : strings.sort();
}

function write(value: unknown, dropZero: boolean): string | undefined {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null) return 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) {
    return `[${value.map((v) => write(v, dropZero) ?? 'null').join(',')}]`;
  }
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort(byteOrder)) {
      const v = record[key];
      if (isDropped(v, dropZero)) continue;
      const text = write(v, dropZero);
      if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
    }
    return `{${parts.join(',')}}`;
  }
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value);
}

/**
 * Whether `canonicalJSON(a) === canonicalJSON(b)` (zero values kept), decided without building
 * either text: the merger compares every changed pod with its stored version, and most of
 * the time the first differing field, or the identity of shared sub-objects, settles it.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const aAbsent = a === undefined || a === null;
  const bAbsent = b === undefined || b === null;
  if (aAbsent || bAbsent) return aAbsent && bAbsent;
  if (typeof a !== 'object' || typeof b !== 'object' || a instanceof Date || b instanceof Date) {
    // Scalars, and Dates against their ISO text: the canonical texts decide.
    return write(a, false) === write(b, false);
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let present = 0;
  for (const key of Object.keys(ra)) {
    const v = ra[key];
    if (v === undefined || v === null) continue;
    present += 1;
    if (!jsonEqual(v, rb[key])) return false;
  }
  for (const key of Object.keys(rb)) {
    const v = rb[key];
    if (v !== undefined && v !== null) present -= 1;
  }
  return present === 0;
}
