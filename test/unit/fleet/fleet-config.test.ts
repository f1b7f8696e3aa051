// The fleet file and flags (src/fleet/fleet-config.ts): templates expanded into nodes, bad
// templates refused at start with the field named.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hasErrorCode } from '../../../src/errors.js';
import { CONFIG_FIELDS } from '../../../src/config/fields.js';
import { PER_NODE_KUBELET_FIELDS, resolveFleetConfig } from '../../../src/fleet/fleet-config.js';

const refused = (raw: unknown, field: RegExp, flags = {}): void => {
  assert.throws(
    () => resolveFleetConfig(raw, flags),
    (err: unknown) => hasErrorCode(err, 'KP_ERR_FLEET_CONFIG') && field.test(err.message),
  );
};

describe('fleet configuration', () => {
  it('expands templates into nodes, with the per-node directory and the {node} URL filled in', () => {
    const config = resolveFleetConfig(
      {
        kubeconfig: '/k',
        kubeAPIQPS: 100,
        templates: [
          { name: 'a-{i}', count: 3, staticPodPath: '/m', perNodeManifestDir: '/n', manifestURL: 'http://x/{node}.yaml' },
          { name: 'b-{i}', count: 2, start: 10 },
          { name: 'solo' },
        ],
      },
      {},
    );
    assert.deepEqual(config.nodes.map((n) => n.name), ['a-0', 'a-1', 'a-2', 'b-10', 'b-11', 'solo']);
    assert.deepEqual(config.nodes[1]!.manifestDirs, ['/m', '/n/a-1']);
    assert.equal(config.nodes[1]!.manifestURL, 'http://x/a-1.yaml');
    assert.equal(config.kubeAPIQPS, 100);
    assert.equal(config.kubeAPIBurst, 1000);
    assert.equal(config.heapGrowingPercent, 100, 'the fleet widens V8 headroom by default');
    assert.equal(config.parallelScavenge, false, 'and scavenges on the main thread');
  });

  it('--heap-growing-percent and --parallel-scavenge override the file; 0 hands the sizing back to V8', () => {
    const base = { kubeconfig: '/k', heapGrowingPercent: 50, templates: [{ name: 'x' }] };
    assert.equal(resolveFleetConfig(base, {}).heapGrowingPercent, 50);
    assert.equal(resolveFleetConfig(base, { heapGrowingPercent: '0' }).heapGrowingPercent, 0);
    assert.equal(resolveFleetConfig({ ...base, parallelScavenge: true }, {}).parallelScavenge, true);
    assert.equal(resolveFleetConfig(base, { parallelScavenge: true }).parallelScavenge, true);
  });

  it('--nodes N --node-name-prefix makes one template', () => {
    const config = resolveFleetConfig({}, { nodes: '4', nodeNamePrefix: 'sim-', kubeconfig: '/k', podManifestPath: '/m' });
    assert.deepEqual(config.nodes.map((n) => n.name), ['sim-0', 'sim-1', 'sim-2', 'sim-3']);
    assert.deepEqual(config.nodes[0]!.manifestDirs, ['/m']);
  });

  const cases = [
    { desc: 'a name taken by another template', raw: { kubeconfig: '/k', templates: [{ name: 'n-{i}', count: 3 }, { name: 'n-2' }] }, field: /templates\[1\]\.name: node "n-2" is also named by templates\[0\]\.name/ },
    { desc: 'an invalid name', raw: { kubeconfig: '/k', templates: [{ name: 'Node_{i}', count: 2 }] }, field: /templates\[0\]\.name: "Node_0" is not a valid node name/ },
    { desc: 'many nodes without {i}', raw: { kubeconfig: '/k', templates: [{ name: 'same', count: 2 }] }, field: /templates\[0\]\.name: .*without \{i\}/ },
    { desc: 'an unknown field', raw: { kubeconfig: '/k', templates: [{ name: 'x', colour: 'red' }] }, field: /templates\[0\]\.colour: unknown field/ },
    { desc: 'a bad taint effect', raw: { kubeconfig: '/k', templates: [{ name: 'x', taints: [{ key: 'k', effect: 'Never' }] }] }, field: /templates\[0\]\.taints\[0\]\.effect/ },
    { desc: 'no credential', raw: { templates: [{ name: 'x' }] }, field: /kubeconfig: one of kubeconfig/ },
    { desc: 'no template', raw: { kubeconfig: '/k' }, field: /templates: at least one/ },
    { desc: 'a fractional heap growing percent', raw: { kubeconfig: '/k', heapGrowingPercent: 12.5, templates: [{ name: 'x' }] }, field: /heapGrowingPercent: must be an integer from 0 to 1000/ },
    { desc: 'a parallelScavenge that is not a boolean', raw: { kubeconfig: '/k', parallelScavenge: 'yes', templates: [{ name: 'x' }] }, field: /parallelScavenge: must be true or false/ },
    { desc: 'a negative QPS', raw: { kubeconfig: '/k', kubeAPIQPS: -1, templates: [{ name: 'x' }] }, field: /kubeAPIQPS: must be/ },
  ];
  for (const c of cases) it(`refuses ${c.desc}, naming the field`, () => refused(c.raw, c.field));

  it('a template\'s kubelet: map sets per-node kubelet settings by the table of run\'s configuration', () => {
    const config = resolveFleetConfig(
      {
        kubeconfig: '/k',
        templates: [
          { name: 'a', kubelet: { maxPods: 20, syncFrequency: '30s', simulatedLifecycle: 'instant', staticPodURLHeader: { 'X-Node': ['a'] } } },
          { name: 'b', capacity: { pods: '50' }, kubelet: { maxPods: 50 } },
          { name: 'c' },
        ],
      },
      {},
    );
    assert.deepEqual(config.templates[0]!.kubelet, { maxPods: 20, syncFrequencyMs: 30_000, simulatedLifecycle: 'instant', staticPodURLHeader: { 'X-Node': ['a'] } });
    assert.deepEqual(config.templates[1]!.kubelet, { maxPods: 50 });
    assert.deepEqual(config.templates[2]!.kubelet, {}, 'the kubelet defaults by default');
  });

  const kubeletCases = [
    { desc: 'an unknown kubelet field', kubelet: { evictionHard: {} }, field: /templates\[0\]\.kubelet\.evictionHard: unknown field/ },
    { desc: 'an unknown nested kubelet field', kubelet: { authentication: { x509: { other: 1 } } }, field: /templates\[0\]\.kubelet\.authentication\.x509\.other: unknown field/ },
    { desc: 'a mistyped maxPods', kubelet: { maxPods: 'many' }, field: /templates\[0\]\.kubelet\.maxPods: must be a number, got "many"/ },
    { desc: 'a duration that is not one', kubelet: { syncFrequency: 30 }, field: /templates\[0\]\.kubelet\.syncFrequency: must be a duration string/ },
    { desc: 'a lifecycle that does not exist', kubelet: { simulatedLifecycle: 'slow' }, field: /templates\[0\]\.kubelet\.simulatedLifecycle: must be one of kubelet, instant, got "slow"/ },
    { desc: 'a fleet-wide field', kubelet: { kubeAPIQPS: 5 }, field: /templates\[0\]\.kubelet\.kubeAPIQPS: fleet-wide/ },
    { desc: 'scenarios in a template (one list for the fleet)', kubelet: { scenarios: [] }, field: /templates\[0\]\.kubelet\.scenarios: fleet-wide/ },
    { desc: 'an endpoint field', kubelet: { authorization: { mode: 'Webhook' } }, field: /templates\[0\]\.kubelet\.authorization\.mode: not a per-node setting/ },
    { desc: 'a manifest path (the template has its own)', kubelet: { staticPodPath: '/m' }, field: /templates\[0\]\.kubelet\.staticPodPath: the template's staticPodPath/ },
    { desc: 'a kubelet that is not a mapping', kubelet: 'fast', field: /templates\[0\]\.kubelet: must be a mapping/ },
    { desc: 'a maxPods other than capacity.pods', kubelet: { maxPods: 20 }, capacity: { pods: '50' }, field: /templates\[0\]\.kubelet\.maxPods: 20 disagrees with templates\[0\]\.capacity\.pods "50"/ },
  ];
  for (const c of kubeletCases) {
    it(`refuses ${c.desc}, naming its path`, () => refused({ kubeconfig: '/k', templates: [{ name: 'x', kubelet: c.kubelet, ...(c.capacity ? { capacity: c.capacity } : {}) }] }, c.field));
  }

  it('reads one scenarios list for the fleet, and names a bad scenario\'s field by its path', () => {
    const config = resolveFleetConfig(
      {
        kubeconfig: '/k',
        templates: [{ name: 'pool-a-{i}', count: 2, labels: { pool: 'a' } }],
        scenarios: [
          { name: 'crash', match: { labels: { app: 'web' } }, fraction: 0.05, exit: { code: 1, after: '30s' } },
          { name: 'pool-a-down', match: { nodeLabels: { pool: 'a' } }, nodeCondition: { type: 'NotReady', from: '10m', until: '15m' } },
        ],
      },
      {},
    );
    assert.deepEqual(config.scenarios.map((s) => [s.name, s.behaviour.kind]), [['crash', 'exit'], ['pool-a-down', 'nodeCondition']]);
    assert.deepEqual(resolveFleetConfig({ kubeconfig: '/k', templates: [{ name: 'x' }] }, {}).scenarios, [], 'none by default');
    refused({ kubeconfig: '/k', templates: [{ name: 'x' }], scenarios: [{ slowStop: true }, { slowStop: true }, { match: { image: 7 }, imagePullFailure: {} }] }, /invalid fleet configuration flags: scenarios\[2\]\.match\.image: must be an image pattern/);
    refused({ kubeconfig: '/k', templates: [{ name: 'x' }], scenarios: { exit: {} } }, /scenarios: must be a list of scenarios/);
  });

  it('the per-node kubelet fields are fields of the configuration table', () => {
    const fields = new Set(CONFIG_FIELDS.flatMap((f) => (f.field !== undefined ? [f.field] : [])));
    for (const name of PER_NODE_KUBELET_FIELDS) assert.ok(fields.has(name), name);
  });

  it('--shard i/n splits the nodes between n replicas, each node in exactly one', () => {
    const shards = [0, 1, 2].map((i) => resolveFleetConfig({ kubeconfig: '/k', templates: [{ name: 's-{i}', count: 300 }] }, { shard: `${i}/3` }).nodes.map((n) => n.name));
    assert.equal(shards.flat().length, 300);
    assert.equal(new Set(shards.flat()).size, 300);
    for (const s of shards) assert.ok(s.length > 70 && s.length < 130, `uneven shard: ${s.length}`);
    refused({ kubeconfig: '/k', templates: [{ name: 'x' }] }, /--shard: must be i\/n/, { shard: '3/3' });
  });

  it('--shard-by-lease names the replica; it needs the one credential and excludes --shard', () => {
    assert.equal(resolveFleetConfig({ kubeconfig: '/k', templates: [{ name: 'x' }] }, { shardByLease: 'r0' }).shardByLease, 'r0');
    refused({ kubeconfig: '/k', templates: [{ name: 'x' }] }, /shardByLease: cannot be combined with shard/, { shardByLease: 'r0', shard: '0/2' });
    refused({ nodeKubeconfigDir: '/d', templates: [{ name: 'x' }] }, /shardByLease: needs kubeconfig/, { shardByLease: 'r0' });
  });

  it('refuses an invalid --node-name-prefix, naming the flag', () => refused({}, /--node-name-prefix: "Sim-0"/, { nodes: '2', nodeNamePrefix: 'Sim-', kubeconfig: '/k' }));
});
