// The agent's endpoints (src/agent/endpoints.ts): an agent that serves no port (a fleet node
// without kubelet ports) holds nothing for them; one that serves a port answers on it.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { createAgentEndpoints, type AgentEndpointsOptions, type BoundAddresses } from '../../../src/agent/endpoints.js';
import { AGENT_CONFIG_DEFAULTS } from '../../../src/config/agent-config.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

const noop = (): void => {};

function options(listenPorts: AgentEndpointsOptions['listenPorts'], bound: BoundAddresses = {}): AgentEndpointsOptions {
  return {
    config: { ...AGENT_CONFIG_DEFAULTS, nodeName: 'node-1', address: '127.0.0.1' } as AgentEndpointsOptions['config'],
    listenPorts,
    podManager: { getPods: () => [], getPodByName: () => undefined },
    registry: () => new Registry(),
    statusFor: () => undefined,
    containerLogs: () => undefined,
    usage: () => {
      throw new Error('not asked here');
    },
    apis: undefined,
    bound,
    clock: new FakeClock(),
    logger: { debug: noop, info: noop, warn: noop, error: noop },
  };
}

it('an agent that serves no port holds nothing for its endpoints, and listens and closes as one that does', async () => {
  const bound: BoundAddresses = {};
  const endpoints = createAgentEndpoints(options({}, bound));
  await endpoints.listen();
  await endpoints.close();
  assert.deepEqual(bound, {}, 'nothing bound');
  const shared = options({});
  const bytes = await retainedBytesPer(20_000, () => createAgentEndpoints(shared));
  // About 4 bytes (one object for every such agent); with the routes' makers and the servers' table made for each, about 520.
  assert.ok(bytes < 64, `${bytes.toFixed(1)} bytes per agent's endpoints`);
});

it('an agent that serves the read-only port answers /healthz on it', async () => {
  const bound: BoundAddresses = {};
  const endpoints = createAgentEndpoints(options({ readOnly: 0 }, bound));
  await endpoints.listen();
  try {
    const port = bound.readOnly?.port;
    assert.ok(port !== undefined && port > 0, 'the read-only port is bound');
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'ok');
  } finally {
    await endpoints.close();
  }
});
