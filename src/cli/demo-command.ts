// `kubelet-pods demo` (npm start): the README's main job. Starts a real local control plane and
// the agent on examples/, and shows the static pods, their mirror pods, UIDs, hashes and status
// live, as files in the manifest directory change.

import { createWriteStream } from 'node:fs';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgent, type Agent } from '../agent/agent.js';
import { startLocalCluster } from '../cluster/local-cluster.js';
import { kpError } from '../errors.js';
import { createLogger } from '../logger.js';
import { isStaticPod } from '../pod/classify.js';
import type { PodManager } from '../pod/manager.js';
import { embeddedTree, writeTree } from '../sea/embedded-files.js';
import { resolveRunConfig } from './flags.js';
import { startLiveView } from './live-view.js';
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

With --nodes N it runs a fleet instead (kubelet-pods fleet, docs/fleet.md): N nodes named
<node>-0 … <node>-<N-1>, each running the manifests, and shows how far they have converged:
Nodes Ready, mirror pods created and Running against the static pods, and the fleet's API
request rate (redrawn on a terminal; one progress line per change otherwise).

options:
  --config <file>          KubeletConfiguration (default examples/kubelet-config.yaml; the
                           single executable uses a temporary copy of its embedded examples/)
  --pod-manifest-path <d>  manifest directory (default: the config's staticPodPath)
  --node <name>            node name (default demo-node; with --nodes, the name prefix)
  --nodes <N>              a fleet of N nodes instead of one agent (--config does not apply)
  --dir <dir>              control plane state directory (default: a new temporary one)
  --no-scheduler           run the control plane without kube-scheduler
  --no-controller-manager  run the control plane without kube-controller-manager
  --until-synced           exit 0 once every static pod's mirror is Running (with --nodes:
                           and every Node Ready) (for scripts)
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
  if (fleetNodes !== undefined) return runFleet(values, fleetNodes);
  const configFile = values.config ?? join(await examplesDir(), 'kubelet-config.yaml');
  const dir = values.dir ?? (await mkdtemp(join(tmpdir(), 'kubelet-pods-demo-')));
  process.stderr.write(`starting the local control plane in ${dir} (the first run builds it from source: about 11 min on 2 cores)\n`);
  const cluster = await startLocalCluster({ dir, nodes: [node], ...clusterComponents(values) });
  const flags = ['--config', configFile, '--kubeconfig', cluster.nodeKubeconfigs[node]!, '--hostname-override', node];
  if (values['pod-manifest-path']) flags.push('--pod-manifest-path', values['pod-manifest-path']);
  const { config } = await resolveRunConfig(flags);
  const logFile = join(dir, 'agent.log');
  const logger = createLogger({ destination: createWriteStream(logFile, { flags: 'a' }), pretty: false });
  // Every endpoint on a free port: a kubelet (or another demo) on the machine often holds
  // the default ones.
  const agent = createAgent({ config, logger, listenPorts: { readOnly: 0, healthz: 0, kubelet: 0 } });
  await agent.start();
  const endpoints = describeEndpoints(agent.addresses());
  process.stderr.write(`${endpoints}\n`);

  const header = [
    `kubelet-pods demo · node ${node} · manifests in ${config.staticPodPath}`,
    `kubectl --kubeconfig ${cluster.adminKubeconfig} get pods -A`,
    `${endpoints} · agent log: ${logFile}`,
    'edit, add or remove manifests and watch their mirror pods follow · Ctrl-C to stop',
  ];
  const view = startLiveView({ podManager: agent.podManager, header });

  const stop = async (): Promise<void> => {
    view.stop();
    await agent.stop();
    await cluster.dispose();
  };
  if (values['until-synced']) {
    await untilAllMirrorsRunning(agent.podManager);
    await stop();
    return 0;
  }
  await untilSignal();
  await stop();
  return 0;
}

/** --no-scheduler / --no-controller-manager, as startLocalCluster options. */
export function clusterComponents(values: ReturnType<typeof parse>['values']): { scheduler: boolean; controllerManager: boolean } {
  return { scheduler: !values['no-scheduler'], controllerManager: !values['no-controller-manager'] };
}

/** `--nodes N`: the fleet demo (fleet-demo.ts) on the example manifests or --pod-manifest-path. */
async function runFleet(values: ReturnType<typeof parse>['values'], nodes: number): Promise<number> {
  const manifestDir = values['pod-manifest-path'] ? resolve(values['pod-manifest-path']) : join(await examplesDir(), 'manifests');
  // Checked before the control plane starts: the fleet would wait for the directory forever.
  if (!(await stat(manifestDir).then((s) => s.isDirectory(), () => false))) {
    throw kpError('KP_ERR_CLI_USAGE', [`--pod-manifest-path ${JSON.stringify(manifestDir)} is not a directory`]);
  }
  const dir = values.dir ?? (await mkdtemp(join(tmpdir(), 'kubelet-pods-demo-')));
  process.stderr.write(`starting the local control plane in ${dir} (the first run builds it from source: about 11 min on 2 cores)\n`);
  const cluster = await startLocalCluster({ dir, nodes: [], ...clusterComponents(values) });
  try {
    const { runFleetDemo } = await import('./fleet-demo.js');
    return await runFleetDemo({ cluster, dir, nodes, prefix: values.node, manifestDir, untilSynced: values['until-synced'] });
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

// The mirror pods come back through the API source, status included, so the pod manager is
// the place to watch.
async function untilAllMirrorsRunning(podManager: PodManager): Promise<void> {
  for (;;) {
    const statics = podManager.getPods().filter(isStaticPod);
    const synced = statics.length > 0 && statics.every((p) => podManager.getMirrorPodByPod(p)?.status?.phase === 'Running');
    if (synced) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
