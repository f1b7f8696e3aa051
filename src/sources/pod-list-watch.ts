import { createApiClients } from '../kube/api-clients.js';
import type { KubeConfigLike as KubeConfig } from '../kube/kubeconfig.js';
import { unlimited } from '../kube/rate-limiter.js';
import type { CoreV1Api } from '../kube/typed-apis.js';

import { kpError } from '../errors.js';
import { kubeListWatch } from '../kube/kube-list-watch.js';
import { LIST_PAGE_SIZE, listInPages } from '../kube/paged-list.js';
import type { ListWatch } from '../kube/list-watch.js';
import { withoutManagedFields } from '../kube/managed-fields.js';
import type { ReflectorWording } from '../kube/reflector.js';
import { isMirrorPod } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';

export type { WatchEventType } from '../kube/list-watch.js';

/** The list and watch calls of pods (src/kube/list-watch.ts), so tests can replace the API server. */
export type PodListWatch = ListWatch<Pod>;

/**
 * List and watch of the pods bound to `nodeName` in all namespaces
 * (`fieldSelector=spec.nodeName=<node>`), with a server-side watch timeout and bookmarks.
 */
export function kubePodListWatch(kubeConfig: KubeConfig, nodeName: string, timeoutSeconds: number): PodListWatch {
  return kubePodsListWatch(kubeConfig, `spec.nodeName=${nodeName}`, timeoutSeconds);
}

/** The mirror pods without their managedFields, every other pod whole (/pods serves them as the kubelet does). */
const trimMirrorPod = (pod: Pod): Pod => (isMirrorPod(pod) ? withoutManagedFields(pod) : pod);

/**
 * List and watch of the pods a field selector picks in all namespaces: the list in pages of 500
 * through `core` (by default a client of its own; the fleet passes its shared one), the watch on one
 * long-lived connection, with a server-side timeout and bookmarks. Each pod listed or watched
 * goes through `prepare` before anything keeps it, the listed ones page by page: by default
 * mirror pods lose their managedFields; the fleet asks for every pod `withoutManagedFields` (the
 * watch then cuts them before parsing) and shares their common parts (docs/kubelet-differences.md).
 */
export function kubePodsListWatch(
  kubeConfig: KubeConfig,
  fieldSelector: string,
  timeoutSeconds: number,
  core: Pick<CoreV1Api, 'listPodForAllNamespaces'> = createApiClients(kubeConfig, unlimited).core,
  options: { prepare?: (pod: Pod) => Pod; withoutManagedFields?: boolean } = {},
): PodListWatch {
  const { prepare = trimMirrorPod, withoutManagedFields } = options;
  return kubeListWatch({
    kubeConfig,
    path: '/api/v1/pods',
    fieldSelector,
    timeoutSeconds,
    list: (keep) => listInPages((page) => core.listPodForAllNamespaces({ fieldSelector, ...page }), LIST_PAGE_SIZE, keep),
    prepare,
    withoutManagedFields,
  });
}

/** How a reflector over the pods bound to `nodeName` words its failures. */
export function podReflectorWording(nodeName: string): ReflectorWording {
  return {
    logFields: { node: nodeName },
    listFailed: 'failed to list pods',
    listError: (reason) => kpError('KP_ERR_SOURCE_API_LIST', [nodeName, reason]),
    watchFailed: 'pod watch failed, retrying',
    watchError: (reason) => kpError('KP_ERR_SOURCE_API_WATCH', [nodeName, reason]),
  };
}
