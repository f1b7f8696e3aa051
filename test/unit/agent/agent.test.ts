// The agent's own timers (housekeeping, the shutdown bound) run on the clock it is given: a
// standalone agent (no kubeconfig, no sources, no endpoints) driven by a FakeClock.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent } from '../../../src/agent/agent.js';
import { AGENT_CONFIG_DEFAULTS } from '../../../src/config/agent-config.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { newPod, ns } from '../pod/pod-fixtures.js';

type AgentConfig = Parameters<typeof createAgent>[0]['config'];

const standalone: AgentConfig = {
  ...AGENT_CONFIG_DEFAULTS,
  nodeName: 'node-1',
  kubeconfig: undefined,
  configFile: undefined,
  staticPodPath: undefined,
  staticPodURL: undefined,
  staticPodURLHeader: {},
  fileCheckFrequencyMs: 20_000,
  httpCheckFrequencyMs: 20_000,
  syncFrequencyMs: 60_000,
  nodeStatusUpdateFrequencyMs: 10_000,
  kubeAPIQPS: 50,
  kubeAPIBurst: 100,
  address: '127.0.0.1',
  readOnlyPort: 0,
  healthzBindAddress: '127.0.0.1',
  healthzPort: 0,
  nodeIP: '127.0.0.1',
  podCIDR: '10.88.0.0/16',
  simulatedLifecycle: 'kubelet',
};

async function desiredPods(agent: ReturnType<typeof createAgent>): Promise<Record<string, number>> {
  const metric = agent.registry.getSingleMetric('kubelet_desired_pods');
  assert.ok(metric, 'kubelet_desired_pods is registered');
  const { values } = await metric.get();
  return Object.fromEntries(values.map((v) => [v.labels.static === 'true' ? 'static' : 'nonStatic', v.value]));
}

it('runs housekeeping every housekeeping interval of the clock it was given, and stops its timers', async () => {
  const clock = new FakeClock();
  const agent = createAgent({ config: standalone, clock, housekeepingIntervalMs: 2000 });
  await agent.start();
  agent.podManager.addPod(newPod('s1', 'web', ns, 'static'));
  agent.podManager.addPod(newPod('a1', 'api', ns, 'extra'));
  await clock.advance(1999);
  assert.deepEqual(await desiredPods(agent), {}, 'not before the first interval');
  await clock.advance(1);
  assert.deepEqual(await desiredPods(agent), { static: 1, nonStatic: 1 });
  assert.ok(clock.pendingTimers > 0, 'the intervals are on the fake clock');
  await agent.stop();
  assert.equal(clock.pendingTimers, 0, 'stop() clears every timer it set');
});
