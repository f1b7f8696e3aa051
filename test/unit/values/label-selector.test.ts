// Label selectors in Kubernetes' text form (src/values/label-selector.ts), as kwok's
// --manage-nodes-with-label-selector and --manage-nodes-with-annotation-selector take them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseLabelSelector, type LabelSelector } from '../../../src/values/label-selector.js';

const parse = (text: string): LabelSelector => {
  const result = parseLabelSelector(text);
  if (!result.ok) assert.fail(`${text}: ${result.reason}`);
  return result.selector;
};
const reason = (text: string): string => {
  const result = parseLabelSelector(text);
  assert.equal(result.ok, false, `${text} should be refused`);
  return result.ok ? '' : result.reason;
};

describe('label selector', () => {
  it('parses each operator into its requirement', () => {
    const s = parse('a=1, b==2,c!=3,d in (x, y),e notin (z),f,!g,h>4,i<5');
    assert.deepEqual(
      s.requirements.map((r) => [r.key, r.operator, r.values.join('|')]),
      [
        ['a', 'equals', '1'],
        ['b', 'equals', '2'],
        ['c', 'notEquals', '3'],
        ['d', 'in', 'x|y'],
        ['e', 'notIn', 'z'],
        ['f', 'exists', ''],
        ['g', 'doesNotExist', ''],
        ['h', 'greaterThan', '4'],
        ['i', 'lessThan', '5'],
      ],
    );
  });

  const table: [selector: string, map: Record<string, string> | undefined, matches: boolean][] = [
    ['kwok.x-k8s.io/node=fake', { 'kwok.x-k8s.io/node': 'fake' }, true],
    ['kwok.x-k8s.io/node=fake', { 'kwok.x-k8s.io/node': 'real' }, false],
    ['kwok.x-k8s.io/node=fake', {}, false],
    ['kwok.x-k8s.io/node=fake', undefined, false],
    ['type', { type: '' }, true],
    ['type', { other: 'x' }, false],
    ['!type', { other: 'x' }, true],
    ['!type', { type: 'x' }, false],
    ['zone!=a', { zone: 'b' }, true],
    ['zone!=a', {}, true],
    ['zone!=a', { zone: 'a' }, false],
    ['zone in (a,b)', { zone: 'b' }, true],
    ['zone in (a,b)', { zone: 'c' }, false],
    ['zone in (a,b)', {}, false],
    ['zone notin (a,b)', { zone: 'c' }, true],
    ['zone notin (a,b)', {}, true],
    ['zone notin (a,b)', { zone: 'a' }, false],
    ['gpus>1', { gpus: '2' }, true],
    ['gpus>1', { gpus: '1' }, false],
    ['gpus>1', { gpus: 'many' }, false],
    ['gpus<1', { gpus: '0' }, true],
    ['gpus<1', {}, false],
    ['empty=', { empty: '' }, true],
    ['empty=', { empty: 'x' }, false],
    ['pool=sim,!drain', { pool: 'sim' }, true],
    ['pool=sim,!drain', { pool: 'sim', drain: 'yes' }, false],
  ];
  for (const [text, map, want] of table) {
    it(`${text} ${want ? 'matches' : 'does not match'} ${JSON.stringify(map)}`, () => {
      assert.equal(parse(text).matches(map), want);
    });
  }

  it('refuses what Kubernetes would not parse, saying where', () => {
    assert.match(reason(''), /empty: it would select every Node/);
    assert.match(reason('   '), /empty/);
    assert.match(reason('a=1,'), /expected a key at the end/);
    assert.match(reason('a=1 b=2'), /expected a comma at 5 \("b"\)/);
    assert.match(reason('a in b'), /expected '\(' at 6 \("b"\)/);
    assert.match(reason('a in (b'), /expected ',' or '\)' at the end/);
    assert.match(reason('a>b'), /expected an integer at 3 \("b"\)/);
    assert.match(reason('!a=b'), /expected a comma at 3/);
    assert.match(reason('=b'), /expected a key at 1/);
    assert.match(reason('Bad Key=1'), /expected/);
    assert.match(reason('-a=1'), /key "-a" is not a valid key/);
    assert.match(reason('UPPER_/a=1'), /has a prefix that is not a DNS subdomain/);
    assert.match(reason(`a=${'v'.repeat(64)}`), /value "v{64}" of a is not a valid value/);
    assert.match(reason('a=b/c'), /value "b\/c" of a is not a valid value/);
  });

  it('keeps its text', () => {
    assert.equal(parse(' a = 1 ').text, ' a = 1 ');
  });
});
