import { Registry } from 'prom-client';
import { kpError } from '../errors.js';
import type { MirrorClient } from './mirror-client.js';
import { buildPodFullName, getPodFullName, isMirrorPod, isMirrorPodOf, isStaticPod } from './classify.js';
import { countEphemeralContainers, registerEphemeralContainersGauge } from './metrics.js';
import type { ConfigMapManager, SecretManager } from './object-managers.js';
import { asMirrorPodUID, asResolvedPodUID, type MirrorPodUID, type Pod, type ResolvedPodUID } from './types.js';

export interface PodManagerOptions {
  /** Where `kubelet_managed_ephemeral_containers` is registered; a private registry by default. */
  registry?: Registry;
  /** v1.25: told about every pod added or updated (unless terminated) and every pod removed. */
  secretManager?: SecretManager;
  /** v1.25: as `secretManager`. */
  configMapManager?: ConfigMapManager;
  /** v1.25: the manager embedded its mirror client; `createMirrorPod`/`deleteMirrorPod` use it. */
  mirrorClient?: MirrorClient;
}

export interface PodAndMirrorPod {
  pod: Pod | undefined;
  mirrorPod: Pod | undefined;
  /** True when the pod asked about was itself a mirror pod. */
  wasMirror: boolean;
}

export interface PodsAndMirrorPods {
  readonly pods: readonly Pod[];
  readonly mirrorPods: readonly Pod[];
  /** Full names of mirror pods that have no non-mirror pod of the same full name. */
  readonly orphanedMirrorPodFullNames: readonly string[];
}

export interface UIDTranslations {
  /** Every static pod; '' for one without a mirror. */
  podToMirror: Map<ResolvedPodUID, MirrorPodUID | ''>;
  mirrorToPod: Map<MirrorPodUID, ResolvedPodUID>;
}

/**
 * Full names of pods already seen, by object. Pods are immutable once handed over, so a pod's
 * full name never changes; caching it spares rebuilding and rehashing the string on every
 * lookup, which is most of the cost of a lookup in V8.
 */
const fullNameCache = new WeakMap<Pod, string>();

function fullNameOf(pod: Pod): string {
  let fullName = fullNameCache.get(pod);
  if (fullName === undefined) {
    fullName = getPodFullName(pod);
    fullNameCache.set(pod, fullName);
  }
  return fullName;
}

/**
 * Whether `name` and `namespace` join into a full name with exactly one `_`. Only such names
 * have a single way to be split back, so only they may be answered from the nested
 * namespace → name index without changing what the flat full-name index would answer.
 */
function hasUnambiguousFullName(name: string, namespace: string): boolean {
  return !name.includes('_') && !namespace.includes('_');
}

/**
 * The in-memory index of the pods this node should run and of the mirror pods reflecting its
 * static pods, with the kubelet's `basicManager` semantics (v1.29) plus the v1.25 extras.
 *
 * Static pods and their mirrors share a full name but not a UID; the manager pairs them by
 * full name and translates a mirror's UID to its static pod's, so that callers that learn a
 * mirror UID from the API server can act on the pod the node actually runs.
 *
 * Pods are stored as given and must not be mutated afterwards. List results are frozen
 * snapshots, rebuilt only after a change, so reading them from an unchanged manager is O(1).
 */
export class PodManager {
  // Non-mirror pods (static and API pods) by UID and by full name; the two can disagree, as in
  // the kubelet, because the full-name index keeps whichever pod wrote a name last.
  #podByUID = new Map<ResolvedPodUID, Pod>();
  #podByFullName = new Map<string, Pod>();
  // The same entries as #podByFullName for names that split one way only, keyed namespace then
  // name, so getPodByName needs no string concatenation.
  #podByNamespacedName = new Map<string, Map<string, Pod>>();
  #mirrorPodByUID = new Map<MirrorPodUID, Pod>();
  #mirrorPodByFullName = new Map<string, Pod>();
  // mirror UID → static UID. Written when either half of a pair arrives.
  #translationByUID = new Map<MirrorPodUID, ResolvedPodUID>();

  #ephemeralContainers = 0;
  #podsSnapshot: readonly Pod[] | undefined;
  #pairSnapshot: PodsAndMirrorPods | undefined;

  readonly #secretManager: SecretManager | undefined;
  readonly #configMapManager: ConfigMapManager | undefined;
  readonly #mirrorClient: MirrorClient | undefined;

  constructor(options: PodManagerOptions = {}) {
    this.#secretManager = options.secretManager;
    this.#configMapManager = options.configMapManager;
    this.#mirrorClient = options.mirrorClient;
    registerEphemeralContainersGauge(options.registry ?? new Registry(), () => this.#ephemeralContainers);
  }

  getPodByFullName(podFullName: string): Pod | undefined {
    return this.#podByFullName.get(podFullName);
  }

  getPodByName(namespace: string, name: string): Pod | undefined {
    if (hasUnambiguousFullName(name, namespace)) return this.#podByNamespacedName.get(namespace)?.get(name);
    return this.#podByFullName.get(buildPodFullName(name, namespace));
  }

  /** Non-mirror pods only: a mirror UID finds nothing here (translate it first). */
  getPodByUID(uid: string): Pod | undefined {
    return this.#podByUID.get(asResolvedPodUID(uid));
  }

  /** The non-mirror pod with the mirror's full name, static or not. */
  getPodByMirrorPod(mirrorPod: Pod): Pod | undefined {
    return this.#podByFullName.get(fullNameOf(mirrorPod));
  }

  /** The mirror pod of that full name (`name_namespace`), whether or not its static pod is known. */
  getMirrorPodByFullName(podFullName: string): Pod | undefined {
    return this.#mirrorPodByFullName.get(podFullName);
  }

  getMirrorPodByPod(pod: Pod): Pod | undefined {
    return this.#mirrorPodByFullName.get(fullNameOf(pod));
  }

  /**
   * Resolves either half of a pair to both halves. The pod passed in is returned as given,
   * not the stored object of that UID.
   */
  getPodAndMirrorPod(pod: Pod): PodAndMirrorPod {
    const fullName = fullNameOf(pod);
    if (isMirrorPod(pod)) {
      return { pod: this.#podByFullName.get(fullName), mirrorPod: pod, wasMirror: true };
    }
    return { pod, mirrorPod: this.#mirrorPodByFullName.get(fullName), wasMirror: false };
  }

  /** All non-mirror pods, unordered; a frozen snapshot shared until the next change. */
  getPods(): readonly Pod[] {
    return (this.#podsSnapshot ??= Object.freeze([...this.#podByUID.values()]));
  }

  getPodsAndMirrorPods(): PodsAndMirrorPods {
    if (this.#pairSnapshot === undefined) {
      this.#pairSnapshot = Object.freeze({
        pods: this.getPods(),
        mirrorPods: Object.freeze([...this.#mirrorPodByUID.values()]),
        orphanedMirrorPodFullNames: Object.freeze(this.#orphanedMirrorPodFullNames()),
      });
    }
    return this.#pairSnapshot;
  }

  /** v1.25 name for the third part of `getPodsAndMirrorPods()`. */
  getOrphanedMirrorPodNames(): string[] {
    return [...this.getPodsAndMirrorPods().orphanedMirrorPodFullNames];
  }

  /** Replaces everything the manager holds with `pods`. */
  setPods(pods: readonly Pod[]): void {
    this.#podByUID = new Map();
    this.#podByFullName = new Map();
    this.#podByNamespacedName = new Map();
    this.#mirrorPodByUID = new Map();
    this.#mirrorPodByFullName = new Map();
    this.#translationByUID = new Map();
    this.#ephemeralContainers = 0;
    for (const pod of pods) this.#upsert(pod);
    this.#changed();
  }

  /** Same as `updatePod`: both insert or replace. */
  addPod(pod: Pod): void {
    this.updatePod(pod);
  }

  updatePod(pod: Pod): void {
    this.#upsert(pod);
    this.#changed();
  }

  /**
   * Removes by UID from the UID index and by full name from the full-name index.
   * Quirk kept from the kubelet: the full-name entry goes even when it holds a different pod
   * (another UID with the same name), and removing a static pod leaves the translation from
   * its mirror in place until the mirror itself is removed or re-paired.
   */
  removePod(pod: Pod): void {
    this.#secretManager?.unregisterPod(pod);
    this.#configMapManager?.unregisterPod(pod);
    const fullName = fullNameOf(pod);
    const uid = pod.metadata?.uid ?? '';
    if (isMirrorPod(pod)) {
      const mirrorUID = asMirrorPodUID(uid);
      this.#mirrorPodByUID.delete(mirrorUID);
      this.#mirrorPodByFullName.delete(fullName);
      this.#translationByUID.delete(mirrorUID);
    } else {
      const resolvedUID = asResolvedPodUID(uid);
      // Count what was stored, not what was passed: the kubelet's delta bookkeeping counted
      // the argument and drifted when it differed from the stored pod or was never added.
      this.#ephemeralContainers -= countEphemeralContainers(this.#podByUID.get(resolvedUID));
      this.#podByUID.delete(resolvedUID);
      this.#podByFullName.delete(fullName);
      this.#unindexNamespacedName(pod);
    }
    this.#changed();
  }

  /** v1.25 name of `removePod`. */
  deletePod(pod: Pod): void {
    this.removePod(pod);
  }

  /** A mirror UID paired with a static pod becomes that pod's UID; anything else is returned as is. */
  translatePodUID(uid: string): ResolvedPodUID {
    if (uid === '') return asResolvedPodUID('');
    return this.#translationByUID.get(asMirrorPodUID(uid)) ?? asResolvedPodUID(uid);
  }

  /**
   * Both directions of the translation. Every static pod appears in `podToMirror`, with ''
   * when it has no mirror. Translations outliving their static pod (see `removePod`) appear
   * too, as in the kubelet. When two mirror UIDs point at one static pod (a mirror replaced
   * by another before the first was removed) the kubelet's answer depends on Go's map order;
   * ours on the order the translations were first written.
   */
  getUIDTranslations(): UIDTranslations {
    const podToMirror = new Map<ResolvedPodUID, MirrorPodUID | ''>();
    const mirrorToPod = new Map<MirrorPodUID, ResolvedPodUID>();
    for (const [uid, pod] of this.#podByUID) {
      if (isStaticPod(pod)) podToMirror.set(uid, '');
    }
    for (const [mirrorUID, podUID] of this.#translationByUID) {
      mirrorToPod.set(mirrorUID, podUID);
      podToMirror.set(podUID, mirrorUID);
    }
    return { podToMirror, mirrorToPod };
  }

  /** v1.25 method form of the package function `isMirrorPodOf`. */
  isMirrorPodOf(mirrorPod: Pod, pod: Pod): boolean {
    return isMirrorPodOf(mirrorPod, pod);
  }

  /** v1.25: the manager embedded its mirror client. */
  createMirrorPod(pod: Pod): Promise<void> {
    if (!this.#mirrorClient) return Promise.reject(kpError('KP_ERR_NO_MIRROR_CLIENT', ['createMirrorPod']));
    return this.#mirrorClient.createMirrorPod(pod);
  }

  deleteMirrorPod(podFullName: string, uid?: string): Promise<boolean> {
    if (!this.#mirrorClient) return Promise.reject(kpError('KP_ERR_NO_MIRROR_CLIENT', ['deleteMirrorPod']));
    return this.#mirrorClient.deleteMirrorPod(podFullName, uid);
  }

  #upsert(pod: Pod): void {
    if (this.#secretManager || this.#configMapManager) this.#registerWithObjectManagers(pod);
    const fullName = fullNameOf(pod);
    const uid = pod.metadata?.uid ?? '';
    if (isMirrorPod(pod)) {
      const mirrorUID = asMirrorPodUID(uid);
      this.#mirrorPodByUID.set(mirrorUID, pod);
      this.#mirrorPodByFullName.set(fullName, pod);
      const staticPod = this.#podByFullName.get(fullName);
      if (staticPod) this.#setTranslation(mirrorUID, asResolvedPodUID(staticPod.metadata?.uid ?? ''));
    } else {
      const resolvedUID = asResolvedPodUID(uid);
      this.#ephemeralContainers +=
        countEphemeralContainers(pod) - countEphemeralContainers(this.#podByUID.get(resolvedUID));
      this.#podByUID.set(resolvedUID, pod);
      // Last writer wins: two pods with one full name replace each other here.
      this.#podByFullName.set(fullName, pod);
      this.#indexNamespacedName(pod);
      const mirrorPod = this.#mirrorPodByFullName.get(fullName);
      if (mirrorPod) this.#setTranslation(asMirrorPodUID(mirrorPod.metadata?.uid ?? ''), resolvedUID);
    }
  }

  #setTranslation(mirrorUID: MirrorPodUID, podUID: ResolvedPodUID): void {
    if (this.#translationByUID.get(mirrorUID) !== podUID) this.#translationByUID.set(mirrorUID, podUID);
  }

  #indexNamespacedName(pod: Pod): void {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    if (!hasUnambiguousFullName(name, namespace)) return;
    let byName = this.#podByNamespacedName.get(namespace);
    if (!byName) this.#podByNamespacedName.set(namespace, (byName = new Map()));
    byName.set(name, pod);
  }

  #unindexNamespacedName(pod: Pod): void {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    if (!hasUnambiguousFullName(name, namespace)) return;
    const byName = this.#podByNamespacedName.get(namespace);
    if (!byName) return;
    byName.delete(name);
    if (byName.size === 0) this.#podByNamespacedName.delete(namespace);
  }

  // v1.25: terminated pods no longer need their secrets and configmaps watched.
  #registerWithObjectManagers(pod: Pod): void {
    const phase = pod.status?.phase;
    const terminated = phase === 'Failed' || phase === 'Succeeded';
    for (const manager of [this.#secretManager, this.#configMapManager]) {
      if (!manager) continue;
      if (terminated) manager.unregisterPod(pod);
      else manager.registerPod(pod);
    }
  }

  #orphanedMirrorPodFullNames(): string[] {
    const orphans: string[] = [];
    for (const fullName of this.#mirrorPodByFullName.keys()) {
      if (!this.#podByFullName.has(fullName)) orphans.push(fullName);
    }
    return orphans;
  }

  #changed(): void {
    this.#podsSnapshot = undefined;
    this.#pairSnapshot = undefined;
  }
}
