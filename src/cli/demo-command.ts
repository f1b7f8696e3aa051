// `kubelet-pods demo` (npm start): the README's main job. Starts a real local control plane and
// the agent on examples/, and shows the static pods, their mirror pods, UIDs, hashes and status
// live, as files in the manifest directory change; and, beside them, the example Deployment's
// pods placed by kube-scheduler, with what the mirror pods hold of the node as the scheduler
// counts it (scheduling-view.ts): the point of mirror pods.

import { createWriteStream } from 'node:fs';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { createAgent, type Agent } from '../agent/agent.js';
import { startLocalCluster } from '../cluster/local-cluster.js';
import { kpError } from '../errors.js';
import { createLogger } from '../logger.js';
import { isStaticPod } from '../pod/classify.js';
import type { PodManager } from '../pod/manager.js';
import { embeddedTree, writeTree } from '../sea/embedded-files.js';
import { resolveRunConfig } from './flags.js';
import { startLiveView } from './live-view.js';
import { DEMO_DEPLOYMENT_FILE, describeDeploymentState, loadDemoDeployment, startDemoDeployment } from './demo-deployment.js';
import { watchDemoObjects, type DemoObjects } from './demo-objects.js';
import { deploymentProgress, isDeploymentRunning, renderScheduling } from './scheduling-view.js';
import { flagNames, parseCommandOptions } from './command-options.js';
import { untilSignal } from './signals.js';

/**
 * The examples directory: the package's own, or in the single executable a fresh temporary
 * copy of the embedded one (so its manifests can be edited during the demo).
 */
async function examplesDir(): Promise<string> {
  const embedded = await embeddedTree('examples');
  if (embedded === undefined) return fileURLToPath(new URL('../../examples/', import.meta.url));
  const dir = await mkdtemp(join(tmpdir(), 'kubelet-pods-examples-'));
  await writeTree(embedded, dir);
  return dir;
}

export const help = `usage: kubelet-pods demo [options]
       kubelet-pods demo --nodes N [options]

Builds (first run only) and starts a real kube-apiserver + etcd, kube-scheduler and
kube-controller-manager on 127.0.0.1, then runs the agent as node "demo-node" on
examples/kubelet-config.yaml (manifests in examples/manifests), and shows a live view of
the static pods and their mirror pods. Edit, add or remove files in the manifest directory
and watch the mirrors follow. Ctrl-C stops everything; mirror pods are left in place, as the
kubelet leaves them.

Beside the static pods it runs an ordinary Deployment (examples/deployment.yaml: 2 pods of
250m CPU and 128Mi), whose pods kube-scheduler places on the demo's node(s) and the agent
runs. The view shows them (name, node, phase) and, per node, what the mirror pods and the
ordinary pods request against its allocatable: the scheduler counts the mirror pods' requests
as taken, which is what mirror pods are for ("scheduler sees: …", with how many more of the
Deployment's pods fit, and would fit if the mirrors were not counted).

With --nodes N it runs a fleet instead (kubelet-pods fleet, docs/fleet.md): N nodes named
<node>-0 … <node>-<N-1>, each running the manifests, and shows how far they have converged:
Nodes Ready, mirror pods created and Running against the static pods, the Deployment's pods
placed and Running, and the fleet's API request rate (redrawn on a terminal; one progress
line per change otherwise, and what the scheduler sees once converged).

options:
  --config <file>          KubeletConfiguration (default examples/kubelet-config.yaml; the
                           single executable uses a temporary copy of its embedded examples/)
  --pod-manifest-path <d>  manifest directory (default: the config's staticPodPath)
  --node <name>            node name (default demo-node; with --nodes, the name prefix)
  --nodes <N>              a fleet of N nodes instead of one agent (--config does not apply)
  --dir <dir>              control plane state directory (default: a new temporary one)
  --no-deployment          leave the Deployment out (only the static pods and their mirrors)
  --no-scheduler           run the control plane without kube-scheduler (and so without
                           the Deployment: nothing would place its pods)
  --no-controller-manager  run the control plane without kube-controller-manager (and so
                           without the Deployment: nothing would create its pods)
  --until-synced           exit 0 once every static pod's mirror is Running (with --nodes:
                           and every Node Ready) and every pod of the Deployment is placed on
                           a node and Running; exit 1 if the Deployment cannot be created
                           (for scripts)
  -h, --help
`;

const OPTIONS = {
  config: { type: 'string' },
  'pod-manifest-path': { type: 'string' },
  node: { type: 'string', default: 'demo-node' },
  nodes: { type: 'string' },
  dir: { type: 'string' },
  'until-synced': { type: 'boolean', default: false },
  'no-scheduler': { type: 'boolean', default: false },
  'no-controller-manager': { type: 'boolean', default: false },
  'no-deployment': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export const flags = flagNames(OPTIONS);

const MAX_DEMO_NODES = 10_000;

/** The options, and with `--nodes` the fleet's size (checked here, before anything starts). */
export function parse(args: readonly string[]) {
  const parsed = parseCommandOptions(OPTIONS, args);
  const { nodes, config } = parsed.values;
  if (nodes === undefined) return { ...parsed, fleetNodes: undefined };
  const n = Number(nodes);
  if (!/^\d+$/.test(nodes) || n < 1 || n > MAX_DEMO_NODES) {
    throw kpError('KP_ERR_CLI_USAGE', [`--nodes must be a whole number from 1 to ${MAX_DEMO_NODES}, got ${JSON.stringify(nodes)}`]);
  }
  if (config !== undefined) throw kpError('KP_ERR_CLI_USAGE', ['--config is for the single-node demo; with --nodes the fleet takes the kubelet defaults']);
  return { ...parsed, fleetNodes: n };
}

export async function run(args: string[]): Promise<number> {
  const { values, fleetNodes } = parse(args);
  if (values.help) {
    process.stdout.write(help);
    return 0;
  }
  const node = values.node;
  const examples = lazyExamplesDir();
  if (fleetNodes !== undefined) return runFleet(values, fleetNodes, examples);
  const configFile = values.config ?? join(await examples(), 'kubelet-config.yaml');
  const deployment = await demoDeployment(values, examples);
  const dir = values.dir ?? (await mkdtemp(join(tmpdir(), 'kubelet-pods-demo-')));
  process.stderr.write(`starting the local control plane in ${dir} (the first run builds it from source: about 11 min on 2 cores)\n`);
  const components = clusterComponents(values);
  const cluster = await startLocalCluster({ dir, nodes: [node], ...components });
  const flags = ['--config', configFile, '--kubeconfig', cluster.nodeKubeconfigs[node]!, '--hostname-override', node];
  if (values['pod-manifest-path']) flags.push('--pod-manifest-path', values['pod-manifest-path']);
  const { config } = await resolveRunConfig(flags);
  const logFile = join(dir, 'agent.log');
  const logger = createLogger({ destination: createWriteStream(logFile, { flags: 'a' }), pretty: false });
  // Every endpoint on a free port: a kubelet (or another demo) on the machine often holds
  // the default ones.
  const agent = createAgent({ config, logger, listenPorts: { readOnly: 0, healthz: 0, kubelet: 0 } });
  // The Node and the pods as the API server has them, for what the scheduler sees.
  const adminKc = new KubeConfig();
  adminKc.loadFromFile(cluster.adminKubeconfig);
  const objects = watchDemoObjects({ kubeConfig: adminKc, isDemoNode: (name) => name === node, deployment });
  objects.start();
  await agent.start();
  const endpoints = describeEndpoints(agent.addresses());
  process.stderr.write(`${endpoints}\n`);
  const creating = deployment !== undefined ? startDemoDeployment(adminKc, deployment) : undefined;

  const header = [
    `kubelet-pods demo · node ${node} · manifests in ${config.staticPodPath}`,
    `kubectl --kubeconfig ${cluster.adminKubeconfig} get pods -A`,
    `${endpoints} · agent log: ${logFile}`,
    'edit, add or remove manifests and watch their mirror pods follow · Ctrl-C to stop',
  ];
  const section = (): string[] => {
    const state = creating !== undefined ? describeDeploymentState(creating.state()) : undefined;
    return renderScheduling(objects.scheduling(), { ...(state ? { deploymentState: state } : {}), adminKubeconfig: cluster.adminKubeconfig });
  };
  // Without kube-scheduler nobody accounts for the node: the table of static pods only.
  const view = startLiveView({ podManager: agent.podManager, header, ...(components.scheduler ? { section } : {}) });

  const stop = async (): Promise<void> => {
    view.stop();
    creating?.stop();
    await objects.stop();
    await agent.stop();
    await cluster.dispose();
  };
  if (values['until-synced']) {
    try {
      await untilSynced(agent.podManager, objects, deployment, creating);
    } finally {
      await stop();
    }
    return 0;
  }
  await untilSignal();
  await stop();
  return 0;
}

/** The examples directory, made (in the single executable: unpacked) once, when first asked for. */
function lazyExamplesDir(): () => Promise<string> {
  let dir: Promise<string> | undefined;
  return () => (dir ??= examplesDir());
}

/**
 * The demo's Deployment (examples/deployment.yaml), or undefined with --no-deployment, and
 * without kube-scheduler or kube-controller-manager (said on stderr): nothing would place, or
 * create, its pods.
 */
async function demoDeployment(values: ReturnType<typeof parse>['values'], examples: () => Promise<string>): Promise<V1Deployment | undefined> {
  if (values['no-deployment']) return undefined;
  const missing = values['no-scheduler'] ? 'kube-scheduler' : values['no-controller-manager'] ? 'kube-controller-manager' : undefined;
  if (missing !== undefined) {
    process.stderr.write(`no Deployment beside the static pods: without ${missing} its pods would never run\n`);
    return undefined;
  }
  return loadDemoDeployment(join(await examples(), DEMO_DEPLOYMENT_FILE));
}

/** --no-scheduler / --no-controller-manager, as startLocalCluster options. */
export function clusterComponents(values: ReturnType<typeof parse>['values']): { scheduler: boolean; controllerManager: boolean } {
  return { scheduler: !values['no-scheduler'], controllerManager: !values['no-controller-manager'] };
}

/** `--nodes N`: the fleet demo (fleet-demo.ts) on the example manifests or --pod-manifest-path. */
async function runFleet(values: ReturnType<typeof parse>['values'], nodes: number, examples: () => Promise<string>): Promise<number> {
  const manifestDir = values['pod-manifest-path'] ? resolve(values['pod-manifest-path']) : join(await examples(), 'manifests');
  // Checked before the control plane starts: the fleet would wait for the directory forever.
  if (!(await stat(manifestDir).then((s) => s.isDirectory(), () => false))) {
    throw kpError('KP_ERR_CLI_USAGE', [`--pod-manifest-path ${JSON.stringify(manifestDir)} is not a directory`]);
  }
  const deployment = await demoDeployment(values, examples);
  const dir = values.dir ?? (await mkdtemp(join(tmpdir(), 'kubelet-pods-demo-')));
  process.stderr.write(`starting the local control plane in ${dir} (the first run builds it from source: about 11 min on 2 cores)\n`);
  const components = clusterComponents(values);
  const cluster = await startLocalCluster({ dir, nodes: [], ...components });
  try {
    const { runFleetDemo } = await import('./fleet-demo.js');
    return await runFleetDemo({ cluster, dir, nodes, prefix: values.node, manifestDir, untilSynced: values['until-synced'], deployment, scheduler: components.scheduler });
  } catch (err) {
    // A fleet that could not start (an unreadable manifest directory, say) leaves no control plane behind.
    await cluster.dispose().catch(() => undefined);
    throw err;
  }
}

/** One line naming where each endpoint listens. */
function describeEndpoints(addresses: ReturnType<Agent['addresses']>): string {
  const at = (a: { address: string; port: number } | undefined, scheme: string, paths: string): string =>
    a === undefined ? 'off' : `${scheme}://${a.address}:${a.port}${paths}`;
  return [
    `endpoints: read-only ${at(addresses.readOnly, 'http', '/pods /metrics /healthz')}`,
    `healthz ${at(addresses.healthz, 'http', '/healthz')}`,
    `kubelet ${at(addresses.kubelet, 'https', '/pods /metrics /configz /containerLogs (authenticated)')}`,
  ].join(' · ');
}

/**
 * --until-synced: every static pod's mirror Running (the mirror pods come back through the API
 * source, status included, so the pod manager is the place to watch), and every pod of the
 * Deployment bound to the node and Running as the API server has it. A Deployment that could
 * not be created is an error.
 */
async function untilSynced(
  podManager: PodManager,
  objects: DemoObjects,
  deployment: V1Deployment | undefined,
  creating: ReturnType<typeof startDemoDeployment> | undefined,
): Promise<void> {
  for (;;) {
    const statics = podManager.getPods().filter(isStaticPod);
    const mirrorsRunning = statics.length > 0 && statics.every((p) => podManager.getMirrorPodByPod(p)?.status?.phase === 'Running');
    const state = creating?.state();
    if (state?.state === 'failed') throw new Error(`the demo's Deployment: ${state.message}`);
    const d = deployment !== undefined ? objects.scheduling().deployment : undefined;
    const deploymentRunning = d === undefined || (state?.state === 'created' && isDeploymentRunning(deploymentProgress(d)));
    if (mirrorsRunning && deploymentRunning) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
