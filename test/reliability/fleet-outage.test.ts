// API server outage under a fleet (docs/fleet.md): 20 nodes (CI; 50 at full scale) share one
// manifest directory through one process; the control plane is stopped while they converge,
// the manifests change during the outage, and after the restart every node ends with exactly
// its mirrors (one per static pod, right hash and image, no orphan).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFleet } from '../../src/fleet/fleet.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { LogCapture, ManifestDir, SCALE, diffMirrors, pick, prng, seedFromEnv, stopsAfterAll, tokensOf, MIRROR } from './helpers.js';

const NODES = pick(20, 50);
const PODS = 5;
const BOUND_MS = 90_000;
const cp = useControlPlane({ nodes: ['fo-unused'] });
const logs = new LogCapture('fleet-outage');
const stops = stopsAfterAll();

it(`fleet outage (${SCALE}): ${NODES} nodes × ${PODS} static pods, the API server stopped while they converge`, async (t) => {
  const rnd = prng(seedFromEnv());
  const dir = await mkdtemp(join(tmpdir(), 'kp-rel-fleet-'));
  const manifestDir = await mkdtemp(join(dir, 'm-'));
  const pods = new ManifestDir(manifestDir, cp.namespace, 'fp');
  await pods.add(PODS);
  const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
  const config = resolveFleetConfig({ kubeconfig, readOnlyPort: 0, templates: [{ name: 'fo-{i}', count: NODES, staticPodPath: manifestDir }] }, {});
  const fleet = await createFleet({ config, logger: logs.logger('fleet'), shutdownTimeoutMs: 2000 });
  stops.push(() => fleet.stop());
  const names = config.nodes.map((n) => n.name);
  const mirrorsNow = async (): Promise<number> =>
    (await cp.adminApi.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName!=' })).items.filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined).length;

  await fleet.start();
  // Stop the control plane while the mirrors are being created.
  const target = Math.max(1, rnd.int((NODES * PODS) / 2));
  await waitFor(async () => (await mirrorsNow()) >= target, `${target} mirrors under way`, { timeoutMs: 60_000, intervalMs: 20 }).catch(() => undefined);
  await cp.cluster.stop();
  await pods.change(rnd, 2, 'nginx:1.29');
  await cp.cluster.start();

  const started = performance.now();
  let last = '';
  await waitFor(
    async () => {
      try {
        const all = (await cp.adminApi.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName!=' })).items;
        const problems: string[] = [];
        for (const node of names) {
          const diff = diffMirrors(all.filter((p) => p.spec?.nodeName === node), pods.expected(node));
          if (diff !== '') problems.push(`${node}: ${diff}`);
        }
        last = problems.slice(0, 3).join(' | ');
        return problems.length === 0;
      } catch (err) {
        last = `list failed: ${(err as Error).message}`;
        return false;
      }
    },
    `every node's mirrors exact (last: ${last})`,
    { timeoutMs: BOUND_MS, intervalMs: 250 },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last difference: ${last}`);
  });
  const ms = Math.round(performance.now() - started);
  const total = await mirrorsNow();
  assert.equal(total, NODES * pods.images.size, 'one mirror per static pod per node');
  t.diagnostic(`seed ${rnd.seed}: ${NODES} nodes, ${pods.images.size} static pods each, ${total} mirrors exact ${ms} ms after the restart (bound ${BOUND_MS} ms)`);
  await fleet.stop();
  const lines = await logs.assertNoSecrets(tokensOf([kubeconfig, cp.cluster.adminKubeconfig]));
  t.diagnostic(`log scan: ${lines} lines, no token`);
});
