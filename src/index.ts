// `kubelet-pods`: the library, listed by name. The pod manager with its classification helpers,
// the kubelet's constants, the error registry, the mirror client, and the time seams the parts
// take. The sources, the agent and the test doubles have entry points of their own
// (`kubelet-pods/sources`, `kubelet-pods/agent`, `kubelet-pods/testing`); everything else is
// internal, and internal modules import each other directly.

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
export {
  KubeMirrorClient,
  type KubeMirrorClientOptions,
  type MirrorNode,
  type MirrorClientLogger,
} from './mirror/kube-mirror-client.js';

export { realClock, type Clock, type ClockTimer } from './time/clock.js';
export { backoffDelay, type BackoffPolicy } from './time/backoff.js';
