import { readFile } from 'node:fs/promises';
import { dirname, resolve as resolvePath } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { V1Taint } from '@kubernetes/client-node';
import { kubeletSettings, type AgentConfig } from '../config/agent-config.js';
import type { ConfigField } from '../config/fields.js';
import { kpError } from '../errors.js';
import { podCidrProblem } from '../values/ip.js';
import { parseLabelSelector, type LabelSelector } from '../values/label-selector.js';
import { parseScenarios } from '../scenario/parse-scenarios.js';
import type { Scenario } from '../scenario/scenario-types.js';
import { isValidNodeName, NODE_NAME_RULE } from '../values/node-name.js';
import { FLEET_GC_DEFAULTS } from './gc-settings.js';

/**
 * The fleet file (`kubelet-pods fleet --config fleet.yaml`, docs/fleet.md) and the flags for
 * the common case, resolved into one frozen FleetConfig with every node spelled out. Checked
 * once at start: every problem names its field (`templates[1].name`).
 */

export interface NodeTemplate {
  /** The node name pattern; `{i}` is replaced by the node's index in the template. '' for a selector template. */
  readonly name: string;
  /** How many nodes it names; 0 for a selector template. */
  readonly count: number;
  /** The first index; 0 by default. */
  readonly start: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly V1Taint[];
  readonly capacity?: Readonly<Record<string, string>>;
  readonly allocatable?: Readonly<Record<string, string>>;
  /** A manifest directory every node of the template runs. */
  readonly staticPodPath?: string;
  /** `<perNodeManifestDir>/<node>/`: manifests of one node only. */
  readonly perNodeManifestDir?: string;
  /** A manifest URL; `{node}` is replaced by the node name. */
  readonly manifestURL?: string;
  /**
   * Per-node kubelet settings (`kubelet:`), checked by the table of `run`'s configuration
   * (src/config/fields.ts), over the kubelet's defaults.
   */
  readonly kubelet: Readonly<Partial<AgentConfig>>;
  /**
   * A selector template names no node: it adopts the Nodes others create whose labels (and
   * annotations) match (kwok's `manageNodesWithLabelSelector` / `…AnnotationSelector`;
   * src/fleet/node-adoption.ts). Its capacity and allocatable are used only where the Node has none.
   */
  readonly labelSelector?: LabelSelector;
  readonly annotationSelector?: LabelSelector;
}

/** Whether the template adopts Nodes by selector instead of naming them. */
export const isSelectorTemplate = (t: NodeTemplate): boolean => t.labelSelector !== undefined || t.annotationSelector !== undefined;

export interface FleetNode {
  readonly name: string;
  /** Index of its template in `templates`. */
  readonly template: number;
  /** The template's manifest URL for this node, `{node}` filled in. */
  readonly manifestURL?: string;
  /** The directories its `file` source reads (shared first). */
  readonly manifestDirs: readonly string[];
}

export interface FleetConfig {
  /** One credential for the whole fleet (the ClusterRole in deploy/fleet/cluster-role.yaml). */
  readonly kubeconfig?: string;
  /** Per-node credentials: `<dir>/<node>.kubeconfig`, each `system:node:<node>`. */
  readonly nodeKubeconfigDir?: string;
  /** Fleet-wide: every API request of every node draws from this one bucket. */
  readonly kubeAPIQPS: number;
  readonly kubeAPIBurst: number;
  /** Fleet-wide bucket of Event writes. */
  readonly eventRecordQPS: number;
  readonly eventBurst: number;
  /** The fleet's read-only endpoint (`/healthz`, `/pods?node=`, `/metrics`); 0: off. */
  readonly readOnlyPort: number;
  readonly address: string;
  /**
   * Every node serves its own kubelet port (a free port on `address`, reported in its Node), so
   * the API server's node proxy and metrics-server reach each node's `/stats/summary` and
   * `/metrics/resource`; off by default.
   */
  readonly kubeletPorts: boolean;
  /** The CA the nodes' kubelet ports check client certificates against (the API server's). */
  readonly clientCAFile?: string;
  /** One serving certificate and key for every node's kubelet port; else each makes its own. */
  readonly tlsCertFile?: string;
  readonly tlsPrivateKeyFile?: string;
  /** The process's V8 headroom, % of the live heap (src/fleet/gc-settings.ts); 0: V8's own sizing. */
  readonly heapGrowingPercent: number;
  /** Whether V8's helper threads take part in scavenges (src/fleet/gc-settings.ts); off by default. */
  readonly parallelScavenge: boolean;
  /** How V8 grows the young generation (src/fleet/gc-settings.ts); 1 by default: never; 0: V8's own. */
  readonly semiSpaceGrowthFactor: number;
  /** Whether each full GC compacts the whole old generation (src/fleet/gc-settings.ts); on by default. */
  readonly compactEveryFullGc: boolean;
  /** Whether one full GC runs when the fleet goes quiet after busy work (src/fleet/settle-gc.ts); on by default. */
  readonly settleGc: boolean;
  /** Whether a held young generation may grow while the fleet is busy, given back once quiet (src/fleet/young-generation.ts); on by default. */
  readonly growYoungWhileBusy: boolean;
  /** Nodes between their start and their registration at once (src/fleet/bounded-start.ts); 0: all at once. */
  readonly nodeStartConcurrency: number;
  readonly templates: readonly NodeTemplate[];
  /** This replica's nodes: every templated node, or with `shard` those whose name hashes to it. */
  readonly nodes: readonly FleetNode[];
  /** `--shard i/n`: this replica runs the nodes whose name hashes to i modulo n. */
  readonly shard?: { readonly index: number; readonly count: number };
  /** Share the nodes with other replicas by Lease, as this identity (docs/fleet.md). */
  readonly shardByLease?: string;
  /** How the fleet's pods and nodes misbehave, fleet-wide (docs/fleet.md, "Scenarios"). */
  readonly scenarios: readonly Scenario[];
  /** The range every pod of the fleet takes its (simulated) address from: one status provider for all nodes. */
  readonly podCIDR: string;
}

export const FLEET_DEFAULTS = Object.freeze({
  kubeAPIQPS: 500,
  kubeAPIBurst: 1000,
  eventRecordQPS: 50,
  eventBurst: 100,
  readOnlyPort: 10255,
  address: '127.0.0.1',
  kubeletPorts: false,
  nodeStartConcurrency: 100,
  // A node's own range (run's 10.88.0.0/16) holds 65,533 pods: the kwok-sized workload of
  // 1,000 nodes × 100 pods needs more, and every pod of the fleet draws from one range.
  podCIDR: '10.128.0.0/9',
  ...FLEET_GC_DEFAULTS,
});

/** What the flags of `kubelet-pods fleet` say; each overrides the file. */
export interface FleetFlags {
  readonly config?: string;
  readonly nodes?: string;
  readonly nodeNamePrefix?: string;
  readonly kubeconfig?: string;
  readonly nodeKubeconfigDir?: string;
  readonly podManifestPath?: string;
  readonly perNodeManifestDir?: string;
  readonly manifestURL?: string;
  readonly kubeAPIQPS?: string;
  readonly kubeAPIBurst?: string;
  readonly readOnlyPort?: string;
  readonly address?: string;
  readonly podCIDR?: string;
  readonly heapGrowingPercent?: string;
  readonly parallelScavenge?: boolean;
  readonly semiSpaceGrowthFactor?: string;
  /** `--no-compact-every-full-gc`: false. */
  readonly compactEveryFullGc?: boolean;
  /** `--no-settle-gc`: false. */
  readonly settleGc?: boolean;
  /** `--no-grow-young-while-busy`: false (`--grow-young-while-busy`, the default: true). */
  readonly growYoungWhileBusy?: boolean;
  readonly nodeStartConcurrency?: string;
  readonly shard?: string;
  readonly shardByLease?: string;
  /**
   * `--manage-nodes-with-label-selector` / `--manage-nodes-with-annotation-selector`: one
   * selector template more, with the flags' manifest sources.
   */
  readonly labelSelector?: string;
  readonly annotationSelector?: string;
}

type Problem = [field: string, reason: string];

const TOP_FIELDS = new Set(['apiVersion', 'kind', 'kubeconfig', 'nodeKubeconfigDir', 'kubeAPIQPS', 'kubeAPIBurst', 'eventRecordQPS', 'eventBurst', 'readOnlyPort', 'address', 'kubeletPorts', 'clientCAFile', 'tlsCertFile', 'tlsPrivateKeyFile', 'heapGrowingPercent', 'parallelScavenge', 'semiSpaceGrowthFactor', 'compactEveryFullGc', 'settleGc', 'growYoungWhileBusy', 'nodeStartConcurrency', 'podCIDR', 'templates', 'shard', 'shardByLease', 'scenarios']);
const TEMPLATE_FIELDS = new Set(['name', 'count', 'start', 'labels', 'taints', 'capacity', 'allocatable', 'staticPodPath', 'perNodeManifestDir', 'manifestURL', 'kubelet', 'labelSelector', 'annotationSelector']);
/** What a selector template leaves to the Node's creator (src/fleet/node-adoption.ts). */
const NAMING_FIELDS = ['name', 'count', 'start', 'labels', 'taints'] as const;
/** The flags that give a selector template's fields, for the error messages. */
const SELECTOR_FLAGS = { labelSelector: '--manage-nodes-with-label-selector', annotationSelector: '--manage-nodes-with-annotation-selector' } as const;
/** The fields of the configuration table a template's `kubelet:` may set: those each node has for itself. */
export const PER_NODE_KUBELET_FIELDS: ReadonlySet<string> = new Set([
  'fileCheckFrequency',
  'httpCheckFrequency',
  'syncFrequency',
  'nodeStatusUpdateFrequency',
  'nodeStatusReportFrequency',
  'maxPods',
  'staticPodURLHeader',
  'simulatedLifecycle',
]);
const FLEET_WIDE_FIELDS: ReadonlySet<string> = new Set(['kubeAPIQPS', 'kubeAPIBurst', 'eventRecordQPS', 'eventBurst', 'scenarios', 'podCIDR']);

/** Why a field of the table is not a template's to set; undefined when it is. */
function notPerNode(f: ConfigField): string | undefined {
  if (f.field === undefined || PER_NODE_KUBELET_FIELDS.has(f.field)) return undefined;
  if (FLEET_WIDE_FIELDS.has(f.field)) return 'fleet-wide: set it at the top of the fleet file';
  if (f.field === 'staticPodPath') return "the template's staticPodPath and perNodeManifestDir set it";
  if (f.field === 'staticPodURL') return "the template's manifestURL sets it";
  return 'not a per-node setting in a fleet (docs/fleet.md)';
}
const TAINT_EFFECTS = new Set(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
const MAX_NODES = 100_000;

/** Reads the file (if any), applies the flags and checks everything. */
export async function loadFleetConfig(flags: FleetFlags, read: (path: string) => Promise<string> = (p) => readFile(p, 'utf8')): Promise<FleetConfig> {
  let raw: unknown = {};
  let where = 'flags';
  let base = process.cwd();
  if (flags.config !== undefined) {
    where = JSON.stringify(flags.config);
    base = dirname(resolvePath(flags.config));
    let text: string;
    try {
      text = await read(flags.config);
    } catch (err) {
      throw kpError('KP_ERR_FLEET_CONFIG', [where, 'file', 'cannot be read'], { cause: err });
    }
    try {
      raw = parseYaml(text) ?? {};
    } catch (err) {
      throw kpError('KP_ERR_FLEET_CONFIG', [where, 'file', `not YAML: ${(err as Error).message.split('\n')[0]}`], { cause: err });
    }
  }
  return resolveFleetConfig(raw, flags, where, base);
}

/** The checks of loadFleetConfig on an already parsed file (tests). */
export function resolveFleetConfig(raw: unknown, flags: FleetFlags, where = 'flags', base = process.cwd()): FleetConfig {
  const problems: Problem[] = [];
  const doc = isObject(raw) ? raw : (problems.push(['file', 'must be a mapping']), {});
  for (const key of Object.keys(doc)) if (!TOP_FIELDS.has(key)) problems.push([key, 'unknown field']);
  const path = (v: unknown, field: string): string | undefined => {
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') return (problems.push([field, 'must be a path']), undefined);
    return resolvePath(base, v);
  };
  const flagPath = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : resolvePath(v));
  const num = (v: unknown, field: string, dflt: number, max: number, integer: boolean): number => {
    if (v === undefined || v === null) return dflt;
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > max || (integer && !Number.isInteger(n))) {
      problems.push([field, `must be ${integer ? 'an integer' : 'a number'} from 0 to ${max}, got ${JSON.stringify(v)}`]);
      return dflt;
    }
    return n;
  };
  const bool = (v: unknown, field: string, dflt: boolean): boolean => {
    if (v === undefined || v === null) return dflt;
    if (typeof v === 'boolean') return v;
    problems.push([field, `must be true or false, got ${JSON.stringify(v)}`]);
    return dflt;
  };

  const kubeconfig = flagPath(flags.kubeconfig) ?? path(doc['kubeconfig'], 'kubeconfig');
  const nodeKubeconfigDir = flagPath(flags.nodeKubeconfigDir) ?? path(doc['nodeKubeconfigDir'], 'nodeKubeconfigDir');
  const config = {
    kubeAPIQPS: num(flags.kubeAPIQPS ?? doc['kubeAPIQPS'], 'kubeAPIQPS', FLEET_DEFAULTS.kubeAPIQPS, 1e6, false),
    kubeAPIBurst: num(flags.kubeAPIBurst ?? doc['kubeAPIBurst'], 'kubeAPIBurst', FLEET_DEFAULTS.kubeAPIBurst, 1e6, true),
    eventRecordQPS: num(doc['eventRecordQPS'], 'eventRecordQPS', FLEET_DEFAULTS.eventRecordQPS, 1e6, false),
    eventBurst: num(doc['eventBurst'], 'eventBurst', FLEET_DEFAULTS.eventBurst, 1e6, true),
    readOnlyPort: num(flags.readOnlyPort ?? doc['readOnlyPort'], 'readOnlyPort', FLEET_DEFAULTS.readOnlyPort, 65535, true),
    heapGrowingPercent: num(flags.heapGrowingPercent ?? doc['heapGrowingPercent'], 'heapGrowingPercent', FLEET_DEFAULTS.heapGrowingPercent, 1000, true),
    parallelScavenge: bool(flags.parallelScavenge ?? doc['parallelScavenge'], 'parallelScavenge', FLEET_DEFAULTS.parallelScavenge),
    semiSpaceGrowthFactor: num(flags.semiSpaceGrowthFactor ?? doc['semiSpaceGrowthFactor'], 'semiSpaceGrowthFactor', FLEET_DEFAULTS.semiSpaceGrowthFactor, 16, true),
    compactEveryFullGc: bool(flags.compactEveryFullGc ?? doc['compactEveryFullGc'], 'compactEveryFullGc', FLEET_DEFAULTS.compactEveryFullGc),
    settleGc: bool(flags.settleGc ?? doc['settleGc'], 'settleGc', FLEET_DEFAULTS.settleGc),
    growYoungWhileBusy: bool(flags.growYoungWhileBusy ?? doc['growYoungWhileBusy'], 'growYoungWhileBusy', FLEET_DEFAULTS.growYoungWhileBusy),
    kubeletPorts: bool(doc['kubeletPorts'], 'kubeletPorts', FLEET_DEFAULTS.kubeletPorts),
    nodeStartConcurrency: num(flags.nodeStartConcurrency ?? doc['nodeStartConcurrency'], 'nodeStartConcurrency', FLEET_DEFAULTS.nodeStartConcurrency, 1e6, true),
  };
  const kubeletPortFiles = {
    clientCAFile: path(doc['clientCAFile'], 'clientCAFile'),
    tlsCertFile: path(doc['tlsCertFile'], 'tlsCertFile'),
    tlsPrivateKeyFile: path(doc['tlsPrivateKeyFile'], 'tlsPrivateKeyFile'),
  };
  for (const [field, file] of Object.entries(kubeletPortFiles)) {
    if (file !== undefined && !config.kubeletPorts) problems.push([field, "is for the nodes' kubelet ports: set kubeletPorts: true"]);
  }
  if ((kubeletPortFiles.tlsCertFile === undefined) !== (kubeletPortFiles.tlsPrivateKeyFile === undefined)) {
    problems.push([kubeletPortFiles.tlsCertFile === undefined ? 'tlsCertFile' : 'tlsPrivateKeyFile', 'tlsCertFile and tlsPrivateKeyFile go together']);
  }
  const address = flags.address ?? doc['address'] ?? FLEET_DEFAULTS.address;
  if (typeof address !== 'string' || address === '') problems.push(['address', 'must be an IP address']);
  const podCIDR = flags.podCIDR ?? doc['podCIDR'] ?? FLEET_DEFAULTS.podCIDR;
  const podCIDRProblem = typeof podCIDR === 'string' ? podCidrProblem(podCIDR) : `must be a CIDR such as 10.128.0.0/9, got ${JSON.stringify(podCIDR)}`;
  if (podCIDRProblem !== undefined) problems.push([flags.podCIDR !== undefined ? '--pod-cidr' : 'podCIDR', podCIDRProblem]);

  // Templates: from the file, or one from the flags (`--nodes N --node-name-prefix sim-`), and
  // one selector template more from `--manage-nodes-with-*-selector`.
  let rawTemplates: { raw: unknown; at: string; fromFlags: boolean }[] = [];
  if (flags.nodes !== undefined) {
    rawTemplates = [{ raw: { name: `${flags.nodeNamePrefix ?? 'sim-'}{i}`, count: flags.nodes }, at: '--nodes', fromFlags: true }];
  } else if (doc['templates'] !== undefined) {
    if (Array.isArray(doc['templates'])) rawTemplates = doc['templates'].map((raw, i) => ({ raw, at: `templates[${i}]`, fromFlags: false }));
    else problems.push(['templates', 'must be a list']);
  }
  if (flags.labelSelector !== undefined || flags.annotationSelector !== undefined) {
    const raw = { ...(flags.labelSelector !== undefined ? { labelSelector: flags.labelSelector } : {}), ...(flags.annotationSelector !== undefined ? { annotationSelector: flags.annotationSelector } : {}) };
    rawTemplates.push({ raw, at: flags.labelSelector !== undefined ? SELECTOR_FLAGS.labelSelector : SELECTOR_FLAGS.annotationSelector, fromFlags: true });
  }
  if (rawTemplates.length === 0) problems.push(['templates', 'at least one node template is needed (or --nodes, or a --manage-nodes-with-*-selector)']);
  const templates: NodeTemplate[] = [];
  rawTemplates.forEach(({ raw: t, at, fromFlags }) => {
    const tpl = parseTemplate(t, at, problems, path, num, base, fromFlags ? SELECTOR_FLAGS : undefined);
    if (fromFlags) {
      const override = {
        ...(flagPath(flags.podManifestPath) ? { staticPodPath: flagPath(flags.podManifestPath)! } : {}),
        ...(flagPath(flags.perNodeManifestDir) ? { perNodeManifestDir: flagPath(flags.perNodeManifestDir)! } : {}),
        ...(flags.manifestURL ? { manifestURL: flags.manifestURL } : {}),
      };
      templates.push({ ...tpl, ...override });
    } else {
      templates.push(tpl);
    }
  });

  // Expand, refusing names that are invalid or taken by another template.
  const nodes: FleetNode[] = [];
  const owner = new Map<string, string>();
  templates.forEach((tpl, i) => {
    if (isSelectorTemplate(tpl)) {
      if (kubeconfig === undefined) problems.push([`${rawTemplates[i]!.at}`, 'a selector template needs kubeconfig (the one credential watches the Nodes and writes the adopted ones)']);
      return;
    }
    const at = flags.nodes !== undefined ? (flags.nodeNamePrefix !== undefined ? '--node-name-prefix' : '--nodes') : `templates[${i}].name`;
    if (tpl.count > 1 && !tpl.name.includes('{i}')) {
      problems.push([at, `${JSON.stringify(tpl.name)} names ${tpl.count} nodes without {i}, so they would all have the same name`]);
      return;
    }
    for (let k = 0; k < tpl.count; k++) {
      const name = tpl.name.replaceAll('{i}', String(tpl.start + k));
      if (!isValidNodeName(name)) {
        problems.push([at, `${JSON.stringify(name)} is not a valid node name (${NODE_NAME_RULE})`]);
        return;
      }
      const other = owner.get(name);
      if (other !== undefined) {
        problems.push([at, `node ${JSON.stringify(name)} is also named by ${other}`]);
        return;
      }
      owner.set(name, at);
      nodes.push(fleetNode(tpl, i, name));
    }
  });
  const shardText = flags.shard ?? doc['shard'];
  let shard: { index: number; count: number } | undefined;
  if (shardText !== undefined) {
    const m = typeof shardText === 'string' ? /^(\d+)\/(\d+)$/.exec(shardText) : null;
    if (m === null || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) problems.push([flags.shard !== undefined ? '--shard' : 'shard', `must be i/n with 0 <= i < n, got ${JSON.stringify(shardText)}`]);
    else shard = { index: Number(m[1]), count: Number(m[2]) };
  }
  const shardByLease = flags.shardByLease ?? doc['shardByLease'];
  if (shardByLease !== undefined) {
    if (typeof shardByLease !== 'string' || shardByLease === '') problems.push([flags.shardByLease !== undefined ? '--shard-by-lease' : 'shardByLease', 'must name this replica']);
    if (shard !== undefined) problems.push(['shardByLease', 'cannot be combined with shard']);
    if (kubeconfig === undefined) problems.push(['shardByLease', 'needs kubeconfig (the one credential)']);
  }
  // One list for the fleet; its node selectors (names, template labels) pick the pools.
  const scenarioProblems: string[] = [];
  const scenarios = parseScenarios(doc['scenarios'], 'scenarios', scenarioProblems);
  for (const problem of scenarioProblems) {
    const colon = problem.indexOf(': ');
    problems.push([problem.slice(0, colon), problem.slice(colon + 2)]);
  }
  if (nodes.length > MAX_NODES) problems.push(['templates', `${nodes.length} nodes; at most ${MAX_NODES}`]);
  if (kubeconfig === undefined && nodeKubeconfigDir === undefined) problems.push(['kubeconfig', 'one of kubeconfig (one credential) or nodeKubeconfigDir (one per node) is needed']);

  if (problems.length > 0) {
    const [field, reason] = problems[0]!;
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more: ${problems.slice(1).map(([f, r]) => `${f}: ${r}`).join('; ')})` : '';
    throw kpError('KP_ERR_FLEET_CONFIG', [where, field, `${reason}${more}`]);
  }
  const ownNodes = shard === undefined ? nodes : nodes.filter((n) => shardOf(n.name, shard.count) === shard.index);
  return deepFreeze({
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
    ...(nodeKubeconfigDir !== undefined ? { nodeKubeconfigDir } : {}),
    ...config,
    ...defaultRateForNodes(ownNodes.length, flags.kubeAPIQPS ?? doc['kubeAPIQPS'], flags.kubeAPIBurst ?? doc['kubeAPIBurst']),
    ...Object.fromEntries(Object.entries(kubeletPortFiles).filter(([, file]) => file !== undefined)),
    address: address as string,
    templates,
    nodes: ownNodes,
    ...(shard !== undefined ? { shard } : {}),
    ...(typeof shardByLease === 'string' && shardByLease !== '' ? { shardByLease } : {}),
    scenarios,
    podCIDR: podCIDR as string,
  });
}

/**
 * Requests per second per node that the default bucket leaves room for: a Lease renewal every
 * 10 s is 0.1, so twice that leaves as much again for status writes and pods. Without it the
 * fixed default of 500 would hold 10,000 nodes' 1,000 renewals a second to half (docs/fleet.md,
 * "At scale").
 */
export const FLEET_QPS_PER_NODE = 0.2;

/** kubeAPIQPS / kubeAPIBurst that grow with the nodes when the file and flags leave them unset. */
function defaultRateForNodes(nodes: number, qps: unknown, burst: unknown): { kubeAPIQPS?: number; kubeAPIBurst?: number } {
  const scaled = Math.ceil(nodes * FLEET_QPS_PER_NODE);
  if (scaled <= FLEET_DEFAULTS.kubeAPIQPS) return {};
  return {
    ...(qps === undefined || qps === null ? { kubeAPIQPS: scaled } : {}),
    ...(burst === undefined || burst === null ? { kubeAPIBurst: Math.max(FLEET_DEFAULTS.kubeAPIBurst, 2 * scaled) } : {}),
  };
}

/** Every node name the templates give (with no shard applied): the nodes the fleet has by name. */
export function templateNodeNames(templates: readonly NodeTemplate[]): Set<string> {
  const names = new Set<string>();
  for (const t of templates) for (let k = 0; k < t.count; k++) names.add(t.name.replaceAll('{i}', String(t.start + k)));
  return names;
}

/** One node of template `tpl` (number `index` in the file): its manifest sources filled in for `name`. */
export function fleetNode(tpl: NodeTemplate, index: number, name: string): FleetNode {
  const dirs = [tpl.staticPodPath, tpl.perNodeManifestDir !== undefined ? resolvePath(tpl.perNodeManifestDir, name) : undefined].filter((d): d is string => d !== undefined);
  return {
    name,
    template: index,
    manifestDirs: dirs,
    ...(tpl.manifestURL !== undefined ? { manifestURL: tpl.manifestURL.replaceAll('{node}', encodeURIComponent(name)) } : {}),
  };
}

function parseTemplate(
  t: unknown,
  at: string,
  problems: Problem[],
  path: (v: unknown, field: string) => string | undefined,
  num: (v: unknown, field: string, dflt: number, max: number, integer: boolean) => number,
  base: string,
  /** The flags that gave the selectors, named in their errors instead of the template's fields. */
  flagNames?: typeof SELECTOR_FLAGS,
): NodeTemplate {
  if (!isObject(t)) {
    problems.push([at, 'must be a mapping']);
    return { name: '', count: 0, start: 0, labels: {}, taints: [], kubelet: {} };
  }
  for (const key of Object.keys(t)) if (!TEMPLATE_FIELDS.has(key)) problems.push([`${at}.${key}`, 'unknown field']);
  const selector = (field: 'labelSelector' | 'annotationSelector'): LabelSelector | undefined => {
    const v = t[field];
    const where = flagNames?.[field] ?? `${at}.${field}`;
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') return (problems.push([where, 'must be a selector string such as "kwok.x-k8s.io/node=fake"']), undefined);
    const parsed = parseLabelSelector(v);
    return parsed.ok ? parsed.selector : (problems.push([where, `${JSON.stringify(v)}: ${parsed.reason}`]), undefined);
  };
  const labelSelector = selector('labelSelector');
  const annotationSelector = selector('annotationSelector');
  const selects = (t['labelSelector'] ?? t['annotationSelector'] ?? null) !== null;
  if (selects) {
    // The Nodes' creator names, labels and taints them; the template only says which to take.
    for (const field of NAMING_FIELDS) if (t[field] !== undefined) problems.push([`${at}.${field}`, 'a template with a selector adopts the Nodes others create: it cannot name, label or taint them']);
  }
  const name = selects ? '' : t['name'];
  if (!selects && (typeof name !== 'string' || name === '')) problems.push([`${at}.name`, 'must be a non-empty string (or give labelSelector or annotationSelector)']);
  const count = selects ? 0 : num(t['count'], `${at}.count`, 1, MAX_NODES, true);
  const start = num(t['start'], `${at}.start`, 0, 1e9, true);
  const stringMap = (v: unknown, field: string): Record<string, string> | undefined => {
    if (v === undefined || v === null) return undefined;
    if (!isObject(v)) return (problems.push([field, 'must be a mapping of strings']), undefined);
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(v)) {
      if (typeof val !== 'string' && typeof val !== 'number') problems.push([`${field}.${k}`, 'must be a string']);
      else out[k] = String(val);
    }
    return out;
  };
  const taints: V1Taint[] = [];
  if (t['taints'] !== undefined) {
    if (!Array.isArray(t['taints'])) problems.push([`${at}.taints`, 'must be a list']);
    else
      t['taints'].forEach((x: unknown, j: number) => {
        const f = `${at}.taints[${j}]`;
        if (!isObject(x) || typeof x['key'] !== 'string' || x['key'] === '') return void problems.push([f, 'needs a key']);
        if (typeof x['effect'] !== 'string' || !TAINT_EFFECTS.has(x['effect'])) return void problems.push([`${f}.effect`, 'must be NoSchedule, PreferNoSchedule or NoExecute']);
        taints.push({ key: x['key'], effect: x['effect'], ...(typeof x['value'] === 'string' ? { value: x['value'] } : {}) });
      });
  }
  const url = t['manifestURL'];
  if (url !== undefined && (typeof url !== 'string' || !/^https?:\/\//.test(url))) problems.push([`${at}.manifestURL`, 'must be an http or https URL']);
  const capacity = stringMap(t['capacity'], `${at}.capacity`);
  const allocatable = stringMap(t['allocatable'], `${at}.allocatable`);
  const staticPodPath = path(t['staticPodPath'], `${at}.staticPodPath`);
  const perNodeManifestDir = path(t['perNodeManifestDir'], `${at}.perNodeManifestDir`);
  let kubelet: Partial<AgentConfig> = {};
  if (t['kubelet'] !== undefined && t['kubelet'] !== null) {
    if (!isObject(t['kubelet'])) problems.push([`${at}.kubelet`, 'must be a mapping']);
    else {
      const found: string[] = [];
      kubelet = kubeletSettings(t['kubelet'], base, found, notPerNode);
      // Each problem starts with the field's path in the map.
      for (const problem of found) {
        const colon = problem.indexOf(': ');
        problems.push([`${at}.kubelet.${problem.slice(0, colon)}`, problem.slice(colon + 2)]);
      }
    }
  }
  const podsCapacity = capacity?.['pods'];
  if (kubelet.maxPods !== undefined && podsCapacity !== undefined && Number(podsCapacity) !== kubelet.maxPods) {
    problems.push([`${at}.kubelet.maxPods`, `${kubelet.maxPods} disagrees with ${at}.capacity.pods ${JSON.stringify(podsCapacity)}; give one of them`]);
  }
  return {
    name: typeof name === 'string' ? name : '',
    count,
    start,
    labels: stringMap(t['labels'], `${at}.labels`) ?? {},
    taints,
    ...(capacity ? { capacity } : {}),
    ...(allocatable ? { allocatable } : {}),
    ...(staticPodPath ? { staticPodPath } : {}),
    ...(perNodeManifestDir ? { perNodeManifestDir } : {}),
    ...(typeof url === 'string' ? { manifestURL: url } : {}),
    kubelet,
    ...(labelSelector !== undefined ? { labelSelector } : {}),
    ...(annotationSelector !== undefined ? { annotationSelector } : {}),
  };
}

/** The static shard of a node: FNV-1a of its name modulo `count` (stable across versions and replicas). */
export function shardOf(nodeName: string, count: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < nodeName.length; i++) {
    h ^= nodeName.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % count;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
