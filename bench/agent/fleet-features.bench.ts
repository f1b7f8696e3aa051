// What the simulator features cost a fleet per node (docs/fleet.md): N nodes × 5 static pods
// converged once plain, then once with each feature on, each on a fresh control plane
// (fleet-process.ts): scenarios (a usage for every pod, a fifth flapping readiness, a tenth
// crash-looping), a kubelet port per node (`kubeletPorts`, with one serving certificate, as the
// docs advise for large fleets), and the nodes adopted by an annotation selector from Nodes the
// harness creates, instead of named. Memory after a full GC and CPU over an idle window; each
// feature's cost per node is its difference from the plain fleet ÷ N.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CoreV1Api } from '@kubernetes/client-node';
import { startLocalCluster } from '../../src/cluster/local-cluster.js';
import { makeCA } from '../../test/helpers/certificates.js';
import { tempDir, pool } from './common.js';
import { FLEET_PODS_PER_NODE } from './fleet.bench.js';
import { convergeFleet, type ConvergeOptions, type Converged } from './fleet-process.js';

export const FLEET_FEATURES = ['plain', 'scenarios', 'kubelet ports', 'adopted'] as const;
export type FleetFeature = (typeof FLEET_FEATURES)[number];

export interface FleetFeatureRun extends Converged {
  feature: FleetFeature;
  nodes: number;
}

const PREFIX = 'ff-';
const ADOPT_ANNOTATION = 'kwok.x-k8s.io/node';

/** The scenarios the `scenarios` run configures: one of each cost, a setting, a status that flips, restarts. */
const SCENARIOS = [
  { name: 'usage-all', usage: { cpu: '80%', memory: '64Mi' } },
  { name: 'flaky-fifth', fraction: 0.2, readiness: { flapPeriod: '30s' } },
  { name: 'crash-tenth', fraction: 0.1, exit: { code: 1, after: '60s' } },
];

async function featureOptions(feature: FleetFeature, nodes: number): Promise<Partial<ConvergeOptions>> {
  switch (feature) {
    case 'plain':
      return {};
    case 'scenarios':
      return { fleet: { scenarios: SCENARIOS } };
    case 'kubelet ports': {
      const dir = await tempDir('kp-bench-ff-cert-');
      const serving = makeCA('fleet-bench-ca').sign('fleet-bench-serving', [], 'server');
      await writeFile(join(dir, 'tls.crt'), serving.cert);
      await writeFile(join(dir, 'tls.key'), serving.key);
      return { fleet: { kubeletPorts: true, address: '127.0.0.1', tlsCertFile: join(dir, 'tls.crt'), tlsPrivateKeyFile: join(dir, 'tls.key') } };
    }
    case 'adopted':
      return {
        selector: { annotationSelector: `${ADOPT_ANNOTATION}=fake` },
        beforeFork: async (admin: CoreV1Api) => {
          await pool(
            Array.from({ length: nodes }, (_, i) => `${PREFIX}${i}`),
            32,
            async (name) => {
              await admin.createNode({ body: { metadata: { name, annotations: { [ADOPT_ANNOTATION]: 'fake' }, labels: { 'kubernetes.io/hostname': name } } } });
            },
          );
        },
      };
  }
}

/** Each feature in turn, on a fresh control plane each. */
export async function runFleetFeatures(nodes: number, idleWindowMs: number): Promise<FleetFeatureRun[]> {
  const runs: FleetFeatureRun[] = [];
  for (const feature of FLEET_FEATURES) {
    console.error(`fleet features: ${nodes} nodes, ${feature}, on a fresh control plane…`);
    const cluster = await startLocalCluster({ nodes: [] });
    try {
      const options = await featureOptions(feature, nodes);
      const converged = await convergeFleet(cluster, { nodes, podsPerNode: FLEET_PODS_PER_NODE, prefix: PREFIX, namespace: 'fleet-features', idleWindowMs, ...options });
      runs.push({ feature, nodes, ...converged });
    } finally {
      await cluster.dispose();
    }
  }
  return runs;
}

export function fleetFeaturesTable(runs: readonly FleetFeatureRun[]): string {
  const plain = runs.find((r) => r.feature === 'plain');
  const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  const perNode = (r: FleetFeatureRun, bytes: (x: FleetFeatureRun) => number): string => (plain === undefined || r === plain ? '–' : `${((bytes(r) - bytes(plain)) / r.nodes / 1024).toFixed(1)} KiB`);
  const cpuPerNode = (r: FleetFeatureRun): string =>
    plain === undefined || r === plain || r.idleCpuPercent === undefined || plain.idleCpuPercent === undefined ? '–' : `${((r.idleCpuPercent - plain.idleCpuPercent) / r.nodes).toFixed(4)} %`;
  return [
    `| feature | nodes × static pods | all Nodes Ready | all mirrors Running | RSS | heap used | idle CPU | RSS per node beyond plain | heap per node beyond plain | idle CPU per node beyond plain |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...runs.map(
      (r) =>
        `| ${r.feature} | ${r.nodes.toLocaleString('en-US')} × ${FLEET_PODS_PER_NODE} | ${(r.readyMs / 1000).toFixed(1)} s | ${(r.runningMs / 1000).toFixed(1)} s | ${mib(r.rssBytes)} | ${mib(r.heapUsedBytes)} | ${r.idleCpuPercent ?? '–'} % | ${perNode(r, (x) => x.rssBytes)} | ${perNode(r, (x) => x.heapUsedBytes)} | ${cpuPerNode(r)} |`,
    ),
  ].join('\n');
}
