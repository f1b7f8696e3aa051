import type { V1PodStatus } from '@kubernetes/client-node';
import { isMirrorPodOf, isStaticPod } from '../pod/classify.js';
import type { PodManager } from '../pod/manager.js';
import type { Pod } from '../pod/types.js';
import { ForwardingStatusProvider } from './forwarding-status-provider.js';
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
  return new AdoptingStatusProvider(podManager, inner);
}

/** withAdoption's provider: what it adds to the calls it passes on. `adopt` and `forget` are always there. */
class AdoptingStatusProvider extends ForwardingStatusProvider {
  // UIDs handed over since their last forget: only live pods, so this stays as small as they
  // are; made at the first pod, as a fleet node without pods holds none.
  #handed: Set<string> | undefined;

  constructor(
    private readonly podManager: AdoptionPodManager,
    inner: StatusProvider,
  ) {
    super(inner, ['adopt', 'forget']);
  }

  override statusFor(pod: Pod, now: Date): V1PodStatus {
    this.#handOver(pod);
    return super.statusFor(pod, now);
  }

  override forget(uid: string): void {
    this.#handed?.delete(uid);
    super.forget(uid);
  }

  override terminate(pod: Pod, grace: number): Promise<void> {
    this.#handOver(pod);
    return super.terminate(pod, grace);
  }

  #handOver(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    if (uid === '' || this.#handed?.has(uid) === true) return;
    (this.#handed ??= new Set()).add(uid);
    const published = publishedStatusOf(this.podManager, pod);
    if (published !== undefined) super.adopt(pod, published);
  }
}
