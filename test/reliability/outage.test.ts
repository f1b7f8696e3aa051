// API server outage: the control plane (etcd + kube-apiserver) is stopped while the agent is
// mirroring a burst of static pods, the manifests change during the outage, and it is started
// again; after each restart the agent converges to the exact state (one mirror per static pod
// with the right hash and image, no orphan). The convergence time after each restart is printed.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { LogCapture, ManifestDir, SCALE, convergeExactly, pick, podsOnNode, prng, seedFromEnv, startAgent, stopsAfterAll, tokensOf, MIRROR } from './helpers.js';

const NODE = 'rel-outage';
const cp = useControlPlane({ nodes: [NODE] });
const logs = new LogCapture('outage');
const stops = stopsAfterAll();

const PODS = 200;
const OUTAGES = pick(2, 5);
/** The bound asserted for convergence after a restart (the agent's retry backoff caps at 30 s). */
const BOUND_MS = 60_000;

it(`API server outage (${SCALE}): ${OUTAGES} stops and restarts while ${PODS} static pods are mirrored`, async (t) => {
  const rnd = prng(seedFromEnv());
  const dir = await mkdtemp(join(tmpdir(), 'kp-rel-outage-'));
  const manifests = new ManifestDir(dir, cp.namespace, 'p');
  const agent = await startAgent({ kubeconfig: cp.cluster.nodeKubeconfigs[NODE]!, node: NODE, flags: ['--pod-manifest-path', dir], logger: logs.logger('agent') });
  stops.push(() => agent.stop());

  const bounds: number[] = [];
  for (let round = 0; round < OUTAGES; round++) {
    // A burst of new static pods; the outage starts while the agent is mirroring them.
    const burst = round === 0 ? PODS : 40;
    await manifests.add(burst);
    const target = Math.max(1, rnd.int(Math.floor(burst / 2)));
    const before = (await podsOnNode(cp.adminApi, NODE)).length;
    await waitFor(async () => (await podsOnNode(cp.adminApi, NODE)).length >= before + target - 40 || undefined, 'mirroring under way', { timeoutMs: 30_000, intervalMs: 20 }).catch(() => undefined);
    await cp.cluster.stop();
    // While the API server is down: some manifests change, some go away, some are new.
    await manifests.change(rnd, 10, `nginx:1.${28 + round}`);
    await cp.cluster.start();
    const ms = await convergeExactly(cp.adminApi, NODE, manifests.expected(NODE), BOUND_MS);
    bounds.push(Math.round(ms));
  }
  const mirrors = (await podsOnNode(cp.adminApi, NODE)).filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined);
  assert.equal(mirrors.length, manifests.images.size, 'one mirror per static pod');
  assert.equal(new Set(mirrors.map((m) => m.metadata?.name)).size, mirrors.length, 'no duplicates');
  for (const m of mirrors) {
    assert.equal(agent.podManager.translatePodUID(m.metadata!.uid! as never), m.metadata?.annotations?.[MIRROR], `${m.metadata?.name}: translation`);
  }
  t.diagnostic(
    `seed ${rnd.seed}: ${OUTAGES} outages, ${manifests.images.size} static pods at the end (${manifests.created} created, ${manifests.created - manifests.images.size} removed), ` +
      `${mirrors.length} mirrors, 0 duplicated, 0 lost; convergence after each restart (ms): ${bounds.join(', ')}; max ${Math.max(...bounds)} ms (bound ${BOUND_MS} ms)`,
  );
  await agent.stop();
  const lines = await logs.assertNoSecrets(tokensOf([cp.cluster.nodeKubeconfigs[NODE]!, cp.cluster.adminKubeconfig]));
  t.diagnostic(`log scan: ${lines} lines, no token`);
});
