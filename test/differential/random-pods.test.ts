// Differential test on random pods: N manifests from the seeded generator (random-pods.ts) go
// to the real kubelet (node real-r1) and to our agent (node ours-r1), and their mirror pods'
// metadata and spec are compared as the corpus test compares them (compare.ts), under the area
// `random`. DIFFERENTIAL_SEED and DIFFERENTIAL_RANDOM_PODS choose other pods than CI's; the
// seed is printed so that a failure can be replayed. With CI's seed and count the listed
// `random` rows must all still occur; with others only new differences fail (another seed
// need not produce every listed one).
//
// Then a hand-over: the kubelet stops and our agent takes its place (same node name, same
// manifest directory, as when an operator replaces one with the other). The static pods it
// holds must equal the kubelet's as the kubelet's /pods showed them — UID and config.hash
// included, which the mirror comparison has to hide because they cover the node name and
// the path — (area `static`), and it must adopt the kubelet's mirrors rather than recreate
// them. The mirror comparison alone cannot see a defaulting difference: the API server
// defaults the mirror again; the hash covers the pod as the node defaulted it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';

import { startHollowKubelet, type HollowKubelet } from '../helpers/hollow-kubelet.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import {
  compareArea,
  describeDifference,
  normaliseMirrorPod,
  normaliseStaticPod,
  parseListedDifferences,
  reconcile,
  type Difference,
  type Json,
  type Side,
} from './compare.js';
import { freePort, readPods } from '../helpers/node-endpoints.js';
import { randomManifests, type RandomManifest } from './random-pods.js';

const REAL = 'real-r1';
const OURS = 'ours-r1';
const NAMESPACE = 'diff-random';
/** CI's pods: the listed `random` rows are checked both ways only for these. */
const CI_SEED = 20260101;
const CI_COUNT = 20;
const seed = Number(process.env['DIFFERENTIAL_SEED'] ?? CI_SEED);
const count = Number(process.env['DIFFERENTIAL_RANDOM_PODS'] ?? CI_COUNT);
const DIFFERENCES_DOC = fileURLToPath(new URL('../../../docs/kubelet-differences.md', import.meta.url));

let kubelet: HollowKubelet | undefined;
let agent: AgentProcess | undefined;
let heir: AgentProcess | undefined;
const dirs: string[] = [];
after(async () => {
  await Promise.all([kubelet?.stop(), agent?.stop(), heir?.stop()]);
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
const cp = useControlPlane({ nodes: [REAL, OURS] });

const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

async function mirrorsOf(node: string): Promise<Map<string, V1Pod>> {
  const list = await cp.adminApi.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
  const live = list.items.filter((p) => p.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined && !p.metadata?.deletionTimestamp);
  return new Map(live.map((p) => [`${p.metadata!.namespace}/${p.metadata!.name}`, p]));
}

/** Waits until every expected mirror exists or the deadline passes; returns what exists then. */
async function awaitMirrors(node: string, expected: readonly string[], timeoutMs: number): Promise<Map<string, V1Pod>> {
  let last = new Map<string, V1Pod>();
  try {
    await waitFor(
      async () => {
        last = await mirrorsOf(node);
        return expected.every((k) => last.has(k));
      },
      `${expected.length} mirrors on ${node}`,
      { timeoutMs, intervalMs: 250 },
    );
  } catch {
    // What is missing is reported by the tests below.
  }
  return last;
}

describe(`differential: ${count} random pods (seed ${seed}) on the real kubelet and our agent`, () => {
  let manifests: RandomManifest[] = [];
  let real: Side;
  let ours: Side;
  let realMirrors = new Map<string, V1Pod>();
  let ourMirrors = new Map<string, V1Pod>();
  let realDir = '';
  let config = '';
  const key = (m: RandomManifest, node: string): string => `${m.namespace}/${m.name}-${node}`;

  before(async () => {
    process.stdout.write(`# random pods: DIFFERENTIAL_SEED=${seed} DIFFERENTIAL_RANDOM_PODS=${count}\n`);
    manifests = randomManifests({ seed, count, namespace: NAMESPACE });
    await cp.adminApi.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    const root = await mkdtemp(join(tmpdir(), 'kp-diff-random-'));
    dirs.push(root);
    realDir = join(root, 'real');
    const oursDir = join(root, 'ours');
    await Promise.all([mkdir(realDir), mkdir(oursDir)]);
    for (const m of manifests) await Promise.all([writeFile(join(realDir, m.file), m.text), writeFile(join(oursDir, m.file), m.text)]);
    config = join(root, 'config.yaml');
    await writeFile(config, stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', fileCheckFrequency: '1s' }));

    agent = startAgentProcess({ nodeName: OURS, kubeconfig: cp.cluster.nodeKubeconfigs[OURS]!, manifestDir: oursDir, extraArgs: ['--config', config] });
    kubelet = await startHollowKubelet({ cluster: cp.cluster, nodeName: REAL, staticPodPath: realDir, fileCheckFrequencyMs: 1000 });
    realMirrors = await awaitMirrors(REAL, manifests.map((m) => key(m, REAL)), 60_000);
    ourMirrors = await awaitMirrors(OURS, manifests.map((m) => key(m, OURS)), 20_000);
    const nodeUID = async (name: string): Promise<string> => (await cp.adminApi.readNode({ name })).metadata!.uid!;
    real = { nodeName: REAL, nodeUID: await nodeUID(REAL) };
    ours = { nodeName: OURS, nodeUID: await nodeUID(OURS) };

    const dump = process.env['DIFFERENTIAL_DUMP'];
    if (dump !== undefined && dump !== '') {
      await mkdir(join(dump, 'random'), { recursive: true });
      for (const m of manifests) {
        await writeFile(join(dump, 'random', m.file), m.text);
        for (const [label, mirrors, side] of [
          ['real', realMirrors, real],
          ['ours', ourMirrors, ours],
        ] as const) {
          const pod = mirrors.get(key(m, side.nodeName));
          await writeFile(join(dump, 'random', `${m.file}.${label}.json`), `${JSON.stringify(pod === undefined ? null : normaliseMirrorPod(pod, side), null, 2)}\n`);
        }
      }
    }
  });

  it('the real kubelet mirrors every generated pod (the generator makes only valid, admissible pods)', async () => {
    const missing = manifests.filter((m) => !realMirrors.has(key(m, REAL))).map((m) => m.file);
    if (missing.length > 0) {
      const log = (await kubelet!.logs()).split('\n').filter((l) => missing.some((f) => l.includes(f.replace(/\.(yaml|json)$/, ''))));
      process.stderr.write(`--- kubelet log lines about the missing pods ---\n${log.slice(-40).join('\n')}\n`);
    }
    assert.deepEqual(missing, [], `pods the real kubelet did not mirror (seed ${seed})`);
  });

  it('mirror pods: metadata and spec differ exactly as docs/kubelet-differences.md lists (area random)', async (t) => {
    const pairs = manifests.map((m) => {
      const pick = (mirrors: Map<string, V1Pod>, side: Side): Json | undefined => {
        const pod = mirrors.get(key(m, side.nodeName));
        return pod === undefined ? undefined : normaliseMirrorPod(pod, side);
      };
      return { subject: m.file, real: pick(realMirrors, real), ours: pick(ourMirrors, ours) };
    });
    const found = compareArea('random', pairs);
    for (const d of found) t.diagnostic(describeDifference(d));
    const listed = parseListedDifferences(await readFile(DIFFERENCES_DOC, 'utf8'));
    const { unlisted, stale } = reconcile(found, listed, ['random']);
    assert.deepEqual(
      unlisted.map(describeDifference),
      [],
      `differences docs/kubelet-differences.md does not list (seed ${seed}; fix them or list them with their reason)`,
    );
    if (seed === CI_SEED && count === CI_COUNT) {
      assert.deepEqual(stale, [], 'listed random differences that no longer occur with CI seed: remove them from docs/kubelet-differences.md');
    }
  });

  it("hand-over: in the kubelet's place our agent holds the same static pods (area static) and adopts its mirrors", async (t) => {
    const held = await readPods(kubelet!.ports.readOnly);
    await kubelet!.stop();
    const port = await freePort();
    heir = startAgentProcess({
      nodeName: REAL,
      kubeconfig: cp.cluster.nodeKubeconfigs[REAL]!,
      manifestDir: realDir,
      extraArgs: ['--config', config, '--read-only-port', String(port)],
    });
    const ours = await waitFor(
      async () => {
        const pods = await readPods(port).catch(() => new Map());
        return manifests.every((m) => pods.has(`${m.name}-${REAL}`)) ? pods : undefined;
      },
      "our agent holding every manifest in the kubelet's place",
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    const pairs = manifests.map((m) => {
      const pick = (pods: Map<string, unknown>): Json | undefined => {
        const pod = pods.get(`${m.name}-${REAL}`);
        return pod === undefined ? undefined : normaliseStaticPod(pod);
      };
      return { subject: m.file, real: pick(held), ours: pick(ours) };
    });
    // Once a manifest written after the start is mirrored, the agent has dealt with the
    // kubelet's mirrors too: each must still be the same object.
    const canary = 'zz-handover-canary';
    const canaryPod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: canary, namespace: NAMESPACE },
      spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
    };
    await writeFile(join(realDir, `${canary}.yaml`), stringify(canaryPod));
    const adopted = await awaitMirrors(REAL, [...manifests.map((m) => key(m, REAL)), `${NAMESPACE}/${canary}-${REAL}`], 20_000);
    assert.ok(adopted.has(`${NAMESPACE}/${canary}-${REAL}`), "our agent mirrors a new manifest in the kubelet's place");
    // The kubelet restarted keeps its mirrors (the events scenario "restart" checks it).
    const mirrorFates = manifests.flatMap((m): Difference[] => {
      const kept = adopted.get(key(m, REAL))?.metadata?.uid === realMirrors.get(key(m, REAL))?.metadata?.uid;
      return kept ? [] : [{ area: 'static', subject: m.file, path: 'mirror', real: 'adopted', ours: 'recreated' }];
    });

    const found = [...compareArea('static', pairs), ...mirrorFates];
    for (const d of found) t.diagnostic(describeDifference(d));
    const listed = parseListedDifferences(await readFile(DIFFERENCES_DOC, 'utf8'));
    const { unlisted, stale } = reconcile(found, listed, ['static']);
    assert.deepEqual(unlisted.map(describeDifference), [], `static pods or hand-over differ (seed ${seed}; fix them or list them with their reason)`);
    if (seed === CI_SEED && count === CI_COUNT) {
      assert.deepEqual(stale, [], 'listed static differences that no longer occur with CI seed: remove them from docs/kubelet-differences.md');
    }
  });
});
