// `kubelet-pods demo --nodes N`: the demo with a fleet instead of one agent. Starts the local
// control plane, gives the fleet the shipped ClusterRole's token (as `local-cluster
// --fleet-token` does), runs N nodes on the example manifests, and shows how far they have
// converged: on a terminal a view redrawn in place, elsewhere one progress line per change.
// Beside the static pods it runs the demo's Deployment, whose pods kube-scheduler places on the
// fleet's nodes, and shows what the scheduler sees of the nodes (scheduling-view.ts).

import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import type { LocalCluster } from '../cluster/local-cluster.js';
import { createFleet, type Fleet } from '../fleet/fleet.js';
import { resolveFleetConfig } from '../fleet/fleet-config.js';
import { applyFleetGcSettings } from '../fleet/gc-settings.js';
import { issueFleetToken } from '../fleet/fleet-identity.js';
import { createLogger } from '../logger.js';
import { isStaticPod } from '../pod/classify.js';
import { describeDeploymentState, startDemoDeployment } from './demo-deployment.js';
import { watchDemoObjects } from './demo-objects.js';
import { createRateMeter, startFleetLiveView, type FleetProgress } from './fleet-view.js';
import { deploymentProgress, renderScheduling } from './scheduling-view.js';
import { untilSignal } from './signals.js';

export interface FleetDemoOptions {
  cluster: LocalCluster;
  /** The control plane's state directory: the fleet's kubeconfig and log go there. */
  dir: string;
  nodes: number;
  /** Node names are `<prefix>-0` … `<prefix>-<N-1>`. */
  prefix: string;
  manifestDir: string;
  untilSynced: boolean;
  /** The Deployment to run beside the static pods (demo-deployment.ts), if any. */
  deployment?: V1Deployment | undefined;
  /** Whether kube-scheduler runs: without it the view leaves out what it would see. Default true. */
  scheduler?: boolean;
  out?: NodeJS.WriteStream;
  refreshMs?: number;
}

export async function runFleetDemo(o: FleetDemoOptions): Promise<number> {
  const out = o.out ?? process.stdout;
  const kubeconfig = await issueFleetToken({ adminKubeconfig: o.cluster.adminKubeconfig, out: join(o.dir, 'fleet.kubeconfig') });
  const config = resolveFleetConfig({ kubeconfig, templates: [{ name: `${o.prefix}-{i}`, count: o.nodes, staticPodPath: o.manifestDir }] }, {});
  const logFile = join(o.dir, 'fleet.log');
  const logger = createLogger({ destination: createWriteStream(logFile, { flags: 'a' }), pretty: false });
  // As `kubelet-pods fleet` does: the demo's process holds the fleet once it has converged.
  applyFleetGcSettings(config);
  // A free port: a kubelet (or another demo) on the machine often holds 10255.
  const fleet = await createFleet({ config, logger, readOnlyPort: 0 });
  const names = new Set(config.nodes.map((n) => n.name));
  const adminKc = new KubeConfig();
  adminKc.loadFromFile(o.cluster.adminKubeconfig);
  const objects = watchDemoObjects({ kubeConfig: adminKc, isDemoNode: (name) => names.has(name), deployment: o.deployment });
  objects.start();
  const started = performance.now();
  await fleet.start();
  const ro = fleet.address();
  const creating = o.deployment !== undefined ? startDemoDeployment(adminKc, o.deployment) : undefined;

  const header = [
    `kubelet-pods demo · fleet of ${o.nodes} nodes (${o.prefix}-0 … ${o.prefix}-${o.nodes - 1}) · manifests in ${o.manifestDir}`,
    `kubectl --kubeconfig ${o.cluster.adminKubeconfig} get nodes,pods -A`,
    `${ro ? `fleet endpoint: http://${ro.address}:${ro.port}/pods?node=<name> /metrics /healthz · ` : ''}fleet log: ${logFile}`,
    'edit, add or remove manifests and watch every node follow · Ctrl-C to stop',
  ];
  const rate = createRateMeter(() => fleet.metrics.apiRequests());
  const progress = (): FleetProgress => {
    const d = o.deployment !== undefined ? objects.scheduling().deployment : undefined;
    return {
      nodes: o.nodes,
      ...objects.counts(),
      expected: expectedMirrors(fleet),
      requestsPerSecond: rate.sample(),
      elapsedMs: performance.now() - started,
      ...(d !== undefined ? { deployment: deploymentProgress(d) } : {}),
    };
  };
  const details = (): string[] => {
    const state = creating !== undefined ? describeDeploymentState(creating.state()) : undefined;
    return renderScheduling(objects.scheduling(), { ...(state ? { deploymentState: state } : {}), adminKubeconfig: o.cluster.adminKubeconfig });
  };
  // Without kube-scheduler nobody accounts for the nodes: the progress only.
  const view = startFleetLiveView({ header, progress, ...(o.scheduler !== false ? { details } : {}), out, refreshMs: o.refreshMs ?? 500 });

  const stop = async (): Promise<void> => {
    view.stop();
    creating?.stop();
    await fleet.stop();
    await objects.stop();
    await o.cluster.dispose();
  };
  if (o.untilSynced) {
    try {
      // A Deployment that cannot be created would keep the fleet from converging for good.
      const failed = creating?.done.then((s) => (s.state === 'failed' ? s.message : new Promise<never>(() => undefined)));
      const message = await Promise.race([view.converged.then(() => undefined), ...(failed ? [failed] : [])]);
      if (message !== undefined) throw new Error(`the demo's Deployment: ${message}`);
    } finally {
      await stop();
    }
    return 0;
  }
  await untilSignal();
  await stop();
  return 0;
}

/** One mirror pod per static pod each node holds now (the manifests may change while it runs). */
function expectedMirrors(fleet: Fleet): number {
  let n = 0;
  for (const name of fleet.running()) n += fleet.agent(name)?.podManager.getPods().filter(isStaticPod).length ?? 0;
  return n;
}
