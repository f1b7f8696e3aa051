// The fleet file and flags (src/fleet/fleet-config.ts): templates expanded into nodes, bad
// templates refused at start with the field named.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hasErrorCode } from '../../../src/errors.js';
import { CONFIG_FIELDS } from '../../../src/config/fields.js';
import { fleetFlags } from '../../../src/cli/fleet-command.js';
import { createPodAddressAllocator } from '../../../src/runtime/pod-addresses.js';
import { isSelectorTemplate, PER_NODE_KUBELET_FIELDS, resolveFleetConfig, templateNodeNames } from '../../../src/fleet/fleet-config.js';

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
    assert.equal(config.semiSpaceGrowthFactor, 1, 'and keeps the young generation at its starting size');
    assert.equal(config.compactEveryFullGc, true, 'and compacts the old generation at each full GC');
    assert.equal(config.growYoungWhileBusy, true, 'and lets the young generation grow in waves');
    assert.equal(config.nodeStartConcurrency, 100, 'and starts 100 nodes at a time, each until it registers');
  });

  it('unset kubeAPIQPS and kubeAPIBurst grow with the nodes past 2,500 (room for every Lease renewal); set ones are kept', () => {
    const fleet = (count: number, more: Record<string, unknown> = {}, flags = {}) => resolveFleetConfig({ kubeconfig: '/k', templates: [{ name: 'n-{i}', count }], ...more }, flags);
    assert.deepEqual([fleet(1000).kubeAPIQPS, fleet(1000).kubeAPIBurst], [500, 1000]);
    assert.deepEqual([fleet(10_000).kubeAPIQPS, fleet(10_000).kubeAPIBurst], [2000, 4000]);
    assert.deepEqual([fleet(10_000, { kubeAPIQPS: 300 }).kubeAPIQPS, fleet(10_000, { kubeAPIQPS: 300 }).kubeAPIBurst], [300, 4000]);
    assert.equal(fleet(10_000, {}, { kubeAPIQPS: '0' }).kubeAPIQPS, 0, 'a flag turning the limit off stays off');
    assert.equal(fleet(10_000, { kubeAPIBurst: 10 }).kubeAPIBurst, 10);
    // A shard counts only its own nodes.
    assert.equal(fleet(10_000, { shard: '0/8' }).kubeAPIQPS, 500);
  });

  it('--heap-growing-percent, --parallel-scavenge, --semi-space-growth-factor, --no-compact-every-full-gc and --[no-]grow-young-while-busy override the file; 0 hands the sizing back to V8', () => {
    const base = { kubeconfig: '/k', heapGrowingPercent: 50, templates: [{ name: 'x' }] };
    assert.equal(resolveFleetConfig(base, {}).heapGrowingPercent, 50);
    assert.equal(resolveFleetConfig(base, { heapGrowingPercent: '0' }).heapGrowingPercent, 0);
    assert.equal(resolveFleetConfig({ ...base, parallelScavenge: true }, {}).parallelScavenge, true);
    assert.equal(resolveFleetConfig(base, { parallelScavenge: true }).parallelScavenge, true);
    assert.equal(resolveFleetConfig({ ...base, semiSpaceGrowthFactor: 2 }, {}).semiSpaceGrowthFactor, 2);
    assert.equal(resolveFleetConfig({ ...base, semiSpaceGrowthFactor: 2 }, { semiSpaceGrowthFactor: '0' }).semiSpaceGrowthFactor, 0);
    assert.equal(fleetFlags(['--nodes', '1', '--kubeconfig', '/k', '--semi-space-growth-factor', '0']).semiSpaceGrowthFactor, '0');
    assert.equal(resolveFleetConfig({ ...base, nodeStartConcurrency: 10 }, { nodeStartConcurrency: '0' }).nodeStartConcurrency, 0);
    assert.equal(fleetFlags(['--nodes', '1', '--kubeconfig', '/k', '--node-start-concurrency', '5']).nodeStartConcurrency, '5');
    assert.equal(resolveFleetConfig({ ...base, compactEveryFullGc: false }, {}).compactEveryFullGc, false);
    assert.equal(resolveFleetConfig(base, fleetFlags(['--nodes', '1', '--kubeconfig', '/k', '--no-compact-every-full-gc'])).compactEveryFullGc, false);
    assert.equal(resolveFleetConfig({ ...base, growYoungWhileBusy: false }, {}).growYoungWhileBusy, false);
    assert.equal(resolveFleetConfig({ ...base, growYoungWhileBusy: false }, fleetFlags(['--nodes', '1', '--kubeconfig', '/k', '--grow-young-while-busy'])).growYoungWhileBusy, true);
    assert.equal(resolveFleetConfig(base, fleetFlags(['--nodes', '1', '--kubeconfig', '/k', '--no-grow-young-while-busy'])).growYoungWhileBusy, false);
    assert.throws(() => resolveFleetConfig({ ...base, growYoungWhileBusy: 'yes' }, {}), /growYoungWhileBusy/);
  });

  it('one pod range for the whole fleet: room for 1,000 nodes × 110 pods by default, set at the top or by --pod-cidr, refused in a template', () => {
    const base = { kubeconfig: '/k', templates: [{ name: 'x' }] };
    const byDefault = resolveFleetConfig(base, {}).podCIDR;
    assert.equal(byDefault, '10.128.0.0/9');
    assert.ok(createPodAddressAllocator({ cidr: byDefault }).capacity >= 1_000n * 110n, 'every pod of a kwok-sized fleet gets an address');
    assert.equal(resolveFleetConfig({ ...base, podCIDR: '10.0.0.0/12' }, {}).podCIDR, '10.0.0.0/12');
    assert.equal(resolveFleetConfig({ ...base, podCIDR: '10.0.0.0/12' }, fleetFlags(['--nodes', '1', '--kubeconfig', '/k', '--pod-cidr', 'fd00::/104'])).podCIDR, 'fd00::/104');
    refused({ ...base, podCIDR: 'ten' }, /podCIDR: must be a CIDR/);
    refused(base, /--pod-cidr: must be a CIDR/, { podCIDR: '10.0.0.0/40' });
    refused({ kubeconfig: '/k', templates: [{ name: 'x', kubelet: { podCIDR: '10.0.0.0/16' } }] }, /templates\[0\]\.kubelet\.podCIDR: fleet-wide/);
  });

  it('kubeletPorts is off by default; its files are resolved beside the fleet file and refused without it', () => {
    const base = { kubeconfig: '/k', templates: [{ name: 'x' }] };
    assert.equal(resolveFleetConfig(base, {}).kubeletPorts, false);
    const on = resolveFleetConfig({ ...base, kubeletPorts: true, clientCAFile: 'ca.crt', tlsCertFile: 'tls/c.pem', tlsPrivateKeyFile: '/abs/k.pem' }, {}, 'fleet.yaml', '/etc/fleet');
    assert.equal(on.kubeletPorts, true);
    assert.equal(on.clientCAFile, '/etc/fleet/ca.crt');
    assert.equal(on.tlsCertFile, '/etc/fleet/tls/c.pem');
    assert.equal(on.tlsPrivateKeyFile, '/abs/k.pem');
    refused({ ...base, kubeletPorts: 'yes' }, /kubeletPorts: must be true or false, got "yes"/);
    refused({ ...base, clientCAFile: 'ca.crt' }, /clientCAFile: is for the nodes' kubelet ports: set kubeletPorts: true/);
    refused({ ...base, kubeletPorts: true, tlsCertFile: 'c.pem' }, /tlsPrivateKeyFile: tlsCertFile and tlsPrivateKeyFile go together/);
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
    { desc: 'a semi-space growth factor past V8\'s range', raw: { kubeconfig: '/k', semiSpaceGrowthFactor: 32, templates: [{ name: 'x' }] }, field: /semiSpaceGrowthFactor: must be an integer from 0 to 16/ },
    { desc: 'a node start concurrency that is not a whole number', raw: { kubeconfig: '/k', nodeStartConcurrency: 2.5, templates: [{ name: 'x' }] }, field: /nodeStartConcurrency: must be an integer/ },
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

// Selector templates: a template that adopts the Nodes others create instead of naming its own.
describe('fleet configuration: selector templates', () => {
  it('a selector template names no node and keeps its parsed selectors beside the named templates', () => {
    const config = resolveFleetConfig(
      {
        kubeconfig: '/k',
        templates: [
          { name: 'sim-{i}', count: 2 },
          { annotationSelector: 'kwok.x-k8s.io/node=fake', labelSelector: 'type in (kwok,sim)', staticPodPath: '/m', capacity: { cpu: '4' } },
        ],
      },
      {},
    );
    assert.deepEqual(config.nodes.map((n) => n.name), ['sim-0', 'sim-1']);
    const tpl = config.templates[1]!;
    assert.equal(isSelectorTemplate(tpl), true);
    assert.equal(isSelectorTemplate(config.templates[0]!), false);
    assert.equal(tpl.count, 0);
    assert.equal(tpl.annotationSelector?.matches({ 'kwok.x-k8s.io/node': 'fake' }), true);
    assert.equal(tpl.labelSelector?.matches({ type: 'sim' }), true);
    assert.equal(tpl.labelSelector?.matches({ type: 'real' }), false);
    assert.equal(tpl.staticPodPath, '/m');
    assert.deepEqual([...templateNodeNames(config.templates)], ['sim-0', 'sim-1']);
  });

  it('a fleet of selector templates only is valid', () => {
    const config = resolveFleetConfig({ kubeconfig: '/k', templates: [{ labelSelector: 'pool=auto' }] }, {});
    assert.equal(config.nodes.length, 0);
    assert.equal(config.templates.length, 1);
  });

  it('the flags add one selector template, with the manifest flags, beside --nodes', () => {
    const flags = fleetFlags(['--nodes', '2', '--kubeconfig', '/k', '--manage-nodes-with-annotation-selector', 'kwok.x-k8s.io/node=fake', '--pod-manifest-path', '/m']);
    const config = resolveFleetConfig({}, flags);
    assert.equal(config.templates.length, 2);
    assert.equal(config.nodes.length, 2);
    assert.equal(config.templates[1]!.annotationSelector?.text, 'kwok.x-k8s.io/node=fake');
    assert.equal(config.templates[1]!.labelSelector, undefined);
    assert.equal(config.templates[1]!.staticPodPath, '/m');
  });

  it('a selector flag alone is enough for the command, and adds to the file\'s templates', () => {
    const flags = fleetFlags(['--kubeconfig', '/k', '--manage-nodes-with-label-selector', 'type=kwok']);
    assert.equal(resolveFleetConfig({}, flags).templates[0]!.labelSelector?.text, 'type=kwok');
    const withFile = resolveFleetConfig({ kubeconfig: '/k', templates: [{ name: 'a' }] }, { labelSelector: 'type=kwok' });
    assert.deepEqual(withFile.templates.map((t) => t.name), ['a', '']);
    assert.throws(() => fleetFlags(['--kubeconfig', '/k']), /--config, --nodes or a --manage-nodes-with-\*-selector/);
  });

  const cases = [
    { desc: 'a selector that does not parse', raw: { kubeconfig: '/k', templates: [{ labelSelector: 'a in b' }] }, field: /templates\[0\]\.labelSelector: "a in b": expected '\(' at 6/ },
    { desc: 'an empty selector', raw: { kubeconfig: '/k', templates: [{ annotationSelector: '' }] }, field: /templates\[0\]\.annotationSelector: "": empty: it would select every Node/ },
    { desc: 'a selector that is not a string', raw: { kubeconfig: '/k', templates: [{ labelSelector: { type: 'kwok' } }] }, field: /templates\[0\]\.labelSelector: must be a selector string/ },
    { desc: 'a selector template with a name', raw: { kubeconfig: '/k', templates: [{ name: 'x', labelSelector: 'a' }] }, field: /templates\[0\]\.name: a template with a selector adopts the Nodes others create/ },
    { desc: 'a selector template with labels', raw: { kubeconfig: '/k', templates: [{ labelSelector: 'a', labels: { b: 'c' } }] }, field: /templates\[0\]\.labels: a template with a selector/ },
    { desc: 'a selector template with taints', raw: { kubeconfig: '/k', templates: [{ annotationSelector: 'a', taints: [] }] }, field: /templates\[0\]\.taints: a template with a selector/ },
    { desc: 'a selector template with a count', raw: { kubeconfig: '/k', templates: [{ annotationSelector: 'a', count: 3 }] }, field: /templates\[0\]\.count: a template with a selector/ },
    { desc: 'a selector template without the one credential', raw: { nodeKubeconfigDir: '/d', templates: [{ name: 'x' }, { labelSelector: 'a' }] }, field: /templates\[1\]: a selector template needs kubeconfig/ },
    { desc: 'a bad selector flag', raw: { kubeconfig: '/k' }, flags: { annotationSelector: 'a=(' }, field: /--manage-nodes-with-annotation-selector: "a=\(": expected a comma at 3/ },
    { desc: 'a selector written as null, and no name', raw: { kubeconfig: '/k', templates: [{ labelSelector: null }] }, field: /templates\[0\]\.name: must be a non-empty string/ },
    { desc: 'a template with neither a name nor a selector', raw: { kubeconfig: '/k', templates: [{ staticPodPath: '/m' }] }, field: /templates\[0\]\.name: must be a non-empty string \(or give labelSelector or annotationSelector\)/ },
  ];
  for (const c of cases) {
    it(`refuses ${c.desc}, naming the field`, () => refused(c.raw, c.field, c.flags));
  }
});
