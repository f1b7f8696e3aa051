// The YAML that kubeconfig and KubeletConfiguration files hold in practice, read without the
// yaml package: block mappings and sequences of plain or quoted scalars, as kubectl, kubeadm
// and client-go write them, and JSON. The yaml package's first parse runs most of its code for
// the first time, which cost a restarted agent more than the rest of reading its configuration
// (docs/performance.md, "Restart → Node Ready, 2026-11-27"). Anything outside that subset
// (anchors, tags, block and multi-line scalars, flow collections other than `{}` and `[]`,
// escapes, numbers other than plain decimal integers, duplicate keys, tabs) is left to the yaml
// package: `parseSimpleYaml` then answers undefined, never a different value than the yaml
// package's `parse` (YAML 1.2, core schema) would give.

/** The document's value, or undefined when the text is not in the subset read here. */
export function parseSimpleYaml(text: string): { value: unknown } | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return parseJson(trimmed);
  const lines = significantLines(text);
  if (lines === undefined) return undefined;
  if (lines.length === 0) return { value: null };
  const reader = new BlockReader(lines);
  const value = reader.node(lines[0]!.indent);
  if (value === FAIL || !reader.done()) return undefined;
  return { value };
}

/** JSON is YAML; JSON.parse agrees with the yaml package on it but for keys given twice, which YAML refuses. */
function parseJson(text: string): { value: unknown } | undefined {
  if (text.includes('\t')) return undefined;
  let duplicate = false;
  let value: unknown;
  try {
    value = JSON.parse(text, function (this: unknown, key, v) {
      // A reviver cannot see a key given twice; a key named __proto__ is left to the yaml package too.
      if (key === '__proto__') duplicate = true;
      return v;
    });
  } catch {
    return undefined;
  }
  if (duplicate || hasDuplicateKeys(text)) return undefined;
  return { value };
}

/** A cheap check for a key given twice in JSON text: any object whose key set is smaller than its key count. */
function hasDuplicateKeys(text: string): boolean {
  // Scans strings and braces; counts `"key":` per object depth.
  const stack: Set<string>[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const raw = text.slice(i, j + 1);
      let k = j + 1;
      while (k < text.length && (text[k] === ' ' || text[k] === '\n' || text[k] === '\r' || text[k] === '\t')) k++;
      if (text[k] === ':' && stack.length > 0) {
        const keys = stack[stack.length - 1]!;
        const key = JSON.parse(raw) as string;
        if (keys.has(key)) return true;
        keys.add(key);
      }
      i = j + 1;
      continue;
    }
    if (c === '{') stack.push(new Set());
    else if (c === '}') stack.pop();
    else if (c === '[') stack.push(new Set());
    else if (c === ']') stack.pop();
    i++;
  }
  return false;
}

interface Line {
  readonly indent: number;
  /** The line without its indentation. */
  readonly text: string;
}

/** The lines that carry content, or undefined for what is left to the yaml package. */
function significantLines(text: string): Line[] | undefined {
  const out: Line[] = [];
  const raw = text.split(/\r?\n/);
  for (let n = 0; n < raw.length; n++) {
    const line = raw[n]!;
    if (line.includes('\t')) return undefined;
    const content = line.trimStart();
    if (content === '' || content.startsWith('#')) continue;
    // One document, optionally opened by `---` on its own line before anything else.
    if (line === '---' && out.length === 0) continue;
    if (line.startsWith('---') || line.startsWith('...') || line.startsWith('%')) return undefined;
    out.push({ indent: line.length - content.length, text: content.trimEnd() });
  }
  return out;
}

const FAIL = Symbol('not simple');
type Result = unknown | typeof FAIL;

class BlockReader {
  #at = 0;
  constructor(private readonly lines: readonly Line[]) {}

  done(): boolean {
    return this.#at === this.lines.length;
  }

  /** The block node whose lines start at the current line, at `indent`. */
  node(indent: number): Result {
    const line = this.lines[this.#at];
    if (line === undefined || line.indent !== indent) return FAIL;
    return isSequenceItem(line.text) ? this.sequence(indent) : this.mapping(indent, line.text, indent);
  }

  sequence(indent: number): Result {
    const items: unknown[] = [];
    for (let line = this.lines[this.#at]; line !== undefined && line.indent === indent && isSequenceItem(line.text); line = this.lines[this.#at]) {
      const rest = line.text === '-' ? '' : line.text.slice(2);
      const restStart = indent + 2 + (rest.length - rest.trimStart().length);
      const item = rest.trimStart();
      if (item === '') {
        // `-` alone: the item is the block below it, or null.
        this.#at++;
        const next = this.lines[this.#at];
        if (next !== undefined && next.indent > indent) {
          const value = this.node(next.indent);
          if (value === FAIL) return FAIL;
          items.push(value);
        } else {
          items.push(null);
        }
        continue;
      }
      if (isSequenceItem(item)) return FAIL; // `- - x`: nested compact sequences
      if (mappingKeyEnd(item) !== undefined) {
        // `- key: value`, the mapping's further keys aligned under `key`.
        const value = this.mapping(restStart, item, indent + 1);
        if (value === FAIL) return FAIL;
        items.push(value);
        continue;
      }
      const scalar = parseScalar(item);
      if (scalar === FAIL) return FAIL;
      this.#at++;
      if (this.#continues(indent)) return FAIL;
      items.push(scalar);
    }
    return items;
  }

  /**
   * A block mapping whose keys sit at column `indent`; its first key is `first` (the current
   * line's text, or what follows a sequence item's `- `); `parentIndent` is the column its
   * parent's lines stay left of.
   */
  mapping(indent: number, first: string, parentIndent: number): Result {
    const map: Record<string, unknown> = {};
    let text: string | undefined = first;
    for (;;) {
      if (text === undefined) break;
      const end = mappingKeyEnd(text);
      if (end === undefined) return FAIL;
      const key = parseKey(text.slice(0, end));
      if (key === undefined || Object.prototype.hasOwnProperty.call(map, key) || key === '__proto__' || key === '<<') return FAIL;
      const rest = text.slice(end + 1).trim();
      this.#at++;
      if (rest === '') {
        const next = this.lines[this.#at];
        if (next !== undefined && (next.indent > indent || (next.indent === indent && isSequenceItem(next.text)))) {
          const value = this.node(next.indent);
          if (value === FAIL) return FAIL;
          map[key] = value;
        } else {
          map[key] = null;
        }
      } else {
        const scalar = parseScalar(rest);
        if (scalar === FAIL) return FAIL;
        if (this.#continues(indent)) return FAIL;
        map[key] = scalar;
      }
      const next = this.lines[this.#at];
      if (next === undefined || next.indent < indent) break;
      if (next.indent > indent || isSequenceItem(next.text)) return next.indent <= parentIndent ? map : FAIL;
      text = next.text;
    }
    return map;
  }

  /** True when the next line is deeper than `indent` but starts no node: a multi-line scalar. */
  #continues(indent: number): boolean {
    const next = this.lines[this.#at];
    return next !== undefined && next.indent > indent;
  }
}

function isSequenceItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

/** Where a mapping entry's `:` is (a key, then `:` ending the line or followed by a space), or undefined. */
function mappingKeyEnd(text: string): number | undefined {
  if (text.startsWith('"') || text.startsWith("'")) {
    const close = text.indexOf(text[0]!, 1);
    if (close < 0) return undefined;
    const after = close + 1;
    return text[after] === ':' && (after + 1 === text.length || text[after + 1] === ' ') ? after : undefined;
  }
  for (let i = 0; i < text.length; i++) {
    if (text[i] === ':' && (i + 1 === text.length || text[i + 1] === ' ')) return i;
    if (text[i] === ' ' && text[i + 1] === '#') return undefined;
  }
  return undefined;
}

const PLAIN_KEY = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;

function parseKey(raw: string): string | undefined {
  const key = raw.trim();
  if (key.startsWith('"') || key.startsWith("'")) {
    const v = parseScalar(key);
    return typeof v === 'string' ? v : undefined;
  }
  // A plain key that another type would read as something else (true, 1, null) is left alone.
  if (!PLAIN_KEY.test(key)) return undefined;
  const v = parseScalar(key);
  return typeof v === 'string' ? v : undefined;
}

const NULLS = new Set(['~', 'null', 'Null', 'NULL']);
const TRUES = new Set(['true', 'True', 'TRUE']);
const FALSES = new Set(['false', 'False', 'FALSE']);
/** Characters a plain scalar may not start with (YAML's indicators). */
const INDICATORS = new Set(['[', ']', '{', '}', ',', '#', '&', '*', '!', '|', '>', "'", '"', '%', '@', '`', '?', ':', '-']);
/**
 * The core schema's number forms other than a plain decimal int (floats, exponents, octal and
 * hexadecimal ints, infinities, NaN, and ints with leading zeros or too long for a double):
 * left to the yaml package. Anything else is a string to it (`20s`, `10Mi`, `10.96.0.10`).
 */
const NUMBER_FORMS = [
  /^[-+]?[0-9]+$/,
  /^0o[0-7]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
];

function parseScalar(raw: string): Result {
  if (raw === '{}') return {};
  if (raw === '[]') return [];
  const first = raw[0]!;
  if (first === '"') {
    if (raw.length < 2 || !raw.endsWith('"') || raw.indexOf('"', 1) !== raw.length - 1 || raw.includes('\\')) return FAIL;
    return raw.slice(1, -1);
  }
  if (first === "'") {
    if (raw.length < 2 || !raw.endsWith("'")) return FAIL;
    const inner = raw.slice(1, -1);
    // '' is a quote; any other lone quote would have ended the scalar.
    if (inner.replaceAll("''", '').includes("'")) return FAIL;
    return inner.replaceAll("''", "'");
  }
  if (NULLS.has(raw)) return null;
  if (TRUES.has(raw)) return true;
  if (FALSES.has(raw)) return false;
  if (/^[-+]?(?:0|[1-9][0-9]{0,14})$/.test(raw)) return Number(raw);
  if (INDICATORS.has(first) && !(first === '-' && raw.length > 1 && raw[1] !== ' ' && !/^-[0-9.]/.test(raw))) return FAIL;
  if (NUMBER_FORMS.some((form) => form.test(raw))) return FAIL;
  if (raw.includes(': ') || raw.includes(' #') || raw.endsWith(':')) return FAIL;
  return raw;
}
