// What the demo shows of the scheduler's view of its nodes: the formatting of requests against
// allocatable, which pods count where (mirror pods like any other, finished pods not at all),
// the room left with and without the mirrors counted, the Deployment's pods, and that the
// shipped Deployment fits beside the shipped static pods.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { V1Deployment, V1Node } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { parseDemoDeployment } from '../../../src/cli/demo-deployment.js';
import {
  deploymentProgress,
  formatCPU,
  formatMemory,
  formatShare,
  isDeploymentRunning,
  matchesSelector,
  renderNodeShares,
  renderPods,
  renderScheduling,
  roomFor,
  schedulerSeesLine,
  schedulingSnapshot,
} from '../../../src/cli/scheduling-view.js';
import type { Pod } from '../../../src/pod/types.js';

const Mi = 2 ** 20;
const Gi = 2 ** 30;

const node = (name: string, cpu: string, memory: string, ready = true): V1Node => ({
  metadata: { name },
  status: {
    allocatable: { cpu, memory, pods: '110' },
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
  },
});

const pod = (name: string, o: { node?: string; cpu?: string; memory?: string; mirror?: boolean; phase?: string; labels?: Record<string, string>; namespace?: string } = {}): Pod => ({
  metadata: {
    name,
    namespace: o.namespace ?? 'default',
    ...(o.labels ? { labels: o.labels } : {}),
    ...(o.mirror ? { annotations: { 'kubernetes.io/config.mirror': 'hash', 'kubernetes.io/config.source': 'file' } } : {}),
  },
  spec: {
    ...(o.node ? { nodeName: o.node } : {}),
    containers: [{ name: 'c', image: 'i', resources: { requests: { ...(o.cpu ? { cpu: o.cpu } : {}), ...(o.memory ? { memory: o.memory } : {}) } } }],
  },
  status: { phase: o.phase ?? 'Running' },
});

const hello: V1Deployment = parseDemoDeployment(
  `apiVersion: apps/v1
kind: Deployment
metadata: { name: hello }
spec:
  replicas: 2
  selector: { matchLabels: { app: hello } }
  template:
    metadata: { labels: { app: hello } }
    spec:
      containers:
      - { name: hello, image: agnhost, resources: { requests: { cpu: 250m, memory: 128Mi } } }
`,
  'test.yaml',
);

/** demo-node (2 CPU, 4Gi) with the example's three mirror pods (250m, 256Mi in all) and two pods of hello. */
const staticAndHello = (): Pod[] => [
  pod('web-demo-node', { node: 'demo-node', cpu: '50m', memory: '64Mi', mirror: true }),
  pod('log-shipper-demo-node', { node: 'demo-node', cpu: '100m', memory: '128Mi', mirror: true, namespace: 'kube-system' }),
  pod('node-exporter-demo-node', { node: 'demo-node', cpu: '100m', memory: '64Mi', mirror: true, namespace: 'kube-system' }),
  pod('hello-1', { node: 'demo-node', cpu: '250m', memory: '128Mi', labels: { app: 'hello' } }),
  pod('hello-2', { node: 'demo-node', cpu: '250m', memory: '128Mi', labels: { app: 'hello' } }),
];

const isDemo = (n: string): boolean => n.startsWith('demo-node');

describe('scheduling view: formatting', () => {
  it('CPU as kubectl prints it, memory in binary units', () => {
    assert.equal(formatCPU(2000), '2');
    assert.equal(formatCPU(250), '250m');
    assert.equal(formatCPU(1500), '1500m');
    assert.equal(formatCPU(0), '0');
    assert.equal(formatMemory(256 * Mi), '256Mi');
    assert.equal(formatMemory(4 * Gi), '4Gi');
    assert.equal(formatMemory(24683712 * 1024), '23.5Gi');
    assert.equal(formatMemory(1536 * Mi), '1.5Gi');
    assert.equal(formatMemory(512 * 1024), '512Ki');
    assert.equal(formatMemory(0), '0');
  });

  it('a share: part/total and the percentage rounded down; <1% for a small part; ? for an unknown total', () => {
    assert.equal(formatShare(250, 2000, formatCPU), '250m/2 (12%)');
    assert.equal(formatShare(0, 2000, formatCPU), '0/2 (0%)');
    assert.equal(formatShare(128 * Mi, 24 * Gi, formatMemory), '128Mi/24Gi (<1%)');
    assert.equal(formatShare(2000, 2000, formatCPU), '2/2 (100%)');
    assert.equal(formatShare(250, 0, formatCPU), '250m/?');
  });
});

describe('scheduling view: what the scheduler counts', () => {
  it('per demo node: the mirror pods and the ordinary pods bound to it, apart; finished pods and other nodes not counted', () => {
    const pods = [
      ...staticAndHello(),
      pod('done', { node: 'demo-node', cpu: '1', phase: 'Succeeded' }),
      pod('failed-mirror', { node: 'demo-node', cpu: '1', phase: 'Failed', mirror: true }),
      pod('elsewhere', { node: 'other', cpu: '1' }),
      pod('unbound', { cpu: '100m', phase: 'Pending' }),
    ];
    const s = schedulingSnapshot({ nodes: [node('demo-node', '2', '4Gi'), node('other', '8', '8Gi')], pods, isDemoNode: isDemo });
    assert.deepEqual(s.nodes.map((n) => n.name), ['demo-node']);
    const n = s.nodes[0]!;
    assert.deepEqual(n.allocatable, { pods: 110, milliCPU: 2000, memory: 4 * Gi });
    assert.deepEqual(n.mirrors, { pods: 3, milliCPU: 250, memory: 256 * Mi });
    assert.deepEqual(n.ordinary, { pods: 2, milliCPU: 500, memory: 256 * Mi });
    assert.deepEqual(
      s.ordinary.map((p) => `${p.name}@${p.node ?? '-'}`),
      ['done@demo-node', 'hello-1@demo-node', 'hello-2@demo-node', 'unbound@-'],
      'the ordinary pods on the demo nodes (finished ones too) and those not placed yet',
    );
  });

  it("the Deployment's pods by its selector, with the scheduler's reason for one it cannot place", () => {
    const waiting = pod('hello-3', { cpu: '250m', memory: '128Mi', labels: { app: 'hello' }, phase: 'Pending' });
    waiting.status!.conditions = [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message: '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
      },
    ];
    const other = pod('other-app', { node: 'demo-node', labels: { app: 'other' } });
    const s = schedulingSnapshot({ nodes: [node('demo-node', '2', '4Gi')], pods: [...staticAndHello(), waiting, other], isDemoNode: isDemo, deployment: hello });
    const d = s.deployment!;
    assert.deepEqual(d.perPod, { milliCPU: 250, memory: 128 * Mi });
    assert.deepEqual(d.pods.map((p) => p.name), ['hello-1', 'hello-2', 'hello-3']);
    assert.deepEqual(deploymentProgress(d), { desired: 2, placed: 2, running: 2 });
    assert.equal(isDeploymentRunning(deploymentProgress(d)), true);
    assert.equal(isDeploymentRunning({ desired: 2, placed: 2, running: 1 }), false);
    const lines = renderPods(s.ordinary);
    assert.match(lines[0]!, /^POD\s+NAMESPACE\s+NODE\s+PHASE$/);
    assert.match(lines.find((l) => l.startsWith('hello-1'))!, /^hello-1\s+default\s+demo-node\s+Running$/);
    assert.match(lines.find((l) => l.startsWith('hello-3'))!, /^hello-3\s+default\s+-\s+Pending: 0\/1 nodes are available: 1 Insufficient cpu\.$/, 'the first sentence of the message');
  });

  it('selectors: matchLabels and matchExpressions; no selector matches nothing', () => {
    const labels = { app: 'hello', tier: 'web' };
    assert.equal(matchesSelector({ matchLabels: { app: 'hello' } }, labels), true);
    assert.equal(matchesSelector({ matchLabels: { app: 'other' } }, labels), false);
    assert.equal(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'db'] }] }, labels), true);
    assert.equal(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['web'] }] }, labels), false);
    assert.equal(matchesSelector({ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }, labels), true);
    assert.equal(matchesSelector({ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, labels), false);
    assert.equal(matchesSelector({}, labels), true);
    assert.equal(matchesSelector(undefined, labels), false);
  });

  it('room for more: the free CPU, memory and pods of Ready nodes, with the mirrors counted and without', () => {
    const s = schedulingSnapshot({ nodes: [node('demo-node', '2', '4Gi')], pods: staticAndHello(), isDemoNode: isDemo, deployment: hello });
    // 2000m - 250m (mirrors) - 500m (hello) = 1250m: 5 pods of 250m; 6 without the mirrors' 250m.
    assert.deepEqual(roomFor(s, s.deployment!.perPod), { counted: 5, uncounted: 6 });
    assert.deepEqual(roomFor(s, { milliCPU: 0, memory: 3 * Gi }), { counted: 1, uncounted: 1 }, 'memory: 4Gi - 512Mi leaves room for one pod of 3Gi');
    assert.deepEqual(roomFor(s, { milliCPU: 0, memory: 0 }), { counted: 105, uncounted: 108 }, 'with no requests only the pods count limits');
    const notReady = schedulingSnapshot({ nodes: [node('demo-node', '2', '4Gi', false)], pods: staticAndHello(), isDemoNode: isDemo });
    assert.deepEqual(roomFor(notReady, { milliCPU: 250, memory: 0 }), { counted: 0, uncounted: 0 }, 'a node that is not Ready takes no pods');
  });
});

describe('scheduling view: the lines', () => {
  it('the node shares: two rows per node, requests against allocatable', () => {
    const s = schedulingSnapshot({ nodes: [node('demo-node', '2', '4Gi')], pods: staticAndHello(), isDemoNode: isDemo });
    assert.deepEqual(renderNodeShares(s.nodes), [
      'NODE       REQUESTS OF    PODS  CPU           MEMORY',
      'demo-node  mirror pods    3     250m/2 (12%)  256Mi/4Gi (6%)',
      'demo-node  ordinary pods  2     500m/2 (25%)  256Mi/4Gi (6%)',
    ]);
  });

  it('many nodes: those holding ordinary pods first, up to the limit, and a line for the rest', () => {
    const nodes = Array.from({ length: 10 }, (_, i) => node(`demo-node-${i}`, '2', '4Gi'));
    const s = schedulingSnapshot({ nodes, pods: [pod('hello-1', { node: 'demo-node-7', cpu: '250m' })], isDemoNode: isDemo });
    const lines = renderNodeShares(s.nodes, 2);
    assert.deepEqual(lines.slice(1).map((l) => l.split(/\s+/)[0]), ['demo-node-0', 'demo-node-0', 'demo-node-7', 'demo-node-7', '…']);
    assert.equal(lines.at(-1), '… and 8 more nodes');
  });

  it('"scheduler sees": what the mirror pods hold, the ordinary pods placed, the room with and without the mirrors', () => {
    const s = schedulingSnapshot({ nodes: [node('demo-node', '2', '4Gi')], pods: staticAndHello(), isDemoNode: isDemo, deployment: hello });
    assert.equal(
      schedulerSeesLine(s),
      'scheduler sees: mirror pods of static pods hold 250m of 2 cpu and 256Mi of 4Gi memory on demo-node; 2 ordinary pods placed beside them; room for 5 more hello pods (6 if it did not count the mirror pods)',
    );
    const three = schedulingSnapshot({ nodes: ['a', 'b', 'c'].map((x) => node(`demo-node-${x}`, '1', '1Gi')), pods: [], isDemoNode: isDemo });
    assert.equal(schedulerSeesLine(three), 'scheduler sees: mirror pods of static pods hold 0 of 3 cpu and 0 of 3Gi memory on 3 nodes; 0 ordinary pods placed beside them');
    assert.equal(schedulerSeesLine(schedulingSnapshot({ nodes: [], pods: [], isDemoNode: isDemo })), 'scheduler sees: no node of the demo registered yet');
  });

  it('the section: the Deployment line, its pods, the shares, the line, and once all are placed the one-too-many hint', () => {
    const s = schedulingSnapshot({ nodes: [node('demo-node', '2', '4Gi')], pods: staticAndHello(), isDemoNode: isDemo, deployment: hello });
    const lines = renderScheduling(s, { adminKubeconfig: '/tmp/x/admin.kubeconfig' });
    assert.equal(lines[0], 'DEPLOYMENT default/hello: 2/2 pods placed by kube-scheduler, 2/2 Running · each requests cpu 250m, memory 128Mi');
    assert.ok(lines.some((l) => /^scheduler sees: /.test(l)));
    assert.equal(lines.at(-1), 'one too many: kubectl --kubeconfig /tmp/x/admin.kubeconfig -n default scale deployment hello --replicas 8 (pod 8 stays Pending: the scheduler finds no room)');

    const creating = schedulingSnapshot({ nodes: [node('demo-node', '2', '4Gi')], pods: staticAndHello().slice(0, 3), isDemoNode: isDemo, deployment: hello });
    const early = renderScheduling(creating, { deploymentState: 'creating it', adminKubeconfig: '/tmp/x/admin.kubeconfig' });
    assert.equal(early[0], 'DEPLOYMENT default/hello: 0/2 pods placed by kube-scheduler, 0/2 Running · each requests cpu 250m, memory 128Mi · creating it');
    assert.ok(!early.some((l) => l.startsWith('one too many')), 'no hint before every pod is placed');

    const none = renderScheduling(schedulingSnapshot({ nodes: [node('demo-node', '2', '4Gi')], pods: staticAndHello().slice(0, 3), isDemoNode: isDemo }));
    assert.ok(!none.some((l) => l.startsWith('DEPLOYMENT') || l.startsWith('POD')), 'without a Deployment or ordinary pods: the shares and the line only');
  });
});

describe('the shipped examples', () => {
  const examples = new URL('../../../../examples/', import.meta.url);

  it('examples/deployment.yaml is an apps/v1 Deployment in default whose pods fit beside the static pods on a node of 1 CPU and 1Gi', () => {
    const deployment = parseDemoDeployment(readFileSync(new URL('deployment.yaml', examples), 'utf8'), 'deployment.yaml');
    assert.equal(deployment.metadata?.namespace, 'default');
    const statics = readdirSync(new URL('manifests/', examples))
      .filter((f) => !f.startsWith('.'))
      .map((f) => parseYaml(readFileSync(new URL(`manifests/${f}`, examples), 'utf8')) as Pod)
      .map((p) => ({ ...p, metadata: { ...p.metadata, annotations: { 'kubernetes.io/config.mirror': 'x' } }, spec: { ...p.spec!, nodeName: 'demo-node' } }));
    const s = schedulingSnapshot({ nodes: [node('demo-node', '1', '1Gi')], pods: statics, isDemoNode: isDemo, deployment });
    const n = s.nodes[0]!;
    assert.ok(n.mirrors.milliCPU > 0 && n.mirrors.memory > 0, 'the static pods request CPU and memory, so there is something to see');
    const room = roomFor(s, s.deployment!.perPod);
    assert.ok(room.counted >= s.deployment!.replicas, `room for ${room.counted} of its pods, ${s.deployment!.replicas} wanted`);
    assert.ok(room.uncounted > room.counted, 'the mirrors make a difference the view can show');
  });

  it('a file that is not a Deployment is refused, naming the file', () => {
    assert.throws(() => parseDemoDeployment('apiVersion: v1\nkind: Pod\nmetadata: { name: x }\n', 'x.yaml'), /the demo's Deployment x\.yaml: an apps\/v1 Deployment is expected, got v1\/Pod/);
    assert.throws(() => parseDemoDeployment('apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: x }\n', 'x.yaml'), /spec\.selector is missing/);
  });
});
