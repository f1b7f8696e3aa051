import type { V1PodStatus } from '@kubernetes/client-node';
import { answerUseOptions, setHeaderOptions } from '../kube/request-options.js';
import type { CoreV1Api } from '../kube/typed-apis.js';
import { childLogger, type Logger } from '../logger.js';
import { kpError } from '../errors.js';
import { apiErrorInfo, isNotFound, isUIDMismatch } from '../kube/api-error.js';
import { logApiFailure } from '../kube/log-api-failure.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import { getPodFullName, isMirrorPod, isMirrorPodOf, isStaticPod } from '../pod/classify.js';
import type { PodManager } from '../pod/manager.js';
import type { Pod } from '../pod/types.js';
import { sameStatus, sameStoredValue } from './status-equality.js';
import { statusFingerprint } from './status-fingerprint.js';
import { buildStatusPatch, STATUS_PATCH_CONTENT_TYPE } from './status-patch.js';
import { podGeneration, withObservedGeneration } from './observed-generation.js';
import type { StatusProvider } from './status-provider.js';
import { podUID } from '../values/pod-format.js';

/** The writer's Pod calls, the status PATCH and the read before writing over a copy that may be old; a `CoreV1Api` fits. */
export type PodStatusApi = Pick<CoreV1Api, 'patchNamespacedPodStatus' | 'readNamespacedPod'>;

/** What the writer needs from the pod manager. */
export type StatusPodManager = Pick<PodManager, 'getPods' | 'getPodByUID' | 'getPodByFullName' | 'getMirrorPodByPod' | 'translatePodUID'>;

export type StatusWriteResult = 'success' | 'unchanged' | 'error' | 'conflict';

export interface MirrorStatusWriterOptions {
  podManager: StatusPodManager;
  statusProvider: StatusProvider;
  api: PodStatusApi;
  /** Full batch period; 10 s like the kubelet's status manager. */
  resyncIntervalMs?: number;
  clock?: Clock;
  logger?: Logger;
  /** Told about every write attempt (for `kubelet_pods_status_writes_total`). */
  onWrite?: (result: StatusWriteResult) => void;
  /**
   * The static pods whose statuses are published, and one of them by UID. By default the pod
   * manager's static pods; with the kubelet lifecycle, the pods the pod workers run: a pod
   * waiting to start has none yet, and a removed pod still stopping keeps publishing to its
   * mirror until it has stopped.
   */
  publishedPods?: {
    list(): Iterable<Pod>;
    byUID(uid: string): Pod | undefined;
  };
  /**
   * Whether the pod manager holds what the API server had when the agent started (the API
   * source's first list is applied). Until then a static pod is not asked about for the first
   * time: its mirror may not be known yet, and the runtime takes over a pod from the mirror's
   * status when it first sees it (StatusProvider.adopt). True by default.
   */
  previousStatusKnown?: () => boolean;
}

/**
 * Publishes static pods' statuses on their mirror pods, like the kubelet's status manager:
 *
 * - statuses are cached by STATIC pod UID, each with a version bumped when it changes (from
 *   one counter: a status forgotten and made again, as for a UID that runs again, must not
 *   start below the version its mirror was written with);
 * - a static pod without a mirror, or whose mirror has another hash (about to be replaced), is
 *   skipped (its status is kept and written once its mirror shows up in the pod manager);
 * - the mirror as the pod manager last saw it through the API watch stands in for the
 *   kubelet's GET of the API object: if the pod manager translates its UID to another static
 *   pod, the cached status belongs to an older incarnation and is dropped; if its status
 *   already holds ours, nothing is sent. This halves the requests per status write;
 * - the strategic merge PATCH of the `status` subresource carries `metadata.uid` = that
 *   mirror's UID, so the API server refuses it (422, `metadata.uid` immutable) if the mirror
 *   was replaced since the watch showed it: a stale view can never write to another object;
 * - the patch holds only the kubelet's conditions: the server merges conditions by type, so
 *   those other controllers set on the mirror (readiness gates) survive;
 * - versions written are recorded by MIRROR UID; an unchanged status is not sent again;
 * - a mirror copy the watch delivers after a write of ours but from before it (the echo of an
 *   earlier write, late under load) is not taken for the server's status: the kubelet reads
 *   the pod before any write, so such a copy never makes it write the same status again;
 * - mirrors are never deleted here.
 *
 * Incremental batches run on the provider's change notifications and on `requestSync()`;
 * those the agent requests name the pods an update carried and look at just those;
 * a full batch, which also reconciles against the mirror's status in the pod manager, runs
 * every `resyncIntervalMs`. It compares only mirror objects not already found in sync with the
 * current version, so with nothing changed it costs a few lookups per pod. Errors are logged
 * and retried by later batches.
 */
export interface MirrorStatusWriter {
  start(): void;
  stop(): Promise<void>;
  /**
   * Schedules an incremental batch soon. Given the pods an update carried (static pods and
   * mirrors), the batch looks only at their static pods; without, at every static pod.
   */
  requestSync(pods?: readonly Pod[]): void;
  /** Runs one batch now; `full` adds reconciliation and cleanup. Never rejects. */
  syncBatch(full: boolean): Promise<void>;
  /** The cached status of a pod; a mirror UID is translated to its static pod first. */
  getPodStatus(uid: string): V1PodStatus | undefined;
  /** The provider's status of this static pod changed (or the pod started again): ask it again soon. */
  invalidate(uid: string): void;
}

export function createMirrorStatusWriter(options: MirrorStatusWriterOptions): MirrorStatusWriter {
  const resync = options.resyncIntervalMs ?? 10_000;
  if (!(resync > 0)) throw kpError('KP_ERR_STATUS_OPTIONS', ['resyncIntervalMs', String(resync)]);
  return new StatusWriter(options, resync);
}

interface CachedStatus {
  version: number;
  /** The static pod as last seen: its full name finds the mirror. */
  pod: Pod;
  /**
   * The status, until a batch finds the API object (as the watch showed it, after any
   * write of ours) holding it; then that object holds what was written, and the writer keeps
   * only `fingerprint`. The provider's status is the same while it reports no change
   * (StatusProvider.statusFor), so it is asked again when the status is needed once more.
   */
  status: V1PodStatus | undefined;
  /** The fingerprint of the status once let go (undefined until then). */
  fingerprint: number | undefined;
  /**
   * The mirror object last found to hold this version. The pod manager stores a new object on
   * every update, so while it still holds this one a full batch need not compare again.
   */
  inSyncWith: Pod | undefined;
}

/**
 * - full: every static pod, with reconciliation against the mirrors and cleanup (10 s);
 * - scan: every static pod, asking the provider only about new and reported ones;
 * - targeted: only the pods updates and the provider named since the last batch, so that
 *   the stream of updates during a burst (our own status writes come back through the watch)
 *   costs O(changed) per batch, not O(pods).
 */
type BatchKind = 'full' | 'scan' | 'targeted';

/** Mirror status writes in flight at once within one batch. */
const WRITE_CONCURRENCY = 16;

/** What an empty batch names: read, never written. */
const NO_NAMES: ReadonlySet<string> = new Set();
/** What a scan of a writer without statuses walks. */
const NO_STATUSES: ReadonlyMap<string, CachedStatus> = new Map();
// Every writer's first batch waits on this one settled promise, and without the option the
// previous statuses are always known: neither needs an object per writer.
const SETTLED: Promise<void> = Promise.resolve();
const ALWAYS = (): boolean => true;
/** What reading the server answers for a mirror that is gone or was replaced. */
const SERVER_GONE = Symbol('server-gone');
/** Every status PATCH's options, made once: its Content-Type, and the answer not read. */
const STATUS_PATCH_OPTIONS = setHeaderOptions('Content-Type', STATUS_PATCH_CONTENT_TYPE, answerUseOptions('nothing'));

class StatusWriter implements MirrorStatusWriter {
  readonly #pm: StatusPodManager;
  readonly #provider: StatusProvider;
  readonly #api: PodStatusApi;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #resyncMs: number;
  readonly #onWrite: ((result: StatusWriteResult) => void) | undefined;
  readonly #published: { list(): Iterable<Pod>; byUID(uid: string): Pod | undefined };
  readonly #previousStatusKnown: () => boolean;

  // The tables below are made at their first entry: a fleet node without pods holds none.
  #statuses: Map<string, CachedStatus> | undefined;
  // Version last written (or found already present), by mirror UID.
  #apiStatusVersions: Map<string, number> | undefined;
  // Mirror objects a successful write went over: until the watch brings a newer object, the
  // pod manager's copy predates that write and says nothing about what the server holds.
  #predatesWrite: WeakSet<Pod> | undefined;
  // Static pod UIDs whose provider status changed since the last batch (provider notifications).
  #changed: Set<string> | undefined;
  // What updates named since the last batch (requestSync(pods)): static pods by UID, mirror
  // pods by full name; and whether someone asked for a scan of every pod (requestSync()).
  #touchedUIDs: Set<string> | undefined;
  #touchedNames: Set<string> | undefined;
  #scanAll = false;

  // The last version given to any status.
  #lastVersion = 0;
  #running = false;
  #resyncTimer: ClockTimer | undefined;
  #incrementalTimer: ClockTimer | undefined;
  #unsubscribe: (() => void) | undefined;
  #chain: Promise<void> = SETTLED;

  constructor(options: MirrorStatusWriterOptions, resyncMs: number) {
    this.#pm = options.podManager;
    this.#provider = options.statusProvider;
    this.#api = options.api;
    this.#clock = options.clock ?? realClock;
    this.#log = childLogger(options.logger, { component: 'mirror-status-writer' });
    this.#resyncMs = resyncMs;
    this.#onWrite = options.onWrite;
    this.#previousStatusKnown = options.previousStatusKnown ?? ALWAYS;
    const pm = options.podManager;
    this.#published = options.publishedPods ?? {
      list: () => pm.getPods().filter(isStaticPod),
      byUID: (uid) => {
        const pod = pm.getPodByUID(uid);
        return pod !== undefined && isStaticPod(pod) ? pod : undefined;
      },
    };
  }

  invalidate(uid: string): void {
    (this.#changed ??= new Set()).add(uid);
    this.#scheduleIncremental();
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#unsubscribe = this.#provider.onChange?.((uid) => {
      (this.#changed ??= new Set()).add(uid);
      this.#scheduleIncremental();
    });
    this.#scheduleResync(0);
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    for (const t of [this.#resyncTimer, this.#incrementalTimer]) if (t !== undefined) this.#clock.clearTimeout(t);
    this.#resyncTimer = undefined;
    this.#incrementalTimer = undefined;
    await this.#chain;
  }

  requestSync(pods?: readonly Pod[]): void {
    if (!this.#running) return;
    if (pods === undefined) this.#scanAll = true;
    else {
      for (const pod of pods) {
        if (isMirrorPod(pod)) (this.#touchedNames ??= new Set()).add(getPodFullName(pod));
        else (this.#touchedUIDs ??= new Set()).add(podUID(pod));
      }
    }
    this.#scheduleIncremental();
  }

  #scheduleIncremental(): void {
    if (!this.#running || this.#incrementalTimer !== undefined) return;
    // Coalesce a burst of notifications into one batch.
    this.#incrementalTimer = this.#clock.setTimeout(() => {
      this.#incrementalTimer = undefined;
      const scan = this.#scanAll;
      this.#scanAll = false;
      void this.#enqueueBatch(scan ? 'scan' : 'targeted');
    }, 0);
  }

  getPodStatus(uid: string): V1PodStatus | undefined {
    const cached = this.#statuses?.get(this.#pm.translatePodUID(uid));
    return cached === undefined ? undefined : (cached.status ?? this.#statusOf(cached.pod));
  }

  syncBatch(full: boolean): Promise<void> {
    return this.#enqueueBatch(full ? 'full' : 'scan');
  }

  #enqueueBatch(kind: BatchKind): Promise<void> {
    // Batches never overlap: each waits for the previous one.
    const next = this.#chain.then(() => this.#batch(kind)).catch((err: unknown) => {
      this.#log.error({ kind, err: kpError('KP_ERR_STATUS_BATCH', [kind], { cause: err }) }, 'status batch failed');
    });
    this.#chain = next;
    return next;
  }

  #scheduleResync(delayMs: number): void {
    if (!this.#running) return;
    this.#resyncTimer = this.#clock.setTimeout(() => {
      this.#resyncTimer = undefined;
      void this.#enqueueBatch('full').then(() => this.#scheduleResync(this.#resyncMs));
    }, delayMs);
  }

  // The kubelet's pod workers call SetPodStatus; here the batch itself asks the provider for
  // the status of every static pod that is new or whose status the provider says changed, and
  // versions the ones that differ. While we hear the provider's changes, that is all a full
  // batch asks too; without them (no onChange, or not started) a full batch polls every pod.
  #refreshStatuses(full: boolean, changed: ReadonlySet<string>): void {
    const askAll = full && this.#unsubscribe === undefined;
    let staticPods = 0;
    for (const pod of this.#published.list()) {
      const uid = podUID(pod);
      if (uid === '') continue;
      staticPods++;
      this.#refresh(uid, pod, askAll || changed.has(uid));
    }
    // Every static pod now has a status, so more statuses than pods means some pods left.
    if ((this.#statuses?.size ?? 0) > staticPods) this.#forgetRemovedPods();
  }

  /**
   * Keeps `pod` as the one the status belongs to; asks the provider if `ask` or it is new.
   * Undefined for a new static pod while previous statuses are not known yet.
   */
  #refresh(uid: string, pod: Pod, ask: boolean): CachedStatus | undefined {
    const cached = this.#statuses?.get(uid);
    if (cached !== undefined) {
      // A new generation (the spec changed) is a new status even when the runtime's is not.
      const regenerated = podGeneration(cached.pod) !== podGeneration(pod);
      cached.pod = pod;
      if (!ask && !regenerated) return cached;
    } else if (isStaticPod(pod) && !this.#previousStatusKnown()) {
      return undefined;
    }
    const status = this.#statusOf(pod);
    if (cached !== undefined && sameAsCached(status, cached)) return cached;
    const fresh: CachedStatus = { version: ++this.#lastVersion, pod, status, fingerprint: undefined, inSyncWith: undefined };
    (this.#statuses ??= new Map()).set(uid, fresh);
    return fresh;
  }

  /**
   * The cached status, asked of the provider again if it was let go, and held from now on.
   * Should the provider answer another status than the one let go without having reported a
   * change (against its contract), that status becomes a new version.
   */
  #hold(uid: string, cached: CachedStatus): [CachedStatus, V1PodStatus] {
    if (cached.status !== undefined) return [cached, cached.status];
    const status = this.#statusOf(cached.pod);
    if (sameAsCached(status, cached)) {
      // The fingerprint stays right for it, and is not computed again when it is let go.
      cached.status = status;
      return [cached, status];
    }
    const fresh: CachedStatus = { version: ++this.#lastVersion, pod: cached.pod, status, fingerprint: undefined, inSyncWith: undefined };
    (this.#statuses ??= new Map()).set(uid, fresh);
    return [fresh, status];
  }

  // The provider's status with the generation it answers, as the kubelet's status manager sets it.
  #statusOf(pod: Pod): V1PodStatus {
    return withObservedGeneration(this.#provider.statusFor(pod, this.#clock.now()), pod);
  }

  /** The API object `mirror`, fresher than our last write, holds the cached status: let it go. */
  #inSync(cached: CachedStatus, mirror: Pod): void {
    cached.inSyncWith = mirror;
    if (cached.status === undefined) return;
    cached.fingerprint ??= statusFingerprint(cached.status);
    cached.status = undefined;
  }

  /**
   * The static pods a targeted batch looks at: those the updates named (by UID, or by the full
   * name of their mirror) and those the provider reported. Statuses of named pods that are
   * gone are forgotten.
   */
  #targets(changed: ReadonlySet<string>): Map<string, CachedStatus> {
    const uids = this.#touchedUIDs ?? new Set<string>();
    const names = this.#touchedNames ?? NO_NAMES;
    this.#touchedUIDs = undefined;
    this.#touchedNames = undefined;
    for (const uid of changed) uids.add(uid);
    const targets = new Map<string, CachedStatus>();
    for (const uid of uids) {
      if (uid === '') continue;
      const pod = this.#published.byUID(uid);
      if (pod === undefined) {
        if (this.#statuses?.delete(uid) === true) this.#provider.forget?.(uid);
        continue;
      }
      const cached = this.#refresh(uid, pod, changed.has(uid));
      if (cached !== undefined) targets.set(uid, cached);
    }
    for (const name of names) {
      const found = this.#pm.getPodByFullName(name);
      const uid = found?.metadata?.uid ?? '';
      const pod = uid === '' ? undefined : this.#published.byUID(uid);
      const cached = pod !== undefined && !targets.has(uid) ? this.#refresh(uid, pod, false) : undefined;
      if (cached !== undefined) targets.set(uid, cached);
    }
    return targets;
  }

  // A pod that is no longer published (gone from the pod manager in the instant lifecycle, or
  // finished in the kubelet lifecycle, whose final status was written before) is forgotten.
  #forgetRemovedPods(): void {
    const statuses = this.#statuses;
    if (statuses === undefined) return;
    const present = new Set<string>();
    for (const pod of this.#published.list()) present.add(podUID(pod));
    for (const uid of statuses.keys()) {
      if (!present.has(uid)) {
        statuses.delete(uid);
        this.#provider.forget?.(uid);
      }
    }
  }

  async #batch(kind: BatchKind): Promise<void> {
    const full = kind === 'full';
    const changed = this.#changed ?? NO_NAMES;
    this.#changed = undefined;
    let candidates: Iterable<[string, CachedStatus]>;
    if (kind === 'targeted') {
      candidates = this.#targets(changed);
    } else {
      // A scan covers whatever the updates named.
      this.#touchedUIDs = undefined;
      this.#touchedNames = undefined;
      this.#refreshStatuses(full, changed);
      candidates = this.#statuses ?? NO_STATUSES;
    }
    if (full) {
      // Versions of UIDs that are neither a cached status nor a mirror the pod manager knows.
      for (const uid of this.#apiStatusVersions?.keys() ?? []) {
        if (this.#statuses?.has(uid) !== true && this.#pm.translatePodUID(uid) === uid) this.#apiStatusVersions!.delete(uid);
      }
    }
    // [static UID, status, the pod manager's copy of its mirror, whether to read the server's first]
    const writes: Array<[string, CachedStatus, Pod, boolean]> = [];
    for (const [uid, listed] of candidates) {
      let cached = listed;
      // A static pod's status goes to its mirror; any other pod's to the pod itself, as the
      // API watch last showed it.
      const mirror = isStaticPod(cached.pod) ? this.#pm.getMirrorPodByPod(cached.pod) : this.#pm.getPodByUID(uid);
      // Static pod without a mirror: keep the status, write nothing yet.
      if (mirror === undefined) continue;
      const mirrorUID = podUID(mirror);
      let write = (this.#apiStatusVersions?.get(mirrorUID) ?? 0) < cached.version;
      let readFirst = false;
      if (!write && full && cached.inSyncWith !== mirror && this.#predatesWrite?.has(mirror) !== true) {
        const [held, status] = this.#hold(uid, cached);
        if (held !== cached) {
          cached = held;
          write = true;
        } else if (sameStatus(status, mirror.status ?? {})) {
          this.#inSync(cached, mirror);
        } else {
          // The copy differs from ours: someone else changed the status, our write was lost, or
          // the copy is the late echo of an earlier write of ours (the watch lags under load).
          // Its resourceVersion cannot tell which (the merger keeps the first-seen metadata of
          // a status-only change, as the kubelet's config does), so the server is asked, as the
          // kubelet's syncPod always does.
          this.#apiStatusVersions?.delete(mirrorUID);
          write = true;
          readFirst = true;
        }
      }
      if (write) writes.push([uid, cached, mirror, readFirst]);
    }
    // Run several writes at once (the client's rate limiter still applies) so a thousand new
    // mirrors do not wait in single file.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < writes.length) {
        const [uid, cached, mirror, readFirst] = writes[next++]!;
        await this.#syncPod(uid, cached, mirror, readFirst);
      }
    };
    await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, writes.length) }, worker));
  }

  // `mirror` is the API object as the watch last showed it; the UID precondition covers the
  // case where it has been replaced since. With `readFirst` the server's copy decides whether
  // the status is already there.
  async #syncPod(staticUID: string, listed: CachedStatus, mirror: Pod, readFirst: boolean): Promise<void> {
    const name = mirror.metadata?.name ?? '';
    const namespace = mirror.metadata?.namespace ?? '';
    const fullName = `${name}_${namespace}`;
    const mirrorUID = podUID(mirror);
    const translated = this.#pm.translatePodUID(mirrorUID);
    if (translated !== '' && translated !== staticUID) {
      // The API object is the mirror of another incarnation of this static pod.
      this.#log.info({ pod: fullName, uid: staticUID, mirrorUID }, 'mirror pod belongs to another static pod; dropping cached status');
      this.#statuses?.delete(staticUID);
      return;
    }
    // A mirror of another hash (an edited manifest's, which the pod manager pairs with the new
    // pod by its name) is about to be replaced by mirror sync: the status waits for the new one,
    // and the old one keeps its last status.
    if (isStaticPod(listed.pod) && !isMirrorPodOf(mirror, listed.pod)) return;
    const [cached, status] = this.#hold(staticUID, listed);
    const there = await this.#alreadyThere(status, mirror, mirrorUID, fullName, readFirst);
    if (there === SERVER_GONE) return;
    if (there) {
      (this.#apiStatusVersions ??= new Map()).set(mirrorUID, cached.version);
      this.#inSync(cached, mirror);
      this.#onWrite?.('unchanged');
      return;
    }
    try {
      await this.#api.patchNamespacedPodStatus({ name, namespace, body: buildStatusPatch(mirrorUID, status) }, STATUS_PATCH_OPTIONS);
    } catch (err) {
      // Gone since the watch showed it: the watch will tell the pod manager.
      if (isNotFound(err)) {
        this.#log.debug({ pod: fullName }, 'mirror pod not found; status not written');
        return;
      }
      // Replaced since the watch showed it: the next batch writes to the new mirror.
      this.#report(isUIDMismatch(err) ? 'conflict' : 'error', fullName, err);
      return;
    }
    (this.#apiStatusVersions ??= new Map()).set(mirrorUID, cached.version);
    (this.#predatesWrite ??= new WeakSet()).add(mirror);
    this.#onWrite?.('success');
    this.#log.debug({ pod: fullName, uid: staticUID, mirrorUID, version: cached.version }, 'wrote mirror pod status');
  }

  /**
   * Whether the server already holds `status` (by the kubelet's fields), so that no write is
   * needed. The watch's copy can say no, but yes only before any write of ours to this mirror:
   * after one, it may be the late echo of an earlier write (the watch lags under load, and the
   * copy's resourceVersion is the first-seen one), so the server is asked, as the kubelet's
   * syncPod always asks it. With `readFirst` the server is asked in any case.
   */
  async #alreadyThere(status: V1PodStatus, mirror: Pod, mirrorUID: string, fullName: string, readFirst: boolean): Promise<boolean | typeof SERVER_GONE> {
    if (!readFirst) {
      if (this.#predatesWrite?.has(mirror) === true || !sameStatus(status, mirror.status ?? {})) return false;
      if (this.#apiStatusVersions?.has(mirrorUID) !== true) return true;
    }
    const server = await this.#serverStatus(mirror, mirrorUID, fullName);
    return server === SERVER_GONE ? server : server !== undefined && sameStatus(status, server);
  }

  /**
   * The status the server holds for the mirror, read as the kubelet's syncPod reads it: undefined
   * when it could not be read (the write goes ahead), SERVER_GONE when the mirror is gone or was
   * replaced (the watch will tell the pod manager, and the next batch writes to the new one).
   */
  async #serverStatus(mirror: Pod, mirrorUID: string, fullName: string): Promise<V1PodStatus | typeof SERVER_GONE | undefined> {
    try {
      const server = await this.#api.readNamespacedPod({ name: mirror.metadata?.name ?? '', namespace: mirror.metadata?.namespace ?? '' });
      if (podUID(server) !== mirrorUID) return SERVER_GONE;
      return server.status ?? {};
    } catch (err) {
      if (isNotFound(err)) return SERVER_GONE;
      logApiFailure(this.#log, err, { code: 'KP_ERR_STATUS_READ', subject: fullName, message: 'failed to read pod before writing its status', fields: { pod: fullName } });
      return undefined;
    }
  }

  #report(result: StatusWriteResult, fullName: string, err: unknown): void {
    this.#onWrite?.(result);
    logApiFailure(this.#log, err, { code: 'KP_ERR_STATUS_WRITE', subject: fullName, message: 'failed to write pod status', fields: { pod: fullName } });
  }
}

/** Whether the provider's `status` is the cached one, as the API server would store them. */
function sameAsCached(status: V1PodStatus, cached: CachedStatus): boolean {
  return cached.status !== undefined ? sameStoredValue(status, cached.status) : statusFingerprint(status) === cached.fingerprint;
}
