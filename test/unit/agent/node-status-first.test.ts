// `nodeStatusFirst` (what `kubelet-pods run` sets): the sources start once the first Node
// registration and status write has been answered, or has failed, or after the bound; without
// it they start with the agent. Fakes for every API part, a FakeClock, a fake file source.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node } from '@kubernetes/client-node';
import { createAgent, NODE_STATUS_FIRST_BOUND_MS, type AgentOptions } from '../../../src/agent/agent.js';
import { AGENT_CONFIG_DEFAULTS } from '../../../src/config/agent-config.js';
import type { ApiClients } from '../../../src/kube/api-clients.js';
import type { MachineInfo } from '../../../src/node/machine-info.js';
import type { NodeApi } from '../../../src/node/node-registration.js';
import type { FileSource } from '../../../src/sources/file-source.js';
import { podSchemaLoaded } from '../../../src/sources/validate.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { waitFor } from '../../helpers/wait.js';

const config: AgentOptions['config'] = {
  ...AGENT_CONFIG_DEFAULTS,
  nodeName: 'node-1',
  kubeconfig: '/nonexistent/kubeconfig',
  configFile: undefined,
  staticPodPath: '/nonexistent/manifests',
  staticPodURL: undefined,
  staticPodURLHeader: {},
  tlsCertFile: undefined,
  tlsPrivateKeyFile: undefined,
  clientCAFile: undefined,
  address: '127.0.0.1',
  healthzBindAddress: '127.0.0.1',
  nodeIP: '127.0.0.1',
  podCIDR: '10.88.0.0/16',
  clusterDNS: [],
  scenarios: [],
  port: 0,
  readOnlyPort: 0,
  healthzPort: 0,
};

const machine: MachineInfo = { cpus: 2, memoryBytes: 2 ** 30, ephemeralStorageBytes: 2 ** 34, hugePages: new Map(), architecture: 'amd64', operatingSystem: 'linux' } as unknown as MachineInfo;

/** A Node API whose status write is answered when the test says so (or fails). */
function heldNodeApi() {
  let answer!: (ok: boolean) => void;
  const answered = new Promise<boolean>((resolve) => (answer = resolve));
  const node = (): V1Node => ({ metadata: { name: 'node-1', uid: 'u1', resourceVersion: '1' }, status: {} });
  const api: NodeApi = {
    createNode: () => Promise.resolve(node()),
    readNode: () => Promise.resolve(node()),
    patchNodeStatus: async () => {
      if (!(await answered)) throw Object.assign(new Error('refused'), { code: 500 });
      return node();
    },
  } as unknown as NodeApi;
  return { api, answer };
}

function agentWith(nodeApi: NodeApi, clock: FakeClock, nodeStatusFirst: boolean) {
  let fileSourceStarts = 0;
  /** Whether the Pod schema validator was loaded at each start of the file source. */
  const schemaAtStart: boolean[] = [];
  let watchStarts = 0;
  let leaseReads = 0;
  const fileSource: FileSource = {
    start: () => {
      fileSourceStarts++;
      schemaAtStart.push(podSchemaLoaded());
    },
    stop: () => Promise.resolve(),
  } as unknown as FileSource;
  const idleWatch = { list: () => Promise.resolve({ items: [], metadata: { resourceVersion: '1' } }), watch: () => new Promise<never>(() => {}) };
  const agent = createAgent({
    config,
    nodeStatusFirst,
    parts: {
      clock,
      machine,
      nodeApi,
      apis: { kubeConfig: {} } as unknown as ApiClients,
      podListWatch: { listWatch: idleWatch as never },
      nodeWatch: () => ({ start: () => void watchStarts++, stop: () => Promise.resolve() }) as never,
      leaseApi: {
        readNamespacedLease: () => {
          leaseReads++;
          return new Promise(() => {});
        },
        createNamespacedLease: () => new Promise(() => {}),
        replaceNamespacedLease: () => new Promise(() => {}),
      } as never,
      createFileSource: () => fileSource,
    },
    shutdownTimeoutMs: 10,
  });
  return { agent, fileSourceStarts: () => fileSourceStarts, schemaAtStart, watchStarts: () => watchStarts, leaseReads: () => leaseReads };
}

const turns = async (n = 20): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

it('with nodeStatusFirst, the file source starts once the first Node status write is answered, the Pod schema validator loaded after it', async () => {
  const clock = new FakeClock();
  const { api, answer } = heldNodeApi();
  const { agent, fileSourceStarts, schemaAtStart } = agentWith(api, clock, true);
  await agent.start();
  await turns();
  assert.equal(fileSourceStarts(), 0, 'not while the status write is in flight');
  assert.equal(podSchemaLoaded(), false, 'the validator is not loaded before the status write');
  answer(true);
  // The validator's module is read from disk (the first test of this file loads it).
  await waitFor(() => fileSourceStarts() === 1, 'the file source started');
  await turns();
  assert.equal(fileSourceStarts(), 1);
  assert.deepEqual(schemaAtStart, [true], 'the file source starts with the validator loaded');
  const stopping = agent.stop();
  await clock.advance(10);
  await stopping;
});

it('with nodeStatusFirst, a failed status write, or none within the bound, does not hold the sources back', async () => {
  const failing = heldNodeApi();
  const clock1 = new FakeClock();
  const one = agentWith(failing.api, clock1, true);
  await one.agent.start();
  failing.answer(false);
  await turns();
  assert.equal(one.fileSourceStarts(), 1, 'started after the failed attempt');
  const stopping1 = one.agent.stop();
  await clock1.advance(10);
  await stopping1;

  const hanging = heldNodeApi();
  const clock2 = new FakeClock();
  const two = agentWith(hanging.api, clock2, true);
  await two.agent.start();
  await clock2.advance(NODE_STATUS_FIRST_BOUND_MS - 1);
  assert.equal(two.fileSourceStarts(), 0);
  await clock2.advance(1);
  await turns();
  assert.equal(two.fileSourceStarts(), 1, 'started at the bound');
  hanging.answer(true);
  const stopping2 = two.agent.stop();
  await clock2.advance(10);
  await stopping2;
});

it('without nodeStatusFirst the sources start with the agent; stopped before the write, they never start', async () => {
  const clock = new FakeClock();
  const { api, answer } = heldNodeApi();
  const plain = agentWith(api, clock, false);
  await plain.agent.start();
  assert.equal(plain.fileSourceStarts(), 1);
  assert.deepEqual(plain.schemaAtStart, [true], 'the validator is loaded before the sources start');
  assert.equal(plain.watchStarts(), 1, 'the Node watch starts with the agent');
  await clock.advance(0);
  await turns();
  assert.equal(plain.leaseReads(), 1, 'the Lease is read at once');
  const stopping = plain.agent.stop();
  await clock.advance(10);
  answer(true);
  await stopping;

  const held = heldNodeApi();
  const clock2 = new FakeClock();
  const early = agentWith(held.api, clock2, true);
  await early.agent.start();
  const stopping2 = early.agent.stop();
  await clock2.advance(10);
  held.answer(true);
  await stopping2;
  await turns();
  assert.equal(early.fileSourceStarts(), 0);
  assert.equal(early.watchStarts(), 0);
  assert.equal(early.leaseReads(), 0);
});

it('with nodeStatusFirst, the Node watch and the Lease start once the first Node status write is answered', async () => {
  const clock = new FakeClock();
  const { api, answer } = heldNodeApi();
  const { agent, watchStarts, leaseReads } = agentWith(api, clock, true);
  await agent.start();
  await clock.advance(0);
  await turns();
  assert.equal(watchStarts(), 0, 'no watch while the status write is in flight');
  assert.equal(leaseReads(), 0, 'no Lease call while the status write is in flight');
  answer(true);
  await turns();
  await clock.advance(0);
  await turns();
  assert.equal(watchStarts(), 1);
  assert.equal(leaseReads(), 1);
  const stopping = agent.stop();
  await clock.advance(10);
  await stopping;
});
