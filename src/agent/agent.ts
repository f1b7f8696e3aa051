import { API_SERVER_SOURCE, FILE_SOURCE, HTTP_SOURCE } from '../constants.js';
import type { AgentConfig } from '../config/agent-config.js';
import { createPodAdmission, withAdmission } from '../admission/pod-admission.js';
import { createEventRecorder, lazyEventRecorder, noopEventRecorder, type EventRecorder } from '../events/event-recorder.js';
import { createStaticPodEvents, nodeEventRef, podEventRef } from '../events/static-pod-events.js';
import { childLogger, noopLogger, type Logger } from '../logger.js';
import { createKubeMirrorClient } from '../mirror/kube-mirror-client.js';
import { createMirrorSync, type MirrorSync } from '../mirror/mirror-sync.js';
import { ownNodeLabels, scenarioNodeConditions } from './node-scenarios.js';
import { createNodeLease, type NodeLease, type NodeLeaseOptions } from '../node/node-lease.js';
import { createNodeRegistration, type NodeRegistration, type NodeRegistrationOptions } from '../node/node-registration.js';
import { isStaticPod } from '../pod/classify.js';
import { PodManager } from '../pod/manager.js';
import { createResourceUsage, type ResourceUsage } from '../runtime/resource-usage.js';
import { createAgentMetrics, type AgentMetrics } from '../server/agent-metrics.js';
import { showNodeMetrics } from '../server/node-metrics-view.js';
import type { Registry } from 'prom-client';
import { createApiserverSource, type ApiserverSource } from '../sources/apiserver-source.js';
import type { FileSource } from '../sources/file-source.js';
import type { HttpSource } from '../sources/http-source.js';
import type { PodUpdate } from '../sources/types.js';
import { createPodConfig, type PodConfig } from '../sources/pod-config.js';
import type { UpdateStream } from '../sources/update-stream.js';
import { createSourcesReady, type SourcesReady } from '../sources/sources-ready.js';
import { loadPodSchema } from '../sources/validate.js';
import { createMirrorStatusWriter, type MirrorStatusWriter } from '../status/mirror-status-writer.js';
import { withAdoption } from '../status/adoption.js';
import type { StatusProvider } from '../status/status-provider.js';
import type { Clock, ClockTimer } from '../time/clock.js';
import { createAgentEndpoints, type AgentEndpoints, type BoundAddresses, type ListenPorts } from './endpoints.js';
import { late } from './late.js';
import type { AgentNodeOptions } from './node-options.js';
import { defaultParts, type AgentPartOverrides } from './parts.js';
import { createPodLifecycle, publishedPods, type PodLifecycle } from './pod-lifecycle.js';
import { createRelist, RELIST_PERIOD_MS, statusThroughSyncs, type Relist } from './relist.js';
import type { LoopSpread } from '../node/periodic-loop.js';
import { createPodUpdateDispatcher } from './pod-update-dispatcher.js';
import { createPodWorkers, type PodWorkers } from './pod-workers.js';
import type { Pod } from '../pod/types.js';
import { quantityValue } from '../values/quantity.js';

export interface AgentOptions {
  config: AgentConfig;
  /** pino or any logger of that shape; silent by default. */
  logger?: Logger;
  /**
   * The replaceable parts (clock, metrics registry, status provider, sources, API clients, Node
   * and Lease calls, machine): those given replace the defaults of src/agent/parts.ts. The fleet
   * hands its shared parts in here; tests a FakeClock.
   */
  parts?: AgentPartOverrides;
  /**
   * Where static pod statuses come from; the simulated healthy start by default. The same as
   * `parts.statusProvider` returning it, kept for the package's users.
   */
  statusProvider?: StatusProvider;
  /**
   * Listen ports that replace the configured ones, for tests and the demo: each endpoint named
   * here listens on that port (0 picks a free one), and the endpoints not named are off. When
   * absent, the configured ports apply and 0 there turns an endpoint off.
   */
  listenPorts?: ListenPorts;
  /** Orphaned-mirror housekeeping period; 2 s as in the kubelet. */
  housekeepingIntervalMs?: number;
  /** The relist period of the kubelet lifecycle (src/agent/relist.ts); 1 s as the kubelet's PLEG. */
  relistPeriodMs?: number;
  /** How long stop() waits for API calls in flight; 5 s by default. */
  shutdownTimeoutMs?: number;
  /** This node's labels, taints and resources, and the spread of its loops (the fleet's templates). */
  node?: AgentNodeOptions;
  /**
   * The sources start once the first Node registration and status write has been answered
   * (or has failed), at most `NODE_STATUS_FIRST_BOUND_MS` after start: with one thread, the
   * sources' first lists (1,000 mirrors from the API server) would otherwise hold back the write
   * that makes the Node Ready (`kubelet-pods run`; docs/performance.md, "Start and restart →
   * Node Ready"). Off by default.
   */
  nodeStatusFirst?: boolean;
}

/** The longest the sources wait for the first Node status write with `nodeStatusFirst`. */
export const NODE_STATUS_FIRST_BOUND_MS = 2000;

export interface Agent {
  readonly podManager: PodManager;
  /** The registry this node's /metrics serves, made at the first ask (parts.registry). */
  readonly registry: Registry;
  /** This node's metric values (the fleet shows every node's on its own /metrics). */
  readonly metrics: AgentMetrics;
  /** Starts sources, node registration, mirror sync, status and endpoints. */
  start(): Promise<void>;
  /**
   * Stops everything within the shutdown bound. Mirror pods stay in the API server, as the
   * kubelet leaves them; a restarted agent adopts them.
   */
  stop(): Promise<void>;
  /** Where the endpoints listen, once started (`kubelet`: the authenticated HTTPS port). */
  addresses(): BoundAddresses;
  /** True once every configured source has delivered a full set and it was applied. */
  allSourcesReady(): boolean;
  /**
   * Resolves true once this node's Node exists (registered or found), false after `timeoutMs`
   * or at once in standalone mode: the fleet starts its next node on it.
   */
  nodeRegistered(timeoutMs: number): Promise<boolean>;
  /** Resolves when no mirror work is queued, running or waiting to retry (tests, demo). */
  mirrorsIdle(): Promise<void>;
  /** Resolves when no Kubernetes Event is waiting to be written (tests). */
  eventsIdle(): Promise<void>;
  /** True when the agent talks to an API server (false in standalone mode). */
  readonly connected: boolean;
}

/**
 * The composition root of `kubelet-pods run`: sources → merge → pod manager → mirror sync,
 * status and node upkeep → API server. It only makes the parts, each from parts made before it,
 * and starts and stops them; what happens to pods is pod-lifecycle.ts, the endpoints are
 * endpoints.ts, and every replaceable part comes from parts.ts. Without a kubeconfig the agent
 * is standalone, as a kubelet without an API server is: it reads its sources and serves its
 * endpoints but creates no mirror pods.
 */
export function createAgent(options: AgentOptions): Agent {
  const { config } = options;
  const logger = options.logger ?? noopLogger;
  const parts = defaultParts(config, {
    ...(options.statusProvider !== undefined ? { statusProvider: () => options.statusProvider! } : {}),
    ...options.parts,
  });
  const { clock, cluster } = parts;
  // Plain values, shown by a registry only once one is asked for: a fleet node that is never
  // scraped on its own port holds no prom-client metric.
  const metrics = createAgentMetrics();
  const podManager = new PodManager();
  let registry: Registry | undefined;
  const nodeRegistry = (): Registry => (registry ??= showNodeMetrics(parts.registry(), () => [{ labels: {}, metrics, podManager }]));

  // Kubernetes Events about static and mirror pods (docs/events.md); without an API server
  // (or with `--events=false`) they go nowhere.
  const recorder =
    cluster !== undefined && config.events
      ? lazyEventRecorder(() =>
          createEventRecorder({ api: cluster.apis.events, nodeName: config.nodeName, clock, logger, onResult: (result) => metrics.recordEvent(result), nodeGone: () => nodeRegistration?.nodeGone() ?? false }),
        )
      : noopEventRecorder;
  const staticPodEvents = createStaticPodEvents({
    recorder,
    nodeName: config.nodeName,
    getMirrorPod: (podFullName) => podManager.getMirrorPodByFullName(podFullName),
  });

  // The merger logs its warnings itself; they count as errors of the source they came from.
  const podConfig = createPodConfig({
    logger,
    clock,
    onEvent: (event) => {
      metrics.recordSourceError(event.source);
      staticPodEvents.duplicateIgnored(event);
    },
  });
  const sourcesReady = createSourcesReady((seen) => podConfig.seenAllSources(seen));

  // Channels are registered in the kubelet's order (file, http, api) before any source runs:
  // registering a channel is what makes a source count towards "all sources ready".
  const sourceLogger = (source: string): Logger => countingErrors(logger, source, metrics);
  const fileSource = config.staticPodPath
    ? parts.createFileSource({
        path: config.staticPodPath,
        nodeName: config.nodeName,
        onUpdate: podConfig.channel(FILE_SOURCE),
        fileCheckFrequencyMs: config.fileCheckFrequencyMs,
        onRejected: (path, err) => staticPodEvents.manifestRejected(path, err),
        logger: sourceLogger(FILE_SOURCE),
        clock,
      })
    : undefined;
  const httpSource = config.staticPodURL
    ? parts.createHttpSource({
        url: config.staticPodURL,
        nodeName: config.nodeName,
        onUpdate: podConfig.channel(HTTP_SOURCE),
        headers: config.staticPodURLHeader,
        httpCheckFrequencyMs: config.httpCheckFrequencyMs,
        onRejected: (url, err) => staticPodEvents.manifestURLRejected(url, err),
        logger: sourceLogger(HTTP_SOURCE),
        clock,
      })
    : undefined;
  const apiSource =
    cluster &&
    createApiserverSource({
      ...cluster.podListWatch,
      nodeName: config.nodeName,
      onUpdate: podConfig.channel(API_SERVER_SOURCE),
      logger: sourceLogger(API_SERVER_SOURCE),
      clock,
    });

  // Where the endpoints listen, filled as they bind at start; the Node reports the kubelet port.
  const bound: BoundAddresses = {};
  const nodeRegistration =
    cluster &&
    createNodeRegistration({
      nodeName: config.nodeName,
      api: cluster.nodeApi,
      internalIP: config.nodeIP,
      maxPods: config.maxPods,
      // The port the kubelet endpoint listens on; the configured one when it is off.
      kubeletPort: () => bound.kubelet?.port ?? config.port,
      nodeStatusUpdateFrequencyMs: config.nodeStatusUpdateFrequencyMs,
      nodeStatusReportFrequencyMs: config.nodeStatusReportFrequencyMs,
      machine: cluster.machine,
      watch: cluster.nodeWatch(logger),
      ...nodeExtras(options.node),
      ...scenarioConditions(config, options.node, clock),
      clock,
      logger,
    });
  // One function for the Lease, the mirror client and mirror sync, which each keep it.
  const getNode = nodeRegistration && (() => nodeRegistration.getNode());
  const nodeLease =
    cluster &&
    getNode &&
    createNodeLease({ nodeName: config.nodeName, api: cluster.leaseApi, getNode, ...leaseExtras(options.node), clock, logger });

  const admission = createPodAdmission(() => {
    // CPU and memory as our Node reports them (the machine's, or the fleet's template);
    // before registration, or standalone, only the pods count is checked. The pods allocatable
    // our Node reports is `maxPods`: asking the configuration rather than the Node object
    // admits the same way before registration.
    const node = nodeRegistration?.currentNode();
    const reported = node?.status?.allocatable;
    const resources = reported === undefined ? {} : pickDefined({ cpu: reported['cpu'], memory: reported['memory'] });
    return {
      status: { allocatable: { ...resources, pods: String(config.maxPods) } },
      // Node affinity reads the Node's labels: those of the registered Node, else the ones the
      // agent registers it with (standalone, or before registration).
      metadata: { name: config.nodeName, labels: node?.metadata?.labels ?? ownNodeLabels(config.nodeName) },
      // NoExecute taints are checked for pods from the API server, which need the Node anyway.
      spec: { taints: node?.spec?.taints ?? [] },
    };
  }, clock);

  // The kubelet lifecycle: pods run through pod workers (graceful termination, one running
  // static pod per full name); `instant` leaves them out, so that mirrors follow the pod manager
  // at once. The workers are the one cycle here: the runtime's container GC, the status writer,
  // mirror sync and the lifecycle rules ask them, and they call back into those; so they are
  // made last, set once, and read only once those run.
  const workersLate = config.simulatedLifecycle === 'kubelet' ? late<PodWorkers>('the pod workers') : undefined;
  const statusProvider = withAdoption(podManager, withAdmission(
    parts.statusProvider({ shouldPodContentBeRemoved: (uid) => workersLate?.get().shouldPodContentBeRemoved(uid) ?? true }),
    admission,
    { hostIP: config.nodeIP },
  ));
  // The kubelet lifecycle sees the runtime through a relist, as the kubelet through its PLEG:
  // its changes reach the pod workers at the next relist, and the status writer through them.
  const relistPeriodMs = options.relistPeriodMs ?? RELIST_PERIOD_MS;
  const relist = workersLate && createRelist({ clock, periodMs: relistPeriodMs, phaseMs: relistPhase(options.node?.spread, relistPeriodMs) });
  // What the runtime reports about containers becomes Events on their pod, as the kubelet's.
  const stopContainerEvents = statusProvider.onContainerEvent?.((e) => {
    // The kubelet's DNS warning goes to the Node first, then the pod.
    if (e.nodeMessage !== undefined) recorder.event(nodeEventRef(config.nodeName), e.type, e.reason, e.nodeMessage);
    recorder.event(podEventRef(e.pod, e.fieldPath), e.type, e.reason, e.message);
  });

  const statusWriter =
    cluster &&
    createMirrorStatusWriter({
      podManager,
      statusProvider: relist !== undefined ? statusThroughSyncs(statusProvider) : statusProvider,
      api: cluster.apis.core,
      clock,
      logger,
      onWrite: (result) => metrics.recordStatusWrite(result),
      previousStatusKnown: () => sourcesReady.seen(API_SERVER_SOURCE),
      ...(workersLate !== undefined ? { publishedPods: publishedPods(podManager, workersLate.get, (uid) => admission.rejection(uid) !== undefined) } : {}),
    });
  const mirrorClient =
    cluster &&
    getNode &&
    createKubeMirrorClient({
      api: cluster.apis.core,
      nodeName: config.nodeName,
      getNode,
      logger,
      onDeleteRefused: (podFullName, uid, refusal) => {
        // A delete with a UID precondition is the replacement of an outdated mirror.
        const pod = podManager.getPodByFullName(podFullName);
        const mirror = podManager.getMirrorPodByFullName(podFullName);
        if (uid !== undefined && pod && isStaticPod(pod) && mirror?.metadata?.uid === uid) {
          staticPodEvents.mirrorNotReplaced(pod, mirror, podFullName, refusal);
        }
      },
    });
  const mirrorSync =
    mirrorClient &&
    createMirrorSync({
      podManager,
      mirrorClient,
      getNode,
      allSourcesReady: () => sourcesReady.allReady(),
      ...(workersLate !== undefined
        ? {
            isTerminating: (name: string) => workersLate.get().isPodTerminatingByFullName(name),
            // Rejected pods have no worker and keep their mirror, as before.
            mayRun: (pod: Pod) => {
              const uid = pod.metadata?.uid ?? '';
              const workers = workersLate.get();
              return workers.state(uid) === undefined || workers.isSyncing(uid);
            },
          }
        : {}),
      clock,
      logger,
      onAction: (action, result, _name, seconds) => {
        metrics.recordMirrorOperation(action, result);
        if (result !== 'skipped') metrics.observeSyncDuration(seconds);
      },
      onCreateFailed: (pod, podFullName, err) => staticPodEvents.mirrorCreateFailed(pod, podFullName, err),
    });
  // Mirrors wait for the Node; the moment it exists, every static pod gets its turn.
  if (mirrorSync !== undefined) nodeRegistration?.onReady(() => mirrorSync.enqueueAll());

  const lifecycle = createPodLifecycle({
    podManager,
    admission,
    sourcesReady,
    workers: workersLate?.get,
    runtime: statusProvider,
    mirrorSync,
    statusWriter,
    deletePod: mirrorClient && ((podFullName, uid) => mirrorClient.deleteMirrorPod(podFullName, uid)),
    metrics,
    clock,
    logger,
  });
  const workers =
    workersLate &&
    createPodWorkers({
      terminate: (pod, grace) => statusProvider.terminate?.(pod, grace) ?? Promise.resolve(),
      ...lifecycle.workerHooks,
      ...(relist !== undefined ? { relist } : {}),
      clock,
      logger,
    });
  if (workers !== undefined) workersLate?.set(workers);

  const dispatch = createPodUpdateDispatcher({ podManager, sourcesReady, logger, onPodsChanged: (pods, op) => lifecycle.onPodsChanged(pods, op) });
  // What the running containers use, for /stats/summary and /metrics/resource: the status the
  // writer last computed says which containers run and since when.
  // Made at the first question (a scrape of /stats/summary or /metrics/resource), counting from now.
  // A number, not the Date: a fleet node that is never asked holds no Date for it.
  const usageFrom = clock.now().getTime();
  let resourceUsage: ResourceUsage | undefined;
  const usageOf = () =>
    (resourceUsage ??= createResourceUsage({
      clock,
      logger,
      startTime: new Date(usageFrom),
      scenarios: config.scenarios,
      nodeLabels: (name) => (name === config.nodeName ? ownNodeLabels(config.nodeName, options.node?.labels) : undefined),
      ...(parts.usageOverride !== undefined ? { override: parts.usageOverride } : {}),
    }));
  const nodeUsage = () => {
    const memory = quantityValue(String(nodeRegistration?.currentNode()?.status?.capacity?.['memory'] ?? ''));
    const memoryBytes = Number.isFinite(memory) ? memory : cluster?.machine.memoryBytes;
    const pods = podManager.getPods().map((pod) => ({ pod, status: statusWriter?.getPodStatus(pod.metadata?.uid ?? '') }));
    return usageOf().measure(pods, memoryBytes !== undefined ? { memoryBytes } : {});
  };
  const endpoints = createAgentEndpoints({
    config,
    ...(options.listenPorts !== undefined ? { listenPorts: options.listenPorts } : {}),
    podManager,
    registry: nodeRegistry,
    statusFor: (pod) => statusWriter?.getPodStatus(pod.metadata?.uid ?? ''),
    containerLogs: (uid, container) => statusProvider.containerLogs?.(uid, container),
    usage: nodeUsage,
    apis: cluster?.apis,
    bound,
    clock,
    logger,
  });

  return new NodeAgent({
    podManager,
    metrics,
    nodeRegistry,
    connected: cluster !== undefined,
    config,
    clock,
    logger,
    housekeepingMs: options.housekeepingIntervalMs ?? 2000,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5000,
    nodeStatusFirst: options.nodeStatusFirst === true,
    endpoints,
    bound,
    relist,
    lifecycle,
    statusProvider,
    podConfig,
    dispatch,
    sourcesReady,
    nodeRegistration,
    nodeLease,
    statusWriter,
    mirrorSync,
    workers,
    fileSource,
    httpSource,
    apiSource,
    recorder,
    stopContainerEvents,
  });
}

/** What a NodeAgent is made of: createAgent's parts. */
interface NodeAgentParts {
  readonly podManager: PodManager;
  readonly metrics: AgentMetrics;
  readonly nodeRegistry: () => Registry;
  readonly connected: boolean;
  readonly config: AgentConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly housekeepingMs: number;
  readonly shutdownTimeoutMs: number;
  readonly nodeStatusFirst: boolean;
  readonly endpoints: AgentEndpoints;
  readonly bound: BoundAddresses;
  readonly relist: Relist | undefined;
  readonly lifecycle: PodLifecycle;
  readonly statusProvider: StatusProvider;
  readonly podConfig: PodConfig;
  readonly dispatch: (update: PodUpdate) => void;
  readonly sourcesReady: SourcesReady;
  readonly nodeRegistration: NodeRegistration | undefined;
  readonly nodeLease: NodeLease | undefined;
  readonly statusWriter: MirrorStatusWriter | undefined;
  readonly mirrorSync: MirrorSync | undefined;
  readonly workers: PodWorkers | undefined;
  readonly fileSource: FileSource | undefined;
  readonly httpSource: HttpSource | undefined;
  readonly apiSource: ApiserverSource | undefined;
  readonly recorder: EventRecorder;
  readonly stopContainerEvents: (() => void) | undefined;
}

/**
 * The agent createAgent returns. A class, its methods and the `registry` getter on the
 * prototype: as an object literal with a closure per method (and the getter defined on it,
 * which left it in dictionary mode) it cost a fleet node about 1.3 KB (docs/performance.md,
 * "What an empty node costs", third round).
 */
class NodeAgent implements Agent {
  readonly podManager: PodManager;
  readonly metrics: AgentMetrics;
  readonly connected: boolean;
  readonly #p: NodeAgentParts;
  // What runs between start() and stop(): state of the run, not parts.
  #housekeeping: ClockTimer | undefined;
  #resync: ClockTimer | undefined;
  #unsubscribeRuntime: (() => void) | undefined;
  #unsubscribeRelist: (() => void) | undefined;
  #dispatchLoop: Promise<void> | undefined;
  #stopped = false;

  constructor(parts: NodeAgentParts) {
    this.podManager = parts.podManager;
    this.metrics = parts.metrics;
    this.connected = parts.connected;
    this.#p = parts;
  }

  get registry(): Registry {
    return this.#p.nodeRegistry();
  }

  async start(): Promise<void> {
    const p = this.#p;
    const { relist, lifecycle, statusProvider, nodeRegistration, clock, mirrorSync, config, bound } = p;
    // Ports first: a port that is taken fails the start before anything else has begun.
    await p.endpoints.listen();
    const statusFirst = nodeRegistration !== undefined && p.nodeStatusFirst;
    if (!statusFirst) await this.#loadManifestChecks();
    if (relist !== undefined) {
      this.#unsubscribeRelist = relist.onChanges((uids) => lifecycle.onRelist(uids));
      this.#unsubscribeRuntime = statusProvider.onChange?.((uid) => relist.runtimeChanged(uid));
    }
    this.#dispatchLoop = eachUpdate(p.podConfig.updates, p.dispatch);
    // With nodeStatusFirst the Node's watch and the Lease wait for the first status write too:
    // its create, read and PATCH then go out alone, on one connection, where four opened at
    // once had as many TLS handshakes to make first (docs/kubelet-differences.md).
    nodeRegistration?.start({ watch: !statusFirst });
    if (!statusFirst) p.nodeLease?.start();
    p.statusWriter?.start();
    if (statusFirst) {
      // The attempt the loop has just scheduled, run now and shared with it; the validator
      // is loaded after it, since loading it would hold the status write back too.
      void untilOrAfter(nodeRegistration.syncNow(), clock, NODE_STATUS_FIRST_BOUND_MS)
        .then(() => {
          if (this.#stopped) return;
          nodeRegistration.startWatch();
          p.nodeLease?.start();
        })
        .then(() => this.#loadManifestChecks())
        .then(
          () => this.#startSources(),
          (err: unknown) => {
            p.logger.error({ err }, 'loading the Pod schema validator failed');
            this.#startSources();
          },
        );
    } else {
      this.#startSources();
    }
    this.#housekeeping = clock.setInterval(() => lifecycle.housekeeping(), p.housekeepingMs);
    this.#resync = clock.setInterval(() => mirrorSync?.enqueueAll(), config.syncFrequencyMs);
    p.logger.info(
      {
        node: config.nodeName,
        sources: p.podConfig.sources(),
        standalone: !config.kubeconfig,
        readOnly: bound.readOnly,
        healthz: bound.healthz,
        kubelet: bound.kubelet,
      },
      'agent started',
    );
  }

  // The file and HTTP sources check each manifest against the Pod schema, whose validator is
  // loaded apart (src/sources/validate.ts); the API source reads no manifest.
  #loadManifestChecks(): Promise<void> {
    return this.#p.fileSource !== undefined || this.#p.httpSource !== undefined ? loadPodSchema() : Promise.resolve();
  }

  #startSources(): void {
    if (this.#stopped) return;
    this.#p.fileSource?.start();
    this.#p.httpSource?.start();
    this.#p.apiSource?.start();
  }

  async stop(): Promise<void> {
    const p = this.#p;
    const { clock } = p;
    this.#stopped = true;
    if (this.#housekeeping !== undefined) clock.clearInterval(this.#housekeeping);
    if (this.#resync !== undefined) clock.clearInterval(this.#resync);
    this.#housekeeping = this.#resync = undefined;
    this.#unsubscribeRuntime?.();
    this.#unsubscribeRelist?.();
    await p.workers?.stop();
    p.lifecycle.stop();
    p.relist?.stop();
    const sourcesStopped = [p.fileSource?.stop(), p.httpSource?.stop()];
    // Mirror work stops at once; the API calls it has in flight finish within the bound.
    const mirrorsStopped = p.mirrorSync?.stop();
    const mergerStopped = p.podConfig.stop();
    let boundTimer: ClockTimer | undefined;
    const shutdownBound = new Promise<void>((resolve) => {
      boundTimer = clock.setTimeout(resolve, p.shutdownTimeoutMs);
    });
    await Promise.race([
      Promise.allSettled([
        ...sourcesStopped,
        mergerStopped,
        p.apiSource?.stop(),
        p.statusWriter?.stop(),
        p.nodeLease?.stop(),
        p.nodeRegistration?.stop(),
        mirrorsStopped,
        this.#dispatchLoop,
        p.recorder.stop(),
        p.endpoints.close(),
      ]),
      shutdownBound,
    ]);
    clock.clearTimeout(boundTimer);
    p.stopContainerEvents?.();
    p.statusProvider.stop?.();
    p.logger.info({ node: p.config.nodeName }, 'agent stopped; mirror pods left in place');
  }

  addresses(): BoundAddresses {
    return { ...this.#p.bound };
  }

  allSourcesReady(): boolean {
    return this.#p.sourcesReady.allReady();
  }

  nodeRegistered(timeoutMs: number): Promise<boolean> {
    const { nodeRegistration, clock } = this.#p;
    if (nodeRegistration === undefined) return Promise.resolve(false);
    if (nodeRegistration.currentNode() !== undefined) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (registered: boolean): void => {
        clock.clearTimeout(timer);
        unsubscribe();
        resolve(registered);
      };
      const unsubscribe = nodeRegistration.onReady(() => done(true));
      const timer = clock.setTimeout(() => done(false), timeoutMs);
    });
  }

  mirrorsIdle(): Promise<void> {
    return this.#p.mirrorSync?.idle() ?? Promise.resolve();
  }

  eventsIdle(): Promise<void> {
    return this.#p.recorder.idle();
  }
}

/**
 * Where in the relist period this node relists: none of its own for one node; in a fleet, its
 * loops' phase (a fraction of their period fixed by the node's name), on their grid, so that the
 * nodes' relists fall due spread over the second.
 */
function relistPhase(spread: LoopSpread | undefined, periodMs: number): number {
  if (spread === undefined) return 0;
  const phase = spread.firstPeriodMs % periodMs;
  return spread.alignMs !== undefined && spread.alignMs > 0 ? phase - (phase % spread.alignMs) : phase;
}

/** Resolves when `work` settles or `boundMs` of `clock` have passed, whichever comes first. */
function untilOrAfter(work: Promise<unknown>, clock: Clock, boundMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = clock.setTimeout(resolve, boundMs);
    const done = (): void => {
      clock.clearTimeout(timer);
      resolve();
    };
    work.then(done, done);
  });
}

/** The node lease options that come from the fleet's templates and sharding. */
function leaseExtras(node: AgentNodeOptions | undefined): Partial<NodeLeaseOptions> {
  return {
    ...(node?.spread ? { spread: node.spread } : {}),
    ...(node?.leaseHolder !== undefined ? { holderIdentity: node.leaseHolder } : {}),
    ...(node?.onLeaseLost ? { onLost: node.onLeaseLost } : {}),
    ...(node?.onLeaseRenewed ? { onRenewed: node.onLeaseRenewed } : {}),
  };
}

/** The node registration options that come from the fleet's templates. */
function nodeExtras(node: AgentNodeOptions | undefined): Partial<NodeRegistrationOptions> {
  return {
    ...(node?.adopted ? { adopted: true } : {}),
    ...(node?.labels ? { labels: { ...node.labels } } : {}),
    ...(node?.taints ? { taints: node.taints } : {}),
    ...(node?.capacity ? { capacity: node.capacity } : {}),
    ...(node?.allocatable ? { allocatable: node.allocatable } : {}),
    ...(node?.spread ? { spread: node.spread } : {}),
  };
}

/** The Node conditions the configured scenarios turn bad on this node, if any pick it. */
function scenarioConditions(config: AgentConfig, node: AgentNodeOptions | undefined, clock: Clock): Partial<NodeRegistrationOptions> {
  const goneBad = scenarioNodeConditions(config.scenarios, config.nodeName, ownNodeLabels(config.nodeName, node?.labels), clock);
  return goneBad === undefined ? {} : { conditionsGoneBad: goneBad };
}

/** A logger for one source that also counts its errors and warnings in the metrics. */
function countingErrors(logger: Logger, source: string, metrics: AgentMetrics): Logger {
  return new CountingLogger(childLogger(logger, { source }), source, metrics);
}

// A class, its methods on the prototype: a fleet node has one per source, and four closures each.
class CountingLogger implements Logger {
  readonly #out: Logger;
  readonly #source: string;
  readonly #metrics: AgentMetrics;

  constructor(out: Logger, source: string, metrics: AgentMetrics) {
    this.#out = out;
    this.#source = source;
    this.#metrics = metrics;
  }

  debug(obj: object, msg?: string): void {
    this.#out.debug(obj, msg);
  }
  info(obj: object, msg?: string): void {
    this.#out.info(obj, msg);
  }
  warn(obj: object, msg?: string): void {
    this.#metrics.recordSourceError(this.#source);
    this.#out.warn(obj, msg);
  }
  error(obj: object, msg?: string): void {
    this.#metrics.recordSourceError(this.#source);
    this.#out.error(obj, msg);
  }
}

/**
 * Hands each update of `stream` to `handle`, in order, until the stream ends (resolves) or
 * `handle` throws (rejects), as `for await` would; without an async function, whose suspended
 * frame a waiting fleet node would keep (docs/performance.md, "What an empty node costs").
 */
function eachUpdate<T>(stream: UpdateStream<T>, handle: (update: T) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const step = (result: IteratorResult<T>): void => {
      if (result.done === true) return resolve();
      try {
        handle(result.value);
      } catch (err) {
        return reject(err);
      }
      stream.next().then(step, reject);
    };
    stream.next().then(step, reject);
  });
}

/** The entries whose value is defined. */
function pickDefined(entries: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).filter((e): e is [string, string] => e[1] !== undefined));
}
