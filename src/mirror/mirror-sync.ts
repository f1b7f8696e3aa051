import type { V1Node } from '@kubernetes/client-node';
import { getPodFullName, isMirrorPodOf, isStaticPod, parsePodFullName } from '../pod/classify.js';
import type { PodManager } from '../pod/manager.js';
import type { Pod } from '../pod/types.js';
import type { Logger } from '../logger.js';
import { noopLogger } from '../logger.js';
import type { MirrorClient } from './mirror-client.js';

/** What one reconcile of a full name did; reported to metrics and tests. */
export type MirrorAction = 'create' | 'delete' | 'delete-orphan';
export type MirrorActionResult = 'success' | 'error' | 'skipped';

export interface MirrorSyncOptions {
  podManager: PodManager;
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
  /** At most this many full names reconciled at once (API calls are rate limited elsewhere). */
  concurrency?: number;
  /** Retry delay after a failed API call: doubles from `initialMs` up to `maxMs`. */
  backoff?: { initialMs: number; maxMs: number };
  logger?: Logger;
  onAction?: (action: MirrorAction, result: MirrorActionResult, podFullName: string, seconds: number) => void;
}

interface NameState {
  running: boolean;
  dirty: boolean;
  retryTimer?: NodeJS.Timeout;
  failures: number;
}

/**
 * Keeps each static pod's mirror pod right (kubelet-behaviour §13.2 and §14.3):
 * - no mirror: create one, once the Node exists and is not being deleted;
 * - a mirror being deleted, or one whose hash is not this pod's: delete it with its UID as
 *   precondition, then create the new one in the same pass;
 * - a mirror without a static pod (an orphan): delete it without precondition, but only once
 *   all sources are ready and no static pod of that name is terminating.
 *
 * Work is keyed by full name and serialised per name: a request arriving while that name is
 * being reconciled marks it dirty and it runs once more afterwards, so bursts coalesce. Every
 * pass reads the current pod manager state, never a pod captured when the work was queued.
 * Unlike the kubelet, which reconciles inside its pod workers (seconds apart), this runs as soon
 * as the pod manager changes.
 */
export class MirrorSync {
  readonly #opts: Required<Omit<MirrorSyncOptions, 'onAction' | 'logger'>> &
    Pick<MirrorSyncOptions, 'onAction'> & { logger: Logger };
  readonly #names = new Map<string, NameState>();
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  #active = 0;
  #pumpScheduled = false;
  #stopped = false;
  #idleWaiters: Array<() => void> = [];

  constructor(options: MirrorSyncOptions) {
    this.#opts = {
      isTerminating: () => false,
      concurrency: 32,
      backoff: { initialMs: 500, maxMs: 30_000 },
      ...options,
      logger: options.logger ?? noopLogger,
    };
  }

  /** Asks for `podFullName` to be reconciled soon. Cheap; safe to call for any name. */
  enqueue(podFullName: string): void {
    if (this.#stopped) return;
    let state = this.#names.get(podFullName);
    if (!state) {
      state = { running: false, dirty: false, failures: 0 };
      this.#names.set(podFullName, state);
    }
    if (state.running) {
      state.dirty = true;
      return;
    }
    if (this.#queued.has(podFullName)) return;
    if (state.retryTimer) {
      clearTimeout(state.retryTimer);
      delete state.retryTimer;
    }
    this.#queued.add(podFullName);
    this.#queue.push(podFullName);
    this.#schedulePump();
  }

  /** Queues every full name the pod manager knows: static pods and mirror pods alike. */
  enqueueAll(): void {
    const { pods, mirrorPods } = this.#opts.podManager.getPodsAndMirrorPods();
    for (const pod of pods) if (isStaticPod(pod)) this.enqueue(getPodFullName(pod));
    for (const mirror of mirrorPods) this.enqueue(getPodFullName(mirror));
  }

  /**
   * The kubelet's housekeeping for mirrors: delete orphaned mirror pods once all sources are
   * ready. Returns how many deletions it started.
   */
  housekeeping(): number {
    if (!this.#opts.allSourcesReady()) return 0;
    const { orphanedMirrorPodFullNames } = this.#opts.podManager.getPodsAndMirrorPods();
    for (const name of orphanedMirrorPodFullNames) this.enqueue(name);
    return orphanedMirrorPodFullNames.length;
  }

  /** Resolves when nothing is queued, running or waiting for a retry timer to fire. */
  idle(): Promise<void> {
    if (this.#isIdle() && !this.#pumpScheduled) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops taking work and cancels retries; calls already sent to the API server finish. */
  stop(): void {
    this.#stopped = true;
    this.#queue.length = 0;
    this.#queued.clear();
    for (const state of this.#names.values()) if (state.retryTimer) clearTimeout(state.retryTimer);
    this.#names.clear();
    this.#notifyIdle();
  }

  // Work starts on the next turn of the event loop, after every update of the current merge has
  // reached the pod manager: a manifest edit arrives as REMOVE old + ADD new, and reconciling
  // between the two would see an orphan where there is an outdated mirror.
  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  #pump(): void {
    while (!this.#stopped && this.#active < this.#opts.concurrency && this.#queue.length > 0) {
      const name = this.#queue.shift()!;
      this.#queued.delete(name);
      this.#active++;
      void this.#run(name).finally(() => {
        this.#active--;
        this.#pump();
        this.#notifyIdle();
      });
    }
  }

  async #run(podFullName: string): Promise<void> {
    const state = this.#names.get(podFullName);
    if (!state) return;
    state.running = true;
    try {
      do {
        state.dirty = false;
        let ok: boolean;
        try {
          ok = await this.#reconcile(podFullName);
        } catch (err) {
          this.#opts.logger.error({ pod: podFullName, err }, 'mirror pod sync failed');
          ok = false;
        }
        if (!ok) {
          // An update arrived during the failed pass (typically the watch event that explains
          // a refused delete: the mirror we knew is already gone or replaced): look again now,
          // as an update arriving during the backoff would make us do.
          if (state.dirty && !this.#stopped) {
            state.failures++;
            continue;
          }
          this.#scheduleRetry(podFullName, state);
          return;
        }
        state.failures = 0;
      } while (state.dirty && !this.#stopped);
    } finally {
      state.running = false;
      if (!state.retryTimer && !state.dirty) this.#names.delete(podFullName);
    }
  }

  #scheduleRetry(podFullName: string, state: NameState): void {
    if (this.#stopped) return;
    const { initialMs, maxMs } = this.#opts.backoff;
    const delay = Math.min(maxMs, initialMs * 2 ** state.failures);
    state.failures++;
    state.retryTimer = setTimeout(() => {
      delete state.retryTimer;
      this.enqueue(podFullName);
    }, delay);
  }

  /** One pass over one full name. Resolves false when an API call failed and a retry is due. */
  async #reconcile(podFullName: string): Promise<boolean> {
    const { podManager } = this.#opts;
    const { name, namespace } = parsePodFullName(podFullName);
    const pod = podManager.getPodByName(namespace, name);
    const mirror = podManager.getMirrorPodByPod({ metadata: { name, namespace } });

    if (!pod || !isStaticPod(pod)) {
      // Only a mirror left (or a mirror beside an API pod of the same name): an orphan.
      if (!mirror || pod) return true;
      return this.#deleteOrphan(podFullName);
    }

    if (mirror) {
      if (!mirror.metadata?.deletionTimestamp && isMirrorPodOf(mirror, pod)) return true;
      const started = performance.now();
      const uid = mirror.metadata?.uid;
      const deleted = await this.#opts.mirrorClient.deleteMirrorPod(podFullName, uid);
      this.#report('delete', deleted ? 'success' : 'skipped', podFullName, started);
      this.#opts.logger.info(
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
    const node = await this.#opts.getNode();
    if (!node || node.metadata?.deletionTimestamp) {
      // The agent queues every name again once the Node is registered.
      this.#opts.logger.debug({ pod: podFullName }, 'no mirror pod yet: node not registered or being deleted');
      this.#report('create', 'skipped', podFullName, performance.now());
      return true;
    }
    const started = performance.now();
    try {
      await this.#opts.mirrorClient.createMirrorPod(pod);
      this.#report('create', 'success', podFullName, started);
      this.#opts.logger.info({ pod: podFullName, podUID: pod.metadata?.uid }, 'created mirror pod');
      return true;
    } catch (err) {
      this.#report('create', 'error', podFullName, started);
      this.#opts.logger.warn({ pod: podFullName, podUID: pod.metadata?.uid, err }, 'failed to create mirror pod');
      return false;
    }
  }

  async #deleteOrphan(podFullName: string): Promise<boolean> {
    if (!this.#opts.allSourcesReady() || this.#opts.isTerminating(podFullName)) return true;
    const started = performance.now();
    const deleted = await this.#opts.mirrorClient.deleteMirrorPod(podFullName);
    this.#report('delete-orphan', deleted ? 'success' : 'skipped', podFullName, started);
    this.#opts.logger.info({ pod: podFullName, deleted }, deleted ? 'deleted orphaned mirror pod' : 'orphaned mirror pod not deleted');
    return deleted;
  }

  #report(action: MirrorAction, result: MirrorActionResult, podFullName: string, started: number): void {
    this.#opts.onAction?.(action, result, podFullName, (performance.now() - started) / 1000);
  }

  #isIdle(): boolean {
    if (this.#queue.length > 0 || this.#active > 0) return false;
    for (const state of this.#names.values()) if (state.retryTimer || state.running) return false;
    return true;
  }

  #notifyIdle(): void {
    if (!this.#isIdle() || this.#pumpScheduled) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
