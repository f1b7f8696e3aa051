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

export type { MirrorClient } from './mirror/mirror-client.js';

// --- sources: decoding, file/http/apiserver sources, merge (added by the sources work) ---

// --- cluster: local control plane and the Kubernetes mirror client (added by the control-plane work) ---

// --- agent: mirror sync, node, status, server, config (added by the agent work) ---
