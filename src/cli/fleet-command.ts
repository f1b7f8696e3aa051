// `kubelet-pods fleet`: many simulated nodes with their static pods from one process
// (docs/fleet.md). Runs until SIGINT or SIGTERM and leaves mirror pods in place.

import { parseArgs } from 'node:util';
import { kpError } from '../errors.js';
import { createLoggerLoaded } from '../logger.js';
import { createFleet } from '../fleet/fleet.js';
import { loadFleetConfig, type FleetFlags } from '../fleet/fleet-config.js';
import { applyFleetGcSettings } from '../fleet/gc-settings.js';
import { untilSignal } from './signals.js';

export const help = `usage: kubelet-pods fleet --config fleet.yaml [flags]
       kubelet-pods fleet --nodes N [--node-name-prefix sim-] --kubeconfig <file> [flags]
       kubelet-pods fleet --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --kubeconfig <file> [flags]

Runs many nodes in one process, each exactly as \`kubelet-pods run\` runs one (Node, Lease,
static pods, mirror pods, status), over one connection pool, one rate limiter, one watch of
pods and one file watch per directory. See docs/fleet.md for the file.

flags (each overrides the file):
  --config <file>                the fleet file (templates, identity, limits)
  --nodes <N>                    one template of N nodes instead of the file's templates
  --node-name-prefix <prefix>    with --nodes: names <prefix>0 … <prefix>N-1 (default sim-)
  --kubeconfig <file>            one credential for the fleet (deploy/fleet/cluster-role.yaml)
  --node-kubeconfig-dir <dir>    per-node credentials: <dir>/<node>.kubeconfig
  --manage-nodes-with-label-selector <selector>
                                 adopt the Nodes others create whose labels match (kwok's
                                 flag; e.g. type=kwok), besides the templates' own nodes
  --manage-nodes-with-annotation-selector <selector>
                                 the same over annotations (e.g. kwok.x-k8s.io/node=fake)
  --pod-manifest-path <dir>      with --nodes or a selector: manifests every node runs
  --per-node-manifest-dir <dir>  with --nodes or a selector: <dir>/<node>/ holds one node's manifests
  --manifest-url <url>           with --nodes or a selector: a manifest URL, {node} replaced by the name
  --kube-api-qps <n>             fleet-wide API requests per second (default 500, or 0.2 per node)
  --kube-api-burst <n>           fleet-wide burst (default 1000, or twice the QPS)
  --read-only-port <port>        /healthz, /pods?node=, /metrics (default 10255, 0: off)
  --address <ip>                 where it listens (default 127.0.0.1)
  --pod-cidr <cidr>              the range every pod of the fleet gets its address from
                                 (default 10.128.0.0/9)
  --node-start-concurrency <n>   nodes starting at once, each until its Node is registered
                                 (default 100; 0: all at once)
  --heap-growing-percent <n>     V8 old-generation headroom, % of the live heap (default
                                 100; 0: V8's own sizing; node's own flag of that name wins)
  --parallel-scavenge            let V8's helper threads share scavenges (default: the
                                 main thread alone, cheaper at idle; see docs/fleet.md)
  --semi-space-growth-factor <n> how V8 grows the young generation (default 1: not past
                                 its starting size until the heap in use passes 192 MiB;
                                 0: V8's own; node's own flag wins)
  --no-compact-every-full-gc     let V8 compact only its sparsest pages (default: each
                                 full GC compacts the whole old generation)
  --no-settle-gc                 no full GC of its own when the fleet goes quiet after
                                 busy work (default: one after each wave; with a small
                                 live heap, also when it grows while quiet)
  --no-grow-young-while-busy     hold the young generation while the fleet is busy too
                                 (default: it may grow in waves of pods, given back once
                                 the fleet is quiet; less CPU; see docs/fleet.md)
  --shard <i/n>                  run only the nodes whose name hashes to i of n replicas
  --shard-by-lease <identity>    share the nodes with other replicas: run those whose Lease
                                 this replica holds, take over expired ones
  -h, --help
`;

const OPTIONS = {
  config: { type: 'string' },
  nodes: { type: 'string' },
  'node-name-prefix': { type: 'string' },
  kubeconfig: { type: 'string' },
  'node-kubeconfig-dir': { type: 'string' },
  'pod-manifest-path': { type: 'string' },
  'per-node-manifest-dir': { type: 'string' },
  'manifest-url': { type: 'string' },
  'manage-nodes-with-label-selector': { type: 'string' },
  'manage-nodes-with-annotation-selector': { type: 'string' },
  'kube-api-qps': { type: 'string' },
  'kube-api-burst': { type: 'string' },
  'read-only-port': { type: 'string' },
  address: { type: 'string' },
  'pod-cidr': { type: 'string' },
  'heap-growing-percent': { type: 'string' },
  'parallel-scavenge': { type: 'boolean' },
  'semi-space-growth-factor': { type: 'string' },
  'no-compact-every-full-gc': { type: 'boolean' },
  'no-settle-gc': { type: 'boolean' },
  'no-grow-young-while-busy': { type: 'boolean' },
  // The default since growYoungWhileBusy turned on; kept so that command lines written before still run.
  'grow-young-while-busy': { type: 'boolean' },
  'node-start-concurrency': { type: 'string' },
  shard: { type: 'string' },
  'shard-by-lease': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export const flags: readonly string[] = Object.keys(OPTIONS).map((name) => `--${name}`);

export function parse(args: readonly string[]) {
  try {
    return parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: false });
  } catch (err) {
    throw kpError('KP_ERR_CLI_USAGE', [err instanceof Error ? err.message : String(err)], { cause: err });
  }
}

export function fleetFlags(args: readonly string[]): FleetFlags {
  const { values: v } = parse(args);
  const selects = v['manage-nodes-with-label-selector'] !== undefined || v['manage-nodes-with-annotation-selector'] !== undefined;
  if (v.config === undefined && v.nodes === undefined && !selects) throw kpError('KP_ERR_CLI_USAGE', ['fleet needs --config, --nodes or a --manage-nodes-with-*-selector']);
  const pick = <K extends keyof FleetFlags>(key: K, value: string | undefined): Partial<FleetFlags> => (value === undefined ? {} : { [key]: value });
  return {
    ...pick('config', v.config),
    ...pick('nodes', v.nodes),
    ...pick('nodeNamePrefix', v['node-name-prefix']),
    ...pick('kubeconfig', v.kubeconfig),
    ...pick('nodeKubeconfigDir', v['node-kubeconfig-dir']),
    ...pick('podManifestPath', v['pod-manifest-path']),
    ...pick('perNodeManifestDir', v['per-node-manifest-dir']),
    ...pick('manifestURL', v['manifest-url']),
    ...pick('labelSelector', v['manage-nodes-with-label-selector']),
    ...pick('annotationSelector', v['manage-nodes-with-annotation-selector']),
    ...pick('kubeAPIQPS', v['kube-api-qps']),
    ...pick('kubeAPIBurst', v['kube-api-burst']),
    ...pick('readOnlyPort', v['read-only-port']),
    ...pick('address', v.address),
    ...pick('podCIDR', v['pod-cidr']),
    ...pick('heapGrowingPercent', v['heap-growing-percent']),
    ...(v['parallel-scavenge'] === true ? { parallelScavenge: true } : {}),
    ...pick('semiSpaceGrowthFactor', v['semi-space-growth-factor']),
    ...(v['no-compact-every-full-gc'] === true ? { compactEveryFullGc: false } : {}),
    ...(v['no-settle-gc'] === true ? { settleGc: false } : {}),
    ...(v['no-grow-young-while-busy'] === true ? { growYoungWhileBusy: false } : v['grow-young-while-busy'] === true ? { growYoungWhileBusy: true } : {}),
    ...pick('nodeStartConcurrency', v['node-start-concurrency']),
    ...pick('shard', v.shard),
    ...pick('shardByLease', v['shard-by-lease']),
  };
}

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(help);
    return 0;
  }
  const config = await loadFleetConfig(fleetFlags(args));
  const logger = await createLoggerLoaded();
  const v8Flags = applyFleetGcSettings(config, process.execArgv, {}, {
    settled: ({ beforeBytes, afterBytes, ms }) =>
      logger.info({ heapBeforeMiB: mib(beforeBytes), heapAfterMiB: mib(afterBytes), pauseMs: Math.round(ms) }, 'quiet after busy work: full GC'),
    young: (c) =>
      c.change === 'may grow'
        ? logger.debug({ youngMiB: mib(c.youngBytes) }, 'busy: the young generation may grow')
        : logger.info({ youngBeforeMiB: mib(c.fromBytes), youngAfterMiB: mib(c.toBytes) }, c.change === 'given back' ? 'quiet: young generation given back' : 'quiet: young generation not given back'),
  });
  if (v8Flags.length > 0) logger.debug({ v8Flags }, 'V8 garbage collector settings applied');
  const fleet = await createFleet({ config, logger });
  await fleet.start();
  const signal = await untilSignal();
  logger.info({ signal }, 'stopping');
  await fleet.stop();
  return 0;
}

const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;
