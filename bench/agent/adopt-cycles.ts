// Adopted nodes, created and deleted in cycles (docs/fleet.md, "Nodes others create"): a fleet
// whose one selector template runs one static pod per node; each cycle creates N Nodes at once
// as an autoscaler would, waits until all are Ready, deletes them, waits until the fleet has
// released them all, then past the garbage collector's deletion of their mirrors and one pass of
// the runtime's container GC (every minute). The fleet runs in this process, started with
// --expose-gc, so the heap is read after full collections: before the first cycle, with the
// nodes adopted, and after their release. A heap after release that grows from cycle to cycle
// would be memory kept for nodes that are gone.
//
//   npm run build:test && node --expose-gc build/bench/agent/adopt-cycles.js [N=100] [cycles=3]
//
// Standalone (not part of `npm run bench`); prints one JSON line per cycle with the load average.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import { startLocalCluster } from '../../src/cluster/local-cluster.js';
import { createFleet } from '../../src/fleet/fleet.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { noopLogger } from '../../src/logger.js';
import { kubeConfigFromFile, manifestYaml, tempDir } from './common.js';

const KWOK = 'kwok.x-k8s.io/node';
/** Past the garbage collector and one container GC pass of the simulated runtime (every 60 s). */
const AFTER_RELEASE_MS = 65_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
const heapMiB = async (): Promise<number> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await delay(200);
  }
  return Number((process.memoryUsage().heapUsed / 2 ** 20).toFixed(1));
};

async function main(): Promise<void> {
  const nodes = Number(process.argv[2] ?? 100);
  const cycles = Number(process.argv[3] ?? 3);
  const cluster = await startLocalCluster({ nodes: [], scheduler: false });
  try {
    const api = kubeConfigFromFile(cluster.adminKubeconfig).makeApiClient(CoreV1Api);
    const dir = await tempDir('kp-bench-adopt-');
    await mkdir(join(dir, 'manifests'));
    await writeFile(join(dir, 'manifests', 'p.yaml'), manifestYaml('p', 'default'));
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
    const config = resolveFleetConfig({ kubeconfig, templates: [{ annotationSelector: `${KWOK}=fake`, staticPodPath: join(dir, 'manifests') }] }, {});
    const fleet = await createFleet({ config, logger: noopLogger, readOnlyPort: 0, shutdownTimeoutMs: 2000 });
    await fleet.start();
    await delay(3000);
    const before = await heapMiB();
    for (let cycle = 1; cycle <= cycles; cycle++) {
      const names = Array.from({ length: nodes }, () => `adopt-${randomBytes(4).toString('hex')}`);
      const t0 = performance.now();
      await Promise.all(
        names.map((name) =>
          api.createNode({ body: { metadata: { name, annotations: { [KWOK]: 'fake' } }, spec: { providerID: `kwok://${name}` }, status: { capacity: { cpu: '4', memory: '16Gi', pods: '110' } } } }),
        ),
      );
      const createdMs = performance.now() - t0;
      const wanted = new Set(names);
      for (;;) {
        const list = await api.listNode();
        const ready = list.items.filter((n) => wanted.has(n.metadata?.name ?? '') && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
        if (ready.length === nodes) break;
        await delay(100);
      }
      const readyMs = performance.now() - t0;
      await delay(5000);
      const adopted = await heapMiB();
      const t1 = performance.now();
      await Promise.all(names.map((name) => api.deleteNode({ name })));
      while (fleet.running().length > 0) await delay(20);
      const releasedMs = performance.now() - t1;
      await delay(AFTER_RELEASE_MS);
      const released = await heapMiB();
      const load = loadavg().map((l) => Number(l.toFixed(1)));
      console.log(JSON.stringify({ cycle, nodes, createdMs: Math.round(createdMs), allReadyMs: Math.round(readyMs), releasedMs: Math.round(releasedMs), heapMiB: { before, adopted, released }, load }));
    }
    await fleet.stop();
  } finally {
    await cluster.stop();
  }
}

await main();
