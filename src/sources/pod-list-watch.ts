import { createApiClients } from '../kube/api-clients.js';
import type { KubeConfigLike as KubeConfig } from '../kube/kubeconfig.js';
import { unlimited } from '../kube/rate-limiter.js';
import type { CoreV1Api } from '../kube/typed-apis.js';

import { kpError } from '../errors.js';
import { kubeListWatch } from '../kube/kube-list-watch.js';
import { listInPages } from '../kube/paged-list.js';
import type { ListWatch } from '../kube/list-watch.js';
import type { ReflectorWording } from '../kube/reflector.js';
import { trimmedListWatch } from '../kube/trimmed-list-watch.js';
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

/**
 * List and watch of the pods a field selector picks in all namespaces: the list in pages of 500
 * through `core` (by default a client of its own; the fleet passes its shared one), the watch on one
 * long-lived connection, with a server-side timeout and bookmarks. The pods `trim` picks are
 * kept without their managedFields: by default mirror pods only, so that other pods stay whole
 * (/pods serves them as the kubelet does); the fleet trims every pod (docs/kubelet-differences.md).
 */
export function kubePodsListWatch(
  kubeConfig: KubeConfig,
  fieldSelector: string,
  timeoutSeconds: number,
  core: Pick<CoreV1Api, 'listPodForAllNamespaces'> = createApiClients(kubeConfig, unlimited).core,
  trim: (pod: Pod) => boolean = isMirrorPod,
): PodListWatch {
  return trimmedListWatch(
    kubeListWatch({ kubeConfig, path: '/api/v1/pods', fieldSelector, timeoutSeconds, list: () => listInPages((page) => core.listPodForAllNamespaces({ fieldSelector, ...page })) }),
    trim,
  );
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
