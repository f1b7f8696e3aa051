import { isDNS1123Subdomain } from './dns-name.js';

/**
 * A label selector in the text form Kubernetes parses (`kubectl -l`, a list's `labelSelector`):
 * requirements joined by commas, all of which must hold. kwok applies the same syntax to
 * annotations (`--manage-nodes-with-annotation-selector`), so `matches` takes any string map.
 *
 *   key            the key is present          !key              the key is absent
 *   key=v, key==v  present with value v        key!=v            absent, or another value
 *   key in (a,b)   present with a or b         key notin (a,b)   absent, or neither
 *   key>3, key<3   present with an integer value greater (smaller) than 3
 */
export interface LabelSelector {
  /** The text it was parsed from. */
  readonly text: string;
  readonly requirements: readonly SelectorRequirement[];
  matches(map: Readonly<Record<string, string>> | undefined): boolean;
}

export type SelectorOperator = 'exists' | 'doesNotExist' | 'equals' | 'notEquals' | 'in' | 'notIn' | 'greaterThan' | 'lessThan';

export interface SelectorRequirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  readonly values: readonly string[];
}

export type SelectorParse = { readonly ok: true; readonly selector: LabelSelector } | { readonly ok: false; readonly reason: string };

/** Characters that end a key or value: the operators, the list punctuation and white space. */
const DELIMITER = /[\s!=,()<>]/;
const NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

type Token = { kind: 'word' | 'op' | '(' | ')' | ','; text: string; at: number };

/** Parses `text`; the reason of a failure names the character position and what was expected. */
export function parseLabelSelector(text: string): SelectorParse {
  const tokens = tokenize(text);
  if (typeof tokens === 'string') return { ok: false, reason: tokens };
  const requirements: SelectorRequirement[] = [];
  let i = 0;
  const peek = (): Token | undefined => tokens[i];
  const where = (t: Token | undefined): string => (t === undefined ? 'at the end' : `at ${t.at + 1} (${JSON.stringify(t.text)})`);
  const fail = (expected: string, t = peek()): SelectorParse => ({ ok: false, reason: `expected ${expected} ${where(t)}` });
  if (tokens.length === 0) return { ok: false, reason: 'empty: it would select every Node' };
  for (;;) {
    let t = peek();
    let negated = false;
    if (t?.kind === 'op' && t.text === '!') {
      negated = true;
      i++;
      t = peek();
    }
    if (t?.kind !== 'word') return fail('a key');
    const key = t.text;
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem !== undefined) return { ok: false, reason: `key ${JSON.stringify(key)} ${keyProblem}` };
    i++;
    const op = peek();
    if (negated || op === undefined || op.kind === ',') {
      requirements.push({ key, operator: negated ? 'doesNotExist' : 'exists', values: [] });
    } else if (op.kind === 'op' && (op.text === '=' || op.text === '==' || op.text === '!=')) {
      i++;
      const value = peek()?.kind === 'word' ? tokens[i++]!.text : '';
      const problem = valueProblem(value);
      if (problem !== undefined) return { ok: false, reason: `value ${JSON.stringify(value)} of ${key} ${problem}` };
      requirements.push({ key, operator: op.text === '!=' ? 'notEquals' : 'equals', values: [value] });
    } else if (op.kind === 'op' && (op.text === '>' || op.text === '<')) {
      i++;
      const value = peek();
      if (value?.kind !== 'word' || !/^-?\d+$/.test(value.text)) return fail('an integer', value);
      i++;
      requirements.push({ key, operator: op.text === '>' ? 'greaterThan' : 'lessThan', values: [value.text] });
    } else if (op.kind === 'word' && (op.text === 'in' || op.text === 'notin')) {
      i++;
      if (peek()?.kind !== '(') return fail("'('");
      i++;
      const values: string[] = [];
      for (;;) {
        const value = peek()?.kind === 'word' ? tokens[i++]!.text : '';
        const problem = valueProblem(value);
        if (problem !== undefined) return { ok: false, reason: `value ${JSON.stringify(value)} of ${key} ${problem}` };
        values.push(value);
        const next = peek();
        if (next?.kind === ')') break;
        if (next?.kind !== ',') return fail("',' or ')'", next);
        i++;
      }
      i++;
      requirements.push({ key, operator: op.text === 'in' ? 'in' : 'notIn', values });
    } else {
      return fail('an operator (=, ==, !=, in, notin, >, <) or a comma', op);
    }
    const after = peek();
    if (after === undefined) break;
    if (after.kind !== ',') return fail('a comma', after);
    i++;
  }
  return { ok: true, selector: selectorOf(text, requirements) };
}

function selectorOf(text: string, requirements: readonly SelectorRequirement[]): LabelSelector {
  const matches = (map: Readonly<Record<string, string>> | undefined): boolean => requirements.every((r) => holds(r, map ?? {}));
  return Object.freeze({ text, requirements: Object.freeze(requirements), matches });
}

function holds(r: SelectorRequirement, map: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(map, r.key);
  const value = has ? map[r.key]! : undefined;
  switch (r.operator) {
    case 'exists':
      return has;
    case 'doesNotExist':
      return !has;
    case 'equals':
    case 'in':
      return has && r.values.includes(value!);
    case 'notEquals':
    case 'notIn':
      return !has || !r.values.includes(value!);
    case 'greaterThan':
    case 'lessThan': {
      if (!has || !/^-?\d+$/.test(value!)) return false;
      const [have, bound] = [Number(value), Number(r.values[0])];
      return r.operator === 'greaterThan' ? have > bound : have < bound;
    }
  }
}

function tokenize(text: string): Token[] | string {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const c = text[at]!;
    if (/\s/.test(c)) {
      at++;
    } else if (c === '(' || c === ')' || c === ',') {
      tokens.push({ kind: c, text: c, at: at++ });
    } else if (c === '!' || c === '=' || c === '<' || c === '>') {
      const two = text.slice(at, at + 2);
      const op = two === '!=' || two === '==' ? two : c;
      tokens.push({ kind: 'op', text: op, at });
      at += op.length;
    } else {
      const start = at;
      while (at < text.length && !DELIMITER.test(text[at]!)) at++;
      tokens.push({ kind: 'word', text: text.slice(start, at), at: start });
    }
  }
  return tokens;
}

/** Why `key` is not a qualified name (`[prefix/]name`, as label and annotation keys are); undefined when it is. */
function qualifiedNameProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const [prefix, name] = slash < 0 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)];
  if (prefix !== undefined && !isDNS1123Subdomain(prefix)) return 'has a prefix that is not a DNS subdomain';
  if (name === '' || name.length > 63 || !NAME.test(name)) return 'is not a valid key (at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit, after an optional DNS prefix and "/")';
  return undefined;
}

function valueProblem(value: string): string | undefined {
  return value.length <= 63 && NAME.test(value) ? undefined : 'is not a valid value (at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit)';
}
