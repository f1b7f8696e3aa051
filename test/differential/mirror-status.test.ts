// Differential test of mirror pod STATUS: the corpus goes to the real kubelet (the hollow
// kubelet, node real-…) and to our agent (node ours-…) on one control plane, both told the same
// node IP; once every mirror has reached its final state on both sides, the statuses are
// compared after normalising what must differ between two nodes (times, the pod addresses each
// node hands out, container IDs of two different runtimes). Every difference left must be
// listed in docs/kubelet-differences.md (area `status`): a new one fails, and a listed one that
// no longer occurs must be removed from the list.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp as copy, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { V1Pod } from '@kubernetes/client-node';
import { parse } from 'yaml';

import { startHollowKubelet, type HollowKubelet } from '../helpers/hollow-kubelet.js';
import { defaultNodeIP } from '../../src/config/agent-config.js';
import { parseCidr, parseIP } from '../../src/values/ip.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { useControlPlane, waitForDefaultServiceAccount } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { assertListedDifferences, pairMirrors, readCorpus, type CorpusEntry } from './corpus.js';
import {
  compareArea,
  describeDifference,
  NODE_IP,
  normaliseMirrorStatus,
  parseListedDifferences,
  reconcile,
  toJson,
  type Difference,
  type Json,
  type StatusSide,
} from './compare.js';

const REAL = 'real-s1';
const OURS = 'ours-s1';
/** Our agent's pod range, given explicitly so that the option is what is tested. */
const POD_CIDR = '10.244.7.0/24';
// Registered before useControlPlane's own `after`, so both stop before the cluster.
let kubelet: HollowKubelet | undefined;
let agent: AgentProcess | undefined;
const manifestDirs: string[] = [];
after(async () => {
  await Promise.all([kubelet?.stop(), agent?.stop()]);
  await Promise.all(manifestDirs.map((d) => rm(d, { recursive: true, force: true })));
});
const cp = useControlPlane({ nodes: [REAL, OURS] });

// Sources, not build output: the corpus and the list are read where they are edited. The
// status test adds a few manifests of its own (corpus-status/) to the shared corpus.
const CORPORA = ['corpus', 'corpus-status'].map((dir) => fileURLToPath(new URL(`../../../test/differential/${dir}/`, import.meta.url)));
const CORPUS_NAMESPACES = ['diff-corpus'];



const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
/** The ordinary pod each node runs beside the corpus: its status is compared as the mirrors' are. */
const ORDINARY = 'ordinary';
const ORDINARY_SUBJECT = 'ordinary-pod';

/** An ordinary pod bound to `node` as a user would bind it, without a token volume (nothing here serves it). */
async function createOrdinaryPod(node: string): Promise<void> {
  await cp.adminApi.createNamespacedPod({
    namespace: CORPUS_NAMESPACES[0]!,
    body: {
      metadata: { name: `${ORDINARY}-${node}`, namespace: CORPUS_NAMESPACES[0]! },
      spec: { nodeName: node, automountServiceAccountToken: false, containers: [{ name: 'app', image: 'nginx:1.27' }] },
    },
  });
}

async function ordinaryPodOf(node: string): Promise<V1Pod> {
  return cp.adminApi.readNamespacedPod({ name: `${ORDINARY}-${node}`, namespace: CORPUS_NAMESPACES[0]! });
}

async function mirrorsOf(node: string): Promise<Map<string, V1Pod>> {
  const list = await cp.adminApi.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
  const live = list.items.filter((p) => p.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined && !p.metadata?.deletionTimestamp);
  return new Map(live.map((p) => [`${p.metadata!.namespace}/${p.metadata!.name}`, p]));
}

const isTrue = (pod: V1Pod, type: string): boolean => pod.status?.conditions?.some((c) => c.type === type && c.status === 'True') === true;
const hasRegularInit = (pod: V1Pod): boolean => (pod.spec?.initContainers ?? []).some((c) => c.restartPolicy !== 'Always');

/**
 * The last state a mirror's status reaches, after which neither side writes it again:
 * - ours: Running (the simulation's last step);
 * - the real kubelet: Running, its containers ready and known to the runtime; or, for a
 *   pod with a regular init container, that init container running: kubemark's fake runtime
 *   never ends a container, so such a pod never gets further than Pending.
 */
function settled(pod: V1Pod, side: 'real' | 'ours'): boolean {
  const status = pod.status;
  if (side === 'ours') return status?.phase === 'Running';
  if (status?.phase === 'Running') {
    return isTrue(pod, 'ContainersReady') && (status.containerStatuses ?? []).every((c) => c.containerID !== undefined && c.state?.running !== undefined);
  }
  return hasRegularInit(pod) && (status?.initContainerStatuses ?? []).some((c) => c.state?.running !== undefined && c.containerID !== undefined);
}


function inCidr(cidr: string, ip: string): boolean {
  const net = parseCidr(cidr)!;
  const addr = parseIP(ip);
  return addr !== undefined && addr.family === net.family && addr.value >= net.network && addr.value < net.network + net.size;
}

describe('differential: mirror pod status, real kubelet vs our agent', () => {
  let corpus: CorpusEntry[] = [];
  let real: StatusSide;
  let ours: StatusSide;
  let realMirrors: Map<string, V1Pod>;
  let ourMirrors: Map<string, V1Pod>;
  let realOrdinary: V1Pod;
  let ourOrdinary: V1Pod;

  before(async () => {
    corpus = await readCorpus(CORPORA);
    for (const name of CORPUS_NAMESPACES) await cp.adminApi.createNamespace({ body: { metadata: { name } } });
    // ServiceAccount admission wants the `default` ServiceAccount for the ordinary pods.
    await waitForDefaultServiceAccount(cp.adminApi, CORPUS_NAMESPACES[0]!);
    const realDir = await mkdtemp(join(tmpdir(), 'kp-diff-status-real-'));
    const oursDir = await mkdtemp(join(tmpdir(), 'kp-diff-status-ours-'));
    manifestDirs.push(realDir, oursDir);
    for (const dir of CORPORA) {
      await copy(dir, realDir, { recursive: true });
      await copy(dir, oursDir, { recursive: true });
    }

    // One node IP for both, by our default rule. The kubelet refuses a loopback --node-ip, so
    // on a machine with no other address it picks its own and each side is judged by its own.
    const nodeIP = defaultNodeIP(networkInterfaces());
    const loopback = nodeIP === '127.0.0.1';
    agent = startAgentProcess({
      nodeName: OURS,
      kubeconfig: cp.cluster.nodeKubeconfigs[OURS]!,
      manifestDir: oursDir,
      extraArgs: ['--node-ip', nodeIP, '--pod-cidr', POD_CIDR],
    });
    kubelet = await startHollowKubelet({
      cluster: cp.cluster,
      nodeName: REAL,
      staticPodPath: realDir,
      fileCheckFrequencyMs: 1000,
      // kubemark's one-core machine cannot admit the corpus's CPU requests (the kubelet rejects
      // the rest with UnexpectedAdmissionError); status, not admission, is compared here.
      machine: { cpus: 16, memoryBytes: 64 * 2 ** 30 },
      ...(loopback ? {} : { nodeIP }),
    });

    const all = async (node: string, side: 'real' | 'ours'): Promise<Map<string, V1Pod> | undefined> => {
      const m = await mirrorsOf(node);
      return corpus.every((c) => {
        const pod = m.get(`${c.namespace}/${c.name}-${node}`);
        return pod !== undefined && settled(pod, side);
      })
        ? m
        : undefined;
    };
    await createOrdinaryPod(REAL);
    await createOrdinaryPod(OURS);
    const settledOrdinary = async (node: string, side: 'real' | 'ours'): Promise<V1Pod | undefined> => {
      const pod = await ordinaryPodOf(node);
      return settled(pod, side) ? pod : undefined;
    };
    try {
      realMirrors = await waitFor(() => all(REAL, 'real'), `the real kubelet's ${corpus.length} mirrors in their final state`, { timeoutMs: 90_000, intervalMs: 250 });
      ourMirrors = await waitFor(() => all(OURS, 'ours'), `our agent's ${corpus.length} mirrors Running`, { timeoutMs: 30_000, intervalMs: 250 });
      realOrdinary = await waitFor(() => settledOrdinary(REAL, 'real'), "the real kubelet's ordinary pod Running", { timeoutMs: 30_000, intervalMs: 250 });
      ourOrdinary = await waitFor(() => settledOrdinary(OURS, 'ours'), "our agent's ordinary pod Running", { timeoutMs: 30_000, intervalMs: 250 });
    } catch (err) {
      for (const [node, side] of [
        [REAL, 'real'],
        [OURS, 'ours'],
      ] as const) {
        const m = await mirrorsOf(node);
        for (const c of corpus) {
          const pod = m.get(`${c.namespace}/${c.name}-${node}`);
          if (pod === undefined || !settled(pod, side)) process.stderr.write(`--- not settled on ${node}: ${c.subject} ---\n${JSON.stringify(pod?.status ?? null)}\n`);
        }
      }
      process.stderr.write(`--- hollow kubelet log (tail) ---\n${(await kubelet.logs()).split('\n').slice(-40).join('\n')}\n`);
      process.stderr.write(`--- agent log (tail) ---\n${agent.logs().split('\n').slice(-40).join('\n')}\n`);
      throw err;
    }
    const node = async (name: string) => cp.adminApi.readNode({ name });
    const realNode = await node(REAL);
    const realNodeIP = realNode.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '';
    real = { nodeName: REAL, nodeUID: realNode.metadata!.uid!, nodeIP: realNodeIP };
    ours = { nodeName: OURS, nodeUID: (await node(OURS)).metadata!.uid!, nodeIP };
    if (!loopback) assert.equal(realNodeIP, nodeIP, 'the real kubelet took --node-ip');
  });

  it('both sides report their node IP as hostIP on every mirror', () => {
    for (const [side, mirrors] of [
      [real, realMirrors],
      [ours, ourMirrors],
    ] as const) {
      for (const pod of mirrors.values()) {
        assert.equal(pod.status?.hostIP, side.nodeIP, `${pod.metadata?.name} hostIP`);
        assert.deepEqual(pod.status?.hostIPs?.map((h) => h.ip), [side.nodeIP], `${pod.metadata?.name} hostIPs`);
      }
    }
  });

  it('our pods get distinct addresses from --pod-cidr, host-network pods the node IP', () => {
    const addresses: string[] = [];
    for (const pod of ourMirrors.values()) {
      const ip = pod.status?.podIP;
      if (pod.spec?.hostNetwork === true) {
        assert.equal(ip, ours.nodeIP, `${pod.metadata?.name}: host network`);
      } else {
        assert.ok(ip !== undefined && inCidr(POD_CIDR, ip), `${pod.metadata?.name}: ${ip} in ${POD_CIDR}`);
        addresses.push(ip);
      }
      assert.deepEqual(pod.status?.podIPs?.map((p) => p.ip), [ip]);
    }
    assert.ok(addresses.length >= 4, 'the corpus has pods without host networking');
    assert.equal(new Set(addresses).size, addresses.length, `distinct pod IPs: ${addresses.join(', ')}`);
  });

  it('the normaliser removes what must differ and keeps the rest', () => {
    for (const [side, mirrors] of [
      [real, realMirrors],
      [ours, ourMirrors],
    ] as const) {
      for (const pod of mirrors.values()) {
        const text = JSON.stringify(normaliseMirrorStatus(pod, side));
        assert.ok(!text.includes(side.nodeName), `no node name left in ${pod.metadata?.name}`);
        assert.ok(!text.includes(side.nodeIP), `no node IP left in ${pod.metadata?.name}`);
        assert.ok(!/\d{4}-\d\d-\d\dT/.test(text), `no time left in ${pod.metadata?.name}`);
        assert.ok(text.includes(`"hostIP":"${NODE_IP}"`));
        assert.match(text, /"containerStatuses":\[/);
      }
    }
  });

  it('mirror pods and an ordinary pod: status differs exactly as docs/kubelet-differences.md lists', async (t) => {
    const pairs = pairMirrors(corpus, { real, ours }, { real: realMirrors, ours: ourMirrors }, normaliseMirrorStatus);
    pairs.push({ subject: ORDINARY_SUBJECT, real: normaliseMirrorStatus(realOrdinary, real), ours: normaliseMirrorStatus(ourOrdinary, ours) });
    await assertListedDifferences(t, 'status', pairs);
  });

  it("the ordinary pod's status answers its generation on both sides; a mirror's has none", () => {
    for (const pod of [realOrdinary, ourOrdinary]) {
      const generation = pod.metadata?.generation;
      assert.ok(generation !== undefined && generation > 0, `${pod.metadata?.name} has a generation`);
      assert.equal(pod.status?.observedGeneration, generation, `${pod.metadata?.name} status.observedGeneration`);
      for (const c of pod.status?.conditions ?? []) assert.equal(c.observedGeneration, generation, `${pod.metadata?.name} ${c.type}.observedGeneration`);
    }
    for (const pod of [...realMirrors.values(), ...ourMirrors.values()]) assert.equal(pod.status?.observedGeneration, undefined, `${pod.metadata?.name}`);
  });

  it('the comparison sees a difference when there is one', () => {
    // Planted differences on a copy of a real mirror must come out under their keys: a host IP
    // that is not the node's, a pod address of the other family, a changed image ID.
    const sample = [...realMirrors.values()].find((p) => p.spec?.hostNetwork !== true)!;
    const changed = toJson(sample) as { status: { hostIP: string; podIP: string; containerStatuses: Array<{ imageID: string }> } };
    changed.status.hostIP = '203.0.113.9';
    changed.status.podIP = 'fd00::99';
    changed.status.containerStatuses[0]!.imageID = 'planted';
    const found = compareArea('status', [{ subject: 'x.yaml', real: normaliseMirrorStatus(sample, real), ours: normaliseMirrorStatus(changed, real) }]);
    assert.deepEqual(
      found.map((d) => describeDifference(d)),
      [
        `status:x.yaml containerStatuses[0].imageID: real ${JSON.stringify(sample.status?.containerStatuses?.[0]?.imageID)}, ours "planted"`,
        'status:x.yaml hostIP: real "<node-ip>", ours "203.0.113.9"',
        'status:x.yaml podIP: real "<pod-ipv4>", ours "<pod-ipv6>"',
      ],
    );
  });
});
