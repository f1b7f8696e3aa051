// `kubelet-pods local-cluster`: starts the local control plane and keeps it running until
// SIGINT or SIGTERM, for demos and for running the agent by hand against a real API server.


import { kpError } from '../errors.js';
import { startLocalCluster } from '../cluster/local-cluster.js';
import { flagNames, parseCommandOptions } from './command-options.js';
import { issueFleetToken } from '../fleet/fleet-identity.js';
import { untilSignal } from './signals.js';

export const help = `usage: kubelet-pods local-cluster --dir <dir> [options]

Starts a real etcd and kube-apiserver (Kubernetes v1.34) on 127.0.0.1, secured like a
production cluster (Node,RBAC authorization, NodeRestriction admission), with kube-scheduler
and kube-controller-manager. Writes <dir>/admin.kubeconfig and <dir>/<node>.kubeconfig, prints
one JSON line when all are ready ({"server", "adminKubeconfig", "nodeKubeconfigs",
"components"}), and runs until SIGINT or SIGTERM.

The program is built with Go (>= 1.24) on first use and cached under
$XDG_CACHE_HOME/kubelet-pods (default ~/.cache/kubelet-pods); the first build takes 7 to 13
minutes. Its log goes to <dir>/control-plane.log.

options:
  --dir <dir>            state directory (required)
  --nodes <a,b,...>      node identities to create credentials for (default node-1)
  --node-count <N>       instead: N node identities <prefix>0 … <prefix>N-1, for a fleet
                         (kubelet-pods fleet --node-kubeconfig-dir <dir>)
  --node-name-prefix <p> with --node-count (default sim-)
  --fleet-token <file>   also create the fleet's ClusterRole (deploy/fleet/cluster-role.yaml),
                         a ServiceAccount bound to it, its FlowSchema (deploy/fleet/flow-schema.yaml:
                         Leases and Nodes at node-high, as a kubelet's), and write a kubeconfig
                         with its token
  --keep-data            keep etcd data in <dir>/etcd for the next start
  --secure-port <port>   kube-apiserver port (default: a free one)
  --etcd-port <port>     etcd client port (default: a free one)
  --extra-address <ips>  comma-separated addresses where the API server is also reachable
                         (relayed to loopback; named in its certificate), e.g. a veth host end
  --no-scheduler         do not run kube-scheduler (pods without spec.nodeName stay Pending)
  --no-controller-manager
                         do not run kube-controller-manager (no default ServiceAccounts,
                         namespaces never finish deleting, no garbage collection)
  -h, --help             show this text
`;

function parsePort(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw kpError('KP_ERR_CLI_USAGE', [`${flag} must be a port number from 1 to 65535, got ${JSON.stringify(value)}`]);
  }
  return port;
}

const OPTIONS = {
  dir: { type: 'string' },
  nodes: { type: 'string', default: 'node-1' },
  'node-count': { type: 'string' },
  'node-name-prefix': { type: 'string', default: 'sim-' },
  'fleet-token': { type: 'string' },
  'keep-data': { type: 'boolean', default: false },
  'secure-port': { type: 'string' },
  'etcd-port': { type: 'string' },
  'extra-address': { type: 'string' },
  'no-scheduler': { type: 'boolean', default: false },
  'no-controller-manager': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export const flags = flagNames(OPTIONS);

export function parse(args: readonly string[]) {
  return parseCommandOptions(OPTIONS, args);
}

export async function run(args: string[]): Promise<number> {
  const { values } = parse(args);
  if (values.help) {
    process.stdout.write(help);
    return 0;
  }
  if (values.dir === undefined || values.dir === '') throw kpError('KP_ERR_CLI_USAGE', ['--dir is required']);
  let nodes = values.nodes.split(',').map((n) => n.trim()).filter((n) => n !== '');
  if (values['node-count'] !== undefined) {
    const count = Number(values['node-count']);
    if (!Number.isInteger(count) || count < 1 || count > 100_000) throw kpError('KP_ERR_CLI_USAGE', [`--node-count must be an integer from 1 to 100000, got ${JSON.stringify(values['node-count'])}`]);
    nodes = Array.from({ length: count }, (_, i) => `${values['node-name-prefix']}${i}`);
  }
  if (nodes.length === 0) throw kpError('KP_ERR_CLI_USAGE', ['--nodes must name at least one node']);

  const cluster = await startLocalCluster({
    dir: values.dir,
    nodes,
    keepData: values['keep-data'],
    securePort: parsePort('--secure-port', values['secure-port']),
    etcdPort: parsePort('--etcd-port', values['etcd-port']),
    scheduler: !values['no-scheduler'],
    controllerManager: !values['no-controller-manager'],
    ...(values['extra-address'] !== undefined
      ? { extraAddresses: values['extra-address'].split(',').map((a) => a.trim()).filter((a) => a !== '') }
      : {}),
  });
  const fleetKubeconfig =
    values['fleet-token'] !== undefined ? await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: values['fleet-token'] }) : undefined;
  process.stdout.write(
    `${JSON.stringify({
      server: cluster.server,
      adminKubeconfig: cluster.adminKubeconfig,
      nodeKubeconfigs: cluster.nodeKubeconfigs,
      components: cluster.components,
      ...(fleetKubeconfig !== undefined ? { fleetKubeconfig } : {}),
    })}\n`,
  );

  const signal = await untilSignal(); // a second signal exits at once; the child then stops as its stdin closes
  process.stderr.write(`kubelet-pods: ${signal} received, stopping the control plane\n`);
  await cluster.dispose();
  return 0;
}
