import type { V1PodStatus } from '@kubernetes/client-node';
import { isMirrorPodOf, isStaticPod } from '../pod/classify.js';
import type { PodManager } from '../pod/manager.js';
import type { Pod } from '../pod/types.js';
import type { StatusProvider } from './status-provider.js';

/** What adoption reads of the pod manager; a `PodManager` fits. */
export type AdoptionPodManager = Pick<PodManager, 'getMirrorPodByPod'>;

/**
 * The status a pod last had in the API, which a restarted agent's runtime takes over: an
 * ordinary pod's own (the pod manager holds the API object), a static pod's mirror's, but only
 * a mirror of this very pod (its `config.mirror` is the pod's `config.hash`): a mirror left by
 * an older version of the manifest shows containers this pod never ran.
 */
export function publishedStatusOf(podManager: AdoptionPodManager, pod: Pod): V1PodStatus | undefined {
  if (!isStaticPod(pod)) return pod.status;
  const mirror = podManager.getMirrorPodByPod(pod);
  return mirror !== undefined && isMirrorPodOf(mirror, pod) ? mirror.status : undefined;
}

/**
 * The provider with its `adopt` fed: the first time a pod UID reaches the provider (its first
 * status, or a stop before that), the provider is first handed the pod's published status.
 * After `forget`, the next hand-over adopts again; the provider ignores it while it still holds
 * the UID's exited containers (a pod run again continues from those instead).
 *
 * The status is read when the pod is handed over, so a static pod must not be asked about before
 * its mirror can be in the pod manager: the status writer waits for the API source's first list
 * (MirrorStatusWriterOptions.previousStatusKnown).
 */
export function withAdoption(podManager: AdoptionPodManager, inner: StatusProvider): StatusProvider {
  if (inner.adopt === undefined) return inner;
  const adopt = inner.adopt.bind(inner);
  // UIDs handed over since their last forget: only live pods, so this stays as small as they
  // are; made at the first pod, as a fleet node without pods holds none.
  let handed: Set<string> | undefined;
  const handOver = (pod: Pod): void => {
    const uid = pod.metadata?.uid ?? '';
    if (uid === '' || handed?.has(uid) === true) return;
    (handed ??= new Set()).add(uid);
    const published = publishedStatusOf(podManager, pod);
    if (published !== undefined) adopt(pod, published);
  };
  const wrapped: StatusProvider = {
    statusFor(pod, now) {
      handOver(pod);
      return inner.statusFor(pod, now);
    },
    adopt,
  };
  if (inner.onChange) wrapped.onChange = (listener) => inner.onChange!(listener);
  wrapped.forget = (uid) => {
    handed?.delete(uid);
    inner.forget?.(uid);
  };
  if (inner.terminate) {
    wrapped.terminate = (pod, grace) => {
      handOver(pod);
      return inner.terminate!(pod, grace);
    };
  }
  if (inner.stop) wrapped.stop = () => inner.stop!();
  if (inner.containerLogs) wrapped.containerLogs = (uid, container) => inner.containerLogs!(uid, container);
  if (inner.onContainerEvent) wrapped.onContainerEvent = (listener) => inner.onContainerEvent!(listener);
  return wrapped;
}
