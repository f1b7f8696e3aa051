import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatScenarios } from '../../../src/scenario/format-scenarios.js';
import { parseScenarios } from '../../../src/scenario/parse-scenarios.js';

function problemsOf(raw: unknown): string[] {
  const problems: string[] = [];
  parseScenarios(raw, 'scenarios', problems);
  return problems;
}

describe('parseScenarios', () => {
  it('reads each behaviour with its defaults', () => {
    const problems: string[] = [];
    const list = parseScenarios(
      [
        { name: 'crash', match: { namespace: 'default', labels: { app: 'web' }, owner: { kind: 'Deployment', name: 'web' } }, fraction: 0.05, exit: { code: 1, after: '30s', container: 'main' } },
        { oomKill: { after: '1m' } },
        { match: { image: '*:broken' }, imagePullFailure: {} },
        { startDelay: '45s' },
        { readiness: { flapPeriod: '20s' } },
        { slowStop: true },
        { match: { node: ['pool-a-*'], nodeLabels: { pool: 'a' } }, nodeCondition: { type: 'MemoryPressure', from: '10m', until: '20m' } },
      ],
      'scenarios',
      problems,
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(list[0], {
      name: 'crash',
      match: { namespaces: ['default'], labels: { app: 'web' }, owner: { kind: 'Deployment', name: 'web' } },
      fraction: 0.05,
      behaviour: { kind: 'exit', exitCode: 1, afterMs: 30_000, container: 'main' },
    });
    assert.deepEqual(list.slice(1).map((s) => [s.name, s.fraction, s.behaviour]), [
      ['scenarios[1]', 1, { kind: 'oomKill', afterMs: 60_000 }],
      ['scenarios[2]', 1, { kind: 'imagePullFailure', message: '' }],
      ['scenarios[3]', 1, { kind: 'startDelay', delayMs: 45_000 }],
      ['scenarios[4]', 1, { kind: 'readiness', periodMs: 20_000, message: 'HTTP probe failed with statuscode: 503' }],
      ['scenarios[5]', 1, { kind: 'slowStop' }],
      ['scenarios[6]', 1, { kind: 'nodeCondition', condition: 'MemoryPressure', fromMs: 600_000, untilMs: 1_200_000 }],
    ]);
    assert.deepEqual(list[6]!.match, { nodes: ['pool-a-*'], nodeLabels: { pool: 'a' } });
  });

  it('names each problem by its path', () => {
    assert.deepEqual(problemsOf({ exit: {} }), ['scenarios: must be a list of scenarios']);
    assert.deepEqual(
      problemsOf([
        { exit: { code: 1, after: '5s' } },
        { fraction: 1.5, exit: { code: 300, after: 'soon' } },
        { match: { image: '', colour: 'red' }, slowStop: true },
        { startDelay: '1s', slowStop: true },
        { match: { labels: { app: 'web' } }, nodeCondition: { type: 'Sleepy', from: '5m', until: '1m' } },
        { readiness: { flapPeriod: '0s', container: 3 } },
        'crash',
        { name: 'scenarios[0]', slowStop: 'yes' },
        { name: 'dup', slowStop: true },
        { name: 'dup', startDelay: '1s' },
        { match: { labels: { replicas: 3 } }, oomKill: { after: '1s' }, other: 1 },
      ]),
      [
        'scenarios[1].fraction: must be a number from 0 to 1, got 1.5',
        'scenarios[1].exit.code: must be an exit code from 0 to 255, got 300',
        'scenarios[1].exit.after: must be a duration, such as "30s" or "1m30s", got "soon"',
        'scenarios[2].match.colour: unknown field',
        'scenarios[2].match.image: must be an image pattern, such as "*:broken"',
        'scenarios[3]: needs exactly one behaviour (exit, oomKill, imagePullFailure, startDelay, readiness, slowStop, nodeCondition), got startDelay, slowStop',
        'scenarios[4].nodeCondition.type: must be one of NotReady, MemoryPressure, DiskPressure, PIDPressure, got "Sleepy"',
        'scenarios[4].nodeCondition.until: must come after from',
        'scenarios[4].match.labels: a nodeCondition scenario picks nodes: only node and nodeLabels',
        'scenarios[5].readiness.container: must be a name or a pattern with * (a non-empty string), got 3',
        'scenarios[5].readiness.flapPeriod: must be a duration above 0, such as "30s" or "1m30s", got "0s"',
        'scenarios[6]: must be a mapping',
        'scenarios[7].slowStop: must be true, got "yes"',
        'scenarios[9].name: "dup" is also the name of scenarios[8]; names seed the fraction, so each must be unique',
        'scenarios[10].other: unknown field',
        'scenarios[10].match.labels.replicas: must be a string (quote numbers and booleans), got 3',
      ],
    );
  });

  it('an absent or empty list is no scenarios', () => {
    assert.deepEqual(problemsOf(undefined), []);
    assert.deepEqual(problemsOf(null), []);
    assert.deepEqual(problemsOf([]), []);
  });
});

describe('formatScenarios', () => {
  it('writes scenarios back in the file\'s form, which reads back the same', () => {
    const raw = [
      { name: 'crash', match: { namespace: 'shop', labels: { app: 'web' }, owner: { kind: 'Deployment', name: 'web' } }, fraction: 0.05, exit: { code: 1, after: '1m30s', container: 'main' } },
      { name: 'oom', oomKill: { after: '2m0s' } },
      { name: 'pulls', match: { image: '*:broken' }, imagePullFailure: { message: 'denied' } },
      { name: 'slow', startDelay: '45s' },
      { name: 'flaky', readiness: { flapPeriod: '20s', message: 'timeout' } },
      { name: 'stubborn', slowStop: true },
      { name: 'down', match: { node: ['pool-a-*'], nodeLabels: { pool: 'a' } }, nodeCondition: { type: 'NotReady', from: '10m0s', until: '15m0s' } },
    ];
    const problems: string[] = [];
    const parsed = parseScenarios(raw, 'scenarios', problems);
    const written = formatScenarios(parsed);
    assert.deepEqual(written[0], { name: 'crash', match: { namespace: ['shop'], labels: { app: 'web' }, owner: { kind: 'Deployment', name: 'web' } }, fraction: 0.05, exit: { code: 1, after: '1m30s', container: 'main' } });
    assert.deepEqual(written[6], { name: 'down', match: { node: ['pool-a-*'], nodeLabels: { pool: 'a' } }, nodeCondition: { type: 'NotReady', from: '10m0s', until: '15m0s' } });
    assert.deepEqual(parseScenarios(written, 'scenarios', problems), parsed);
    assert.deepEqual(problems, []);
  });
});
