import { Registry } from 'prom-client';
import { API_SERVER_SOURCE, FILE_SOURCE, HTTP_SOURCE, PodOperation } from '../constants.js';
import type { AgentConfig } from '../config/agent-config.js';
import { createPodAdmission, withAdmission } from '../admission/pod-admission.js';
import { createEventRecorder, noopEventRecorder, type EventRecorder } from '../events/event-recorder.js';
import { createStaticPodEvents, nodeEventRef, podEventRef } from '../events/static-pod-events.js';
import { createApiClients, type ApiClients } from '../kube/api-clients.js';
import { DEFAULT_REQUEST_TIMEOUTS } from '../kube/request-timeout.js';
import { loadKubeConfigFile } from '../kube/kubeconfig-file.js';
import { kpError } from '../errors.js';
import { createTokenBucket } from '../kube/rate-limiter.js';
import { noopLogger, type Logger } from '../logger.js';
import { createKubeMirrorClient } from '../mirror/kube-mirror-client.js';
import { createMirrorSync, type MirrorSync } from '../mirror/mirror-sync.js';
import { goArch } from '../node/machine-info.js';
import { createNodeLease, type NodeLease, type NodeLeaseOptions } from '../node/node-lease.js';
import { createNodeRegistration, type NodeRegistration, type NodeRegistrationOptions } from '../node/node-registration.js';
import { getPodFullName, isMirrorPod, isStaticPod } from '../pod/classify.js';
import { PodManager, type PodsAndMirrorPods } from '../pod/manager.js';
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
import { createSimulatedStatusProvider } from '../runtime/simulated-runtime.js';
import type { StatusProvider } from '../status/status-provider.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import { createPodUpdateDispatcher } from './pod-update-dispatcher.js';
import { createPodWorkers, type PodWorkers } from './pod-workers.js';
import type { Pod } from '../pod/types.js';

/** How long a terminated pod waits for its final status write before it counts as terminated. */
const FINAL_STATUS_BOUND_MS = 10_000;
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
  // Node affinity reads the Node's labels: those of the registered Node, else the ones the
  // agent registers it with (standalone, or before registration).
  const ownLabels = {
    'kubernetes.io/hostname': config.nodeName,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': goArch(process.arch),
  };
  const admission = createPodAdmission(
    () => {
      // CPU and memory as our Node reports them (the machine's, or the fleet's template);
      // before registration, or standalone, only the pods count is checked.
      const reported = nodeRegistration?.currentNode()?.status?.allocatable;
      const resources = reported === undefined ? {} : pickDefined({ cpu: reported['cpu'], memory: reported['memory'] });
      return {
        status: { allocatable: { ...resources, ...allocatable.status.allocatable } },
        metadata: { name: config.nodeName, labels: nodeRegistration?.currentNode()?.metadata?.labels ?? ownLabels },
        // NoExecute taints are checked for pods from the API server, which need the Node anyway.
        spec: { taints: nodeRegistration?.currentNode()?.spec?.taints ?? [] },
      };
    },
    clock,
  );
  const statusProvider = withAdmission(
    options.statusProvider ??
      createSimulatedStatusProvider({
        clock,
        hostIP: config.nodeIP,
        podCIDR: config.podCIDR,
        clusterDNS: config.clusterDNS,
        // The container GC asks the pod workers (made below) whether a pod UID is gone.
        shouldPodContentBeRemoved: (uid) => workers?.shouldPodContentBeRemoved(uid) ?? true,
      }),
    admission,
    { hostIP: config.nodeIP },
  );
  // What the runtime reports about containers becomes Events on their pod, as the kubelet's.
  const stopContainerEvents = statusProvider.onContainerEvent?.((e) => {
    // The kubelet's DNS warning goes to the Node first, then the pod.
    if (e.nodeMessage !== undefined) recorder.event(nodeEventRef(config.nodeName), e.type, e.reason, e.nodeMessage);
    recorder.event(podEventRef(e.pod, e.fieldPath), e.type, e.reason, e.message);
  });
  const housekeepingMs = options.housekeepingIntervalMs ?? 2000;

  // The kubelet lifecycle: static pods run through pod workers (graceful termination, one
  // running static pod per full name); `instant` leaves them out, so that mirrors follow the
  // pod manager at once.
  let statusWriter: MirrorStatusWriter | undefined;
  let mirrorSync: MirrorSync | undefined;
  let apiPodDeleter: ((podFullName: string, uid: string) => Promise<boolean>) | undefined;
  // Counts the workers' state changes: one of the inputs housekeeping watches (see there).
  let workerChanges = 0;
  const workers: PodWorkers | undefined =
    config.simulatedLifecycle === 'kubelet'
      ? createPodWorkers({
          terminate: (pod, grace) => statusProvider.terminate?.(pod, grace) ?? Promise.resolve(),
          // The final status reaches the mirror before the pod counts as terminated, which is
          // what lets housekeeping delete the mirror.
          afterStopped: async (pod) => {
            if (statusWriter === undefined) return;
            statusWriter.invalidate(pod.metadata?.uid ?? '');
            // Bounded: an API server that does not answer must not keep the pod terminating
            // (and its mirror in place) for ever; the writer retries the status on its own.
            let limit: ClockTimer | undefined;
            await Promise.race([
              statusWriter.syncBatch(false),
              new Promise<void>((resolve) => {
                limit = clock.setTimeout(resolve, FINAL_STATUS_BOUND_MS);
              }),
            ]);
            clock.clearTimeout(limit);
          },
          onStarted: (pod) => {
            statusWriter?.invalidate(pod.metadata?.uid ?? '');
            mirrorSync?.enqueue(getPodFullName(pod));
          },
          onStateChange: (pod, state) => {
            workerChanges++;
            if (state === 'terminated' && !isStaticPod(pod)) void finishDeletion(pod);
          },
          onForgotten: (pod) => statusProvider.forget?.(pod.metadata?.uid ?? ''),
          onRestarted: (pod) => {
            metrics.recordRestartedPod(isStaticPod(pod));
            statusProvider.forget?.(pod.metadata?.uid ?? '');
          },
          clock,
          logger,
        })
      : undefined;

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
  let apis: ApiClients | undefined;
  const bound: { readOnly?: BoundAddress; healthz?: BoundAddress; kubelet?: BoundAddress } = {};
  if (config.kubeconfig) {
    const loaded = options.shared?.apis === undefined ? loadKubeConfigFile(config.kubeconfig) : undefined;
    apis = options.shared?.apis ?? createApiClients(loaded!.kubeConfig, createTokenBucket({ qps: config.kubeAPIQPS, burst: config.kubeAPIBurst, clock }), {
      eventLimiter: createTokenBucket({ qps: config.eventRecordQPS, burst: config.eventBurst, clock }),
      ...(loaded?.tokenFile !== undefined ? { tokenFile: loaded.tokenFile } : {}),
      // As the kubelet's heartbeat client: the shorter of the status period and the Lease's 40 s.
      timeouts: { ...DEFAULT_REQUEST_TIMEOUTS, heartbeatMs: Math.min(config.nodeStatusUpdateFrequencyMs, 40_000) },
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
    nodeLease = createNodeLease({ nodeName: config.nodeName, api: options.shared?.leaseApi ?? apis.coordination, getNode: () => registration.getNode(), ...leaseExtras(options), clock, logger });
    statusWriter = createMirrorStatusWriter({
      podManager,
      statusProvider,
      api: apis.core,
      clock,
      logger,
      onWrite: (result) => metrics.recordStatusWrite(result),
      ...(workers !== undefined ? { publishedPods: publishedPods(podManager, workers, (uid) => admission.rejection(uid) !== undefined) } : {}),
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
    // The DELETE the kubelet sends for a terminated pod is the mirror client's: grace 0, UID precondition.
    apiPodDeleter = (podFullName, uid) => mirrorClient.deleteMirrorPod(podFullName, uid);
    mirrorSync = createMirrorSync({
      podManager,
      mirrorClient,
      getNode: () => registration.getNode(),
      allSourcesReady: () => sourcesReady.allReady(),
      ...(workers !== undefined
        ? {
            isTerminating: (name: string) => workers.isPodTerminatingByFullName(name),
            // Rejected pods have no worker and keep their mirror, as before.
            mayRun: (pod: Pod) => {
              const uid = pod.metadata?.uid ?? '';
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
    registration.onReady(() => mirrorSync?.enqueueAll());
  }

  const dispatch = createPodUpdateDispatcher({
    podManager,
    sourcesReady,
    logger,
    onPodsChanged: (pods, op) => {
      if (op === PodOperation.ADD) admission.admitNew(pods);
      else if (op === PodOperation.REMOVE) admission.forget(pods);
      if (workers !== undefined) updateWorkers(workers, pods, op);
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
  let unsubscribeTerminal: (() => void) | undefined;
  let dispatchLoop: Promise<void> | undefined;

  // Rejected pods never run (the kubelet's rejectPod): their Failed status is published as is.
  function updateWorkers(w: PodWorkers, pods: readonly Pod[], op: PodOperation): void {
    for (const pod of pods) {
      if (isMirrorPod(pod)) continue;
      const uid = pod.metadata?.uid ?? '';
      if (!isStaticPod(pod)) {
        updateApiPodWorker(w, pod, uid, op);
        continue;
      }
      if (op === PodOperation.ADD) {
        if (admission.rejection(uid) === undefined) w.updatePod(pod, 'create');
      } else if (op === PodOperation.UPDATE || op === PodOperation.RECONCILE) {
        w.updatePod(pod, 'update');
      } else if (op === PodOperation.REMOVE) {
        // HandlePodRemoves: nothing while sources are not ready; housekeeping kills it later.
        if (sourcesReady.allReady()) w.updatePod(pod, 'kill');
      }
    }
  }

  // An ordinary pod bound to this node (API source): run as the kubelet runs it; a
  // deletionTimestamp is a kill with the deletion's grace period (HandlePodUpdates), a pod gone
  // from the API a kill too (HandlePodRemoves). Pods already terminal are not run.
  function updateApiPodWorker(w: PodWorkers, pod: Pod, uid: string, op: PodOperation): void {
    if (op === PodOperation.REMOVE) {
      if (sourcesReady.allReady()) w.updatePod(pod, 'kill');
      return;
    }
    if (admission.rejection(uid) !== undefined) return;
    const phase = pod.status?.phase;
    if (w.state(uid) === undefined && (phase === 'Succeeded' || phase === 'Failed')) return;
    w.updatePod(pod, w.state(uid) === undefined ? 'create' : 'update');
    if (pod.metadata?.deletionTimestamp) w.updatePod(pod, 'kill');
  }

  // The kubelet's status manager, once a deleted pod has terminated and its final status is
  // written: delete it for good, grace 0, with its UID as precondition.
  async function finishDeletion(pod: Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    const current = podManager.getPodByUID(uid);
    if (current === undefined || !current.metadata?.deletionTimestamp || apiPodDeleter === undefined) return;
    const deleted = await apiPodDeleter(getPodFullName(current), uid);
    logger.info({ pod: getPodFullName(current), podUID: uid, deleted }, 'deleted terminated pod');
  }

  // SyncPod of a pod whose containers all completed (phase Succeeded or Failed) returns
  // "terminal": the pod worker terminates the pod and it is never synced again, so a mirror a
  // user deletes afterwards is not recreated (kubernetes issue 116483; docs/lifecycle.md).
  function checkTerminal(uid: string): void {
    if (workers === undefined || !workers.isSyncing(uid)) return;
    const pod = workers.podOf(uid);
    if (pod === undefined) return;
    const phase = statusProvider.statusFor(pod, clock.now()).phase;
    if (phase === 'Succeeded' || phase === 'Failed') workers.updatePod(pod, 'kill');
  }

  // What the last housekeeping pass saw: the pod manager's snapshot (a new object after every
  // change), the workers' change count and the sources' readiness.
  let housekeptPods: PodsAndMirrorPods | undefined;
  let housekeptWorkerChanges = -1;
  let housekeptReady = false;

  function housekeeping(): void {
    // A pass reads only the pod manager, the workers' states, admission (which changes with the
    // pod manager) and the sources' readiness, and a second pass over the same inputs changes
    // nothing; so with none of them changed the pass is skipped, unless mirror housekeeping
    // still waits on a deletion. At 1,000 fleet nodes (500 passes a second) the passes were a
    // third of the idle allocation (docs/performance.md).
    const snapshot = podManager.getPodsAndMirrorPods();
    const ready = sourcesReady.allReady();
    const unchanged = snapshot === housekeptPods && workerChanges === housekeptWorkerChanges && ready === housekeptReady;
    if (unchanged && !(mirrorSync?.housekeepingDue() ?? false)) return;
    housekeptPods = snapshot;
    housekeptWorkerChanges = workerChanges;
    housekeptReady = ready;
    if (workers !== undefined && ready) {
      const desired = new Map<string, Pod>();
      for (const pod of podManager.getPods()) if (admission.rejection(pod.metadata?.uid ?? '') === undefined) desired.set(pod.metadata?.uid ?? '', pod);
      workers.syncKnownPods(desired);
      metrics.setWorkingPods(workers.counts(desired).working);
    }
    mirrorSync?.housekeeping();
    const { pods, mirrorPods } = snapshot;
    let staticCount = 0;
    for (const pod of pods) if (isStaticPod(pod)) staticCount++;
    metrics.setDesiredPods({ static: staticCount, nonStatic: pods.length - staticCount });
    let activeStatic = 0;
    for (const pod of pods) if (isStaticPod(pod) && admission.rejection(pod.metadata?.uid ?? '') === undefined && workers?.state(pod.metadata?.uid ?? '') !== 'finished') activeStatic++;
    let activeOther = 0;
    for (const pod of pods) {
      const state = workers?.state(pod.metadata?.uid ?? '');
      if (!isStaticPod(pod) && state !== undefined && state !== 'finished') activeOther++;
    }
    metrics.setActivePods({ static: activeStatic, nonStatic: activeOther });
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
      if (workers !== undefined) unsubscribeTerminal = statusProvider.onChange?.((uid) => checkTerminal(uid));
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
      unsubscribeTerminal?.();
      await workers?.stop();
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
      stopContainerEvents?.();
      statusProvider.stop?.();
      logger.info({ node: config.nodeName }, 'agent stopped; mirror pods left in place');
    },
    addresses: () => ({ ...bound }),
    allSourcesReady: () => sourcesReady.allReady(),
    mirrorsIdle: () => mirrorSync?.idle() ?? Promise.resolve(),
    eventsIdle: () => recorder.idle(),
  };
}

/**
 * The static pods whose statuses the writer publishes under the kubelet lifecycle: those the
 * pod manager holds, except a pod waiting to start (no status yet) and one that has finished,
 * plus removed pods still stopping (their mirror shows them stopping).
 */
function publishedPods(
  podManager: PodManager,
  workers: PodWorkers,
  isRejected: (uid: string) => boolean,
): { list(): Pod[]; byUID(uid: string): Pod | undefined } {
  // A pod without a worker is a rejected one (or, for an ordinary pod, one already terminal when
  // it arrived): a rejected pod's Failed status is published, a terminal one's left alone.
  const publishable = (pod: Pod): boolean => {
    const uid = pod.metadata?.uid ?? '';
    const state = workers.state(uid);
    if (state === undefined) return isStaticPod(pod) || isRejected(uid);
    return state !== 'waiting' && state !== 'finished';
  };
  return {
    list() {
      const out: Pod[] = [];
      const seen = new Set<string>();
      for (const pod of podManager.getPods()) {
        if (!publishable(pod)) continue;
        out.push(pod);
        seen.add(pod.metadata?.uid ?? '');
      }
      for (const pod of workers.startedPods()) if (!seen.has(pod.metadata?.uid ?? '') && publishable(pod)) out.push(pod);
      return out;
    },
    byUID(uid) {
      const pod = podManager.getPodByUID(uid) ?? workers.podOf(uid);
      return pod !== undefined && publishable(pod) ? pod : undefined;
    },
  };
}


/** The node lease options that come from the fleet's templates and sharding. */
function leaseExtras(options: AgentOptions): Partial<NodeLeaseOptions> {
  const node = options.node;
  return {
    ...(node?.spread ? { spread: node.spread } : {}),
    ...(node?.leaseHolder !== undefined ? { holderIdentity: node.leaseHolder } : {}),
    ...(node?.onLeaseLost ? { onLost: node.onLeaseLost } : {}),
    ...(node?.onLeaseRenewed ? { onRenewed: node.onLeaseRenewed } : {}),
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

/** The entries whose value is defined. */
function pickDefined(entries: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).filter((e): e is [string, string] => e[1] !== undefined));
}
