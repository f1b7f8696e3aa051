// The agent's own timers (housekeeping, the shutdown bound) run on the clock it is given: a
// standalone agent (no kubeconfig, no sources, no endpoints) driven by a FakeClock.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
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
  tlsCertFile: undefined,
  tlsPrivateKeyFile: undefined,
  clientCAFile: undefined,
  port: 0,
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
  events: true,
  podCIDR: '10.88.0.0/16',
  clusterDNS: [],
  simulatedLifecycle: 'kubelet',
  scenarios: [],
};

async function desiredPods(agent: ReturnType<typeof createAgent>): Promise<Record<string, number>> {
  const metric = agent.registry.getSingleMetric('kubelet_desired_pods');
  assert.ok(metric, 'kubelet_desired_pods is registered');
  const { values } = await metric.get();
  return Object.fromEntries(values.map((v) => [v.labels.static === 'true' ? 'static' : 'nonStatic', v.value]));
}

it('runs housekeeping every housekeeping interval of the clock it was given, and stops its timers', async () => {
  const clock = new FakeClock();
  const agent = createAgent({ config: standalone, parts: { clock }, housekeepingIntervalMs: 2000 });
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

it('housekeeping passes again only when the pods, the workers or the sources changed', async () => {
  const clock = new FakeClock();
  const agent = createAgent({ config: standalone, parts: { clock }, housekeepingIntervalMs: 2000 });
  await agent.start();
  agent.podManager.addPod(newPod('s1', 'web', ns, 'static'));
  // A full pass lists the pods to work out the desired set; a skipped one does not.
  let listings = 0;
  const getPods = agent.podManager.getPods.bind(agent.podManager);
  agent.podManager.getPods = () => (listings++, getPods());
  await clock.advance(2000);
  assert.deepEqual(await desiredPods(agent), { static: 1, nonStatic: 0 });
  const afterFirst = listings;
  assert.ok(afterFirst > 0, 'the first pass ran');
  await clock.advance(6000);
  assert.equal(listings, afterFirst, 'three passes with nothing changed did nothing');
  // A change made on the pod manager itself (not through a source) is seen too.
  agent.podManager.addPod(newPod('a1', 'api', ns, 'extra'));
  await clock.advance(2000);
  assert.ok(listings > afterFirst, 'the change brought a full pass');
  assert.deepEqual(await desiredPods(agent), { static: 1, nonStatic: 1 });
  await agent.stop();
});

it('standalone, the kubelet port serves when nothing needs the API server, and stays closed (with a warning) when webhooks would', async () => {
  const flagsOnly = { ...standalone, anonymousAuth: true, authenticationTokenWebhook: false, authorizationMode: 'AlwaysAllow' as const };
  const open = createAgent({ config: flagsOnly, listenPorts: { kubelet: 0 } });
  await open.start();
  try {
    const kubelet = open.addresses().kubelet;
    assert.ok(kubelet !== undefined && kubelet.port > 0, 'it listens');
    assert.equal(kubelet.address, '127.0.0.1');
  } finally {
    await open.stop();
  }
  const warnings: object[] = [];
  const logger = { debug: () => {}, info: () => {}, warn: (o: object) => warnings.push(o), error: () => {} };
  const webhook = { ...standalone, authenticationTokenWebhook: true, authorizationMode: 'Webhook' as const };
  const closed = createAgent({ config: webhook, logger, listenPorts: { kubelet: 0 } });
  await closed.start();
  try {
    assert.equal(closed.addresses().kubelet, undefined);
    const err = (warnings[0] as { err?: { code?: string; message?: string } }).err;
    assert.equal(err?.code, 'KP_ERR_SERVER_NO_API');
    assert.match(err?.message ?? '', /authorization\.mode Webhook and authentication\.webhook\.enabled need an API server/);
  } finally {
    await closed.stop();
  }
});

it("makes the node's registry at the first ask, once, from parts.registry, with the agent's and the pod manager's metrics", async () => {
  const clock = new FakeClock();
  let made = 0;
  const agent = createAgent({
    config: standalone,
    parts: {
      clock,
      registry: () => {
        made++;
        const registry = new Registry();
        registry.setDefaultLabels({ node: 'node-1' });
        return registry;
      },
    },
    housekeepingIntervalMs: 2000,
  });
  await agent.start();
  agent.podManager.addPod(newPod('a1', 'api', ns, 'extra'));
  await clock.advance(2000);
  assert.equal(made, 0, 'no registry before anyone asks');
  const text = await agent.registry.metrics();
  assert.equal(agent.registry, agent.registry);
  assert.equal(made, 1);
  assert.match(text, /^kubelet_desired_pods\{static="",node="node-1"\} 1$/m);
  assert.match(text, /^kubelet_managed_ephemeral_containers\{node="node-1"\} 0$/m);
  await agent.stop();
});

it('is made as a class: its methods and the registry getter are on the prototype, and two agents share one hidden class', async () => {
  // A fleet makes one agent per node: an object literal with a closure per method, and the
  // getter defined on each, gave every node a hidden class and descriptors of its own.
  const { sameHiddenClass } = await import('../v8-shapes.js');
  const one = createAgent({ config: standalone, parts: { clock: new FakeClock() } });
  const two = createAgent({ config: { ...standalone, nodeName: 'node-2' }, parts: { clock: new FakeClock() } });
  assert.equal(Object.getOwnPropertyDescriptor(one, 'registry'), undefined, 'the getter is not on the agent');
  for (const name of Object.getOwnPropertyNames(one)) assert.notEqual(typeof (one as unknown as Record<string, unknown>)[name], 'function', `${name} is an own function`);
  assert.ok(sameHiddenClass(one, two));
  assert.ok(one.registry instanceof Registry);
  assert.equal(one.registry, one.registry);
});
