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
import { LogCapture, ManifestDir, SCALE, TerminationWatch, convergeExactly, pick, podsOnNode, prng, seedFromEnv, startAgent, stopsAfterAll, tokensOf, MIRROR } from './helpers.js';
import { SIMULATION_ANNOTATIONS } from '../../src/runtime/simulation-annotations.js';

const NODE = 'rel-outage';
// The terminations-in-flight case runs on a node of its own.
const TERM_NODE = 'rel-outage-term';
const cp = useControlPlane({ nodes: [NODE, TERM_NODE] });
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

// Static pods that take seconds to stop (grace 8 s, each container exiting 5 s after SIGTERM):
// the API server stops while removed and edited pods are stopping, so their final status
// writes, mirror deletions and replacements all fail and must be retried; more pods are removed
// and edited during the outage. Once it is back, the agent must end exact, each mirror with its
// manifest's hash and the final status of a running pod, and none left of a removed pod.
const TERM_PODS = pick(20, 60);
const TERM_OUTAGES = pick(2, 4);
const STOPPING = { terminationGracePeriodSeconds: 8, annotations: { [SIMULATION_ANNOTATIONS.stopSeconds]: '5' } };

it(`API server outage (${SCALE}): ${TERM_OUTAGES} stops while static pods with a 5 s stop are terminating`, async (t) => {
  const rnd = prng(seedFromEnv());
  const dir = await mkdtemp(join(tmpdir(), 'kp-rel-outage-term-'));
  const manifests = new ManifestDir(dir, cp.namespace, 't', STOPPING);
  await manifests.add(TERM_PODS);
  const watch = new TerminationWatch();
  const agent = await startAgent({ kubeconfig: cp.cluster.nodeKubeconfigs[TERM_NODE]!, node: TERM_NODE, flags: ['--pod-manifest-path', dir], logger: logs.logger('agent-term', watch) });
  stops.push(() => agent.stop());
  const inFlightAtStop: number[] = [];
  const converged: number[] = [];
  for (let round = 0; round < TERM_OUTAGES; round++) {
    await convergeExactly(cp.adminApi, TERM_NODE, manifests.expected(TERM_NODE), BOUND_MS, { final: true });
    const begun = watch.begun;
    await manifests.change(rnd, 3, `nginx:1.${70 + round}`);
    await waitFor(() => (watch.begun - begun >= 3 && watch.inFlight >= 3) || undefined, 'at least 3 terminations in flight', { timeoutMs: 20_000, intervalMs: 10 });
    inFlightAtStop.push(watch.inFlight);
    await cp.cluster.stop();
    // While it is down more pods change, and the stops finish (their status writes fail) or,
    // after a short outage, are still under way when it is back.
    await manifests.change(rnd, 2, `nginx:1.${40 + round}`);
    await new Promise((r) => setTimeout(r, rnd.int(4000)));
    await cp.cluster.start();
    converged.push(Math.round(await convergeExactly(cp.adminApi, TERM_NODE, manifests.expected(TERM_NODE), BOUND_MS, { final: true })));
    assert.equal(watch.inFlight, 0, 'every termination finished');
  }
  const mirrors = (await podsOnNode(cp.adminApi, TERM_NODE)).filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined);
  assert.equal(mirrors.length, manifests.images.size, 'one mirror per static pod, none left of the removed ones');
  for (const m of mirrors) {
    assert.equal(agent.podManager.translatePodUID(m.metadata!.uid! as never), m.metadata?.annotations?.[MIRROR], `${m.metadata?.name}: translation`);
  }
  t.diagnostic(
    `seed ${rnd.seed}: ${TERM_OUTAGES} outages begun with ${inFlightAtStop.join(', ')} terminations in flight; ${manifests.images.size} static pods at the end ` +
      `(${manifests.created} created); ${mirrors.length} mirrors, exact, all Running and Ready; convergence after each restart (ms): ${converged.join(', ')}`,
  );
  await agent.stop();
  const lines = await logs.assertNoSecrets(tokensOf([cp.cluster.nodeKubeconfigs[TERM_NODE]!, cp.cluster.adminKubeconfig]));
  t.diagnostic(`log scan: ${lines} lines, no token`);
});
