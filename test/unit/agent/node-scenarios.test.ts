import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ownNodeLabels, scenarioNodeConditions } from '../../../src/agent/node-scenarios.js';
import { parseScenarios } from '../../../src/scenario/parse-scenarios.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

const list = (raw: unknown) => {
  const problems: string[] = [];
  const out = parseScenarios(raw, 'scenarios', problems);
  assert.deepEqual(problems, []);
  return out;
};

describe('scenarioNodeConditions', () => {
  it('counts the windows from the agent\'s start, naming NotReady as the Ready condition gone bad', async () => {
    const clock = new FakeClock();
    const scenarios = list([
      { match: { nodeLabels: { pool: 'a' } }, nodeCondition: { type: 'NotReady', from: '10s', until: '20s' } },
      { match: { node: 'other-*' }, nodeCondition: { type: 'PIDPressure' } },
    ]);
    const goneBad = scenarioNodeConditions(scenarios, 'pool-a-1', ownNodeLabels('pool-a-1', { pool: 'a' }), clock)!;
    await clock.advance(9_999);
    assert.deepEqual([...goneBad(clock.now())], []);
    await clock.advance(1);
    assert.deepEqual([...goneBad(clock.now())], ['Ready']);
    await clock.advance(10_000);
    assert.deepEqual([...goneBad(clock.now())], []);
  });

  it('is undefined for a node no node scenario picks, so node registration is left as it was', () => {
    const scenarios = list([{ match: { nodeLabels: { pool: 'a' } }, nodeCondition: {} }, { exit: { code: 1, after: '1s' } }]);
    assert.equal(scenarioNodeConditions(scenarios, 'pool-b-1', ownNodeLabels('pool-b-1', { pool: 'b' }), new FakeClock()), undefined);
  });

  it('sees the kubelet\'s own node labels beside the template\'s', () => {
    const labels = ownNodeLabels('n1', { pool: 'a' });
    assert.equal(labels['kubernetes.io/hostname'], 'n1');
    assert.equal(labels['kubernetes.io/os'], 'linux');
    assert.equal(labels['pool'], 'a');
    const scenarios = list([{ match: { nodeLabels: { 'kubernetes.io/hostname': 'n1' } }, nodeCondition: { type: 'DiskPressure' } }]);
    assert.deepEqual([...scenarioNodeConditions(scenarios, 'n1', labels, new FakeClock())!(new FakeClock().now())], ['DiskPressure']);
  });
});
