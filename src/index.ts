// The public API of kubelet-pods, listed by name. Internal modules import each other directly.

export {
  CONFIG_SOURCE_ANNOTATION_KEY,
  CONFIG_MIRROR_ANNOTATION_KEY,
  CONFIG_HASH_ANNOTATION_KEY,
  CONFIG_FIRST_SEEN_ANNOTATION_KEY,
  FILE_SOURCE,
  HTTP_SOURCE,
  API_SERVER_SOURCE,
  ALL_SOURCE,
  NAMESPACE_DEFAULT,
  PodOperation,
  MAX_CONFIG_LENGTH,
  type PodSourceName,
} from './constants.js';
export { KubeletPodsError, ERROR_CODES, hasErrorCode, type ErrorCode } from './errors.js';

export type { Pod, ResolvedPodUID, MirrorPodUID } from './pod/types.js';
export {
  getPodFullName,
  buildPodFullName,
  parsePodFullName,
  isMirrorPod,
  isStaticPod,
  getPodSource,
  isMirrorPodOf,
  getValidatedSources,
  isCriticalPod,
} from './pod/classify.js';
export {
  PodManager,
  type PodManagerOptions,
  type PodAndMirrorPod,
  type PodsAndMirrorPods,
  type UIDTranslations,
} from './pod/manager.js';
export type { SecretManager, ConfigMapManager } from './pod/object-managers.js';
export { MANAGED_EPHEMERAL_CONTAINERS } from './pod/metrics.js';

export type { MirrorClient } from './pod/mirror-client.js';

// --- sources: decoding, file/http/apiserver sources, merge (added by the sources work) ---
export type { PodUpdate, SetDelta, SourceLogger, SourceTimers } from './sources/types.js';
export { canonicalJSON } from './sources/canonical-json.js';
export { decodeSinglePod, decodePodList, parseManifestText, type DecodeOutcome, type DefaultFn } from './sources/decode.js';
export {
  applySchemeDefaults,
  applyStaticPodDefaults,
  generatePodName,
  defaultPullPolicy,
  type StaticPodDefaultsOptions,
} from './sources/defaults.js';
export { computeStaticPodUID, type StaticPodOrigin } from './sources/uid.js';
export { validateStaticPodCreate, isDNS1123Label, isDNS1123Subdomain } from './sources/validate.js';
export { findApiReferences, checkStaticPodReferences, type ApiReference } from './sources/static-pod-rules.js';
export { createFileSource, parseManifestFile, type FileSource, type FileSourceOptions, type FileSourceStats } from './sources/file-source.js';
export { createHttpSource, parseHttpBody, type HttpSource, type HttpSourceOptions } from './sources/http-source.js';
export {
  PodConfig,
  formatSeenTimestamp,
  type PodConfigMode,
  type PodConfigOptions,
  type PodConfigEvent,
} from './sources/pod-config.js';
export { Mux, type Merger, type SourceChannel } from './sources/mux.js';
export { UpdateStream } from './sources/update-stream.js';
export { createSourcesReady, type SourcesReady } from './sources/sources-ready.js';

// --- cluster: local control plane and the Kubernetes mirror client (added by the control-plane work) ---
export {
  startLocalCluster,
  type LocalCluster,
  type LocalClusterOptions,
} from './cluster/local-cluster.js';
export {
  ensureControlPlaneBinary,
  controlPlaneSourceHash,
  defaultCacheRoot,
  CONTROL_PLANE_BINARY_ENV,
  type ControlPlaneBuildOptions,
  type ControlPlaneBinary,
} from './cluster/control-plane-build.js';
export {
  KubeMirrorClient,
  type KubeMirrorClientOptions,
  type MirrorNode,
  type MirrorClientLogger,
} from './mirror/kube-mirror-client.js';
export { apiStatusOf, apiErrorInfo, isNotFound, isAlreadyExists, isConflict, isUIDMismatch, type ApiStatusSummary, type ApiErrorInfo } from './kube/api-error.js';
export {
  createApiserverSource,
  kubePodListWatch,
  type ApiserverSource,
  type ApiserverSourceOptions,
  type ApiserverSourceStats,
  type PodListWatch,
  type WatchEventType,
} from './sources/apiserver-source.js';

// --- agent: mirror sync, node, status, server, config (added by the agent work) ---
export { createAgent, type Agent, type AgentOptions } from './agent/agent.js';
export { createPodUpdateDispatcher, type PodUpdateDispatcherOptions } from './agent/pod-update-dispatcher.js';
export {
  createMirrorSync,
  type MirrorSync,
  type MirrorSyncOptions,
  type MirrorAction,
  type MirrorActionResult,
} from './mirror/mirror-sync.js';
export { createLogger, childLogger, noopLogger, REDACTED_PATHS, type Logger, type CreateLoggerOptions } from './logger.js';
export { createTokenBucket, unlimited, type RateLimiter, type TokenBucketOptions } from './kube/rate-limiter.js';
export { createApiClients, type ApiClients } from './kube/api-clients.js';
export { realClock, type Clock, type ClockTimer } from './time/clock.js';
export { backoffDelay, type BackoffPolicy } from './time/backoff.js';
export {
  createNodeRegistration,
  nodeAllowsMirrorPods,
  DEFAULT_KUBELET_VERSION,
  type NodeRegistration,
  type NodeRegistrationOptions,
  type NodeApi,
} from './node/node-registration.js';
export { createNodeLease, NODE_LEASE_NAMESPACE, type NodeLease, type NodeLeaseOptions, type LeaseApi } from './node/node-lease.js';
export {
  createSimulatedStatusProvider,
  KUBELET_OWNED_POD_CONDITIONS,
  type StatusProvider,
  type SimulatedStatusProviderOptions,
} from './status/status-provider.js';
export {
  createMirrorStatusWriter,
  type MirrorStatusWriter,
  type MirrorStatusWriterOptions,
  type PodStatusApi,
  type StatusPodManager,
  type StatusWriteResult,
} from './status/mirror-status-writer.js';
export { createAgentServer, type AgentServer, type AgentServerOptions, type BoundAddress, type Route } from './server/server.js';
export { healthzRoute } from './server/healthz.js';
export { podsRoute, type PodsRouteOptions } from './server/pods.js';
export { metricsRoute } from './server/metrics.js';
export { createAgentMetrics, AGENT_METRIC_NAMES, type AgentMetrics } from './server/agent-metrics.js';
export {
  parseRunArgs,
  loadAgentConfig,
  resolveRunConfig,
  describeIgnoredFields,
  AGENT_CONFIG_DEFAULTS,
  RUN_FLAG_NAMES,
  KUBELET_CONFIG_API_VERSION,
  KUBELET_CONFIG_KIND,
  type AgentConfig,
  type LoadedAgentConfig,
  type LoadAgentConfigOptions,
  type RunFlags,
} from './cli/config.js';
export { parseDuration, parseDurationNanos, formatDuration } from './cli/durations.js';
