import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { API_SERVER_SOURCE, FILE_SOURCE, HTTP_SOURCE, PodOperation } from '../constants.js';
import type { AgentConfig } from '../config/agent-config.js';
import { createPodAdmission, withAdmission } from '../admission/pod-admission.js';
import { createEventRecorder, noopEventRecorder, type EventRecorder } from '../events/event-recorder.js';
import { createStaticPodEvents } from '../events/static-pod-events.js';
import { createApiClients, type ApiClients } from '../kube/api-clients.js';
import { kpError } from '../errors.js';
import { createTokenBucket } from '../kube/rate-limiter.js';
import { noopLogger, type Logger } from '../logger.js';
import { createKubeMirrorClient } from '../mirror/kube-mirror-client.js';
import { createMirrorSync, type MirrorSync } from '../mirror/mirror-sync.js';
import { createNodeLease, type NodeLease, type NodeLeaseOptions } from '../node/node-lease.js';
import { createNodeRegistration, type NodeRegistration, type NodeRegistrationOptions } from '../node/node-registration.js';
import { getPodFullName, isStaticPod } from '../pod/classify.js';
import { PodManager } from '../pod/manager.js';
import { createAgentMetrics, type AgentMetrics } from '../server/agent-metrics.js';
import { configzRoute } from '../server/configz.js';
import { containerLogsRoute } from '../server/container-logs.js';
import { healthzRoute } from '../server/healthz.js';
import { createKubeletAuth } from '../server/kubelet-auth.js';
import { loadServingTLS } from '../server/serving-cert.js';
import { metricsRoute } from '../server/metrics.js';
import { podsRoute } from '../server/pods.js';
import { createAgentServer, type AgentServer, type BoundAddress } from '../server/server.js';
import { createApiserverSource, type ApiserverSource } from '../sources/apiserver-source.js';
import { createFileSource, type FileSource } from '../sources/file-source.js';
import { createHttpSource, type HttpSource } from '../sources/http-source.js';
import { createPodConfig } from '../sources/pod-config.js';
import { createSourcesReady } from '../sources/sources-ready.js';
import { createMirrorStatusWriter, type MirrorStatusWriter } from '../status/mirror-status-writer.js';
import { createSimulatedStatusProvider, type StatusProvider } from '../status/status-provider.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import { createPodUpdateDispatcher } from './pod-update-dispatcher.js';
import type { AgentNodeOptions, AgentSharedParts } from './shared-parts.js';

export interface AgentOptions {
  config: AgentConfig;
  /** pino or any logger of that shape; silent by default. */
  logger?: Logger;
  /** Where every metric is registered; a new registry by default. */
  registry?: Registry;
  /** Where static pod statuses come from; the simulated healthy start by default. */
  statusProvider?: StatusProvider;
  /**
   * Listen ports that replace the configured ones, for tests and the demo: each endpoint named
   * here listens on that port (0 picks a free one), and the endpoints not named are off. When
   * absent, the configured ports apply and 0 there turns an endpoint off.
   */
  listenPorts?: { readOnly?: number; healthz?: number; kubelet?: number };
  /** Orphaned-mirror housekeeping period; 2 s as in the kubelet. */
  housekeepingIntervalMs?: number;
  /** How long stop() waits for API calls in flight; 5 s by default. */
  shutdownTimeoutMs?: number;
  /**
   * The one time source of the agent, handed to every part it creates: periods, retries,
   * timestamps and the shutdown bound. The real clock by default; a FakeClock in tests.
   */
  clock?: Clock;
  /** Process-wide parts shared with other nodes (`kubelet-pods fleet`); see AgentSharedParts. */
  shared?: AgentSharedParts;
  /** This node's labels, taints and resources, and the spread of its loops (the fleet's templates). */
  node?: AgentNodeOptions;
}

export interface Agent {
  readonly podManager: PodManager;
  readonly registry: Registry;
  /** Starts sources, node registration, mirror sync, status and endpoints. */
  start(): Promise<void>;
  /**
   * Stops everything within the shutdown bound. Mirror pods stay in the API server, as the
   * kubelet leaves them; a restarted agent adopts them.
   */
  stop(): Promise<void>;
  /** Where the endpoints listen, once started (`kubelet`: the authenticated HTTPS port). */
  addresses(): { readOnly?: BoundAddress; healthz?: BoundAddress; kubelet?: BoundAddress };
  /** True once every configured source has delivered a full set and it was applied. */
  allSourcesReady(): boolean;
  /** Resolves when no mirror work is queued, running or waiting to retry (tests, demo). */
  mirrorsIdle(): Promise<void>;
  /** Resolves when no Kubernetes Event is waiting to be written (tests). */
  eventsIdle(): Promise<void>;
  /** True when the agent talks to an API server (false in standalone mode). */
  readonly connected: boolean;
}

/**
 * The composition root of `kubelet-pods run`: sources → merge → pod manager → mirror sync,
 * status and node upkeep → API server. It only wires parts together; each part owns its loop.
 * Without a kubeconfig the agent is standalone, as a kubelet without an API server is: it reads
 * its sources and serves its endpoints but creates no mirror pods.
 */
export function createAgent(options: AgentOptions): Agent {
  const { config } = options;
  const logger = options.logger ?? noopLogger;
  const clock = options.clock ?? realClock;
  const registry = options.registry ?? new Registry();
  const metrics = createAgentMetrics(registry);
  const podManager = new PodManager({ registry });

  // Kubernetes Events about static and mirror pods (docs/events.md). The recorder needs the API
  // clients, made below with a kubeconfig (and `--events` not false); without, events go nowhere.
  let recorder: EventRecorder = noopEventRecorder;
  const staticPodEvents = createStaticPodEvents({
    recorder: { event: (...args) => recorder.event(...args) },
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
  // Admission reads the pods allocatable our Node reports, which is `maxPods`; asking the
  // configuration rather than the Node object admits the same way before registration.
  const allocatable = { status: { allocatable: { pods: String(config.maxPods) } } };
  const admission = createPodAdmission(() => allocatable, clock);
  const statusProvider = withAdmission(
    options.statusProvider ?? createSimulatedStatusProvider({ clock, hostIP: config.nodeIP, podCIDR: config.podCIDR }),
    admission,
    { hostIP: config.nodeIP },
  );
  const housekeepingMs = options.housekeepingIntervalMs ?? 2000;

  // Channels are registered in the kubelet's order before any source runs: registering a
  // channel is what makes a source count towards "all sources ready".
  const sourceLogger = (source: string): Logger => countingErrors(logger, source, metrics);
  let fileSource: FileSource | undefined;
  let httpSource: HttpSource | undefined;
  if (config.staticPodPath) {
    fileSource = (options.shared?.createFileSource ?? createFileSource)({
      path: config.staticPodPath,
      nodeName: config.nodeName,
      onUpdate: podConfig.channel(FILE_SOURCE),
      fileCheckFrequencyMs: config.fileCheckFrequencyMs,
      onRejected: (path, err) => staticPodEvents.manifestRejected(path, err),
      logger: sourceLogger(FILE_SOURCE),
      clock,
    });
  }
  if (config.staticPodURL) {
    httpSource = createHttpSource({
      url: config.staticPodURL,
      nodeName: config.nodeName,
      onUpdate: podConfig.channel(HTTP_SOURCE),
      headers: config.staticPodURLHeader,
      httpCheckFrequencyMs: config.httpCheckFrequencyMs,
      onRejected: (url, err) => staticPodEvents.manifestURLRejected(url, err),
      logger: sourceLogger(HTTP_SOURCE),
      clock,
    });
  }

  let apiSource: ApiserverSource | undefined;
  let nodeRegistration: NodeRegistration | undefined;
  let nodeLease: NodeLease | undefined;
  let statusWriter: MirrorStatusWriter | undefined;
  let mirrorSync: MirrorSync | undefined;
  let apis: ApiClients | undefined;
  const bound: { readOnly?: BoundAddress; healthz?: BoundAddress; kubelet?: BoundAddress } = {};
  if (config.kubeconfig) {
    apis = options.shared?.apis ?? createApiClients(loadKubeConfig(config.kubeconfig), createTokenBucket({ qps: config.kubeAPIQPS, burst: config.kubeAPIBurst, clock }), {
      eventLimiter: createTokenBucket({ qps: config.eventRecordQPS, burst: config.eventBurst, clock }),
    });
    const kubeConfig = apis.kubeConfig;
    if (config.events) {
      recorder = createEventRecorder({
        api: apis.events,
        nodeName: config.nodeName,
        clock,
        logger,
        onResult: (result) => metrics.recordEvent(result),
      });
    }
    apiSource = createApiserverSource({
      ...(options.shared?.podListWatch ? { listWatch: options.shared.podListWatch(config.nodeName) } : { kubeConfig }),
      nodeName: config.nodeName,
      onUpdate: podConfig.channel(API_SERVER_SOURCE),
      logger: sourceLogger(API_SERVER_SOURCE),
      clock,
    });
    const registration = createNodeRegistration({
      nodeName: config.nodeName,
      api: options.shared?.nodeApi ?? apis.core,
      internalIP: config.nodeIP,
      maxPods: config.maxPods,
      // The port the kubelet endpoint listens on; the configured one when it is off.
      kubeletPort: () => bound.kubelet?.port ?? config.port,
      nodeStatusUpdateFrequencyMs: config.nodeStatusUpdateFrequencyMs,
      nodeStatusReportFrequencyMs: config.nodeStatusReportFrequencyMs,
      ...nodeExtras(options),
      clock,
      logger,
    });
    nodeRegistration = registration;
    nodeLease = createNodeLease({ nodeName: config.nodeName, api: apis.coordination, getNode: () => registration.getNode(), ...leaseExtras(options), clock, logger });
    statusWriter = createMirrorStatusWriter({
      podManager,
      statusProvider,
      api: apis.core,
      clock,
      logger,
      onWrite: (result) => metrics.recordStatusWrite(result),
    });
    const mirrorClient = createKubeMirrorClient({
      api: apis.core,
      nodeName: config.nodeName,
      getNode: () => registration.getNode(),
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
    mirrorSync = createMirrorSync({
      podManager,
      mirrorClient,
      getNode: () => registration.getNode(),
      allSourcesReady: () => sourcesReady.allReady(),
      clock,
      logger,
      onAction: (action, result, _name, seconds) => {
        metrics.recordMirrorOperation(action, result);
        if (result !== 'skipped') metrics.observeSyncDuration(seconds);
      },
      onCreateFailed: (pod, podFullName, err) => staticPodEvents.mirrorCreateFailed(pod, podFullName, err),
    });
    // Mirrors wait for the Node; the moment it exists, every static pod gets its turn.
    registration.onReady(() => mirrorSync?.enqueueAll());
  }

  const dispatch = createPodUpdateDispatcher({
    podManager,
    sourcesReady,
    logger,
    onPodsChanged: (pods, op) => {
      if (op === PodOperation.ADD) admission.admitNew(pods);
      else if (op === PodOperation.REMOVE) admission.forget(pods);
      // Status-only changes (often our own status writes coming back) need no mirror work.
      if (op !== PodOperation.RECONCILE) for (const pod of pods) mirrorSync?.enqueue(getPodFullName(pod));
      // The writer also forgets (in itself and the provider) static pods that are gone.
      statusWriter?.requestSync(pods);
    },
  });

  const servers: { readOnly?: AgentServer; healthz?: AgentServer; kubelet?: AgentServer } = {};
  const listenPort = (key: 'readOnly' | 'healthz' | 'kubelet', configured: number): number | undefined =>
    options.listenPorts !== undefined ? options.listenPorts[key] : configured > 0 ? configured : undefined;
  const readOnlyPort = listenPort('readOnly', config.readOnlyPort);
  const healthzPort = listenPort('healthz', config.healthzPort);
  let kubeletPort = listenPort('kubelet', config.port);
  const webhooks = config.authenticationTokenWebhook || config.authorizationMode === 'Webhook';
  if (kubeletPort !== undefined && webhooks && apis === undefined) {
    // Standalone, nobody can answer a TokenReview or SubjectAccessReview: rather than refuse
    // every request, the port stays closed (the kubelet refuses to start instead).
    logger.warn(
      {
        err: kpError('KP_ERR_SERVER_NO_API', [
          [
            ...(config.authorizationMode === 'Webhook' ? ['authorization.mode Webhook'] : []),
            ...(config.authenticationTokenWebhook ? ['authentication.webhook.enabled'] : []),
          ],
        ]),
      },
      'kubelet port off: its webhooks need an API server',
    );
    kubeletPort = undefined;
  }
  const podsWithStatus = podsRoute({ podManager, statusFor: (pod) => statusWriter?.getPodStatus(pod.metadata?.uid ?? '') });
  async function createKubeletServer(port: number): Promise<AgentServer> {
    const tls = await loadServingTLS({
      ...(config.tlsCertFile !== undefined ? { certFile: config.tlsCertFile } : {}),
      ...(config.tlsPrivateKeyFile !== undefined ? { keyFile: config.tlsPrivateKeyFile } : {}),
      ...(config.clientCAFile !== undefined ? { clientCAFile: config.clientCAFile } : {}),
      nodeName: config.nodeName,
      addresses: [config.address, config.nodeIP],
    });
    return createAgentServer({
      address: config.address,
      port,
      setting: '--port or port',
      tls,
      logger,
      guard: createKubeletAuth({
        nodeName: config.nodeName,
        x509: config.clientCAFile !== undefined,
        ...(config.authenticationTokenWebhook && apis !== undefined ? { tokenReviews: apis.authentication } : {}),
        tokenCacheTTLMs: config.authenticationWebhookCacheTTLMs,
        anonymous: config.anonymousAuth,
        authorization: config.authorizationMode === 'Webhook' && apis !== undefined ? apis.authorization : 'AlwaysAllow',
        authorizedCacheTTLMs: config.authorizationWebhookCacheAuthorizedTTLMs,
        unauthorizedCacheTTLMs: config.authorizationWebhookCacheUnauthorizedTTLMs,
        clock,
        logger,
      }),
      routes: [
        healthzRoute(),
        podsWithStatus,
        metricsRoute({ registry }),
        configzRoute({ config }),
        containerLogsRoute({
          podManager,
          logsFor: (uid, container) => statusProvider.containerLogs?.(uid, container),
          now: () => clock.now(),
        }),
      ],
    });
  }
  if (readOnlyPort !== undefined) {
    servers.readOnly = createAgentServer({
      address: config.address,
      port: readOnlyPort,
      setting: '--read-only-port or readOnlyPort',
      routes: [healthzRoute(), podsWithStatus, metricsRoute({ registry })],
    });
  }
  if (healthzPort !== undefined) {
    servers.healthz = createAgentServer({
      address: config.healthzBindAddress,
      port: healthzPort,
      setting: '--healthz-port or healthzPort',
      routes: [healthzRoute()],
    });
  }

  const intervals: ClockTimer[] = [];
  let dispatchLoop: Promise<void> | undefined;

  function housekeeping(): void {
    mirrorSync?.housekeeping();
    const { pods, mirrorPods } = podManager.getPodsAndMirrorPods();
    let staticCount = 0;
    for (const pod of pods) if (isStaticPod(pod)) staticCount++;
    metrics.setDesiredPods({ static: staticCount, nonStatic: pods.length - staticCount });
    metrics.setMirrorPods(mirrorPods.length);
  }

  return {
    podManager,
    registry,
    connected: config.kubeconfig !== undefined,
    async start() {
      // Ports first: a port that is taken fails the start before anything else has begun, and
      // the ports already bound are let go, so a failed start leaves nothing open.
      try {
        if (servers.readOnly) bound.readOnly = await servers.readOnly.listen();
        if (servers.healthz) bound.healthz = await servers.healthz.listen();
        if (kubeletPort !== undefined) {
          servers.kubelet = await createKubeletServer(kubeletPort);
          bound.kubelet = await servers.kubelet.listen();
        }
      } catch (err) {
        await Promise.all([servers.readOnly?.close(), servers.healthz?.close(), servers.kubelet?.close()]);
        throw err;
      }
      dispatchLoop = (async () => {
        for await (const update of podConfig.updates) dispatch(update);
      })();
      nodeRegistration?.start();
      nodeLease?.start();
      statusWriter?.start();
      fileSource?.start();
      httpSource?.start();
      apiSource?.start();
      intervals.push(clock.setInterval(housekeeping, housekeepingMs));
      intervals.push(clock.setInterval(() => mirrorSync?.enqueueAll(), config.syncFrequencyMs));
      logger.info(
        {
          node: config.nodeName,
          sources: podConfig.sources(),
          standalone: !config.kubeconfig,
          readOnly: bound.readOnly,
          healthz: bound.healthz,
          kubelet: bound.kubelet,
        },
        'agent started',
      );
    },
    async stop() {
      for (const t of intervals.splice(0)) clock.clearInterval(t);
      const sourcesStopped = [fileSource?.stop(), httpSource?.stop()];
      // Mirror work stops at once; the API calls it has in flight finish within the bound.
      const mirrorsStopped = mirrorSync?.stop();
      const mergerStopped = podConfig.stop();
      let boundTimer: ClockTimer | undefined;
      const shutdownBound = new Promise<void>((resolve) => {
        boundTimer = clock.setTimeout(resolve, options.shutdownTimeoutMs ?? 5000);
      });
      await Promise.race([
        Promise.allSettled([
          ...sourcesStopped,
          mergerStopped,
          apiSource?.stop(),
          statusWriter?.stop(),
          nodeLease?.stop(),
          nodeRegistration?.stop(),
          mirrorsStopped,
          dispatchLoop,
          recorder.stop(),
          servers.readOnly?.close(),
          servers.healthz?.close(),
          servers.kubelet?.close(),
        ]),
        shutdownBound,
      ]);
      clock.clearTimeout(boundTimer);
      statusProvider.stop?.();
      logger.info({ node: config.nodeName }, 'agent stopped; mirror pods left in place');
    },
    addresses: () => ({ ...bound }),
    allSourcesReady: () => sourcesReady.allReady(),
    mirrorsIdle: () => mirrorSync?.idle() ?? Promise.resolve(),
    eventsIdle: () => recorder.idle(),
  };
}

function loadKubeConfig(path: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(path);
  return kubeConfig;
}

/** The node lease options that come from the fleet's templates and sharding. */
function leaseExtras(options: AgentOptions): Partial<NodeLeaseOptions> {
  const node = options.node;
  return {
    ...(node?.spread ? { spread: node.spread } : {}),
    ...(node?.leaseHolder !== undefined ? { holderIdentity: node.leaseHolder } : {}),
    ...(node?.onLeaseLost ? { onLost: node.onLeaseLost } : {}),
  };
}

/** The node registration options that come from the fleet's shared parts and templates. */
function nodeExtras(options: AgentOptions): Partial<NodeRegistrationOptions> {
  const node = options.node;
  return {
    ...(options.shared?.machine ? { machine: options.shared.machine } : {}),
    ...(node?.labels ? { labels: { ...node.labels } } : {}),
    ...(node?.taints ? { taints: node.taints } : {}),
    ...(node?.capacity ? { capacity: node.capacity } : {}),
    ...(node?.allocatable ? { allocatable: node.allocatable } : {}),
    ...(node?.spread ? { spread: node.spread } : {}),
  };
}

/** A logger for one source that also counts its errors and warnings in the metrics. */
function countingErrors(logger: Logger, source: string, metrics: AgentMetrics): Logger {
  const child = logger.child?.({ source }) ?? logger;
  return {
    debug: (obj, msg) => child.debug(obj, msg),
    info: (obj, msg) => child.info(obj, msg),
    warn: (obj, msg) => {
      metrics.recordSourceError(source);
      child.warn(obj, msg);
    },
    error: (obj, msg) => {
      metrics.recordSourceError(source);
      child.error(obj, msg);
    },
  };
}
