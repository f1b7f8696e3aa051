// Differential test of the NODE and its LEASE: the real kubelet (the hollow kubelet, node
// real-…) and our agent (node ours-…) register on one control plane, told the same node IP and
// no static pods; their Node and Lease objects are compared after normalising what must differ
// between two nodes (compare.ts: names, UIDs, times, the kubelet port each was given, and the
// values that describe the machine, which are kubemark's fakes on the real side). Every
// difference left must be listed in docs/kubelet-differences.md (areas `node` and `lease`).
// Then both sit idle for 25 s, and neither may write its Node more than once in that window:
// the status goes out when it changes or every nodeStatusReportFrequency (5 min), the Lease
// is the heartbeat.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { CoordinationV1Api, type V1Lease, type V1Node, type V1Pod } from '@kubernetes/client-node';

import { startHollowKubelet, type HollowKubelet } from '../helpers/hollow-kubelet.js';
import { defaultNodeIP } from '../../src/config/agent-config.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import {
  compareArea,
  describeDifference,
  KUBELET_PORT,
  MACHINE_VALUE,
  NODE_IP,
  normaliseLease,
  normaliseMirrorStatus,
  normaliseNode,
  parseListedDifferences,
  reconcile,
  toJson,
  type Difference,
  type NodeSide,
  type StatusSide,
} from './compare.js';
import { EventRecorder } from './event-recorder.js';
import { readPods } from '../helpers/node-endpoints.js';

const REAL = 'real-n1';
const OURS = 'ours-n1';
// The admission comparison runs on a second pair of nodes, both with maxPods 2.
const REAL_FULL = 'real-n2';
const OURS_FULL = 'ours-n2';
const MAX_PODS = 2;
/** Our agent's kubelet port, not the default, so that the flag is what is tested. */
const OUR_PORT = 10260;
const IDLE_WINDOW_MS = 25_000;

let kubelet: HollowKubelet | undefined;
let agent: AgentProcess | undefined;
let fullKubelet: HollowKubelet | undefined;
let fullAgent: AgentProcess | undefined;
let recorder: EventRecorder | undefined;
const dirs: string[] = [];
after(async () => {
  recorder?.stop();
  await Promise.all([kubelet?.stop(), agent?.stop(), fullKubelet?.stop(), fullAgent?.stop()]);
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
const cp = useControlPlane({ nodes: [REAL, OURS, REAL_FULL, OURS_FULL] });

const DIFFERENCES_DOC = fileURLToPath(new URL('../../../docs/kubelet-differences.md', import.meta.url));

const isReady = (n: V1Node | undefined): boolean => n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

describe('differential: Node and Lease, real kubelet vs our agent', () => {
  let real: NodeSide;
  let ours: NodeSide;
  let realNode: V1Node;
  let ourNode: V1Node;
  let realLease: V1Lease;
  let ourLease: V1Lease;
  let leases: CoordinationV1Api;

  before(async () => {
    recorder = await EventRecorder.start(cp.cluster.adminKubeconfig, [REAL, OURS]);
    leases = kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(CoordinationV1Api);
    const realDir = await mkdtemp(join(tmpdir(), 'kp-diff-node-real-'));
    const oursDir = await mkdtemp(join(tmpdir(), 'kp-diff-node-ours-'));
    dirs.push(realDir, oursDir);
    // As in the status test: the kubelet refuses a loopback --node-ip.
    const nodeIP = defaultNodeIP(networkInterfaces());
    const loopback = nodeIP === '127.0.0.1';
    agent = startAgentProcess({
      nodeName: OURS,
      kubeconfig: cp.cluster.nodeKubeconfigs[OURS]!,
      manifestDir: oursDir,
      extraArgs: ['--node-ip', nodeIP, '--port', String(OUR_PORT)],
    });
    kubelet = await startHollowKubelet({ cluster: cp.cluster, nodeName: REAL, staticPodPath: realDir, ...(loopback ? {} : { nodeIP }) });

    const readLease = (name: string) => leases.readNamespacedLease({ name, namespace: 'kube-node-lease' }).catch(() => undefined);
    const settled = async (name: string): Promise<{ node: V1Node; lease: V1Lease } | undefined> => {
      const node = await cp.adminApi.readNode({ name }).catch(() => undefined);
      const lease = await readLease(name);
      return node !== undefined && isReady(node) && lease?.metadata?.ownerReferences?.length ? { node, lease } : undefined;
    };
    const r = await waitFor(() => settled(REAL), 'the real Node Ready and its Lease owned by it', { timeoutMs: 60_000, intervalMs: 250 });
    const o = await waitFor(() => settled(OURS), 'our Node Ready and its Lease owned by it', { timeoutMs: 30_000, intervalMs: 250 });
    [realNode, realLease, ourNode, ourLease] = [r.node, r.lease, o.node, o.lease];
    const realNodeIP = realNode.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '';
    real = { nodeName: REAL, nodeUID: realNode.metadata!.uid!, nodeIP: realNodeIP, kubeletPort: kubelet.ports.kubelet };
    ours = { nodeName: OURS, nodeUID: ourNode.metadata!.uid!, nodeIP, kubeletPort: OUR_PORT };
    if (!loopback) assert.equal(realNodeIP, nodeIP, 'the real kubelet took --node-ip');
  });

  it('the normaliser removes what must differ and keeps the rest', () => {
    for (const [side, node] of [
      [real, realNode],
      [ours, ourNode],
    ] as const) {
      const text = JSON.stringify(normaliseNode(node, side));
      assert.ok(!text.includes(side.nodeName), 'no node name left');
      assert.ok(!text.includes(side.nodeUID), 'no node UID left');
      assert.ok(!/\d{4}-\d\d-\d\dT/.test(text), 'no time left');
      assert.ok(text.includes(`"address":"${NODE_IP}"`), 'the InternalIP is the node IP');
      assert.ok(text.includes(`"Port":"${KUBELET_PORT}"`), 'the kubelet endpoint is the configured port');
      assert.ok(text.includes(`"cpu":"${MACHINE_VALUE}"`));
    }
  });

  it('the Node and the Lease differ exactly as docs/kubelet-differences.md lists', async (t) => {
    // Read again: both sides' objects as they are now, after the first writes settled.
    const [rn, on] = await Promise.all([cp.adminApi.readNode({ name: REAL }), cp.adminApi.readNode({ name: OURS })]);
    const read = (name: string) => leases.readNamespacedLease({ name, namespace: 'kube-node-lease' });
    const [rl, ol] = await Promise.all([read(REAL), read(OURS)]);
    const found: Difference[] = [
      ...compareArea('node', [{ subject: 'node', real: normaliseNode(rn, real), ours: normaliseNode(on, ours) }]),
      ...compareArea('lease', [{ subject: 'lease', real: normaliseLease(rl, real), ours: normaliseLease(ol, ours) }]),
    ];
    for (const d of found) t.diagnostic(describeDifference(d));
    const listed = parseListedDifferences(await readFile(DIFFERENCES_DOC, 'utf8'));
    const { unlisted, stale } = reconcile(found, listed, ['node', 'lease']);
    assert.deepEqual(
      unlisted.map(describeDifference),
      [],
      'differences from the real kubelet that docs/kubelet-differences.md does not list (fix them or list them with their reason)',
    );
    assert.deepEqual(stale, [], 'listed differences that no longer occur: remove them from docs/kubelet-differences.md');
    assert.equal(rl.spec?.acquireTime, undefined, "the kubelet's Lease has no acquireTime");
    assert.equal(realLease.spec?.holderIdentity, REAL);
    assert.equal(ourLease.spec?.holderIdentity, OURS);
  });

  it('both sides create their Node with the same conditions, Ready False, and make it Ready with the write that follows', (t) => {
    // The recorder watched before either side started, so each Node's ADDED event is the object
    // as created; the MODIFIED events are the writes that followed.
    const asCreated = (name: string) => {
      const records = recorder!.about('node', name);
      const added = records.find((r) => r.type === 'ADDED');
      assert.ok(added !== undefined, `${name}: the create was seen`);
      const conditions = ((added.object as V1Node).status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`).sort();
      const firstReady = records.find((r) => isReady(r.object as V1Node));
      return { conditions, readyLater: firstReady !== undefined && firstReady.type === 'MODIFIED' };
    };
    const [r, o] = [asCreated(REAL), asCreated(OURS)];
    t.diagnostic(`conditions as created: real ${r.conditions.join('; ')}`);
    assert.equal(r.conditions.length, 4, 'the real kubelet creates its Node with four conditions');
    assert.deepEqual(o.conditions, r.conditions, 'the conditions as created, times aside');
    assert.ok(r.readyLater && o.readyLater, `Ready with a later write: ${JSON.stringify({ real: r.readyLater, ours: o.readyLater })}`);
  });

  it('while idle, neither side writes its Node more than once in 25 s; both renew their Lease', async (t) => {
    const from = performance.now();
    const writes = (name: string, kind: 'node' | 'lease') =>
      recorder!.about(kind, name).filter((r) => r.type === 'MODIFIED' && r.t >= from && r.t <= from + IDLE_WINDOW_MS).length;
    // The window is the measurement: it ends when its time is up, not on an event.
    await waitFor(() => performance.now() - from >= IDLE_WINDOW_MS, `an idle window of ${IDLE_WINDOW_MS / 1000} s`, {
      timeoutMs: IDLE_WINDOW_MS + 5000,
      intervalMs: 500,
    });
    const counts = { real: writes(REAL, 'node'), ours: writes(OURS, 'node'), realLease: writes(REAL, 'lease'), oursLease: writes(OURS, 'lease') };
    t.diagnostic(`Node writes in ${IDLE_WINDOW_MS / 1000} s: real ${counts.real}, ours ${counts.ours}; Lease renewals: real ${counts.realLease}, ours ${counts.oursLease}`);
    assert.ok(counts.real <= 1, `real kubelet: ${counts.real} Node writes`);
    assert.ok(counts.ours <= 1, `our agent: ${counts.ours} Node writes`);
    // The Lease is renewed every 10 s on both sides: two or three renewals in 25 s.
    assert.ok(counts.realLease >= 2 && counts.oursLease >= 2, JSON.stringify(counts));
  });

  it('the comparison sees a difference when there is one', () => {
    const changed = toJson(ourNode) as { metadata: { labels: Record<string, string> }; status: { nodeInfo: { kubeletVersion: string } } };
    changed.metadata.labels['planted'] = 'x';
    changed.status.nodeInfo.kubeletVersion = 'v0.0.0';
    const found = compareArea('node', [{ subject: 'node', real: normaliseNode(ourNode, ours), ours: normaliseNode(changed, ours) }]);
    assert.deepEqual(found.map((d) => describeDifference(d)), [
      'node:node metadata.labels.planted: real (absent), ours "x"',
      `node:node status.nodeInfo.kubeletVersion: real ${JSON.stringify(ourNode.status?.nodeInfo?.kubeletVersion)}, ours "v0.0.0"`,
    ]);
  });
});

const manifest = (name: string): string => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: default
spec:
  containers:
  - name: main
    image: nginx:1.27
`;

describe('differential: admission by maxPods, real kubelet vs our agent', () => {
  it('with maxPods 2, a third manifest written once two run, then one for another OS, are rejected by both alike (as listed)', async (t) => {
    const realDir = await mkdtemp(join(tmpdir(), 'kp-diff-full-real-'));
    const oursDir = await mkdtemp(join(tmpdir(), 'kp-diff-full-ours-'));
    const configDir = await mkdtemp(join(tmpdir(), 'kp-diff-full-config-'));
    dirs.push(realDir, oursDir, configDir);
    const configFile = join(configDir, 'kubelet-config.yaml');
    await writeFile(configFile, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: ${MAX_PODS}\n`);
    const nodeIP = defaultNodeIP(networkInterfaces());
    const loopback = nodeIP === '127.0.0.1';
    // Both start with an empty directory: the kubelet mirrors every static pod it holds once, when
    // its Node first appears (fastStaticPodsRegistration), rejected ones included, so manifests
    // present at start make the rejected pod's mirror depend on which came first.
    fullAgent = startAgentProcess({
      nodeName: OURS_FULL,
      kubeconfig: cp.cluster.nodeKubeconfigs[OURS_FULL]!,
      manifestDir: oursDir,
      extraArgs: ['--node-ip', nodeIP, '--config', configFile],
    });
    fullKubelet = await startHollowKubelet({
      cluster: cp.cluster,
      nodeName: REAL_FULL,
      staticPodPath: realDir,
      maxPods: MAX_PODS,
      ...(loopback ? {} : { nodeIP }),
    });

    const mirrors = async (node: string): Promise<Map<string, V1Pod>> => {
      const list = await cp.adminApi.listNamespacedPod({ namespace: 'default', fieldSelector: `spec.nodeName=${node}` });
      return new Map(list.items.map((p) => [p.metadata!.name!.slice(0, 2), p]));
    };
    const nodeReady = async (name: string) => isReady(await cp.adminApi.readNode({ name }).catch(() => undefined));
    await waitFor(async () => (await nodeReady(REAL_FULL)) && (await nodeReady(OURS_FULL)), 'both Nodes Ready', { timeoutMs: 60_000, intervalMs: 250 });

    // Two pods first, so that which pod is rejected depends on maxPods alone, not on the order
    // in which either side reads a directory.
    for (const dir of [realDir, oursDir]) for (const name of ['p1', 'p2']) await writeFile(join(dir, `${name}.yaml`), manifest(name));
    const bothRunning = async (node: string) => {
      const byName = await mirrors(node);
      return ['p1', 'p2'].every((n) => byName.get(n)?.status?.phase === 'Running');
    };
    await waitFor(async () => (await bothRunning(REAL_FULL)) && (await bothRunning(OURS_FULL)), 'p1 and p2 Running on both nodes', {
      timeoutMs: 60_000,
      intervalMs: 250,
    });

    for (const dir of [realDir, oursDir]) await writeFile(join(dir, 'p3.yaml'), manifest('p3'));
    // The kubelet's /pods shows a static pod with the status its status manager holds.
    const realP3 = await waitFor(
      async () => {
        const p3 = (await readPods<V1Pod>(fullKubelet!.ports.readOnly)).get(`p3-${REAL_FULL}`);
        return p3?.status?.phase === 'Failed' ? p3 : undefined;
      },
      "the real kubelet's /pods: p3 Failed",
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const ourP3 = await waitFor(async () => {
      const p3 = (await mirrors(OURS_FULL)).get('p3');
      return p3?.status?.phase === 'Failed' ? p3 : undefined;
    }, "our agent: p3's mirror Failed", { timeoutMs: 30_000, intervalMs: 250 });
    const realMirrors = await mirrors(REAL_FULL);
    for (const n of ['p1', 'p2']) assert.equal(realMirrors.get(n)?.status?.phase, 'Running', `real ${n}`);
    const nodeUID = async (name: string) => (await cp.adminApi.readNode({ name })).metadata!.uid!;
    const realSide: StatusSide = { nodeName: REAL_FULL, nodeUID: await nodeUID(REAL_FULL), nodeIP };
    const ourSide: StatusSide = { nodeName: OURS_FULL, nodeUID: await nodeUID(OURS_FULL), nodeIP };
    for (const p3 of [realP3, ourP3]) assert.equal(p3.status?.reason, 'UnexpectedAdmissionError');

    // A pod for another OS: rejected before any predicate (no eviction could help), on a full
    // node too, by both with the kubelet's PodOSNotSupported.
    for (const dir of [realDir, oursDir]) await writeFile(join(dir, 'p4.yaml'), manifest('p4').replace('spec:\n', 'spec:\n  os:\n    name: windows\n'));
    const realP4 = await waitFor(
      async () => {
        const p4 = (await readPods<V1Pod>(fullKubelet!.ports.readOnly)).get(`p4-${REAL_FULL}`);
        return p4?.status?.phase === 'Failed' ? p4 : undefined;
      },
      "the real kubelet's /pods: p4 Failed",
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const ourP4 = await waitFor(async () => {
      const p4 = (await mirrors(OURS_FULL)).get('p4');
      return p4?.status?.phase === 'Failed' ? p4 : undefined;
    }, "our agent: p4's mirror Failed", { timeoutMs: 30_000, intervalMs: 250 });
    for (const p4 of [realP4, ourP4]) assert.equal(p4.status?.reason, 'PodOSNotSupported');
    const realMirrorsAfter = await mirrors(REAL_FULL);

    // The status each side holds for the rejected pods, and whether they are mirrored: the real
    // kubelet starts no pod worker for a rejected pod, so only its start-up pass could mirror it.
    const found: Difference[] = compareArea('admission', [
      { subject: 'p3.yaml', real: normaliseMirrorStatus(realP3, realSide), ours: normaliseMirrorStatus(ourP3, ourSide) },
      { subject: 'p3.yaml#mirror', real: realMirrors.has('p3') ? 'present' : undefined, ours: 'present' },
      { subject: 'p4.yaml', real: normaliseMirrorStatus(realP4, realSide), ours: normaliseMirrorStatus(ourP4, ourSide) },
      { subject: 'p4.yaml#mirror', real: realMirrorsAfter.has('p4') ? 'present' : undefined, ours: 'present' },
    ]);
    for (const d of found) t.diagnostic(describeDifference(d));
    const listed = parseListedDifferences(await readFile(DIFFERENCES_DOC, 'utf8'));
    const { unlisted, stale } = reconcile(found, listed, ['admission']);
    assert.deepEqual(unlisted.map(describeDifference), [], 'differences docs/kubelet-differences.md does not list');
    assert.deepEqual(stale, [], 'listed differences that no longer occur: remove them from docs/kubelet-differences.md');
  });
});
