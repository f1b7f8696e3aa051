// Churn: thousands of random operations — add, edit and remove manifests (file and HTTP
// sources), delete or edit mirror pods through the API, restart the HTTP manifest server —
// with the invariants checked at a checkpoint every CHECK_EVERY operations (one mirror per static
// pod with the right hash and image, no orphan after housekeeping, the pod manager's UID
// translation consistent with the API) and the final state checked exactly. The HTTP source
// needs a secret header; the logs are scanned for it and for the tokens at the end.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { useControlPlane } from '../helpers/control-plane.js';
import { LogCapture, stopsAfterAll, SCALE, convergeExactly, manifest, pick, podsOnNode, prng, seedFromEnv, startAgent, tokensOf, MIRROR, type Expected } from './helpers.js';

const NODE = 'rel-churn';
const cp = useControlPlane({ nodes: [NODE] });
const logs = new LogCapture('churn');
const stops = stopsAfterAll();

const OPS = pick(1_000, 10_000);
const CHECK_EVERY = 100;
const HEADER = 'X-Manifest-Token';
const SECRET = randomBytes(24).toString('hex');

function podJSON(name: string, namespace: string, image: string): object {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [{ name: 'main', image }] } };
}

it(`churn (${SCALE}): ${OPS} random operations, invariants every ${CHECK_EVERY}`, async (t) => {
  const rnd = prng(seedFromEnv());
  const ns = cp.namespace;
  const dir = await mkdtemp(join(tmpdir(), 'kp-rel-churn-'));
  const fileImages = new Map<string, string>();
  const httpImages = new Map<string, string>();
  let unauthorized = 0;

  // The HTTP manifest server: a PodList, only with the secret header.
  let server: Server | undefined;
  let port = 0;
  const listen = async (): Promise<void> => {
    server = createServer((req, res) => {
      if (req.headers[HEADER.toLowerCase()] !== SECRET) {
        unauthorized++;
        res.writeHead(401).end();
        return;
      }
      const items = [...httpImages].map(([n, image]) => podJSON(n, ns, image));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items }));
    });
    await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  };
  const close = async (): Promise<void> => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  };
  stops.push(close);
  await listen();
  const configFile = join(dir, 'kubelet.json');
  await writeFile(configFile, JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', httpCheckFrequency: '500ms' }));
  const manifests = join(dir, 'manifests');
  await (await import('node:fs/promises')).mkdir(manifests);

  // Instant lifecycle: this test is about what sources, merge and mirror sync make of random
  // operations, checked every few operations; under the kubelet lifecycle every edit would add
  // 10–15 s before its checkpoint converges (test/integration/lifecycle.test.ts covers that).
  const agent = await startAgent({
    kubeconfig: cp.cluster.nodeKubeconfigs[NODE]!,
    node: NODE,
    flags: ['--simulated-lifecycle', 'instant', '--config', configFile, '--pod-manifest-path', manifests, '--manifest-url', `http://127.0.0.1:${port}/pods`, '--manifest-url-header', `${HEADER}:${SECRET}`],
    logger: logs.logger('agent'),
    housekeepingIntervalMs: 200,
  });
  stops.push(() => agent.stop());

  const counts: Record<string, number> = {};
  const mirrorNames = (): string[] => [...fileImages.keys(), ...httpImages.keys()].map((n) => `${n}-${NODE}`);
  let nextFile = 0;
  let nextHttp = 0;
  const ops: Array<[string, number, () => Promise<void>]> = [
    ['add-file', 20, async () => {
      const n = `f-${nextFile++}`;
      fileImages.set(n, 'nginx:1.27');
      await writeFile(join(manifests, `${n}.yaml`), manifest(n, ns, 'nginx:1.27'));
    }],
    ['edit-file', 15, async () => {
      const names = [...fileImages.keys()];
      if (names.length === 0) return;
      const n = names[rnd.int(names.length)]!;
      const image = `nginx:1.${rnd.int(50)}`;
      fileImages.set(n, image);
      await writeFile(join(manifests, `${n}.yaml`), manifest(n, ns, image));
    }],
    ['remove-file', 10, async () => {
      const names = [...fileImages.keys()];
      if (names.length === 0) return;
      const n = names[rnd.int(names.length)]!;
      fileImages.delete(n);
      await rm(join(manifests, `${n}.yaml`));
    }],
    ['add-http', 8, async () => void httpImages.set(`h-${nextHttp++}`, 'nginx:1.27')],
    ['edit-http', 5, async () => {
      const names = [...httpImages.keys()];
      if (names.length > 0) httpImages.set(names[rnd.int(names.length)]!, `nginx:1.${rnd.int(50)}`);
    }],
    ['remove-http', 5, async () => {
      const names = [...httpImages.keys()];
      if (names.length > 0) httpImages.delete(names[rnd.int(names.length)]!);
    }],
    ['delete-mirror', 10, async () => {
      const names = mirrorNames();
      if (names.length === 0) return;
      const name = names[rnd.int(names.length)]!;
      const force = rnd.int(2) === 0;
      await cp.adminApi.deleteNamespacedPod({ namespace: ns, name, ...(force ? { gracePeriodSeconds: 0 } : {}) }).catch(() => undefined);
    }],
    ['edit-mirror', 7, async () => {
      const names = mirrorNames();
      if (names.length === 0) return;
      const name = names[rnd.int(names.length)]!;
      try {
        const pod = await cp.adminApi.readNamespacedPod({ namespace: ns, name });
        pod.metadata!.labels = { ...pod.metadata?.labels, touched: String(rnd.int(1000)) };
        await cp.adminApi.replaceNamespacedPod({ namespace: ns, name, body: pod });
      } catch {
        // Gone or changed meanwhile: that is churn too.
      }
    }],
    ['restart-http', 2, async () => {
      await close();
      await listen();
    }],
  ];
  const totalWeight = ops.reduce((a, [, w]) => a + w, 0);
  const pickOp = (): [string, () => Promise<void>] => {
    let r = rnd.int(totalWeight);
    for (const [name, w, fn] of ops) {
      if (r < w) return [name, fn];
      r -= w;
    }
    throw new Error('unreachable');
  };

  const expected = (): Expected[] =>
    [...fileImages, ...httpImages].map(([n, image]) => ({ name: `${n}-${NODE}`, namespace: ns, image }));
  const convergence: number[] = [];
  let translationsChecked = 0;
  for (let i = 1; i <= OPS; i++) {
    const [name, fn] = pickOp();
    counts[name] = (counts[name] ?? 0) + 1;
    await fn();
    if (i % CHECK_EVERY !== 0 && i !== OPS) continue;
    convergence.push(Math.round(await convergeExactly(cp.adminApi, NODE, expected(), 60_000)));
    // Translation: each mirror's UID resolves to its static pod's UID (its config.mirror hash).
    const mirrors = (await podsOnNode(cp.adminApi, NODE)).filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined);
    for (const m of mirrors) {
      const staticUID = m.metadata?.annotations?.[MIRROR];
      const translated = agent.podManager.translatePodUID(m.metadata!.uid! as never);
      // The pod manager learns the mirror through the watch a moment after the list shows it.
      if (translated !== staticUID) {
        await convergeExactly(cp.adminApi, NODE, expected(), 10_000);
      }
      assert.equal(agent.podManager.translatePodUID(m.metadata!.uid! as never), staticUID, `${m.metadata?.name}: translation after op ${i}`);
      translationsChecked++;
    }
    assert.equal(agent.podManager.getPodsAndMirrorPods().orphanedMirrorPodFullNames.length, 0, `no orphan after op ${i}`);
  }
  const final = (await podsOnNode(cp.adminApi, NODE)).filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined);
  assert.equal(final.length, fileImages.size + httpImages.size, 'exactly one mirror per static pod at the end');
  assert.equal(unauthorized, 0, 'the HTTP source always sent the header');
  const sorted = [...convergence].sort((a, b) => a - b);
  t.diagnostic(
    `seed ${rnd.seed}: ${OPS} operations (${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}); ` +
      `${convergence.length} checkpoints, all exact; ${translationsChecked} translations checked; final ${final.length} mirrors ` +
      `(${fileImages.size} file, ${httpImages.size} http), 0 lost, 0 duplicated, 0 orphans; ` +
      `convergence per checkpoint p50 ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms`,
  );
  await agent.stop();
  await close();
  const lines = await logs.assertNoSecrets([SECRET, ...tokensOf([cp.cluster.nodeKubeconfigs[NODE]!, cp.cluster.adminKubeconfig])]);
  t.diagnostic(`log scan: ${lines} lines, no token, no header value`);
});
