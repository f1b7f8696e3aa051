import type { CoreV1Api, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { childLogger, type Logger } from '../logger.js';
import { kpError } from '../errors.js';
import { apiErrorFields, apiErrorInfo, isNotFound, isUIDMismatch } from '../kube/api-error.js';
import { realClock, type Clock, type ClockTimer } from '../clock.js';
import { isStaticPod } from '../pod/classify.js';
import type { PodManager } from '../pod/manager.js';
import type { Pod } from '../pod/types.js';
import { KUBELET_OWNED_POD_CONDITIONS, type StatusProvider } from './status-provider.js';

/** The two Pod calls the writer makes; a `CoreV1Api` fits. */
export type PodStatusApi = Pick<CoreV1Api, 'readNamespacedPod' | 'patchNamespacedPodStatus'>;

/** What the writer needs from the pod manager. */
export type StatusPodManager = Pick<PodManager, 'getPods' | 'getMirrorPodByPod' | 'translatePodUID' | 'getUIDTranslations'>;

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
}

/**
 * Publishes static pods' statuses on their mirror pods, like the kubelet's status manager:
 *
 * - statuses are cached by STATIC pod UID, each with a version bumped when it changes;
 * - a static pod without a mirror is skipped (its status is kept and written once a mirror
 *   shows up in the pod manager);
 * - writing GETs the mirror by namespace/name; if the pod manager translates its UID to
 *   another static pod the cached status belongs to an older incarnation and is dropped;
 * - the PATCH of the `status` subresource carries `metadata.uid` = the mirror's UID, so the
 *   API server refuses it (422, `metadata.uid` immutable) if the mirror was replaced in between;
 * - versions written are recorded by MIRROR UID; an unchanged status is not sent again;
 * - mirrors are never deleted here.
 *
 * Incremental batches run on the provider's change notifications and on `requestSync()`;
 * a full batch, which also reconciles against the mirror's status in the pod manager, runs
 * every `resyncIntervalMs`. Errors are logged and retried by later batches.
 */
export interface MirrorStatusWriter {
  start(): void;
  stop(): Promise<void>;
  /** Schedules an incremental batch soon (e.g. after the pod manager learned a mirror). */
  requestSync(): void;
  /** Runs one batch now; `full` adds reconciliation and cleanup. Never rejects. */
  syncBatch(full: boolean): Promise<void>;
  /** The cached status of a pod; a mirror UID is translated to its static pod first. */
  getPodStatus(uid: string): V1PodStatus | undefined;
}

export function createMirrorStatusWriter(options: MirrorStatusWriterOptions): MirrorStatusWriter {
  const resync = options.resyncIntervalMs ?? 10_000;
  if (!(resync > 0)) throw kpError('KP_ERR_STATUS_OPTIONS', ['resyncIntervalMs', String(resync)]);
  return new StatusWriter(options, resync);
}

interface CachedStatus {
  version: number;
  name: string;
  namespace: string;
  status: V1PodStatus;
  /** Canonical JSON of `status`, to detect changes. */
  key: string;
}

/** Mirror status writes in flight at once within one batch. */
const WRITE_CONCURRENCY = 16;

class StatusWriter implements MirrorStatusWriter {
  readonly #pm: StatusPodManager;
  readonly #provider: StatusProvider;
  readonly #api: PodStatusApi;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #resyncMs: number;
  readonly #onWrite: ((result: StatusWriteResult) => void) | undefined;

  readonly #statuses = new Map<string, CachedStatus>();
  // Version last written (or found already present), by mirror UID.
  readonly #apiStatusVersions = new Map<string, number>();
  // Static pod UIDs whose provider status changed since the last batch (provider notifications).
  readonly #changed = new Set<string>();

  #running = false;
  #resyncTimer: ClockTimer | undefined;
  #incrementalTimer: ClockTimer | undefined;
  #unsubscribe: (() => void) | undefined;
  #chain: Promise<void> = Promise.resolve();

  constructor(options: MirrorStatusWriterOptions, resyncMs: number) {
    this.#pm = options.podManager;
    this.#provider = options.statusProvider;
    this.#api = options.api;
    this.#clock = options.clock ?? realClock;
    this.#log = childLogger(options.logger, { component: 'mirror-status-writer' });
    this.#resyncMs = resyncMs;
    this.#onWrite = options.onWrite;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#unsubscribe = this.#provider.onChange?.((uid) => {
      this.#changed.add(uid);
      this.requestSync();
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

  requestSync(): void {
    if (!this.#running || this.#incrementalTimer !== undefined) return;
    // Coalesce a burst of notifications into one batch.
    this.#incrementalTimer = this.#clock.setTimeout(() => {
      this.#incrementalTimer = undefined;
      void this.syncBatch(false);
    }, 0);
  }

  getPodStatus(uid: string): V1PodStatus | undefined {
    return this.#statuses.get(this.#pm.translatePodUID(uid))?.status;
  }

  syncBatch(full: boolean): Promise<void> {
    // Batches never overlap: each waits for the previous one.
    const next = this.#chain.then(() => this.#batch(full)).catch((err: unknown) => {
      this.#log.error({ err: (err as Error).message }, 'status batch failed');
    });
    this.#chain = next;
    return next;
  }

  #scheduleResync(delayMs: number): void {
    if (!this.#running) return;
    this.#resyncTimer = this.#clock.setTimeout(() => {
      this.#resyncTimer = undefined;
      void this.syncBatch(true).then(() => this.#scheduleResync(this.#resyncMs));
    }, delayMs);
  }

  // The kubelet's pod workers call SetPodStatus; here the batch itself asks the provider for
  // the status of every static pod that is new or whose status the provider says changed (all
  // of them in a full batch) and versions the ones that differ. Asking only for those keeps an
  // incremental batch cheap when thousands of pods are held.
  #refreshStatuses(full: boolean): void {
    const now = this.#clock.now();
    const seen = new Set<string>();
    const changed = new Set(this.#changed);
    this.#changed.clear();
    for (const pod of this.#pm.getPods()) {
      if (!isStaticPod(pod)) continue;
      const uid = pod.metadata?.uid ?? '';
      if (uid === '') continue;
      seen.add(uid);
      if (!full && this.#statuses.has(uid) && !changed.has(uid)) continue;
      const status = this.#provider.statusFor(pod, now);
      const key = canonicalKey(status);
      const cached = this.#statuses.get(uid);
      if (cached?.key === key) continue;
      this.#statuses.set(uid, {
        version: (cached?.version ?? 0) + 1,
        name: pod.metadata?.name ?? '',
        namespace: pod.metadata?.namespace ?? '',
        status,
        key,
      });
    }
    // No termination is simulated: a static pod leaving the pod manager just stops being
    // published (the kubelet would publish its terminal status first).
    for (const uid of [...this.#statuses.keys()]) {
      if (!seen.has(uid)) {
        this.#statuses.delete(uid);
        this.#provider.forget?.(uid);
      }
    }
  }

  async #batch(full: boolean): Promise<void> {
    this.#refreshStatuses(full);
    const { podToMirror, mirrorToPod } = this.#pm.getUIDTranslations();
    if (full) {
      for (const uid of [...this.#apiStatusVersions.keys()]) {
        if (!this.#statuses.has(uid) && !mirrorToPod.has(uid as never)) this.#apiStatusVersions.delete(uid);
      }
    }
    const podsByUID = full ? new Map(this.#pm.getPods().map((p) => [p.metadata?.uid ?? '', p])) : undefined;
    const writes: Array<[string, CachedStatus]> = [];
    for (const [uid, cached] of [...this.#statuses]) {
      const mirrorUID = podToMirror.get(uid as never);
      // Static pod without a mirror: keep the status, write nothing yet.
      if (mirrorUID === undefined || mirrorUID === '') continue;
      const written = this.#apiStatusVersions.get(mirrorUID) ?? 0;
      let write = written < cached.version;
      if (!write && full) {
        const staticPod = podsByUID?.get(uid);
        const mirror = staticPod ? this.#pm.getMirrorPodByPod(staticPod) : undefined;
        // The mirror's status as the pod manager last saw it differs from ours: someone else
        // changed it, or our write was lost. Forget the version and write again.
        if (mirror?.status !== undefined && !sameStatus(cached.status, mirror.status)) {
          this.#apiStatusVersions.delete(mirrorUID);
          write = true;
        }
      }
      if (write) writes.push([uid, cached]);
    }
    // Each write is a GET and a PATCH of one mirror; run several at once (the client's rate
    // limiter still applies) so a thousand new mirrors do not wait in single file.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < writes.length) {
        const [uid, cached] = writes[next++]!;
        await this.#syncPod(uid, cached);
      }
    };
    await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, writes.length) }, worker));
  }

  async #syncPod(staticUID: string, cached: CachedStatus): Promise<void> {
    const fullName = `${cached.name}_${cached.namespace}`;
    let apiPod: Pod;
    try {
      apiPod = await this.#api.readNamespacedPod({ name: cached.name, namespace: cached.namespace });
    } catch (err) {
      if (isNotFound(err)) {
        this.#log.debug({ pod: fullName }, 'mirror pod not found; status not written');
        return;
      }
      this.#report('error', fullName, err);
      return;
    }
    const mirrorUID = apiPod.metadata?.uid ?? '';
    const translated = this.#pm.translatePodUID(mirrorUID);
    if (translated !== '' && translated !== staticUID) {
      // The API object is the mirror of another incarnation of this static pod.
      this.#log.info({ pod: fullName, uid: staticUID, mirrorUID }, 'mirror pod belongs to another static pod; dropping cached status');
      this.#statuses.delete(staticUID);
      return;
    }
    const status = mergeStatus(apiPod.status ?? {}, cached.status);
    if (sameStatus(status, apiPod.status ?? {})) {
      this.#apiStatusVersions.set(mirrorUID, cached.version);
      this.#onWrite?.('unchanged');
      return;
    }
    try {
      await this.#api.patchNamespacedPodStatus(
        { name: cached.name, namespace: cached.namespace, body: { metadata: { uid: mirrorUID }, status: toWire(status) } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    } catch (err) {
      // The mirror was replaced between the GET and the PATCH: the next batch reads the new one.
      this.#report(isUIDMismatch(err) ? 'conflict' : 'error', fullName, err);
      return;
    }
    this.#apiStatusVersions.set(mirrorUID, cached.version);
    this.#onWrite?.('success');
    this.#log.debug({ pod: fullName, uid: staticUID, mirrorUID, version: cached.version }, 'wrote mirror pod status');
  }

  #report(result: StatusWriteResult, fullName: string, err: unknown): void {
    this.#onWrite?.(result);
    const info = apiErrorInfo(err);
    const error = kpError('KP_ERR_STATUS_WRITE', [fullName, info.code ? `HTTP ${info.code} ${info.reason}`.trim() : 'request failed'], { cause: err });
    this.#log.warn({ ...apiErrorFields(err), pod: fullName, errorCode: error.code, err: error.message }, 'failed to write mirror pod status');
  }
}

/**
 * The status to send: ours, with the API object's conditions of types the kubelet does not
 * own kept (other controllers may set readiness gates' conditions on mirrors), and its
 * resourceClaimStatuses untouched.
 */
export function mergeStatus(apiStatus: V1PodStatus, ours: V1PodStatus): V1PodStatus {
  const foreign = (apiStatus.conditions ?? []).filter((c) => !KUBELET_OWNED_POD_CONDITIONS.has(c.type));
  const kubelet = (ours.conditions ?? []).filter((c) => KUBELET_OWNED_POD_CONDITIONS.has(c.type));
  const merged: V1PodStatus = { ...ours, conditions: [...foreign, ...kubelet] as V1PodCondition[] };
  if (apiStatus.resourceClaimStatuses !== undefined) merged.resourceClaimStatuses = apiStatus.resourceClaimStatuses;
  else delete merged.resourceClaimStatuses;
  return merged;
}

/**
 * True when every field of `ours` has the same value in `theirs`, after the normalisation
 * the API server applies (timestamps to whole seconds, empty values omitted, conditions in
 * any order). Fields only `theirs` has (qosClass, set by the server) do not count.
 */
export function sameStatus(ours: V1PodStatus, theirs: V1PodStatus): boolean {
  const a = canonical(toWire(ours)) as Record<string, unknown>;
  const b = canonical(toWire(theirs)) as Record<string, unknown>;
  for (const key of Object.keys(a)) {
    if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) return false;
  }
  return true;
}

// JSON form with times at whole seconds.
function toWire(status: V1PodStatus): Record<string, unknown> {
  return JSON.parse(JSON.stringify(status), (_k, v: unknown) =>
    typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v) ? v.replace(/\.\d+Z$/, 'Z') : v,
  ) as Record<string, unknown>;
}

// Sorted keys, conditions sorted by type, Go's omitempty empties dropped.
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(canonical).filter((v) => v !== undefined);
    if (items.length === 0) return undefined;
    if (items.every((i) => typeof i === 'object' && i !== null && typeof (i as { type?: unknown }).type === 'string')) {
      items.sort((x, y) => String((x as { type: string }).type).localeCompare(String((y as { type: string }).type)));
    }
    return items;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = canonical((value as Record<string, unknown>)[key]);
      if (v !== undefined) out[key] = v;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  if (value === null || value === '' || value === undefined) return undefined;
  return value;
}

function canonicalKey(status: V1PodStatus): string {
  return JSON.stringify(canonical(toWire(status)) ?? {});
}

