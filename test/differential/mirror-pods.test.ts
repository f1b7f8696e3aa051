// Differential test, first step: the same static pod manifests go to the real kubelet (the
// hollow kubelet, node real-…) and to our agent (node ours-…) on one control plane, and the
// mirror pods each one creates are compared (metadata and spec) after normalising what must
// differ between two nodes. Every difference left must be listed in
// docs/kubelet-differences.md: a new one fails, and a listed one that no longer occurs must be
// removed from the list.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp as copy, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { V1Pod } from '@kubernetes/client-node';
import { parse } from 'yaml';

import { startHollowKubelet, type HollowKubelet } from '../helpers/hollow-kubelet.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { assertListedDifferences, pairMirrors, readCorpus, type CorpusEntry } from './corpus.js';
import {
  compareArea,
  describeDifference,
  normaliseMirrorPod,
  parseListedDifferences,
  reconcile,
  toJson,
  type Difference,
  type Json,
  type Side,
} from './compare.js';

const REAL = 'real-d1';
const OURS = 'ours-d1';
// Registered before useControlPlane's own `after`, so both stop before the cluster.
let kubelet: HollowKubelet | undefined;
let agent: AgentProcess | undefined;
const manifestDirs: string[] = [];
after(async () => {
  await Promise.all([kubelet?.stop(), agent?.stop()]);
  await Promise.all(manifestDirs.map((d) => rm(d, { recursive: true, force: true })));
});
const cp = useControlPlane({ nodes: [REAL, OURS] });

// Sources, not build output: the corpus and the list are read where they are edited.
const CORPUS = fileURLToPath(new URL('../../../test/differential/corpus/', import.meta.url));
/** Namespaces the corpus uses besides default and kube-system. */
const CORPUS_NAMESPACES = ['diff-corpus'];



const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

async function mirrorsOf(node: string): Promise<Map<string, V1Pod>> {
  const list = await cp.adminApi.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
  const live = list.items.filter((p) => p.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined && !p.metadata?.deletionTimestamp);
  return new Map(live.map((p) => [`${p.metadata!.namespace}/${p.metadata!.name}`, p]));
}

// DIFFERENTIAL_DUMP=<dir> writes each normalised pair to <dir>/<area>/<subject>.{real,ours}.json
// for a look with diff(1).


describe('differential: real kubelet vs our agent', () => {
  let corpus: CorpusEntry[] = [];
  let real: Side;
  let ours: Side;
  let realMirrors: Map<string, V1Pod>;
  let ourMirrors: Map<string, V1Pod>;

  before(async () => {
    corpus = await readCorpus([CORPUS]);
    for (const name of CORPUS_NAMESPACES) await cp.adminApi.createNamespace({ body: { metadata: { name } } });
    const realDir = await mkdtemp(join(tmpdir(), 'kp-diff-real-'));
    const oursDir = await mkdtemp(join(tmpdir(), 'kp-diff-ours-'));
    manifestDirs.push(realDir, oursDir);
    await copy(CORPUS, realDir, { recursive: true });
    await copy(CORPUS, oursDir, { recursive: true });

    agent = startAgentProcess({ nodeName: OURS, kubeconfig: cp.cluster.nodeKubeconfigs[OURS]!, manifestDir: oursDir });
    kubelet = await startHollowKubelet({ cluster: cp.cluster, nodeName: REAL, staticPodPath: realDir, fileCheckFrequencyMs: 1000 });

    const expect = (node: string): string[] => corpus.map((c) => `${c.namespace}/${c.name}-${node}`);
    const all = async (node: string): Promise<Map<string, V1Pod> | undefined> => {
      const m = await mirrorsOf(node);
      return expect(node).every((k) => m.has(k)) ? m : undefined;
    };
    try {
      realMirrors = await waitFor(() => all(REAL), `the real kubelet's ${corpus.length} mirrors`, { timeoutMs: 90_000, intervalMs: 250 });
      ourMirrors = await waitFor(() => all(OURS), `our agent's ${corpus.length} mirrors`, { timeoutMs: 30_000, intervalMs: 250 });
    } catch (err) {
      process.stderr.write(`--- hollow kubelet log (tail) ---\n${(await kubelet.logs()).split('\n').slice(-40).join('\n')}\n`);
      process.stderr.write(`--- agent log (tail) ---\n${agent.logs().split('\n').slice(-40).join('\n')}\n`);
      throw err;
    }
    const nodeUID = async (name: string): Promise<string> => (await cp.adminApi.readNode({ name })).metadata!.uid!;
    real = { nodeName: REAL, nodeUID: await nodeUID(REAL) };
    ours = { nodeName: OURS, nodeUID: await nodeUID(OURS) };
  });

  it('the normaliser removes what must differ and keeps the rest', () => {
    // Guards the comparison itself: after normalisation nothing node-specific is left, and
    // a mirror is still compared field by field.
    for (const [side, mirrors] of [
      [real, realMirrors],
      [ours, ourMirrors],
    ] as const) {
      for (const pod of mirrors.values()) {
        const text = JSON.stringify(normaliseMirrorPod(pod, side));
        assert.ok(!text.includes(side.nodeName), `no node name left in ${pod.metadata?.name}`);
        assert.ok(!text.includes(side.nodeUID), `no node UID left in ${pod.metadata?.name}`);
        assert.ok(!text.includes(pod.metadata!.uid!), `no mirror UID left in ${pod.metadata?.name}`);
        assert.match(text, /"containers":\[/);
      }
    }
  });

  it('mirror pods: metadata and spec differ exactly as docs/kubelet-differences.md lists', async (t) => {
    const pairs = pairMirrors(corpus, { real, ours }, { real: realMirrors, ours: ourMirrors }, normaliseMirrorPod);
    await assertListedDifferences(t, 'mirror', pairs);
  });

  it('the comparison sees a difference when there is one', () => {
    // A planted difference on a copy of a real mirror must come out under its key.
    const [, sample] = [...realMirrors.entries()][0]!;
    const changed = toJson(sample) as { metadata: { annotations: Record<string, string> } };
    changed.metadata.annotations['planted'] = 'yes';
    const found = compareArea('mirror', [{ subject: 'x.yaml', real: normaliseMirrorPod(sample, real), ours: normaliseMirrorPod(changed, real) }]);
    assert.deepEqual(
      found.map((d) => `${describeDifference(d)}`),
      ['mirror:x.yaml metadata.annotations.planted: real (absent), ours "yes"'],
    );
  });
});
