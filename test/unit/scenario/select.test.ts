import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../../src/pod/types.js';
import { parseScenarios } from '../../../src/scenario/parse-scenarios.js';
import type { Scenario } from '../../../src/scenario/scenario-types.js';
import { globMatch, nodeBehaviours, nodeConditionsAt, podBehaviours, podMatches } from '../../../src/scenario/select.js';

function scenarios(raw: unknown): Scenario[] {
  const problems: string[] = [];
  const out = parseScenarios(raw, 'scenarios', problems);
  assert.deepEqual(problems, []);
  return out;
}

const noLabels = (): undefined => undefined;

function pod(uid: string, extra: { namespace?: string; labels?: Record<string, string>; owner?: { kind: string; name: string }; image?: string; node?: string } = {}): Pod {
  return {
    metadata: {
      name: `p-${uid}`,
      namespace: extra.namespace ?? 'default',
      uid,
      labels: extra.labels ?? {},
      ...(extra.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: extra.owner.kind, name: extra.owner.name, uid: 'o' }] } : {}),
    },
    spec: { nodeName: extra.node ?? 'node-a', containers: [{ name: 'app', image: extra.image ?? 'app:1' }] },
  };
}

describe('globMatch', () => {
  it('takes * for any run of characters and everything else literally', () => {
    const cases: Array<[string, string, boolean]> = [
      ['*:broken', 'repo/app:broken', true],
      ['*:broken', 'app:broken-not', false],
      ['pool-a-*', 'pool-a-17', true],
      ['pool-a-*', 'pool-b-1', false],
      ['a*b*c', 'axxbyyc', true],
      ['a*b*c', 'acb', false],
      ['ab*ba', 'aba', false],
      ['exact', 'exact', true],
      ['exact', 'exactly', false],
      ['*', '', true],
      ['a.b', 'axb', false],
    ];
    for (const [pattern, text, want] of cases) assert.equal(globMatch(pattern, text), want, `${pattern} ~ ${text}`);
  });
});

describe('scenario selectors', () => {
  const match = (raw: unknown) => scenarios([{ match: raw, slowStop: true }])[0]!.match;

  it('namespace, labels, image and node name each narrow the pods', () => {
    assert.equal(podMatches(match({ namespace: ['kube-*', 'team-a'] }), pod('1', { namespace: 'team-a' }), noLabels), true);
    assert.equal(podMatches(match({ namespace: 'kube-*' }), pod('1', { namespace: 'default' }), noLabels), false);
    assert.equal(podMatches(match({ labels: { app: 'web', tier: 'front' } }), pod('1', { labels: { app: 'web', tier: 'front', x: 'y' } }), noLabels), true);
    assert.equal(podMatches(match({ labels: { app: 'web', tier: 'front' } }), pod('1', { labels: { app: 'web' } }), noLabels), false);
    assert.equal(podMatches(match({ image: '*:broken' }), pod('1', { image: 'x/app:broken' }), noLabels), true);
    assert.equal(podMatches(match({ image: '*:broken' }), pod('1'), noLabels), false);
    assert.equal(podMatches(match({ node: 'pool-a-*' }), pod('1', { node: 'pool-a-3' }), noLabels), true);
    assert.equal(podMatches(match({ node: 'pool-a-*' }), pod('1', { node: 'pool-b-3' }), noLabels), false);
    assert.equal(podMatches(match({}), pod('1'), noLabels), true, 'an empty selector picks every pod');
  });

  it('nodeLabels are the labels of the pod\'s node; an unknown node matches none', () => {
    const labels = (name: string) => (name === 'node-a' ? { pool: 'a' } : undefined);
    assert.equal(podMatches(match({ nodeLabels: { pool: 'a' } }), pod('1', { node: 'node-a' }), labels), true);
    assert.equal(podMatches(match({ nodeLabels: { pool: 'a' } }), pod('1', { node: 'node-b' }), labels), false);
  });

  it('owner matches a reference by kind and name pattern; Deployment matches its ReplicaSets\' pods', () => {
    const rsPod = pod('1', { owner: { kind: 'ReplicaSet', name: 'web-5d8f7c' }, labels: { 'pod-template-hash': '5d8f7c' } });
    assert.equal(podMatches(match({ owner: { kind: 'Deployment', name: 'web' } }), rsPod, noLabels), true);
    assert.equal(podMatches(match({ owner: { kind: 'Deployment', name: 'we' } }), rsPod, noLabels), false);
    assert.equal(podMatches(match({ owner: { kind: 'ReplicaSet', name: 'web-*' } }), rsPod, noLabels), true);
    assert.equal(podMatches(match({ owner: { kind: 'StatefulSet', name: '*' } }), rsPod, noLabels), false);
    // A ReplicaSet not named after the pod's template hash is not a Deployment's.
    const bare = pod('2', { owner: { kind: 'ReplicaSet', name: 'web-abc' }, labels: { 'pod-template-hash': 'zzz' } });
    assert.equal(podMatches(match({ owner: { kind: 'Deployment', name: 'web' } }), bare, noLabels), false);
  });
});

describe('the fraction', () => {
  const uids = Array.from({ length: 4000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  const picked = (list: Scenario[]) => uids.filter((uid) => podBehaviours(list, pod(uid), noLabels).length > 0);

  it('picks the same pods for the same UIDs and scenario, in every run', () => {
    const first = picked(scenarios([{ name: 'crash', fraction: 0.05, exit: { code: 1, after: '1s' } }]));
    const again = picked(scenarios([{ name: 'crash', fraction: 0.05, exit: { code: 1, after: '1s' } }]));
    assert.deepEqual(first, again);
  });

  it('picks roughly the fraction of many pods', () => {
    for (const fraction of [0.05, 0.5]) {
      const n = picked(scenarios([{ name: `f${fraction}`, fraction, exit: { code: 1, after: '1s' } }])).length;
      // Binomial: 4000 draws, a margin of more than 4 standard deviations.
      const sd = Math.sqrt(4000 * fraction * (1 - fraction));
      assert.ok(Math.abs(n - 4000 * fraction) < 4.5 * sd, `${n} of 4000 for ${fraction}`);
    }
    assert.equal(picked(scenarios([{ fraction: 0, exit: { code: 1, after: '1s' } }])).length, 0);
    assert.equal(picked(scenarios([{ exit: { code: 1, after: '1s' } }])).length, 4000, 'fraction 1 by default');
  });

  it('draws anew per scenario name: two scenarios of 50 % do not pick the same half', () => {
    const a = new Set(picked(scenarios([{ name: 'a', fraction: 0.5, exit: { code: 1, after: '1s' } }])));
    const b = picked(scenarios([{ name: 'b', fraction: 0.5, exit: { code: 1, after: '1s' } }]));
    const both = b.filter((uid) => a.has(uid)).length;
    assert.ok(both > 800 && both < 1200, `${both} in both, about a quarter expected`);
  });
});

describe('node scenarios', () => {
  it('pick nodes by name pattern and labels, and turn their condition bad in the window', () => {
    const list = scenarios([
      { name: 'pool-a-down', match: { node: 'pool-a-*', nodeLabels: { pool: 'a' } }, nodeCondition: { type: 'NotReady', from: '10m', until: '15m' } },
      { name: 'disk', nodeCondition: { type: 'DiskPressure', from: '1m' } },
      { name: 'pods', exit: { code: 1, after: '1s' } },
    ]);
    const labels = (name: string) => (name.startsWith('pool-a-') ? { pool: 'a' } : { pool: 'b' });
    const a = nodeBehaviours(list, 'pool-a-1', labels);
    assert.deepEqual(a.map((b) => b.condition), ['NotReady', 'DiskPressure']);
    assert.deepEqual(nodeBehaviours(list, 'pool-b-1', labels).map((b) => b.condition), ['DiskPressure']);
    assert.deepEqual([...nodeConditionsAt(a, 30_000)], []);
    assert.deepEqual([...nodeConditionsAt(a, 60_000)], ['DiskPressure']);
    assert.deepEqual([...nodeConditionsAt(a, 600_000)].sort(), ['DiskPressure', 'NotReady']);
    assert.deepEqual([...nodeConditionsAt(a, 899_999)].sort(), ['DiskPressure', 'NotReady']);
    assert.deepEqual([...nodeConditionsAt(a, 900_000)], ['DiskPressure'], 'until is the end of the window');
  });

  it('a node fraction is drawn per node name', () => {
    const list = scenarios([{ name: 'some', fraction: 0.3, nodeCondition: {} }]);
    const names = Array.from({ length: 1000 }, (_, i) => `sim-${i}`);
    const picked = names.filter((n) => nodeBehaviours(list, n, noLabels).length > 0);
    assert.ok(picked.length > 230 && picked.length < 370, `${picked.length} of 1000`);
    assert.deepEqual(picked, names.filter((n) => nodeBehaviours(list, n, noLabels).length > 0));
  });
});
