import {
  ALL_SOURCE,
  CONFIG_FIRST_SEEN_ANNOTATION_KEY,
  CONFIG_MIRROR_ANNOTATION_KEY,
  CONFIG_SOURCE_ANNOTATION_KEY,
  PodOperation,
} from '../constants.js';
import { kpError } from '../errors.js';
import { getPodFullName } from '../pod/classify.js';
import { clonePod } from '../pod/clone.js';
import type { Pod } from '../pod/types.js';
import { jsonEqual } from './canonical-json.js';
import { Mux, type SourceChannel } from './mux.js';
import { noopLogger, type PodUpdate, type SetDelta, type SourceLogger } from './types.js';
import { UpdateStream } from './update-stream.js';

/**
 * How merged updates are announced.
 * - `Incremental` (what the kubelet uses): REMOVE, ADD, UPDATE, DELETE, RECONCILE lists.
 * - `Snapshot`: a SET of the whole merged state whenever anything changed.
 * - `SnapshotAndUpdates`: a SET when pods came or went, UPDATE/DELETE lists for changes.
 */
export type PodConfigMode = 'Incremental' | 'Snapshot' | 'SnapshotAndUpdates';

/** A Warning event the merger raises (the kubelet records it on the pod). */
export interface PodConfigEvent {
  readonly type: 'Warning';
  readonly reason: 'FailedValidation';
  readonly message: string;
  readonly pod: Pod;
}

export interface PodConfigOptions {
  readonly mode?: PodConfigMode;
  readonly logger?: SourceLogger;
  /** Clock for `config.seen`; defaults to the real one. */
  readonly now?: () => Date;
  readonly onEvent?: (event: PodConfigEvent) => void;
}

/** Annotations the kubelet owns: ignored when comparing pods, kept across updates. */
const LOCAL_ANNOTATIONS = [CONFIG_SOURCE_ANNOTATION_KEY, CONFIG_MIRROR_ANNOTATION_KEY, CONFIG_FIRST_SEEN_ANNOTATION_KEY];

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * `config.seen`: local time as `YYYY-MM-DDTHH:mm:ss.fffffffff` plus `Z` (UTC) or `±hh:mm`,
 * always 9 fractional digits (JavaScript has milliseconds; the rest are zeros).
 */
export function formatSeenTimestamp(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const zone = offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `.${pad(date.getMilliseconds(), 3)}000000${zone}`
  );
}

/** Annotations other than the kubelet's own, which never make two versions of a pod differ. */
function sameNonLocalAnnotations(a: Pod, b: Pod): boolean {
  const aa = a.metadata?.annotations ?? {};
  const ba = b.metadata?.annotations ?? {};
  let present = 0;
  for (const key of Object.keys(aa)) {
    if (LOCAL_ANNOTATIONS.includes(key) || aa[key] === undefined || aa[key] === null) continue;
    present += 1;
    if (aa[key] !== ba[key]) return false;
  }
  for (const key of Object.keys(ba)) {
    if (!LOCAL_ANNOTATIONS.includes(key) && ba[key] !== undefined && ba[key] !== null) present -= 1;
  }
  return present === 0;
}

/**
 * Whether two versions of a pod are the same in the fields whose change makes a pod
 * "semantically different" (an UPDATE or DELETE): spec, labels, deletion fields and the
 * annotations the kubelet does not own.
 */
function sameSemantics(a: Pod, b: Pod): boolean {
  return (
    jsonEqual(a.spec, b.spec) &&
    jsonEqual(a.metadata?.labels ?? {}, b.metadata?.labels ?? {}) &&
    jsonEqual(a.metadata?.deletionTimestamp, b.metadata?.deletionTimestamp) &&
    jsonEqual(a.metadata?.deletionGracePeriodSeconds, b.metadata?.deletionGracePeriodSeconds) &&
    sameNonLocalAnnotations(a, b)
  );
}

type Check = 'none' | 'update' | 'reconcile' | 'delete';

/**
 * Full name ↔ UID of a source's last SET, as the source sent the pods: the merger keeps a
 * known pod's stored object (and so its first name) when the same UID comes back renamed.
 */
interface NameIndex {
  readonly byName: Map<string, string>;
  readonly byUID: Map<string, string>;
}

/** What one merge found, by kind of change. */
interface MergeResult {
  adds: Pod[];
  updates: Pod[];
  deletes: Pod[];
  removes: Pod[];
  reconciles: Pod[];
  firstSet: boolean;
}

/**
 * Compares a known pod with its new version and folds the new version into the stored
 * object (which is kept, as the kubelet keeps its pointer). Status-only change: reconcile.
 * Semantic change: update, or delete when the new version has a deletionTimestamp.
 */
function checkAndUpdatePod(existing: Pod, ref: Pod): Check {
  if (sameSemantics(existing, ref)) {
    if (!jsonEqual(existing.status, ref.status)) {
      existing.status = ref.status;
      return 'reconcile';
    }
    return 'none';
  }
  const existingAnnotations = existing.metadata?.annotations ?? {};
  const refMeta = (ref.metadata ??= {});
  refMeta.annotations ??= {};
  const seen = existingAnnotations[CONFIG_FIRST_SEEN_ANNOTATION_KEY];
  if (seen !== undefined) refMeta.annotations[CONFIG_FIRST_SEEN_ANNOTATION_KEY] = seen;

  const meta = (existing.metadata ??= {});
  existing.spec = ref.spec;
  meta.labels = refMeta.labels;
  meta.deletionTimestamp = refMeta.deletionTimestamp;
  meta.deletionGracePeriodSeconds = refMeta.deletionGracePeriodSeconds;
  existing.status = ref.status;
  const annotations: Record<string, string> = { ...refMeta.annotations };
  for (const key of LOCAL_ANNOTATIONS) {
    const value = existingAnnotations[key];
    if (value !== undefined) annotations[key] = value;
  }
  meta.annotations = annotations;
  return refMeta.deletionTimestamp ? 'delete' : 'update';
}

/** Deterministic order for whole-state lists: namespace, name, then UID. */
function compareFullOrder(a: Pod, b: Pod): number {
  const ka = [a.metadata?.namespace ?? '', a.metadata?.name ?? '', a.metadata?.uid ?? ''];
  const kb = [b.metadata?.namespace ?? '', b.metadata?.name ?? '', b.metadata?.uid ?? ''];
  for (let i = 0; i < 3; i++) {
    if (ka[i]! < kb[i]!) return -1;
    if (ka[i]! > kb[i]!) return 1;
  }
  return 0;
}

/**
 * The config merger (the kubelet's PodConfig): every source sends SET (or ADD/UPDATE/
 * DELETE/REMOVE) updates through `channel(name)`; per-source state is kept by UID and the
 * differences come out of `updates`, one merge at a time and contiguously.
 *
 * The merger stamps `config.source` on every pod and `config.seen` the first time a UID is
 * seen from a source. Input pods are copied, never mutated; emitted pods are copies too.
 */
export class PodConfig {
  /** Merged updates, in order. */
  readonly updates = new UpdateStream<PodUpdate>();
  private readonly mode: PodConfigMode;
  private readonly logger: SourceLogger;
  /** resourceVersion each stored pod was last merged at (API pods only). */
  private readonly resourceVersions = new WeakMap<Pod, string>();
  /** The source's object each stored pod was last merged from. */
  private readonly mergedFrom = new WeakMap<Pod, Pod>();
  private readonly now: () => Date;
  private readonly onEvent: ((event: PodConfigEvent) => void) | undefined;
  private readonly mux: Mux<PodUpdate>;
  private readonly pods = new Map<string, Map<string, Pod>>();
  private readonly sourcesSeen = new Set<string>();
  /** Per source, the `pods` array of the last SET merged, while it can be a delta's base. */
  private readonly lastSet = new Map<string, readonly Pod[]>();
  /** Per source, the full names and UIDs of the pods of `lastSet`, kept only while it is. */
  private readonly names = new Map<string, NameIndex>();

  constructor(options: PodConfigOptions = {}) {
    const mode = options.mode ?? 'Incremental';
    if (!['Incremental', 'Snapshot', 'SnapshotAndUpdates'].includes(mode)) {
      throw kpError('KP_ERR_SOURCE_OPTIONS', ['mode', JSON.stringify(mode)]);
    }
    this.mode = mode;
    this.logger = options.logger ?? noopLogger;
    this.now = options.now ?? (() => new Date());
    this.onEvent = options.onEvent;
    this.mux = new Mux({ merge: (source, update) => this.merge(source, update) });
  }

  /**
   * The channel a source pushes its updates into; the first call registers the source as
   * configured (seenAllSources waits for it). The same name gives the same function.
   * The `source` field of pushed updates is ignored: the channel's name is used.
   */
  channel(source: string): SourceChannel<PodUpdate> {
    return this.mux.channel(source);
  }

  /** Configured sources, in registration order. */
  sources(): string[] {
    return this.mux.sources();
  }

  /**
   * True when every configured source is in `seen` (sources whose updates the consumer
   * processed) AND has delivered at least one SET to this merger.
   */
  seenAllSources(seen: ReadonlySet<string>): boolean {
    return this.sources().every((s) => seen.has(s) && this.sourcesSeen.has(s));
  }

  /** Emits a SET with source `*` carrying the merged state of every source. */
  sync(): void {
    this.updates.push({ op: PodOperation.SET, source: ALL_SOURCE, pods: this.mergedState() });
  }

  private mergedState(): Pod[] {
    const all: Pod[] = [];
    for (const map of this.pods.values()) for (const pod of map.values()) all.push(clonePod(pod));
    return all.sort(compareFullOrder);
  }

  private merge(source: string, update: PodUpdate): void {
    const cur = this.pods.get(source) ?? new Map<string, Pod>();
    const r: MergeResult = { adds: [], updates: [], deletes: [], removes: [], reconciles: [], firstSet: false };
    const lastSet = this.lastSet.get(source);
    this.lastSet.delete(source);
    switch (update.op) {
      case PodOperation.ADD:
      case PodOperation.UPDATE:
      case PodOperation.DELETE:
        this.process(source, this.dropDuplicates(source, update.pods).kept, cur, cur, r);
        this.pods.set(source, cur);
        break;
      case PodOperation.REMOVE:
        for (const pod of update.pods) {
          const uid = pod.metadata?.uid ?? '';
          const existing = cur.get(uid);
          if (existing) {
            cur.delete(uid);
            r.removes.push(existing);
          }
        }
        this.pods.set(source, cur);
        break;
      case PodOperation.SET: {
        r.firstSet = !this.sourcesSeen.has(source);
        this.sourcesSeen.add(source);
        const names = this.names.get(source);
        if (update.delta && update.delta.base === lastSet && names && this.applyDelta(source, update.delta, cur, names, r)) {
          this.lastSet.set(source, update.pods);
          break;
        }
        const { kept, names: nextNames, unique } = this.dropDuplicates(source, update.pods);
        const next = new Map<string, Pod>();
        this.process(source, kept, cur, next, r);
        for (const [uid, pod] of cur) if (!next.has(uid)) r.removes.push(pod);
        this.pods.set(source, next);
        // A set with a name or UID twice is never the base of a delta: when the kept pod of a
        // name goes, the one dropped in its favour must come in, which only a full SET sees.
        if (!unique) this.names.delete(source);
        else {
          this.names.set(source, nextNames);
          this.lastSet.set(source, update.pods);
        }
        break;
      }
      default:
        this.logger.warn({ source, op: update.op }, 'invalid pod update operation, ignoring');
        return;
    }
    this.emit(source, r);
  }

  /**
   * Folds `newPods` (free of duplicate names) into `target`, comparing with `oldMap`, and
   * records what happened in `r`.
   */
  private process(source: string, newPods: readonly Pod[], oldMap: Map<string, Pod>, target: Map<string, Pod>, r: MergeResult): void {
    for (const original of newPods) {
      // Nothing changed when the stored pod was last merged from this very object (sources
      // resend unchanged pods as the same objects, which must not be mutated) or, for API
      // pods, from the same resourceVersion: no copy and no comparison is needed. Sources send
      // their whole set on every change, so without this a burst costs O(pods²) deep copies
      // and comparisons.
      const rv = original.metadata?.resourceVersion;
      const known = oldMap.get(original.metadata?.uid ?? '');
      if (
        known !== undefined &&
        (this.mergedFrom.get(known) === original || (rv !== undefined && rv !== '' && this.resourceVersions.get(known) === rv))
      ) {
        target.set(original.metadata?.uid ?? '', known);
        continue;
      }
      const ref = clonePod(original);
      if (rv !== undefined && rv !== '') this.resourceVersions.set(known ?? ref, rv);
      this.mergedFrom.set(known ?? ref, original);
      const meta = (ref.metadata ??= {});
      meta.annotations ??= {};
      meta.annotations[CONFIG_SOURCE_ANNOTATION_KEY] = source;
      const uid = meta.uid ?? '';
      if (known) {
        target.set(uid, known);
        const check = checkAndUpdatePod(known, ref);
        if (check === 'update') r.updates.push(known);
        else if (check === 'reconcile') r.reconciles.push(known);
        else if (check === 'delete') r.deletes.push(known);
        continue;
      }
      meta.annotations[CONFIG_FIRST_SEEN_ANNOTATION_KEY] = formatSeenTimestamp(this.now());
      target.set(uid, ref);
      r.adds.push(ref);
    }
  }

  /**
   * Applies a SET given as a delta to the state built from its base. Returns false, having
   * changed nothing, when the delta cannot be applied exactly as the full SET would be (a
   * pod without UID, a UID or name given twice or taken by another pod, a pod renamed under
   * its UID): the caller
   * then merges the full set.
   */
  private applyDelta(source: string, delta: SetDelta, cur: Map<string, Pod>, names: NameIndex, r: MergeResult): boolean {
    const removedUIDs = new Set<string>();
    for (const pod of delta.removed) removedUIDs.add(pod.metadata?.uid ?? '');
    const claimed = new Map<string, string>();
    const changedUIDs = new Set<string>();
    for (const pod of delta.changed) {
      const uid = pod.metadata?.uid ?? '';
      const fullName = getPodFullName(pod);
      if (uid === '' || removedUIDs.has(uid) || changedUIDs.has(uid) || claimed.has(fullName)) return false;
      claimed.set(fullName, uid);
      changedUIDs.add(uid);
      const owner = names.byName.get(fullName);
      if (owner !== undefined && owner !== uid && !removedUIDs.has(owner)) return false;
      const previousName = names.byUID.get(uid);
      if (previousName !== undefined && previousName !== fullName) return false;
    }
    for (const uid of removedUIDs) {
      const fullName = names.byUID.get(uid);
      if (fullName !== undefined) names.byName.delete(fullName);
      names.byUID.delete(uid);
      const existing = cur.get(uid);
      if (existing === undefined) continue;
      cur.delete(uid);
      r.removes.push(existing);
    }
    this.process(source, delta.changed, cur, cur, r);
    for (const [fullName, uid] of claimed) {
      names.byName.set(fullName, uid);
      names.byUID.set(uid, fullName);
    }
    return true;
  }

  /**
   * Keeps the first pod per full name; later ones get a FailedValidation warning. `unique`
   * tells whether every full name and every UID came once, which a delta's base needs.
   */
  private dropDuplicates(source: string, pods: readonly Pod[]): { kept: Pod[]; names: NameIndex; unique: boolean } {
    const names: NameIndex = { byName: new Map(), byUID: new Map() };
    const kept: Pod[] = [];
    let unique = true;
    for (const pod of pods) {
      const fullName = getPodFullName(pod);
      if (names.byName.has(fullName)) {
        unique = false;
        const message =
          `Error validating pod ${fullName}(${pod.metadata?.uid ?? ''}) from ${source} ` +
          `due to duplicate pod name ${JSON.stringify(pod.metadata?.name ?? '')}, ignoring`;
        this.logger.warn({ source, pod: fullName, reason: 'FailedValidation' }, message);
        this.onEvent?.({ type: 'Warning', reason: 'FailedValidation', message, pod });
        continue;
      }
      const uid = pod.metadata?.uid ?? '';
      if (names.byUID.has(uid)) unique = false;
      names.byName.set(fullName, uid);
      names.byUID.set(uid, fullName);
      kept.push(pod);
    }
    return { kept, names, unique };
  }

  private emit(source: string, r: MergeResult): void {
    const push = (op: PodOperation, pods: Pod[]): void => {
      this.updates.push({ op, source, pods: pods.map((p) => clonePod(p)) });
    };
    switch (this.mode) {
      case 'Incremental':
        if (r.removes.length > 0) push(PodOperation.REMOVE, r.removes);
        if (r.adds.length > 0) push(PodOperation.ADD, r.adds);
        if (r.updates.length > 0) push(PodOperation.UPDATE, r.updates);
        if (r.deletes.length > 0) push(PodOperation.DELETE, r.deletes);
        // The first SET of a source must be visible even when empty: it means "source ready".
        if (r.firstSet && r.adds.length === 0 && r.updates.length === 0 && r.deletes.length === 0) {
          push(PodOperation.ADD, []);
        }
        if (r.reconciles.length > 0) push(PodOperation.RECONCILE, r.reconciles);
        break;
      case 'SnapshotAndUpdates':
        if (r.removes.length > 0 || r.adds.length > 0 || r.firstSet) {
          this.updates.push({ op: PodOperation.SET, source, pods: this.mergedState() });
        }
        if (r.updates.length > 0) push(PodOperation.UPDATE, r.updates);
        if (r.deletes.length > 0) push(PodOperation.DELETE, r.deletes);
        break;
      case 'Snapshot':
        if (r.updates.length > 0 || r.deletes.length > 0 || r.adds.length > 0 || r.removes.length > 0 || r.firstSet) {
          this.updates.push({ op: PodOperation.SET, source, pods: this.mergedState() });
        }
        break;
    }
  }
}
