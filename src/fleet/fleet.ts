import { join } from 'node:path';
import type { V1Node, V1PodList } from '@kubernetes/client-node';
import { createAgent, type Agent } from '../agent/agent.js';
import type { AgentPartOverrides } from '../agent/parts.js';
import { loadAgentConfig, type AgentConfig } from '../config/agent-config.js';
import { loadKubeConfigFile } from '../kube/kubeconfig-file.js';
import { createApiClients, type ApiClients, type LeaseApi } from '../kube/api-clients.js';
import { kubeletUserAgent } from '../kube/api-transport.js';
import { createLeaseClient } from '../kube/lease-client.js';
import { createTokenBucket } from '../kube/rate-limiter.js';
import { childLogger, noopLogger, type Logger } from '../logger.js';
import { readMachineInfo } from '../node/machine-info.js';
import { isStaticPod } from '../pod/classify.js';
import { healthzRoute } from '../server/healthz.js';
import { createAgentServer, send, type AgentServer, type BoundAddress, type Route } from '../server/server.js';
import { createSimulatedStatusProvider } from '../runtime/simulated-runtime.js';
import { ownNodeLabels } from '../agent/node-scenarios.js';
import type { StatusProvider } from '../status/status-provider.js';
import { realClock, type Clock } from '../time/clock.js';
import { createSharedTimerClock } from '../time/shared-timer-clock.js';
import { startBounded } from './bounded-start.js';
import { createFileWatchHub } from './file-watch-hub.js';
import { fleetNode, isSelectorTemplate, shardOf, templateNodeNames, type FleetConfig, type FleetNode } from './fleet-config.js';
import { createFleetPools } from './fleet-pools.js';
import { createFleetMetrics, type FleetMetrics } from './fleet-metrics.js';
import { createMultiDirFileSource } from './multi-dir-file-source.js';
import { createLeaseFence, type LeaseFence } from './lease-fence.js';
import { createLeaseShards, type LeaseShards } from './lease-shards.js';
import { adoptedMaxPods, createNodeAdoption, type NodeAdoption } from './node-adoption.js';
import { createNodeCache, type NodeCache } from './node-cache.js';
import { createPodFanOut, kubePodsOnNodes, type PodFanOut } from './pod-fan-out.js';
import { shareStatusProvider } from './shared-status.js';
import { nodeLoopSpread } from './spread.js';

export interface FleetOptions {
  config: FleetConfig;
  logger?: Logger;
  clock?: Clock;
  /** The one status provider of the process; the simulated healthy start by default. */
  statusProvider?: StatusProvider;
  /** Replaces `config.readOnlyPort` (0: a free port; undefined here: the configured one). */
  readOnlyPort?: number;
  /** How long each node's stop() waits for API calls in flight; 5 s by default. */
  shutdownTimeoutMs?: number;
}

/** Many nodes in one process: one agent per node, over parts shared by all (docs/fleet.md). */
export interface Fleet {
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly nodes: readonly FleetNode[];
  agent(nodeName: string): Agent | undefined;
  /** The nodes this process runs now (with --shard-by-lease, those whose Lease it holds). */
  running(): string[];
  /** The Nodes created by others that a selector template took over (docs/fleet.md), run here or not. */
  adopted(): string[];
  /** Where the fleet's read-only endpoint listens, once started. */
  address(): BoundAddress | undefined;
  readonly metrics: FleetMetrics;
}

/** The period of the Lease renewals and Node status updates (the kubelet's 10 s). */
const NODE_LOOP_PERIOD_MS = 10_000;
/**
 * The nodes' loops end their waits on a 100 ms grid, so that renewals falling due together are
 * sent in one turn of the event loop; a renewal is at most 100 ms late for it (docs/performance.md,
 * "Notes moved from code comments").
 */
const LOOP_ALIGN_MS = 100;
/**
 * The nodes' other timers (housekeeping among them) fall due at instants of their own; each
 * may wait this much longer so that the shared clock wakes once per slot, not once per timer.
 */
const NODE_TIMER_SLOT_MS = 10;
/** How long a starting node may hold its slot without registering before the next one starts. */
const REGISTRATION_SLOT_MS = 30_000;

/**
 * The composition root of `kubelet-pods fleet`: it makes the parts shared by the process (one
 * connection pool, one rate limiter, one clock, one watch of pods with a fan-out by node, one
 * file watch per directory, one status provider, one metrics endpoint), then one agent per
 * node with `createAgent`, the code of `kubelet-pods run`, handed those parts.
 */
export async function createFleet(options: FleetOptions): Promise<Fleet> {
  const { config } = options;
  const logger = options.logger ?? noopLogger;
  const clock = options.clock ?? realClock;
  // The nodes' timers (six periodic ones a node) wait on one timer of the process.
  const nodeClock = createSharedTimerClock(clock, { slotMs: NODE_TIMER_SLOT_MS });
  const pools = createFleetPools(clock);
  const metrics = createFleetMetrics();
  const limiter = metrics.countRequests(createTokenBucket({ qps: config.kubeAPIQPS, burst: config.kubeAPIBurst, clock }));
  const eventLimiter = metrics.countRequests(createTokenBucket({ qps: config.eventRecordQPS, burst: config.eventBurst, clock }));
  // Each credential's clients, with the lean Lease client when the kubeconfig allows it.
  const clientsFor = (path: string): ApiClients & { leases: LeaseApi } => {
    const { kubeConfig, tokenFile } = loadKubeConfigFile(path);
    const userAgent = fleetUserAgent(config.shardByLease);
    const apis = createApiClients(kubeConfig, limiter, { eventLimiter, pool: pools.api, userAgent, ...(tokenFile !== undefined ? { tokenFile } : {}) });
    return { ...apis, leases: createLeaseClient(kubeConfig, limiter, { pool: pools.leases, userAgent, ...(tokenFile !== undefined ? { tokenFile } : {}) }) ?? apis.coordination };
  };
  const fleetApis = config.kubeconfig !== undefined ? clientsFor(config.kubeconfig) : undefined;
  // The one watch needs a credential that may watch every node's pods; node credentials may
  // only watch their own (the Node authorizer), so per-node mode without one watches per node.
  // Selector templates adopt Nodes others create (src/fleet/node-adoption.ts); they need the one credential.
  const adopting = fleetApis !== undefined && config.templates.some(isSelectorTemplate);
  let fanOut: PodFanOut | undefined;
  if (fleetApis !== undefined) {
    fanOut = createPodFanOut({
      listWatch: kubePodsOnNodes(fleetApis.kubeConfig, fleetApis.core),
      clock,
      logger: childLogger(logger, { component: 'pod-fan-out' }),
      // A Node adopted later starts with the pods already bound to it.
      keepOtherNodes: adopting,
    });
  }
  let adoption: NodeAdoption | undefined;
  if (adopting) {
    const named = templateNodeNames(config.templates);
    const shard = config.shard;
    adoption = createNodeAdoption({
      templates: config.templates,
      isNamed: (name) => named.has(name),
      ...(shard !== undefined ? { inShard: (name: string) => shardOf(name, shard.count) === shard.index } : {}),
      onAdopt: (name, template, node) => adopt(fleetNode(config.templates[template]!, template, name), node),
      onRelease: (name) => release(name),
      logger,
    });
  }
  let nodeCache: NodeCache | undefined;
  if (fleetApis !== undefined) {
    const names = new Set(config.nodes.map((n) => n.name));
    nodeCache = createNodeCache({
      kubeConfig: fleetApis.kubeConfig,
      clock,
      logger: childLogger(logger, { component: 'node-cache' }),
      isFleetNode: (name) => names.has(name) || (adoption?.isAdopted(name) ?? false),
      ...(adoption !== undefined ? { observer: adoption } : {}),
    });
  }
  const watchHub = createFileWatchHub(undefined, { clock });
  const machine = readMachineInfo();
  // The scenarios' pod behaviours, for every node; their node selectors see the templates' labels.
  const templateOf = new Map(config.nodes.map((n) => [n.name, config.templates[n.template]!]));
  const nodeLabels = (name: string): Record<string, string> | undefined => {
    const template = templateOf.get(name);
    // An adopted node: the labels its creator gave the Node.
    return template === undefined ? adoptedNodes.get(name)?.labels : ownNodeLabels(name, template.labels);
  };
  // A full range leaves pods Pending with no sandbox, which they alone do not explain.
  const onRangeFull = ({ cidr, capacity }: { cidr: string; capacity: bigint }): void =>
    logger.warn({ podCIDR: cidr, addresses: Number(capacity) }, 'the pod range is full: new pods stay Pending until a pod is gone; set podCIDR to a larger range');
  const statuses = shareStatusProvider(options.statusProvider ?? createSimulatedStatusProvider({ clock, scenarios: config.scenarios, nodeLabels, podCIDR: config.podCIDR, onRangeFull }));
  // Everything but the node's own names comes from the kubelet's defaults, as `run` resolves them.
  const { config: base } = await loadAgentConfig({ hostnameOverride: 'fleet', port: '0', readOnlyPort: '0', healthzPort: '0' });

  // Each template's settings, made once: a node's configuration has them as its prototype.
  const templateConfigs = new Map<number, AgentConfig>();
  const templateConfig = (index: number): AgentConfig => {
    let made = templateConfigs.get(index);
    if (made === undefined) {
      made = Object.freeze({
        ...base,
        ...config.templates[index]!.kubelet,
        // The node scenarios pick by name and template labels (src/agent/node-scenarios.ts).
        scenarios: config.scenarios,
        ...(config.kubeletPorts ? kubeletPortSettings(config) : {}),
      });
      templateConfigs.set(index, made);
    }
    return made;
  };
  const agents = new Map<string, Agent>();
  const byName = new Map(config.nodes.map((n) => [n.name, n]));
  /** Adopted nodes, with the pods their Node allowed and its labels when adopted (maxPods; what scenarios select by). */
  const adoptedNodes = new Map<string, { node: FleetNode; maxPods: number | undefined; labels: Record<string, string> }>();
  let shards: LeaseShards | undefined;
  /**
   * One node's agent: the agent of `run`, handed the shared parts. Under --shard-by-lease its
   * writes pass a fence (src/fleet/lease-fence.ts), opened by the claim at `leaseTakenAt`.
   */
  const makeAgent = (node: FleetNode, leaseTakenAt?: Date): Agent => {
    const template = config.templates[node.template]!;
    // An adopted node writes with the one credential: no per-node credential was made for it.
    const adopted = adoptedNodes.get(node.name);
    const kubeconfig = config.nodeKubeconfigDir !== undefined && adopted === undefined ? join(config.nodeKubeconfigDir, `${node.name}.kubeconfig`) : config.kubeconfig!;
    const nodeConfig = nodeConfigOf(templateConfig(node.template), {
      nodeName: node.name,
      kubeconfig,
      staticPodPath: node.manifestDirs[0],
      staticPodURL: node.manifestURL,
      maxPods: adopted?.maxPods ?? Number(template.capacity?.['pods'] ?? template.kubelet.maxPods ?? base.maxPods),
    });
    const dirs = node.manifestDirs;
    let fence: LeaseFence | undefined;
    if (config.shardByLease !== undefined) {
      fence = createLeaseFence({ nodeName: node.name, clock, logger });
      if (leaseTakenAt !== undefined) fence.renewed(leaseTakenAt);
    }
    const unfenced = kubeconfig !== config.kubeconfig ? clientsFor(kubeconfig) : fleetApis!;
    const apis = fence !== undefined ? fence.guard(unfenced) : unfenced;
    // What this node shares with the others; the agent makes the rest as `run` does (src/agent/parts.ts).
    const parts: AgentPartOverrides = {
      clock: nodeClock,
      // Only a node's own kubelet port shows its registry; the fleet's /metrics shows its values.
      registry: () => metrics.registryFor(node.name),
      statusProvider: () => statuses.forNode(node.name),
      apis,
      // The lean JSON client (src/kube/lease-client.ts): renewals are most of an idle fleet's requests.
      leaseApi: unfenced.leases,
      // Node read-backs answered from one watch of the fleet's Nodes (src/fleet/node-cache.ts).
      ...(nodeCache !== undefined ? { nodeApi: nodeCache.nodeApi(apis.core), nodeWatch: () => nodeCache.nodeWatch(node.name) } : {}),
      // This node's pods from the one watch of the process (src/fleet/pod-fan-out.ts).
      ...(fanOut !== undefined ? { podListWatch: { listWatch: fanOut.listWatchFor(node.name) } } : {}),
      // Several directories, one fs.watch per directory for the process (src/fleet/file-watch-hub.ts).
      createFileSource: (o) => createMultiDirFileSource(dirs, { ...o, watchPath: watchHub.watchPath, shareReading: watchHub.shareReading }),
      // Read once for the process.
      machine,
    };
    const agent = createAgent({
        config: nodeConfig,
        logger: childLogger(logger, { node: node.name }),
        parts,
        listenPorts: config.kubeletPorts ? { kubelet: 0 } : {},
        ...(options.shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs: options.shutdownTimeoutMs } : {}),
        // Object.assign, not spreads into a literal: such a copy with properties added gets a
        // hidden class of its own, about 200 bytes a node (docs/performance.md, "The fleet's
        // cost per pod").
        node: Object.assign(
          {},
          // An adopted Node keeps its creator's labels, taints and resources (the template's fill in missing resources).
          // (The labels are never written for an adopted Node; the node's scenarios select by them.)
          adopted !== undefined ? { adopted: true, labels: adopted.labels } : { labels: template.labels, taints: template.taints },
          template.capacity ? { capacity: template.capacity } : {},
          template.allocatable ? { allocatable: template.allocatable } : {},
          { spread: nodeLoopSpread(node.name, NODE_LOOP_PERIOD_MS, undefined, LOOP_ALIGN_MS) },
          config.shardByLease !== undefined
            ? {
                leaseHolder: config.shardByLease,
                onLeaseRenewed: (renewTime: Date) => fence?.renewed(renewTime),
                // Another replica holds the Lease: stop writing this node at once, try again later.
                onLeaseLost: () => {
                  fence?.revoke();
                  if (agents.get(node.name) !== agent) return;
                  agents.delete(node.name);
                  metrics.drop(node.name, agent);
                  void agent.stop().then(() => shards?.release(node.name));
                },
              }
            : {},
        ),
      });
    metrics.addNode(node.name, agent);
    return agent;
  };
  let started = false;
  let stopping = false;
  /** A Node a selector template took over: its agent now, or once its Lease is held. */
  const adopt = (node: FleetNode, found: V1Node): void => {
    adoptedNodes.set(node.name, { node, maxPods: adoptedMaxPods(found), labels: { ...found.metadata?.labels } });
    fanOut?.addNode(node.name);
    if (shards !== undefined) return shards.addNode(node.name);
    const agent = makeAgent(node);
    agents.set(node.name, agent);
    if (started) void agent.start();
  };
  /** An adopted node deleted or no longer selected: stop its agent and forget everything of it. */
  const release = (name: string): void => {
    adoptedNodes.delete(name);
    const agent = agents.get(name);
    agents.delete(name);
    const stopped = agent === undefined ? Promise.resolve() : (metrics.drop(name, agent), agent.stop());
    void Promise.all([stopped, shards?.removeNode(name)]).then(() => {
      // Unless adopted again meanwhile: then its stream and its pods are the new agent's.
      if (adoptedNodes.has(name)) return;
      fanOut?.removeNode(name);
      statuses.dropNode(name);
    });
  };
  for (const node of config.nodes) fanOut?.addNode(node.name);
  if (config.shardByLease === undefined) for (const node of config.nodes) agents.set(node.name, makeAgent(node));
  else
    shards = createLeaseShards({
      identity: config.shardByLease,
      nodes: config.nodes.map((n) => n.name),
      api: fleetApis!.leases,
      clock,
      logger,
      onAcquired: (name, renewTime) => {
        const node = byName.get(name) ?? adoptedNodes.get(name)?.node;
        if (node === undefined) return; // released meanwhile: its Lease expires unrenewed
        const agent = makeAgent(node, renewTime);
        agents.set(name, agent);
        void agent.start();
      },
    });

  const port = options.readOnlyPort ?? (config.readOnlyPort > 0 ? config.readOnlyPort : undefined);
  const server: AgentServer | undefined =
    port === undefined
      ? undefined
      : createAgentServer({
          address: config.address,
          port,
          setting: '--read-only-port or readOnlyPort',
          routes: [healthzRoute(), fleetPodsRoute(agents, statuses.provider, clock), metrics.route()],
        });
  let bound: BoundAddress | undefined;

  return {
    nodes: config.nodes,
    metrics,
    agent: (name) => agents.get(name),
    running: () => [...agents.keys()],
    adopted: () => [...adoptedNodes.keys()],
    address: () => bound,
    async start() {
      if (server !== undefined) bound = await server.listen();
      const named = [...agents.values()];
      started = true;
      fanOut?.start();
      nodeCache?.start();
      await startBounded(named, {
        limit: config.nodeStartConcurrency,
        start: (agent) => agent.start(),
        settled: (agent) => agent.nodeRegistered(REGISTRATION_SLOT_MS),
        stopped: () => stopping,
      });
      void Promise.allSettled(named.map((agent) => agent.nodeRegistered(REGISTRATION_SLOT_MS))).then(() => pools.registered());
      shards?.start();
      logger.info({ nodes: agents.size, mode: config.nodeKubeconfigDir !== undefined ? 'per-node' : 'fleet', readOnly: bound }, 'fleet started');
    },
    async stop() {
      stopping = true;
      await shards?.stop();
      await Promise.allSettled([...agents.values()].map((a) => a.stop()));
      await Promise.all([fanOut?.stop(), nodeCache?.stop()]);
      statuses.provider.stop?.();
      await server?.close();
      logger.info({ nodes: agents.size }, 'fleet stopped; mirror pods left in place');
    },
  };
}

/** What a fleet node's configuration has of its own; the rest is its template's. */
type NodeOwnConfig = Pick<AgentConfig, 'nodeName' | 'kubeconfig' | 'staticPodPath' | 'staticPodURL' | 'maxPods'>;

/**
 * A node's configuration: its own fields over its template's configuration, which is its
 * prototype, both frozen. Reads see every field, as on a copy; a copy of the template's 40-odd
 * fields cost each node about 340 bytes (docs/performance.md, "What an empty node costs", third
 * round). Defined, not assigned: the frozen prototype's fields are read-only.
 */
export function nodeConfigOf(template: AgentConfig, own: NodeOwnConfig): AgentConfig {
  const field = (value: unknown): PropertyDescriptor => ({ value, enumerable: true });
  return Object.freeze(
    Object.create(template, {
      nodeName: field(own.nodeName),
      kubeconfig: field(own.kubeconfig),
      staticPodPath: field(own.staticPodPath),
      staticPodURL: field(own.staticPodURL),
      maxPods: field(own.maxPods),
    }) as AgentConfig,
  );
}

/**
 * A node's kubelet port in a fleet: on the fleet's address, which its Node then reports as its
 * InternalIP (the address the API server's node proxy and metrics-server dial; a wildcard
 * leaves the machine's), with the kubelet's settings of a configuration file: no anonymous
 * requests, client certificates checked against `clientCAFile`, tokens by TokenReview,
 * everything authorized by SubjectAccessReview, both asked with the node's credential; the
 * fleet's one serving certificate if given, else each node makes a self-signed one at start.
 */
function kubeletPortSettings(config: FleetConfig): Partial<AgentConfig> {
  const wildcard = config.address === '0.0.0.0' || config.address === '::';
  return {
    address: config.address,
    ...(wildcard ? {} : { nodeIP: config.address }),
    anonymousAuth: false,
    authenticationTokenWebhook: true,
    authorizationMode: 'Webhook',
    ...(config.clientCAFile !== undefined ? { clientCAFile: config.clientCAFile } : {}),
    ...(config.tlsCertFile !== undefined ? { tlsCertFile: config.tlsCertFile } : {}),
    ...(config.tlsPrivateKeyFile !== undefined ? { tlsPrivateKeyFile: config.tlsPrivateKeyFile } : {}),
  };
}

/**
 * The fleet's User-Agent: the kubelet's field manager, as every node's writes have (see
 * kubeletUserAgent), then `kubelet-pods/fleet`; with --shard-by-lease it names the replica,
 * so that the API server's audit log tells which replica wrote what. Only visible ASCII
 * reaches the header.
 */
export function fleetUserAgent(identity: string | undefined): string {
  const fleet = kubeletUserAgent('kubelet-pods/fleet');
  return identity === undefined ? fleet : `${fleet} (replica ${identity.replace(/[^\x21-\x7e]|[()]/g, '_')})`;
}

/**
 * `/pods` of the fleet: `?node=<name>` lists that node's pods as its own `/pods` would (static
 * pods with the status the provider gives them); without it, every node's.
 */
function fleetPodsRoute(agents: ReadonlyMap<string, Agent>, provider: StatusProvider, clock: Clock): Route {
  return {
    path: '/pods',
    handle: (req, res) => {
      const node = new URL(req.url ?? '/', 'http://x').searchParams.get('node');
      const chosen = node === null ? [...agents.values()] : [agents.get(node)].filter((a): a is Agent => a !== undefined);
      if (node !== null && chosen.length === 0) {
        send(res, 404, 'text/plain; charset=utf-8', `no node ${JSON.stringify(node)} in this fleet`);
        return;
      }
      const now = clock.now();
      const items = chosen.flatMap((a) => a.podManager.getPods().map((pod) => (isStaticPod(pod) ? { ...pod, status: provider.statusFor(pod, now) } : pod)));
      const list: V1PodList = { kind: 'PodList', apiVersion: 'v1', metadata: {}, items };
      send(res, 200, 'application/json', JSON.stringify(list));
    },
  };
}
