import { PodOperation } from '../constants.js';
import { getPodFullName } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import type { Clock } from '../time/clock.js';
import type { Merger } from './mux.js';
import { formatSeenTimestamp, mergePodVersion, stampNewPod } from './pod-diff.js';
import type { PodUpdate, SetDelta, SourceLogger } from './types.js';
import { formatPod, podUID } from '../values/pod-format.js';

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
  /** The kubelet's event text, naming the pod, its UID and the source. */
  readonly message: string;
  readonly source: string;
  /** The pod dropped. */
  readonly pod: Pod;
  /** Where the dropped pod came from (its manifest path), when the source said. */
  readonly origin?: string;
  /** The earlier pod of the same full name, which is kept. */
  readonly keptPod: Pod;
  /** Where the kept pod came from, when the source said. */
  readonly keptOrigin?: string;
}

export interface PodStorageOptions {
  readonly mode: PodConfigMode;
  readonly logger: SourceLogger;
  readonly clock: Clock;
  readonly onEvent: ((event: PodConfigEvent) => void) | undefined;
  /** Receives every merged update, in order. */
  readonly emit: (update: PodUpdate) => void;
}

/** The merge state behind PodConfig (the kubelet's podStorage). */
export interface PodStorage extends Merger<PodUpdate> {
  /** Every stored pod of every source, ordered by namespace, name, UID. */
  mergedState(): Pod[];
  /** Whether `source` has delivered at least one SET. */
  hasSeenSet(source: string): boolean;
}

/**
 * The names of a source's last SET, as the source sent them (the merger keeps a known pod's
 * stored object, and so its first name, when the same UID comes back renamed).
 */
interface NameIndex {
  /** The UID of the pod kept for each full name. */
  readonly byName: Map<string, string>;
  /**
   * The UIDs of the pods dropped for a name taken (usually none). A kept pod's UID is a key
   * of the stored pods, its name as sent the key of `byName` that maps to it: no map by UID,
   * which was an entry per pod.
   */
  readonly dropped: Set<string>;
  /** Full names that more than one pod of the set had. */
  readonly contested: Set<string>;
}

interface SourceState {
  /** Stored pods by UID. */
  pods: Map<string, Pod>;
  /** The `pods` array of the last SET merged, while it can be a delta's base. */
  lastSet: readonly Pod[] | undefined;
  /** The names of `lastSet`, kept only while it is set. */
  names: NameIndex | undefined;
  /** The duplicates warned about for the last update: each is reported once while it lasts (none: undefined). */
  warned: Set<string> | undefined;
  sawSet: boolean;
}

/**
 * The index of every empty set, never changed: a source's state keeps it instead of two maps and
 * a set of its own while the source has no pods (a fleet node's API source, mostly).
 */
const EMPTY_NAMES: NameIndex = Object.freeze(emptyNameIndex());

function emptyNameIndex(): NameIndex {
  return { byName: new Map(), dropped: new Set(), contested: new Set() };
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

/** Deterministic order for whole-state lists: namespace, name, then UID. */
function compareFullOrder(a: Pod, b: Pod): number {
  const ka = [a.metadata?.namespace ?? '', a.metadata?.name ?? '', podUID(a)];
  const kb = [b.metadata?.namespace ?? '', b.metadata?.name ?? '', podUID(b)];
  for (let i = 0; i < 3; i++) {
    if (ka[i]! < kb[i]!) return -1;
    if (ka[i]! > kb[i]!) return 1;
  }
  return 0;
}

/**
 * Per-source state keyed by UID, a SET replaced wholesale, and the differences announced in
 * the configured mode. It is the one place where a second pod with a full name already taken
 * in the same update is dropped (the first one in the update's order wins).
 */
export function createPodStorage(options: PodStorageOptions): PodStorage {
  return new PodStorageImpl(options);
}

class PodStorageImpl implements PodStorage {
  readonly #options: PodStorageOptions;
  readonly #sources = new Map<string, SourceState>();
  /** `config.seen` of the merge in progress: one timestamp (and one string) per merge. */
  #seen: string | undefined;

  constructor(options: PodStorageOptions) {
    this.#options = options;
  }

  hasSeenSet(source: string): boolean {
    return this.#sources.get(source)?.sawSet === true;
  }

  mergedState(): Pod[] {
    const all: Pod[] = [];
    for (const state of this.#sources.values()) for (const pod of state.pods.values()) all.push(pod);
    return all.sort(compareFullOrder);
  }

  merge(source: string, update: PodUpdate): void {
    let state = this.#sources.get(source);
    if (state === undefined) {
      state = { pods: new Map(), lastSet: undefined, names: undefined, warned: undefined, sawSet: false };
      this.#sources.set(source, state);
    }
    const r: MergeResult = { adds: [], updates: [], deletes: [], removes: [], reconciles: [], firstSet: false };
    const lastSet = state.lastSet;
    const names = state.names;
    state.lastSet = undefined;
    state.names = undefined;
    this.#seen = undefined;
    switch (update.op) {
      case PodOperation.ADD:
      case PodOperation.UPDATE:
      case PodOperation.DELETE:
        this.#process(source, this.#dropDuplicates(source, state, update).kept, state.pods, state.pods, r);
        break;
      case PodOperation.REMOVE:
        for (const pod of update.pods) {
          const existing = state.pods.get(podUID(pod));
          if (existing) {
            state.pods.delete(podUID(pod));
            r.removes.push(existing);
          }
        }
        break;
      case PodOperation.SET: {
        r.firstSet = !state.sawSet;
        state.sawSet = true;
        if (update.delta && update.delta.base === lastSet && names) {
          // The index of an empty set is made when a delta first builds on it.
          const base = names === EMPTY_NAMES ? emptyNameIndex() : names;
          if (this.#applyDelta(source, update.delta, state.pods, base, r)) {
            state.lastSet = update.pods;
            state.names = base;
            break;
          }
        }
        const { kept, names: nextNames } = this.#dropDuplicates(source, state, update);
        const next = new Map<string, Pod>();
        this.#process(source, kept, state.pods, next, r);
        for (const [uid, pod] of state.pods) if (!next.has(uid)) r.removes.push(pod);
        state.pods = next;
        if (nextNames !== undefined) {
          state.lastSet = update.pods;
          state.names = nextNames;
        }
        break;
      }
      default:
        this.#options.logger.warn({ source, op: update.op }, 'invalid pod update operation, ignoring');
        return;
    }
    this.#emit(source, r);
  }

  /**
   * Folds `newPods` (free of duplicate names) into `target`, comparing with `oldMap`, and
   * records what happened in `r`. A pod that did not change keeps its stored object; a pod
   * that did gets a new one (stored objects may be held by consumers and are never mutated).
   */
  #process(source: string, newPods: readonly Pod[], oldMap: Map<string, Pod>, target: Map<string, Pod>, r: MergeResult): void {
    for (const pod of newPods) {
      const uid = podUID(pod);
      const known = oldMap.get(uid);
      if (known === undefined) {
        this.#seen ??= formatSeenTimestamp(this.#options.clock.now());
        const stored = stampNewPod(pod, source, this.#seen);
        target.set(uid, stored);
        r.adds.push(stored);
        continue;
      }
      const version = mergePodVersion(known, pod, source);
      if (version.change === 'none') {
        target.set(uid, known);
        continue;
      }
      target.set(uid, version.pod);
      if (version.change === 'update') r.updates.push(version.pod);
      else if (version.change === 'reconcile') r.reconciles.push(version.pod);
      else r.deletes.push(version.pod);
    }
  }

  /**
   * Applies a SET given as a delta to the state built from its base. Returns false, having
   * changed nothing, when the delta cannot be applied exactly as the full SET would be (a
   * pod without UID, a UID or name given twice or taken by another pod, a pod renamed under
   * its UID, a name more than one pod had): the caller then merges the full set.
   */
  #applyDelta(source: string, delta: SetDelta, cur: Map<string, Pod>, names: NameIndex, r: MergeResult): boolean {
    const removedUIDs = new Set<string>();
    for (const pod of delta.removed) {
      // Removing a pod that shares its name with another may bring in the one dropped for it.
      if (names.contested.has(getPodFullName(pod))) return false;
      removedUIDs.add(podUID(pod));
    }
    const claimed = new Map<string, string>();
    const changedUIDs = new Set<string>();
    for (const pod of delta.changed) {
      const uid = podUID(pod);
      const fullName = getPodFullName(pod);
      if (uid === '' || removedUIDs.has(uid) || changedUIDs.has(uid) || claimed.has(fullName) || names.contested.has(fullName)) return false;
      claimed.set(fullName, uid);
      changedUIDs.add(uid);
      const owner = names.byName.get(fullName);
      if (owner !== undefined && owner !== uid && !removedUIDs.has(owner)) return false;
      // The set had this UID under another name: kept (stored, and its name maps to it) or
      // dropped (a dropped pod of the same name has a contested name, refused above).
      if (owner !== uid && (cur.has(uid) || names.dropped.has(uid))) return false;
    }
    for (const pod of delta.removed) {
      // A removed pod is the set's object: its name is the one the set had (not contested).
      const uid = podUID(pod);
      const fullName = getPodFullName(pod);
      if (names.byName.get(fullName) === uid) names.byName.delete(fullName);
      const existing = cur.get(uid);
      if (existing === undefined) continue;
      cur.delete(uid);
      r.removes.push(existing);
    }
    this.#process(source, delta.changed, cur, cur, r);
    for (const [fullName, uid] of claimed) names.byName.set(fullName, uid);
    return true;
  }

  /**
   * Keeps the first pod per full name; each later one is dropped with a FailedValidation
   * warning, once for as long as the same pair of pods (named by origin when the source gave
   * one, else by UID) keeps coming. `names` is the index a later delta can build on; it is
   * undefined when a UID came twice in the set, which no delta can describe.
   */
  #dropDuplicates(source: string, state: SourceState, update: PodUpdate): { kept: Pod[]; names: NameIndex | undefined } {
    const { pods, origins } = update;
    if (pods.length === 0) {
      state.warned = undefined;
      return { kept: [], names: EMPTY_NAMES };
    }
    const names = emptyNameIndex();
    const uids = new Set<string>();
    const keptAt = new Map<string, number>();
    const kept: Pod[] = [];
    const warned = new Set<string>();
    let uniqueUIDs = true;
    for (let i = 0; i < pods.length; i++) {
      const pod = pods[i]!;
      const fullName = getPodFullName(pod);
      const uid = podUID(pod);
      if (uids.has(uid)) uniqueUIDs = false;
      uids.add(uid);
      const first = keptAt.get(fullName);
      if (first !== undefined) {
        names.contested.add(fullName);
        names.dropped.add(uid);
        this.#warnDuplicate(source, state, warned, fullName, pods[first]!, origins?.[first], pod, origins?.[i]);
        continue;
      }
      keptAt.set(fullName, i);
      names.byName.set(fullName, uid);
      kept.push(pod);
    }
    state.warned = warned.size > 0 ? warned : undefined;
    return { kept, names: uniqueUIDs ? names : undefined };
  }

  #warnDuplicate(
    source: string,
    state: SourceState,
    warned: Set<string>,
    fullName: string,
    keptPod: Pod,
    keptOrigin: string | undefined,
    pod: Pod,
    origin: string | undefined,
  ): void {
    const key = `${fullName}\0${keptOrigin ?? podUID(keptPod)}\0${origin ?? podUID(pod)}`;
    warned.add(key);
    if (state.warned?.has(key) === true) return;
    this.#options.logger.warn(
      {
        source,
        pod: fullName,
        podUID: podUID(pod),
        ...(origin !== undefined ? { path: origin } : {}),
        ...(keptOrigin !== undefined ? { kept: keptOrigin } : {}),
        keptUID: podUID(keptPod),
        reason: 'FailedValidation',
      },
      'pod ignored: an earlier pod of the same source has its full name',
    );
    const message =
      `Error validating pod ${formatPod(pod)} from ${source} ` +
      `due to duplicate pod name ${JSON.stringify(pod.metadata?.name ?? '')}, ignoring`;
    this.#options.onEvent?.({
      type: 'Warning',
      reason: 'FailedValidation',
      message,
      source,
      pod,
      keptPod,
      ...(origin !== undefined ? { origin } : {}),
      ...(keptOrigin !== undefined ? { keptOrigin } : {}),
    });
  }

  #emit(source: string, r: MergeResult): void {
    const { emit, mode } = this.#options;
    const push = (op: PodOperation, pods: Pod[]): void => emit({ op, source, pods });
    switch (mode) {
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
        if (r.removes.length > 0 || r.adds.length > 0 || r.firstSet) push(PodOperation.SET, this.mergedState());
        if (r.updates.length > 0) push(PodOperation.UPDATE, r.updates);
        if (r.deletes.length > 0) push(PodOperation.DELETE, r.deletes);
        break;
      case 'Snapshot':
        if (r.updates.length > 0 || r.deletes.length > 0 || r.adds.length > 0 || r.removes.length > 0 || r.firstSet) {
          push(PodOperation.SET, this.mergedState());
        }
        break;
    }
  }
}
