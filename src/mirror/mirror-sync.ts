import type { V1Node } from '@kubernetes/client-node';
import { nodeAllowsMirrorPods } from '../node/node-registration.js';
import { getPodFullName, isMirrorPodOf, isStaticPod } from '../pod/classify.js';
import type { PodManager } from '../pod/manager.js';
import type { MirrorClient } from '../pod/mirror-client.js';
import type { Pod } from '../pod/types.js';
import type { Logger } from '../logger.js';
import { noopLogger } from '../logger.js';
import { createKeyedWorkQueue, type KeyedWorkQueue, type WorkPriority } from '../queue/keyed-work-queue.js';
import type { BackoffPolicy } from '../time/backoff.js';
import { realClock, type Clock } from '../time/clock.js';

/** What one reconcile of a full name did; reported to metrics and tests. */
export type MirrorAction = 'create' | 'delete' | 'delete-orphan';
export type MirrorActionResult = 'success' | 'error' | 'skipped';

/** The pod manager lookups mirror sync reads; a `PodManager` fits. */
export type MirrorSyncPodManager = Pick<PodManager, 'getPodByFullName' | 'getMirrorPodByFullName' | 'getPodsAndMirrorPods'>;

export interface MirrorSyncOptions {
  podManager: MirrorSyncPodManager;
  mirrorClient: MirrorClient;
  /** This node's Node object, or undefined while it is not registered. Mirrors wait for it. */
  getNode: () => Promise<Pick<V1Node, 'metadata'> | undefined>;
  /** True once every configured source has delivered its first full set (housekeeping gate). */
  allSourcesReady: () => boolean;
  /**
   * True while a static pod of this full name is still shutting down; its orphaned mirror is
   * kept until then, as the kubelet does. The agent runs no containers, so by default nothing
   * is ever terminating.
   */
  isTerminating?: (podFullName: string) => boolean;
  /**
   * False while a static pod may not run yet (the kubelet lifecycle: another pod of its full
   * name is still stopping). Its mirror is then neither created nor replaced: the existing one
   * keeps its last status. Always true by default.
   */
  mayRun?: (pod: Pod) => boolean;
  /** At most this many full names reconciled at once (API calls are rate limited elsewhere). 32 by default. */
  concurrency?: number;
  /** Retry delay after a failed API call: doubles from `initialMs` up to `maxMs`. 500 ms to 30 s by default. */
  backoff?: BackoffPolicy;
  /** Retry timers and the durations reported to `onAction`. The real clock by default. */
  clock?: Clock;
  logger?: Logger;
  onAction?: (action: MirrorAction, result: MirrorActionResult, podFullName: string, seconds: number) => void;
  /** A mirror create failed with `err` (after it was logged); the agent records an event. */
  onCreateFailed?: (staticPod: Pod, podFullName: string, err: unknown) => void;
}

/**
 * Keeps each static pod's mirror pod right, as the kubelet's pod sync and housekeeping do:
 * - no mirror: create one, once the Node exists and is not being deleted;
 * - a mirror being deleted, or one whose hash is not this pod's: delete it with its UID as
 *   precondition, then create the new one in the same pass;
 * - a mirror without a static pod (an orphan): delete it without precondition, but only once
 *   all sources are ready and no static pod of that name is terminating.
 *
 * Work is keyed by full name on a keyed work queue: serialised per name, coalesced, retried
 * with backoff. Every pass reads the current pod manager state, never a pod captured when the
 * work was queued, and starts on the event-loop turn after the request, once the whole merged
 * update has reached the pod manager (a manifest edit arrives as a removal then an addition;
 * reconciling in between would see an orphan where there is an outdated mirror). Unlike the
 * kubelet, which reconciles inside its pod workers (seconds apart), this runs as soon as the
 * pod manager changes.
 */
export interface MirrorSync {
  /** Asks for `podFullName` to be reconciled soon. Cheap; safe to call for any name. */
  enqueue(podFullName: string): void;
  /** Queues every full name the pod manager knows: static pods and mirror pods alike. */
  enqueueAll(): void;
  /**
   * The kubelet's housekeeping for mirrors: delete orphaned mirror pods once all sources are
   * ready. Returns how many full names it queued.
   */
  housekeeping(): number;
  /**
   * True while a deletion this sync sent awaits the watch's confirmation: housekeeping must
   * keep passing then even if nothing else changed, to try again once it is no longer trusted.
   */
  housekeepingDue(): boolean;
  /** Resolves when nothing is queued, running or waiting for a retry timer to fire. */
  idle(): Promise<void>;
  /** Stops taking work and cancels retries; resolves once the passes already running finish. */
  stop(): Promise<void>;
}

export function createMirrorSync(options: MirrorSyncOptions): MirrorSync {
  return new MirrorSyncImpl(options);
}

/**
 * Orphans deleted are trusted to be gone for this long while the watch has not reported them,
 * in case the deletion never shows.
 */
const DELETED_ORPHAN_TRUST_MS = 30_000;

const never = (): boolean => false;
const always = (): boolean => true;

/**
 * createMirrorSync's sync. A class, its methods on the prototype: a fleet makes one per node,
 * and as closures over one context it cost about 1.2 KB a node with nothing to do
 * (docs/performance.md, "What an empty node costs", third round).
 */
class MirrorSyncImpl implements MirrorSync {
  readonly #options: MirrorSyncOptions;
  readonly #clock: Clock;
  readonly #logger: Logger;
  // Made at the first name queued: a fleet node without static pods never queues one.
  #made: KeyedWorkQueue<string> | undefined;
  #stopped = false;
  /**
   * Orphans this agent deleted whose deletion the watch has not reported yet, by full name:
   * a pass in that gap (housekeeping, a dirty re-run) would otherwise send a second DELETE,
   * answered 404. Made at the first such deletion.
   */
  #deletedOrphans: Map<string, { uid: string | undefined; at: number }> | undefined;

  constructor(options: MirrorSyncOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? noopLogger;
  }

  #queue(podFullName: string, priority?: WorkPriority): void {
    if (this.#stopped) return;
    (this.#made ??= this.#makeQueue()).enqueue(podFullName, priority);
  }

  #makeQueue(): KeyedWorkQueue<string> {
    const logger = this.#logger;
    const concurrency = this.#options.concurrency ?? 32;
    return createKeyedWorkQueue<string>({
      process: (name) => this.#reconcile(name),
      concurrency,
      // Names without a static pod (orphans, a mass removal) get a quarter of the slots: a new
      // manifest's mirror then starts at once rather than behind their deletes, and fewer
      // deletes at a time leave the API server free to answer its create.
      lowConcurrency: Math.ceil(concurrency / 4),
      backoff: this.#options.backoff ?? { initialMs: 500, maxMs: 30_000 },
      clock: this.#clock,
      onError: (name, err) => logger.error({ pod: name, err }, 'mirror pod sync failed'),
    });
  }

  /** Static pods' names first: a new manifest's mirror does not wait behind a mass removal. */
  enqueue(podFullName: string): void {
    const pod = this.#options.podManager.getPodByFullName(podFullName);
    this.#queue(podFullName, pod && isStaticPod(pod) ? 'high' : 'low');
  }

  enqueueAll(): void {
    const { pods, mirrorPods } = this.#options.podManager.getPodsAndMirrorPods();
    for (const pod of pods) if (isStaticPod(pod)) this.#queue(getPodFullName(pod));
    for (const mirror of mirrorPods) this.enqueue(getPodFullName(mirror));
  }

  housekeeping(): number {
    const { podManager, allSourcesReady } = this.#options;
    const deletedOrphans = this.#deletedOrphans;
    if (deletedOrphans !== undefined && deletedOrphans.size > 0) {
      for (const name of [...deletedOrphans.keys()]) this.#forgetReportedDeletions(name, podManager.getMirrorPodByFullName(name));
    }
    if (!allSourcesReady()) return 0;
    const { orphanedMirrorPodFullNames } = podManager.getPodsAndMirrorPods();
    for (const name of orphanedMirrorPodFullNames) this.#queue(name, 'low');
    return orphanedMirrorPodFullNames.length;
  }

  housekeepingDue(): boolean {
    return this.#deletedOrphans !== undefined && this.#deletedOrphans.size > 0;
  }

  idle(): Promise<void> {
    return this.#made?.idle() ?? Promise.resolve();
  }

  stop(): Promise<void> {
    this.#stopped = true;
    return this.#made?.stop() ?? Promise.resolve();
  }

  #forgetReportedDeletions(podFullName: string, mirror: Pod | undefined): void {
    const deleted = this.#deletedOrphans?.get(podFullName);
    if (deleted === undefined) return;
    const expired = this.#clock.monotonic() - deleted.at > DELETED_ORPHAN_TRUST_MS;
    if (!mirror || mirror.metadata?.uid !== deleted.uid || expired) this.#deletedOrphans!.delete(podFullName);
  }

  /** One pass over one full name. Resolves false when an API call failed and a retry is due. */
  async #reconcile(podFullName: string): Promise<boolean> {
    const { podManager, mirrorClient } = this.#options;
    const pod = podManager.getPodByFullName(podFullName);
    const mirror = podManager.getMirrorPodByFullName(podFullName);
    this.#forgetReportedDeletions(podFullName, mirror);

    if (!pod || !isStaticPod(pod)) {
      // Only a mirror left (or a mirror beside an API pod of the same name): an orphan.
      if (!mirror || pod) return true;
      return this.#deleteOrphan(podFullName);
    }

    // The kubelet reconciles mirrors in SyncPod, which a pod waiting to start has not reached.
    if (!(this.#options.mayRun ?? always)(pod)) return true;
    if (mirror) {
      if (!mirror.metadata?.deletionTimestamp && isMirrorPodOf(mirror, pod)) return true;
      const started = this.#clock.monotonic();
      const uid = mirror.metadata?.uid;
      const deleted = await mirrorClient.deleteMirrorPod(podFullName, uid);
      this.#report('delete', deleted ? 'success' : 'skipped', podFullName, started);
      this.#logger.info(
        { pod: podFullName, podUID: pod.metadata?.uid, mirrorUID: uid, deleted },
        deleted ? 'deleted outdated mirror pod' : 'outdated mirror pod not deleted',
      );
      // Not deleted: already gone or replaced (the API source will say so), or the API server
      // failed. Either way look again after a backoff rather than create beside it.
      if (!deleted) return false;
    }
    return this.#create(pod, podFullName);
  }

  async #create(pod: Pod, podFullName: string): Promise<boolean> {
    const logger = this.#logger;
    if (!nodeAllowsMirrorPods(await this.#options.getNode())) {
      // The agent queues every name again once the Node is registered.
      logger.debug({ pod: podFullName }, 'no mirror pod yet: node not registered or being deleted');
      this.#report('create', 'skipped', podFullName, this.#clock.monotonic());
      return true;
    }
    const started = this.#clock.monotonic();
    try {
      await this.#options.mirrorClient.createMirrorPod(pod);
      this.#report('create', 'success', podFullName, started);
      logger.info({ pod: podFullName, podUID: pod.metadata?.uid }, 'created mirror pod');
      return true;
    } catch (err) {
      this.#report('create', 'error', podFullName, started);
      logger.warn({ pod: podFullName, podUID: pod.metadata?.uid, err }, 'failed to create mirror pod');
      this.#options.onCreateFailed?.(pod, podFullName, err);
      return false;
    }
  }

  async #deleteOrphan(podFullName: string): Promise<boolean> {
    const { podManager, mirrorClient, allSourcesReady } = this.#options;
    if (!allSourcesReady() || (this.#options.isTerminating ?? never)(podFullName)) return true;
    if (this.#deletedOrphans?.has(podFullName) === true) return true;
    const uid = podManager.getMirrorPodByFullName(podFullName)?.metadata?.uid;
    const started = this.#clock.monotonic();
    const deleted = await mirrorClient.deleteMirrorPod(podFullName);
    if (deleted) (this.#deletedOrphans ??= new Map()).set(podFullName, { uid, at: this.#clock.monotonic() });
    this.#report('delete-orphan', deleted ? 'success' : 'skipped', podFullName, started);
    this.#logger.info({ pod: podFullName, deleted }, deleted ? 'deleted orphaned mirror pod' : 'orphaned mirror pod not deleted');
    return deleted;
  }

  #report(action: MirrorAction, result: MirrorActionResult, podFullName: string, started: number): void {
    this.#options.onAction?.(action, result, podFullName, (this.#clock.monotonic() - started) / 1000);
  }
}
